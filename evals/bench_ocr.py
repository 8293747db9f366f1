"""OCR benchmark: pages per second with OCR, and word recall, on scanned copies of real PDFs.

The first ``--pages`` pages of each PDF are rendered at 150 dpi into an image-only copy (a scan,
with no text layer). The copies are ingested in one cold batch with ``--ocr auto``
(``evals.bench_ingest.run_once``), and the text stored for each copy is compared with the
text layer of the original's pages (``evals.metrics.word_recall``):

    taskset -c 0,1 python -m evals.bench_ocr --pdfs ../shared/data/pdfs --pages 4 --workers 2

Pages per second is the batch's wall time, model loading included. On a machine shared with
other work, ``cpu_seconds_per_page`` (the batch's, its workers' and its Tesseract processes'
CPU time per page) gives what dedicated cores would: ``cores / cpu_seconds_per_page``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pymupdf

from evals.bench_ingest import run_once
from evals.metrics import word_recall
from store.embeddings import default_cache_dir, ensure_minilm_onnx
from store.library import Library

SCAN_DPI = 150
"""A common resolution for scanned office documents, low enough that OCR must read small print
from few pixels."""


def scanned_copy(source: Path, target: Path, pages: int, text_pages: Collection[int] = ()) -> int:
    """Write the first ``pages`` pages of ``source`` to ``target`` as a scan: each page a grey
    image at ``SCAN_DPI`` and nothing else. The 1-based ``text_pages`` are copied as they are,
    text layer and all, which makes a mixed PDF. Returns the number of pages written."""
    with pymupdf.open(source) as original, pymupdf.open() as scan:
        count = min(pages, original.page_count)
        for page in original.pages(0, count):
            if page.number + 1 in text_pages:
                scan.insert_pdf(original, from_page=page.number, to_page=page.number)
                continue
            image = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
            copy = scan.new_page(width=page.rect.width, height=page.rect.height)
            copy.insert_image(copy.rect, stream=image.tobytes("png"))
        scan.save(target, garbage=3, deflate=True)
    return count


def original_text(source: Path, pages: int) -> str:
    """The text layer of the first ``pages`` pages: what OCR should recover."""
    with pymupdf.open(source) as original:
        return "\n".join(page.get_text("text") for page in original.pages(0, pages))


def recall_by_document(library: Path, originals: dict[str, Path], pages: int) -> dict[str, float]:
    """Word recall of each ingested scan (named by its file) against its original's pages."""
    books = Library(library)
    recalls = {}
    for record in books.documents():
        name = Path(record["source"]).name
        read = "\n".join(books.pages(record["doc_id"]))
        recalls[name] = round(word_recall(original_text(originals[name], pages), read), 4)
    return dict(sorted(recalls.items()))


def run(pdfs: list[Path], pages: int, workers: int) -> dict[str, Any]:
    """Scan, ingest with OCR and score; the batch report with ``recall`` added."""
    with tempfile.TemporaryDirectory() as scratch:
        scans = Path(scratch) / "scans"
        scans.mkdir()
        for pdf in pdfs:
            scanned_copy(pdf, scans / pdf.name, pages)
        library = Path(scratch) / "library"
        report = run_once(scans, workers, "pymupdf4llm", "auto", library)
        recalls = recall_by_document(library, {pdf.name: pdf for pdf in pdfs}, pages)
    report["cpu_seconds_per_page"] = round(report["cpu_seconds"] / max(report["pages"], 1), 2)
    report["word_recall_mean"] = round(statistics.fmean(recalls.values()), 4) if recalls else None
    report["word_recall_min"] = min(recalls.values(), default=None)
    report["word_recall"] = recalls
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", default="../shared/data/pdfs", help="folder of PDFs")
    parser.add_argument("--pages", type=int, default=4, help="pages scanned from each PDF")
    parser.add_argument("--workers", type=int, default=2, help="vectree ingest --workers")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    ensure_minilm_onnx(default_cache_dir())  # the one-time model conversion is not measured
    report = run(sorted(Path(args.pdfs).glob("*.pdf")), args.pages, args.workers)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{report['ingested']} scans, {report['pages']} pages in {report['seconds']} s: "
        f"{report['pages_per_second']} pages/s with {report['workers']} workers, "
        f"{report['cpu_seconds_per_page']} CPU s a page; word recall mean "
        f"{report['word_recall_mean']}, lowest {report['word_recall_min']}"
    )
    for name, recall in report["word_recall"].items():
        print(f"  {recall:.4f}  {name}")


if __name__ == "__main__":
    main()
