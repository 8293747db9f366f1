"""`vectree ingest | docs | tree | remove | check | demo`: building, browsing and repairing the
library."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from graph.cli.common import CommandError, create_library, library_of, resolve_doc
from graph.console import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, print_json
from ingest.context import IngestContext
from ingest.errors import OcrUnavailableError
from ingest.filing import period_words
from ingest.pdf.ocr import require_tesseract
from store.catalog import open_catalog
from store.check import CheckReport, check_library
from store.library import DamagedFile, Library
from store.types import MIN_PREFIX
from tools.formatting import node_page_label, ocr_mark


# -- ingest ------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from ingest.pipeline import ingest_paths

    library = library_of(args)
    try:
        context = IngestContext(
            library=str(library.root),
            structure=args.structure,
            ignore_outline=args.ignore_outline,
            parser=args.parser,
            ocr=args.ocr,
            ocr_language=args.ocr_language,
        )
    except ValueError as exc:  # options that cannot be combined
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if context.ocr == "always":  # every page needs Tesseract: say so before any work
        try:
            require_tesseract(context.ocr_language)
        except OcrUnavailableError as exc:
            raise CommandError(str(exc)) from None
    create_library(library)
    report = ingest_paths(
        [Path(p) for p in args.paths], context, args.workers, progress=not args.json
    )
    summary = report.as_dict()
    if args.json:
        print_json(summary)
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
# What `vectree docs` shows of each manifest; ``structure`` is the method that made the tree
# (outline, toc, headings, llm or supplied).
ISSUER_WIDTH = 24
DOCS_FIELDS = ("doc_id", "title", "pages", "nodes", "structure", "verification_rate", "source")


def cmd_docs(args: argparse.Namespace) -> int:
    library = library_of(args)
    records: list[dict[str, Any]] = [
        {**{k: r.get(k) for k in DOCS_FIELDS}, "filing": _filing(library, r["doc_id"])}
        for r in library.documents()
    ]
    if args.json:
        print_json(records)
        return EXIT_OK
    if not records:
        print(f"no documents in {library_of(args).root}; add some with `vectree ingest PATH`")
        return EXIT_OK
    print(
        f"{'doc_id':16}  {'pages':>5}  {'nodes':>5}  {'structure':9}  {'verified':>8}  "
        f"{'issuer':{ISSUER_WIDTH}}  {'form':16}  {'period':15}  title"
    )
    for r in records:
        rate = "n/a" if r["verification_rate"] is None else f"{r['verification_rate']:.2f}"
        facts = r["filing"] or {}
        issuer = (facts.get("issuer") or "")[:ISSUER_WIDTH]
        print(
            f"{r['doc_id']:16}  {r['pages']:>5}  {r['nodes']:>5}  {r['structure'] or '?':9}  "
            f"{rate:>8}  {issuer:{ISSUER_WIDTH}}  {facts.get('form') or '':16}  "
            f"{period_words(facts) if facts.get('form') else '':15}  {r['title'][:70]}"
        )
    print(f"{len(records)} documents, {sum(r['pages'] for r in records)} pages")
    return EXIT_OK


def _filing(library: Library, doc_id: str) -> dict[str, Any] | None:
    """A filing's issuer, form and period (None for other documents, or unreadable metadata)."""
    try:
        facts = library.metadata(doc_id).get("filing")
    except DamagedFile:
        return None
    return dict(facts) if facts and facts.get("form") else None


def cmd_tree(args: argparse.Namespace) -> int:
    library = library_of(args)
    doc_id = resolve_doc(library, args.doc_id)
    record = library.record(doc_id)
    tree = library.tree(doc_id)
    if args.json:
        print_json(
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
        mark = ocr_mark(node.get("ocr", False))
        print(f"{'  ' * depth}[{node['node_id']}] {node['title']} ({node_page_label(node)}){mark}")
        _print_nodes(node["nodes"], depth + 1)


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove a document while no other process writes the library (waiting for one that does,
    bounded), so the removal never stops half way for want of the index."""
    library = library_of(args)
    catalog = open_catalog(library.root)
    with catalog.writing("vectree remove"):
        doc_id = _removable(library, args.doc_id)
        catalog.remove(doc_id)
    if args.json:
        print_json({"removed": doc_id})
    else:
        print(f"removed {doc_id}")
    return EXIT_OK


def _removable(library: Library, wanted: str) -> str:
    """The document ``vectree remove`` names: one in the library, else one an interrupted
    removal left in the trash (removing it again finishes the removal)."""
    try:
        return resolve_doc(library, wanted)
    except CommandError:
        trashed = [
            doc_id
            for doc_id in library.trashed()
            if doc_id == wanted or (len(wanted) >= MIN_PREFIX and doc_id.startswith(wanted))
        ]
        if len(trashed) != 1:
            raise
        return trashed[0]


# -- check ------------------------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    """Verify every document against its files and the index; exit 2 while damage remains."""
    catalog = open_catalog(library_of(args).root)
    report = check_library(catalog, repair=args.repair, migrate=args.migrate)
    if args.json:
        print_json(report.as_dict())
    else:
        _print_check(report, args.repair)
    return EXIT_OK if report.sound else EXIT_PARTIAL


def _print_check(report: CheckReport, repairing: bool) -> None:
    if report.migrated:
        print(f"migrated the index: {json.dumps(report.migrated)}")
    for done in report.repaired:
        print(f"repaired {done.doc_id or '-'}: {done.action}")
    for damage in report.damaged:
        print(f"damaged  {damage.doc_id or '-'}: {damage.file}: {damage.problem}")
    plural = "" if len(report.damaged) == 1 else "s"
    repaired = f", {len(report.repaired)} repaired" if report.repaired else ""
    if report.sound:
        verdict = "sound"
    elif repairing:
        verdict = "these could not be repaired (see the warnings above)"
    else:
        verdict = "run `vectree check --repair`"
    print(
        f"{report.documents} documents checked: {len(report.damaged)} problem{plural}{repaired}"
        f" — {verdict}"
    )


# -- demo ---------------------------------------------------------------------------------------
def demo_corpus() -> Path:
    """The folder of bundled demo PDFs (installed with the package)."""
    return Path(str(resources.files("ingest") / "demo_corpus"))
