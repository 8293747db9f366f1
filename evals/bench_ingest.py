"""Ingestion throughput benchmark: pages per second, documents per minute, peak memory.

Each configuration ingests the whole folder into a fresh library in its own process (so peak
memory is that run's alone), on the offline default path (no LLM):

    python -m evals.bench_ingest --pdfs ../shared/data/pdfs --workers 1 2 [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

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
)


def run_once(pdfs: Path, workers: int, parser: str) -> dict[str, Any]:
    """One cold ingest of ``pdfs`` in a child process; returns its batch report."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable,
            "-m",
            "graph.cli",
            "--library",
            str(Path(scratch) / "library"),
            "ingest",
            str(pdfs),
            "--workers",
            str(workers),
            "--parser",
            parser,
            "--json",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 2):
            raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
        report: dict[str, Any] = json.loads(done.stdout)
        report.pop("outcomes", None)
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", default="../shared/data/pdfs", help="folder of PDFs")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--parser", default="pymupdf4llm")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    ensure_minilm_onnx(default_cache_dir())  # the one-time model conversion is not measured
    results = [run_once(Path(args.pdfs), workers, args.parser) for workers in args.workers]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(" | ".join(FIELDS))
    for row in results:
        print(" | ".join(str(row[field]) for field in FIELDS))


if __name__ == "__main__":
    main()
