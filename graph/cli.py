"""The ``vectree`` command line.

Every command that scripts may read has ``--json``; human output goes to stdout, progress bars
and diagnostics to stderr. Exit codes: 0 success, 1 usage or lookup error, 2 some inputs failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ingest.context import STRUCTURE_MODES, IngestContext
from ingest.parse import PARSERS
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from store.settings import default_library_dir

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2


def _library(args: argparse.Namespace) -> Library:
    return Library(
        Path(args.library).expanduser().resolve() if args.library else default_library_dir()
    )


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _resolve_doc(library: Library, doc_id: str) -> str | None:
    if library.has(doc_id):
        return doc_id
    resolved = library.resolve(doc_id)
    if resolved is None:
        print(
            f"error: no document {doc_id!r} in {library.root} (see `vectree docs`)", file=sys.stderr
        )
    return resolved


# -- ingest ------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from ingest.pipeline import ingest_paths

    library = _library(args)
    context = IngestContext(library=str(library.root), structure=args.structure, parser=args.parser)
    report = ingest_paths(
        [Path(p) for p in args.paths], context, args.workers, progress=not args.json
    )
    summary = report.as_dict()
    if args.json:
        _print_json(summary)
    else:
        _print_ingest_summary(summary)
    return EXIT_PARTIAL if report.failed else EXIT_OK


def _print_ingest_summary(summary: dict[str, Any]) -> None:
    print(
        f"ingested {summary['ingested']}, already present {summary['present']}, "
        f"failed {summary['failed']} — {summary['pages']} pages in {summary['seconds']} s "
        f"({summary['pages_per_second']} pages/s)"
    )
    for outcome in summary["outcomes"]:
        if outcome["status"] == "failed":
            print(f"  FAILED {outcome['source']}: {outcome['error']}")


# -- docs / tree / remove ---------------------------------------------------------------------
def cmd_docs(args: argparse.Namespace) -> int:
    records: list[dict[str, Any]] = [
        {k: r[k] for k in ("doc_id", "title", "pages", "nodes", "verification_rate", "source")}  # type: ignore[literal-required]
        for r in _library(args).documents()
    ]
    if args.json:
        _print_json(records)
        return EXIT_OK
    if not records:
        print(f"no documents in {_library(args).root}; add some with `vectree ingest PATH`")
        return EXIT_OK
    print(f"{'doc_id':16}  {'pages':>5}  {'nodes':>5}  {'verified':>8}  title")
    for r in records:
        rate = "n/a" if r["verification_rate"] is None else f"{r['verification_rate']:.2f}"
        print(f"{r['doc_id']:16}  {r['pages']:>5}  {r['nodes']:>5}  {rate:>8}  {r['title'][:70]}")
    print(f"{len(records)} documents, {sum(r['pages'] for r in records)} pages")
    return EXIT_OK


def cmd_tree(args: argparse.Namespace) -> int:
    library = _library(args)
    doc_id = _resolve_doc(library, args.doc_id)
    if doc_id is None:
        return EXIT_ERROR
    record = library.record(doc_id)
    tree = library.tree(doc_id)
    if args.json:
        _print_json(
            {
                "doc_id": doc_id,
                "title": record["title"],
                "total_pages": record["pages"],
                "verification_rate": record["verification_rate"],
                "nodes": tree,
            }
        )
        return EXIT_OK
    rate = record["verification_rate"]
    print(f"{record['title']} ({doc_id}, {record['pages']} pages, verification rate {rate})")
    _print_nodes(tree, depth=0)
    return EXIT_OK


def _print_nodes(nodes: list[Any], depth: int) -> None:
    for node in nodes:
        pages = f"p.{node['start_page']}" + (
            f"–{node['end_page']}" if node["end_page"] != node["start_page"] else ""
        )
        print(f"{'  ' * depth}[{node['node_id']}] {node['title']} ({pages})")
        _print_nodes(node["nodes"], depth + 1)


def cmd_remove(args: argparse.Namespace) -> int:
    library = _library(args)
    doc_id = _resolve_doc(library, args.doc_id)
    if doc_id is None:
        return EXIT_ERROR
    open_catalog(library.root).remove(doc_id)
    if args.json:
        _print_json({"removed": doc_id})
    else:
        print(f"removed {doc_id}")
    return EXIT_OK


# -- demo ---------------------------------------------------------------------------------------
def demo_corpus() -> Path:
    """The folder of bundled demo PDFs (installed with the package)."""
    return Path(str(resources.files("ingest") / "demo_corpus"))


def cmd_demo(args: argparse.Namespace) -> int:
    args.paths, args.structure, args.parser, args.workers = (
        [str(demo_corpus())],
        "auto",
        "pymupdf4llm",
        1,
    )
    code = cmd_ingest(args)
    print()
    cmd_docs(args)
    return code


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


# -- parser ---------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vectree",
        description="Answer questions over long structured PDFs with page-cited answers. "
        "Ingest PDFs into a library of verified section trees, page texts and a Qdrant index.",
    )
    parser.add_argument("--library", help="library folder (default: $VECTREE_HOME or ./library)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(
        name: str, handler: Callable[[argparse.Namespace], int], help_text: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--library",
            default=argparse.SUPPRESS,
            help="library folder (default: $VECTREE_HOME or ./library)",
        )
        p.set_defaults(handler=handler)
        return p

    ingest = command(
        "ingest", cmd_ingest, "Ingest PDF files, folders of PDFs, or QASPER JSON files."
    )
    ingest.add_argument(
        "paths", nargs="+", metavar="PATH", help="PDF files, folders, or QASPER .json files"
    )
    ingest.add_argument(
        "--structure",
        choices=STRUCTURE_MODES,
        default="auto",
        help="structure source: outline (bookmarks), headings, llm, or auto (in that order)",
    )
    ingest.add_argument(
        "--parser", choices=PARSERS, default="pymupdf4llm", help="PDF parser backend"
    )
    ingest.add_argument(
        "--workers", type=_positive_int, default=1, help="documents prepared in parallel processes"
    )
    ingest.add_argument("--json", action="store_true", help="print the batch report as JSON")

    docs = command("docs", cmd_docs, "List the documents in the library.")
    docs.add_argument("--json", action="store_true", help="JSON records")

    tree = command(
        "tree",
        cmd_tree,
        "Show a document's section tree (titles, page ranges, summaries in --json).",
    )
    tree.add_argument("doc_id", help="document id (a unique prefix is enough)")
    tree.add_argument("--json", action="store_true", help="JSON outline")

    remove = command("remove", cmd_remove, "Delete a document from the library and the index.")
    remove.add_argument("doc_id", help="document id (a unique prefix is enough)")
    remove.add_argument("--json", action="store_true", help="JSON result")

    demo = command("demo", cmd_demo, "Ingest the bundled demo papers and list the library.")
    demo.add_argument("--json", action="store_true", help="JSON output")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        print(
            "interrupted; re-run the same command to finish (completed documents are kept)",
            file=sys.stderr,
        )
        return 130
    finally:
        close_catalogs()


if __name__ == "__main__":
    sys.exit(main())
