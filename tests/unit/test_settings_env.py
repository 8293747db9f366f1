"""Settings read in one place: store/settings.py is the only module that reads the environment,
and every variable it reads is in the README's Configuration table (and nothing else is)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TypeGuard

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "store" / "settings.py"
PACKAGES = ("graph", "tools", "ingest", "store", "evals")
ENV_NAME = re.compile(r"`([A-Z][A-Z0-9_]*)`")
TEST_ONLY = {ROOT / "tests" / "conftest.py"}  # the test suite's own variables, also in the table
READERS = ("environ", "environb", "getenv", "getenvb")


# -- what a module reads ---------------------------------------------------------------------------
def _is_os_attr(node: ast.AST, *names: str) -> TypeGuard[ast.Attribute]:
    return (
        isinstance(node, ast.Attribute)
        and node.attr in names
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _first_string(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def variables_read(source: str) -> set[str]:
    """Names passed as literals to ``os.environ.get``/``os.getenv``/``os.environ[...]`` or to a
    private ``_env*`` reader (store/settings.py reads through those)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            reader = (
                (isinstance(func, ast.Name) and func.id.startswith("_env"))
                or _is_os_attr(func, "getenv")
                or (
                    isinstance(func, ast.Attribute)
                    and func.attr == "get"
                    and _is_os_attr(func.value, "environ")
                )
            )
            name = _first_string(node) if reader else None
            if name:
                names.add(name)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _is_os_attr(node.value, "environ")
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            names.add(node.slice.value)
    return names


def environment_reads(source: str) -> list[int]:
    """Lines that read the environment. Allowed, as they are not settings: writes
    (``os.environ[K] = v``, ``del os.environ[K]``, ``os.environ.setdefault(K, v)``) and the whole
    environment handed on to a subprocess (``{**os.environ, ...}``)."""
    tree = ast.parse(source)
    allowed: set[int] = set()  # ids of os.environ nodes used in an allowed way
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            allowed.update(id(v) for k, v in zip(node.keys, node.values, strict=True) if k is None)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            allowed.add(id(node.value))  # os.environ[K] = v, del os.environ[K]
        elif isinstance(node, ast.Attribute) and node.attr == "setdefault":
            allowed.add(id(node.value))  # os.environ.setdefault(K, v)
        elif isinstance(node, ast.ImportFrom):
            imported = {alias.name for alias in node.names}
            if node.module == "os" and imported & set(READERS):
                lines.append(node.lineno)
            if node.module == "store.settings" and any(n.startswith("_env") for n in imported):
                lines.append(node.lineno)
    for node in ast.walk(tree):
        if _is_os_attr(node, *READERS) and id(node) not in allowed:
            lines.append(node.lineno)
    return sorted(lines)


def calls_naming(source: str, names: set[str]) -> list[int]:
    """Lines of calls whose first argument is one of ``names`` (a reader under another name,
    such as a helper imported from store.settings)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and _first_string(node) in names
    )


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def readme_table() -> set[str]:
    """Variable names in the first column of the table under ``## Configuration``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "the Configuration section should hold the table of environment variables"
    return {name for row in rows for name in ENV_NAME.findall(row.split("|")[1])}


# -- the checks ------------------------------------------------------------------------------------
def test_every_variable_settings_reads_is_in_the_readme_table() -> None:
    read = variables_read(SETTINGS.read_text(encoding="utf-8"))
    assert {"VECTREE_HOME", "VECTREE_MODEL", "VECTREE_GATE_DENSE_MIN", "MODEL_CACHE_DIR"} <= read
    assert sorted(read - readme_table()) == []


def test_the_readme_table_documents_only_variables_that_are_read() -> None:
    read = variables_read(SETTINGS.read_text(encoding="utf-8"))
    for path in TEST_ONLY:
        read |= variables_read(path.read_text(encoding="utf-8"))
    assert sorted(readme_table() - read) == []


def test_no_module_but_settings_reads_the_environment() -> None:
    variables = variables_read(SETTINGS.read_text(encoding="utf-8"))
    offenders = {}
    for path in modules():
        source = path.read_text(encoding="utf-8")
        if path != SETTINGS and (lines := environment_reads(source)):
            offenders[str(path.relative_to(ROOT))] = lines
        if path != SETTINGS and (lines := calls_naming(source, variables)):
            offenders[f"{path.relative_to(ROOT)} (a variable name passed to a call)"] = lines
    assert offenders == {}


def test_settings_reads_the_environment_only_through_its_reader() -> None:
    source = SETTINGS.read_text(encoding="utf-8")
    lines = environment_reads(source)
    assert len(lines) == 1, "one os.environ read, in _env"
    reader = next(
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.FunctionDef) and n.name == "_env"
    )
    assert reader.lineno <= lines[0] <= (reader.end_lineno or reader.lineno)


def test_reads_and_allowed_writes_are_told_apart() -> None:
    source = "\n".join(
        [
            "import os",
            "from os import getenv",  # 2: read
            "a = os.environ.get('A')",  # 3: read
            "b = os.getenv('B', 'x')",  # 4: read
            "c = os.environ['C']",  # 5: read
            "os.environ['D'] = '1'",  # write
            "os.environ.setdefault('HF_HUB_OFFLINE', '1')",  # write
            "env = {**os.environ, 'VECTREE_HOME': '/lib'}",  # handed to a subprocess
            "del os.environ['D']",  # write
            "e = dict(os.environ)",  # 10: read
            "from store.settings import _env",  # 11: a private reader
        ]
    )
    assert environment_reads(source) == [2, 3, 4, 5, 10, 11]
    assert calls_naming(source, {"A", "HF_HUB_OFFLINE"}) == [3, 7]
    assert calls_naming("f = env_text('VECTREE_PARSER', 'x')", {"VECTREE_PARSER"}) == [1]
    assert variables_read(source) == {"A", "B", "C"}
    assert variables_read("x = _env_float('VECTREE_GATE_RELATIVE', 0.4)") == {
        "VECTREE_GATE_RELATIVE"
    }


def test_embedding_threads_default_to_one_and_refuse_nonsense(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from store.settings import embedding_threads

    monkeypatch.delenv("VECTREE_EMBED_THREADS", raising=False)
    assert embedding_threads() == 1
    monkeypatch.setenv("VECTREE_EMBED_THREADS", "3")
    assert embedding_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("VECTREE_EMBED_THREADS", bad)
        with pytest.raises(ValueError, match="VECTREE_EMBED_THREADS"):
            embedding_threads()


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("VECTREE_COLLECTION", "../elsewhere", "should match pattern"),
        ("VECTREE_COLLECTION", "a/b", "should match pattern"),
        ("VECTREE_SEARCH_DEPTH", "0", "greater than or equal to 1"),
        ("VECTREE_SEARCH_DEPTH", "deep", "whole number"),
        ("VECTREE_SEARCH_THREADS", "1.5", "whole number"),
        ("VECTREE_INDEX_WAIT", "soon", "a number"),
    ],
)
def test_index_settings_name_the_variable_they_refuse(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    from store.settings import IndexSettings, SettingsError

    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match=variable) as refused:
        IndexSettings.from_env()
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_collection_named_like_a_folder_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    from store.settings import IndexSettings

    monkeypatch.setenv("VECTREE_COLLECTION", "papers-2024.v2")
    assert IndexSettings.from_env().collection == "papers-2024.v2"
