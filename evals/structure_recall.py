"""How well the structure sources recover the authors' own outlines (bookmarks).

Every development PDF with a reference outline in ``reference-trees/author-outlines`` (the PDF
itself is looked up by its ``source_pdf`` name under ``pdfs/`` and ``financebench/pdfs/``) is
ingested into a scratch library with the chosen ``--structure`` mode, and every reference entry
is looked up among the tree's nodes by title. With ``--ignore-outline`` the ingestion behaves as
if the PDF had no bookmarks, so the other sources (printed contents, headings, LLM) are measured
against the bookmarks they cannot see. Reported per document: reference entries, title recall
(share of reference titles found), exact start-page accuracy (share of reference entries found
with the same start page), the structure method actually used, and seconds. The OVERALL row is
the micro average over all reference entries (sum found / sum entries) plus the lowest
per-document recall.

    python -m evals.structure_recall --data ../shared/data --ignore-outline
        [--structure auto|outline|toc|headings|llm] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ingest.context import STRUCTURE_MODES, IngestContext
from ingest.graph import build_ingest_graph
from ingest.numbering import clean_title, parse_numbering
from store.catalog import close_catalogs
from store.library import Library
from store.types import TreeNode, walk

WORD = re.compile(r"[^\W_]+")
OUTLINE_FOLDER = Path("reference-trees") / "author-outlines"
# Where the development PDFs live, relative to the data folder, searched in this order.
PDF_FOLDERS = (Path("pdfs"), Path("financebench") / "pdfs")


def title_key(title: str) -> str:
    """Lower-case words of a title without its numbering prefix."""
    text = clean_title(title)
    if parse_numbering(text) is not None and " " in text:
        text = text.split(" ", 1)[1]
    return " ".join(WORD.findall(text.lower()))


def compare(reference: list[dict[str, Any]], tree: list[TreeNode]) -> dict[str, Any]:
    """Title recall and exact start-page accuracy of ``tree`` against reference entries."""
    nodes = walk(tree)
    found = exact = 0
    misses: list[str] = []
    for entry in reference:
        key = title_key(entry["title"])
        pages = [n["start_page"] for n in nodes if title_key(n["title"]) == key]
        if not pages:
            misses.append(entry["title"])
            continue
        found += 1
        exact += int(entry["start_page"] in pages)
    total = len(reference) or 1
    return {
        "reference_entries": len(reference),
        "found": found,
        "exact_start_pages": exact,
        "title_recall": round(found / total, 3),
        "exact_start_page_accuracy": round(exact / total, 3),
        "missed": misses,
    }


def overall(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Micro averages over every reference entry of every document, and the lowest recall.

    Each document result needs ``reference_entries``, ``found``, ``exact_start_pages`` and
    ``title_recall`` (as :func:`compare` returns them); ``seconds`` is summed when present.
    """
    entries = sum(int(r["reference_entries"]) for r in documents.values())
    found = sum(int(r["found"]) for r in documents.values())
    exact = sum(int(r["exact_start_pages"]) for r in documents.values())
    recalls = [float(r["title_recall"]) for r in documents.values()]
    return {
        "documents": len(documents),
        "reference_entries": entries,
        "found": found,
        "exact_start_pages": exact,
        "title_recall": round(found / entries, 3) if entries else None,
        "exact_start_page_accuracy": round(exact / entries, 3) if entries else None,
        "min_title_recall": min(recalls) if recalls else None,
        "seconds": round(sum(float(r.get("seconds", 0.0)) for r in documents.values()), 1),
    }


def reference_outlines(data_dir: Path) -> list[Path]:
    """The reference outline files of the development data, sorted by name."""
    return sorted((data_dir / OUTLINE_FOLDER).glob("*.outline.json"))


def find_pdf(data_dir: Path, name: str) -> Path | None:
    """The development PDF called ``name``, from the first PDF folder that has it."""
    for folder in PDF_FOLDERS:
        candidate = data_dir / folder / name
        if candidate.is_file():
            return candidate
    return None


def evaluate(
    data_dir: Path,
    structure: str = "auto",
    ignore_outline: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Ingest each outlined PDF into a scratch library and compare with its author outline.

    Returns ``{"documents": {pdf name: result}, "overall": ...}``. A document whose ingestion
    fails counts with nothing found and carries its ``error``.
    """
    references = [json.loads(path.read_text()) for path in reference_outlines(data_dir)]
    if not references:
        raise FileNotFoundError(f"no reference outlines in {data_dir / OUTLINE_FOLDER}")
    found = {ref["source_pdf"]: find_pdf(data_dir, ref["source_pdf"]) for ref in references}
    missing = sorted(name for name, path in found.items() if path is None)
    if missing:
        folders = ", ".join(str(data_dir / folder) for folder in PDF_FOLDERS)
        raise FileNotFoundError(f"reference PDFs not found under {folders}: {', '.join(missing)}")
    pdfs = {name: path for name, path in found.items() if path is not None}
    # Built before any work so that a refused combination of options fails at once.
    context = IngestContext(
        library=str(data_dir), structure=structure, ignore_outline=ignore_outline
    )
    documents: dict[str, dict[str, Any]] = {}
    graph = build_ingest_graph()
    with tempfile.TemporaryDirectory() as scratch:
        context = replace(context, library=scratch)
        library = Library(Path(scratch))
        bar = tqdm(references, unit="doc", desc="structure", disable=not progress, file=sys.stderr)
        try:
            for reference in bar:
                name = reference["source_pdf"]
                bar.set_postfix_str(name)
                documents[name] = _measure(graph, library, context, pdfs[name], reference)
        finally:
            bar.close()
            close_catalogs()
    return {"documents": documents, "overall": overall(documents)}


def _measure(
    graph: Any, library: Library, context: IngestContext, pdf: Path, reference: dict[str, Any]
) -> dict[str, Any]:
    """Ingest one PDF and compare its tree with the reference entries."""
    started = time.perf_counter()
    state = graph.invoke({"source": str(pdf.resolve())}, context=context)
    seconds = round(time.perf_counter() - started, 1)
    if state.get("status") in ("ingested", "present"):
        doc_id = state["doc_id"]
        result = compare(reference["entries"], library.tree(doc_id))
        return {**result, "method": library.record(doc_id)["structure"], "seconds": seconds}
    result = compare(reference["entries"], [])
    error = state.get("error") or f"ingestion ended with status {state.get('status')!r}"
    return {**result, "method": None, "seconds": seconds, "error": error}


def format_table(results: Mapping[str, Any]) -> str:
    """The human-readable table: one row per document, misses indented, then OVERALL."""
    lines = [
        f"{'document':36} {'entries':>7} {'recall':>7} {'exact start':>11} "
        f"{'method':>9} {'seconds':>8}"
    ]
    for name, r in results["documents"].items():
        lines.append(
            f"{name:36} {r['reference_entries']:>7} {r['title_recall']:>7.3f} "
            f"{r['exact_start_page_accuracy']:>11.3f} {r['method'] or 'failed':>9} "
            f"{r['seconds']:>8.1f}"
        )
        if r.get("error"):
            lines.append(f"    error: {r['error']}")
        lines.extend(f"    missed: {miss}" for miss in r["missed"])
    total = results["overall"]
    lines.append(
        f"{'OVERALL':36} {total['reference_entries']:>7} {_rate(total['title_recall']):>7} "
        f"{_rate(total['exact_start_page_accuracy']):>11} {'':>9} {total['seconds']:>8.1f}"
    )
    lines.append(f"minimum per-document recall: {_rate(total['min_title_recall'])}")
    return "\n".join(lines)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="development data folder")
    parser.add_argument(
        "--structure",
        default="auto",
        choices=STRUCTURE_MODES,
        help="structure source to ingest with (default auto)",
    )
    parser.add_argument(
        "--ignore-outline",
        action="store_true",
        help="ignore PDF bookmarks (measure the other structure sources against them)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    try:
        results = evaluate(Path(args.data), args.structure, args.ignore_outline)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
