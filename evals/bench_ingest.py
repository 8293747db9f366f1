"""Ingestion throughput benchmark: pages per second, documents per minute, peak memory.

Each configuration ingests the whole folder into a fresh library in its own process (so peak
memory is that run's alone), on the offline default path (no LLM):

    python -m evals.bench_ingest --pdfs ../shared/data/pdfs --workers 1 2 [--json]

``--labeller`` also times, in this process, what the labeller adds to the parse step:
its line features, trees and candidates against the typographic rule's candidates alone, over
the same text lines (the lines are read for both, so they are not counted).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.train_labeller import page_texts
from ingest.pdf.ocr import OCR_MODES
from ingest.structure.labeller import (
    candidates_from_scores,
    line_scores,
    rule_candidates,
    shipped_labeller,
)
from ingest.structure.typography import document_lines
from store.embeddings import default_cache_dir, ensure_minilm_onnx

FIELDS = (
    "workers",
    "ingested",
    "failed",
    "pages",
    "seconds",
    "pages_per_second",
    "documents_per_minute",
    "peak_memory_mb",
    "cpu_seconds",
)


def run_once(
    pdfs: Path, workers: int, parser: str, ocr: str = "auto", library: Path | None = None
) -> dict[str, Any]:
    """One cold ingest of ``pdfs`` in a child process, into ``library`` (kept) or a scratch
    one; returns its batch report with the CPU time it, its workers and their Tesseract
    processes took (``cpu_seconds``: on a machine shared with other work, the cost a number of
    dedicated cores divides)."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable,
            "-m",
            "graph.cli",
            "--library",
            str(library or Path(scratch) / "library"),
            "ingest",
            str(pdfs),
            "--workers",
            str(workers),
            "--parser",
            parser,
            "--ocr",
            ocr,
            "--json",
        ]
        cpu = children_cpu_seconds()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 2):
            raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
        report: dict[str, Any] = json.loads(done.stdout)
        report.pop("outcomes", None)
        report["cpu_seconds"] = round(children_cpu_seconds() - cpu, 2)
        return report


def children_cpu_seconds() -> float:
    """User and system time of this process's finished children and their descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return float(usage.ru_utime + usage.ru_stime)


def labeller_seconds(pdfs: Path) -> dict[str, Any]:
    """Seconds the labeller's path and the rule's alone take over every PDF's lines."""
    model, pages, with_model, rule_alone = shipped_labeller(), 0, 0.0, 0.0
    for pdf in sorted(pdfs.glob("*.pdf")):
        texts = page_texts(pdf)
        lines = document_lines(texts)
        pages += len(texts)
        started = time.perf_counter()
        candidates_from_scores(lines, line_scores(model, lines, len(texts)))
        with_model += time.perf_counter() - started
        started = time.perf_counter()
        rule_candidates(lines)
        rule_alone += time.perf_counter() - started
    return {
        "pages": pages,
        "labeller_seconds": round(with_model, 2),
        "rule_alone_seconds": round(rule_alone, 2),
        "model_ms_per_page": round(1000 * (with_model - rule_alone) / max(pages, 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", default="../shared/data/pdfs", help="folder of PDFs")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--parser", default="pymupdf4llm")
    parser.add_argument("--ocr", choices=OCR_MODES, default="auto", help="vectree ingest --ocr")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--labeller",
        action="store_true",
        help="also time what the labeller adds over the typographic rule alone",
    )
    args = parser.parse_args()
    ensure_minilm_onnx(default_cache_dir())  # the one-time model conversion is not measured
    results = [
        run_once(Path(args.pdfs), workers, args.parser, args.ocr) for workers in args.workers
    ]
    model = labeller_seconds(Path(args.pdfs)) if args.labeller else None
    if args.json:
        print(json.dumps({"runs": results, "labeller": model} if model else results, indent=2))
        return
    print(" | ".join(FIELDS))
    for row in results:
        print(" | ".join(str(row[field]) for field in FIELDS))
    if model:
        print(
            f"labeller: {model['labeller_seconds']} s over {model['pages']} pages "
            f"(the rule alone {model['rule_alone_seconds']} s): "
            f"{model['model_ms_per_page']} ms a page"
        )


if __name__ == "__main__":
    main()
