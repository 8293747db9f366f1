"""Offline end-to-end `ask` latency: the navigator answering questions over a real library.

Ingests the development PDFs into ``--library`` (reused when present), then asks a fixed set of
questions through the checkpointed agent and reports p50/p95 wall time per question, tool calls,
model turns and tokens disclosed. The first question also pays for loading models; it is
reported separately as the cold start.

    python -m evals.bench_ask --pdfs ../shared/data/pdfs --library /tmp/vectree-bench [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from graph.api import ask
from graph.context import AgentContext
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs

QUESTIONS = [
    "How many papers does the S2ORC corpus contain?",
    "Which parsing algorithm is used for labeled dependency parsing?",
    "How is the earth mover's distance computed efficiently for similarity search?",
    "What is the solely incidental prong of the broker-dealer exclusion?",
    "What was Disney's revenue in the first quarter of fiscal 2025?",
    "How many summaries per case does Multi-LexSum provide?",
    "What does MapReduce do to handle machine failures?",
    "What is ultra light bosonic dark matter?",
    "How does the semantic parser integrate syntax and semantics?",
    "What noise model is used for matrix decomposition?",
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run(pdfs: Path, library: Path) -> dict[str, Any]:
    """Ingest (if needed) and time every question."""
    ingest_paths([pdfs], IngestContext(library=str(library)), workers=2, progress=False)
    context = AgentContext(library=str(library))
    rows = []
    for question in QUESTIONS:
        started = time.perf_counter()
        values = ask(library, question, [], f"bench-{uuid.uuid4().hex[:8]}", context)
        rows.append(
            {
                "question": question,
                "seconds": round(time.perf_counter() - started, 3),
                "tool_calls": values.get("tool_calls", 0),
                "model_turns": values.get("model_turns", 0),
                "payload_tokens": sum(s["payload_tokens"] for s in values.get("trajectory", [])),
                "cited_pages": len(values.get("citations", [])),
                "status": values.get("status"),
                "status_detail": values.get("status_detail", ""),
            }
        )
    close_catalogs()
    warm = [r["seconds"] for r in rows[1:]]
    return {
        "questions": len(rows),
        "cold_start_seconds": rows[0]["seconds"],
        "p50_seconds": round(statistics.median(warm), 3),
        "p95_seconds": round(percentile(warm, 0.95), 3),
        "mean_tool_calls": round(statistics.mean(r["tool_calls"] for r in rows), 2),
        "mean_payload_tokens": round(statistics.mean(r["payload_tokens"] for r in rows), 1),
        "answered": sum(r["status"] == "answered" for r in rows),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", default="../shared/data/pdfs")
    parser.add_argument("--library", default="/tmp/vectree-bench-ask")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(Path(args.pdfs), Path(args.library))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for row in result["rows"]:
        calls, tokens = row["tool_calls"], row["payload_tokens"]
        print(f"{row['seconds']:>7.2f}s  {calls:>2} calls  {tokens:>6} tokens  {row['question']}")
    print({k: v for k, v in result.items() if k != "rows"})


if __name__ == "__main__":
    main()
