"""The package import graph: which layer imports which, and whether any import runs back up.

The packages form layers that read downward only::

    store < ingest < tools < graph < evals < cli

``store`` holds the shared record types, the library on disk and the index; ``ingest`` builds
section trees into it; ``tools`` are what the agent calls; ``graph`` is the query agent, its
strategies and the server; ``evals`` runs benchmarks through the agent; ``cli``
(``graph/cli/``, the ``vectree`` command) sits on top of everything. A module may import its
own layer and any layer below it, never one above: nothing imports the CLI, and the CLI itself
imports no ``evals`` module either (``vectree eval`` is added by ``evals`` through an entry
point), so the ``graph`` package as a whole never imports ``evals``. Inside a package, a
sub-package sits above the modules of its parent that it imports: one of those modules
importing the sub-package back is an arrow back up too (``graph/context.py`` reading the
strategy registry from ``graph/strategies/``, whose runners import ``graph/context.py``). Every
import counts, including those inside functions.

    python -m evals.import_graph

prints each package → package edge with its number of import statements, every arrow back up
(upward edges and sub-package arrows), every import circle between modules (inside a package
too), and the non-blank lines of Python per package; it exits 1 on any arrow back up or circle.
A circle counts every import, deferred and type-only ones included: a circle that works only
because one of its imports waits for a function call or a type checker breaks the day someone
moves that import to the top.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

LAYERS = ("store", "ingest", "tools", "graph", "evals", "cli")
PACKAGES = ("store", "ingest", "tools", "graph", "evals")
CLI_PACKAGE = ("graph", "cli")
ROOT = Path(__file__).resolve().parents[1]

Edge = tuple[str, str]
APART: frozenset[Edge] = frozenset({("cli", "evals")})
"""Edges flagged although they point downward in ``LAYERS`` (the CLI on top of ``evals``)."""


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to; None for modules outside the project."""
    parts = tuple(module.split("."))
    if parts[: len(CLI_PACKAGE)] == CLI_PACKAGE:
        return "cli"
    return parts[0] if parts[0] in PACKAGES else None


def source_files(root: Path = ROOT) -> Iterator[tuple[str, Path]]:
    """Every Python file of the project packages with its dotted module name."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def import_statements(module: str, path: Path) -> Iterator[tuple[str, list[str]]]:
    """Each import statement of one file as (the module it imports from, the dotted names it
    imports): ``import a.b`` gives ("a.b", []); ``from .x import y`` gives ("pkg.x", ["pkg.x.y"])
    with relative imports resolved against the file's package."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            yield target, [f"{target}.{alias.name}" for alias in node.names]


def imported_modules(module: str, path: Path) -> Iterator[str]:
    """The modules one file imports (relative imports resolved against its package)."""
    for target, names in import_statements(module, path):
        # ``from graph import cli`` imports the sub-package: it counts for its layer.
        elsewhere = [name for name in names if layer_of(name) != layer_of(target)]
        yield from elsewhere
        if not names or len(elsewhere) < len(names):
            yield target


def import_edges(root: Path = ROOT) -> Counter[Edge]:
    """Import statements per (importing layer, imported layer), between different layers."""
    edges: Counter[Edge] = Counter()
    for module, path in source_files(root):
        source = layer_of(module)
        for target in map(layer_of, imported_modules(module, path)):
            if source and target and target != source:
                edges[source, target] += 1
    return edges


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the project modules it imports (``from pkg import mod`` names the module
    ``pkg.mod`` when that is a module of the project, else ``pkg`` itself)."""
    files = dict(source_files(root))
    graph: dict[str, set[str]] = {module: set() for module in files}
    for module, path in files.items():
        for target, names in import_statements(module, path):
            for name in names or [target]:
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other through imports (strongly connected
    components of two or more modules), each sorted, in sorted order (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def upward(edges: Counter[Edge]) -> list[Edge]:
    """The edges from a layer to one above it, and between the CLI and ``evals``: the CLI,
    kept inside ``graph/``, imports nothing of ``evals`` (which adds its command through an
    entry point), so the ``graph`` package never imports the layer above it."""
    return sorted(
        (edge for edge in edges if LAYERS.index(edge[1]) > LAYERS.index(edge[0]) or edge in APART),
        key=lambda edge: (LAYERS.index(edge[0]), LAYERS.index(edge[1])),
    )


def back_arrows(graph: dict[str, set[str]]) -> list[Edge]:
    """(module, sub-package) pairs where a module imports a sub-package of its own package
    that imports the module in turn: the sub-package builds on the module, so the module
    reading from it runs back up (a registry kept inside the package of the runners that
    import the registry's readers)."""
    packages = {m for m in graph if any(other.startswith(m + ".") for other in graph)}
    found: set[Edge] = set()
    for module, targets in graph.items():
        parent = module.rpartition(".")[0]
        for target in targets:
            if not parent or not target.startswith(parent + "."):
                continue
            sub = ".".join(target.split(".")[: parent.count(".") + 2])
            if sub not in packages or _inside(module, sub):
                continue
            if any(_inside(m, sub) and module in graph[m] for m in graph):
                found.add((module, sub))
    return sorted(found)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def lines_of_code(root: Path = ROOT) -> dict[str, int]:
    """Non-blank lines of the Python files of each layer."""
    lines = dict.fromkeys(LAYERS, 0)
    for module, path in source_files(root):
        layer = layer_of(module)
        if layer:
            text = path.read_text(encoding="utf-8")
            lines[layer] += sum(1 for line in text.splitlines() if line.strip())
    return lines


def main() -> int:
    edges = import_edges()
    wrong = set(upward(edges))
    print("imports (layer → layer: import statements), order " + " < ".join(LAYERS))
    for source, target in sorted(edges, key=lambda e: (LAYERS.index(e[0]), LAYERS.index(e[1]))):
        flag = "  UPWARD" if (source, target) in wrong else ""
        print(f"  {source:>6} → {target:<6} {edges[source, target]:>4}{flag}")
    print(f"{len(wrong)} upward edge(s)")
    graph = module_graph()
    back = back_arrows(graph)
    for module, sub in back:
        print(f"  back up: {module} → {sub} (which imports it)")
    print(f"{len(back)} sub-package arrow(s) back up")
    loops = circles(graph)
    for group in loops:
        print("  circle: " + " ↔ ".join(group))
    print(f"{len(loops)} import circle(s)")
    print("\nlines of code (non-blank lines of .py files)")
    lines = lines_of_code()
    for layer, count in lines.items():
        print(f"  {layer:>6} {count:>7,}")
    print(f"  {'total':>6} {sum(lines.values()):>7,}")
    return 1 if wrong or back or loops else 0


if __name__ == "__main__":
    sys.exit(main())
