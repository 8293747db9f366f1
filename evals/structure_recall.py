"""How well heading-based structure recovers the authors' own outlines (bookmarks).

For each PDF with a reference outline in ``reference-trees/author-outlines``, the document is
ingested with ``--structure headings`` (the outline switched off) and every reference entry is
looked up among the tree's nodes by title. Reported per document: title recall (share of
reference titles found) and exact-start-page accuracy (share of reference entries found with
the same start page).

    python -m evals.structure_recall --data ../shared/data [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from ingest.context import IngestContext
from ingest.graph import build_ingest_graph
from ingest.numbering import clean_title, parse_numbering
from ingest.tree import walk
from ingest.types import TreeNode
from store.catalog import close_catalogs
from store.library import Library

WORD = re.compile(r"[^\W_]+")


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
        "title_recall": round(found / total, 3),
        "exact_start_page_accuracy": round(exact / total, 3),
        "missed": misses,
    }


def evaluate(data_dir: Path, structure: str = "headings") -> dict[str, dict[str, Any]]:
    """Ingest each outlined PDF into a scratch library and compare with its author outline."""
    results: dict[str, dict[str, Any]] = {}
    graph = build_ingest_graph()
    outlines = sorted((data_dir / "reference-trees" / "author-outlines").glob("*.outline.json"))
    with tempfile.TemporaryDirectory() as scratch:
        context = IngestContext(library=scratch, structure=structure)
        for outline_file in outlines:
            reference = json.loads(outline_file.read_text())
            pdf = data_dir / "pdfs" / reference["source_pdf"]
            state = graph.invoke({"source": str(pdf.resolve())}, context=context)
            tree = Library(Path(scratch)).tree(state["doc_id"])
            results[reference["source_pdf"]] = compare(reference["entries"], tree)
        close_catalogs()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="development data folder")
    parser.add_argument("--structure", default="headings", choices=("headings", "outline", "auto"))
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    results = evaluate(Path(args.data), args.structure)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'document':36} {'entries':>7} {'recall':>7} {'exact start':>11}")
    for name, r in results.items():
        print(
            f"{name:36} {r['reference_entries']:>7} {r['title_recall']:>7.3f} "
            f"{r['exact_start_page_accuracy']:>11.3f}"
        )
        for miss in r["missed"]:
            print(f"    missed: {miss}")


if __name__ == "__main__":
    main()
