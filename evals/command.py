"""`vectree eval`: benchmark runs (QASPER, LitQA2, FinanceBench, MOSAIC format).

The command belongs to the evaluation package, which sits above the agent: it is added to the
``vectree`` parser through the ``vectree.commands`` entry point (``pyproject.toml``), so the CLI,
kept inside ``graph/``, never imports ``evals``, and this module uses only what lies below the
CLI (``graph.console``). The runner is imported when the command runs, so
other commands do not pay for loading it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from graph.console import EXIT_ERROR, EXIT_OK, positive_int, print_json
from graph.registry import STRATEGY_NAMES
from ingest.pipeline import default_workers

SUMMARY_METRICS = (
    "correct",
    "accuracy",
    "offline_accuracy",
    "evidence_precision",
    "evidence_recall",
    "answer_f1",
    "routing_recall@5",
    "pages_read",
    "payload_tokens",
)
EVAL_HELP = (
    "Run a benchmark through one or more strategies and write results.json, questions.jsonl "
    "and report.md (resumable: finished questions are not re-run)."
)


def add_eval_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Add ``eval`` to the ``vectree`` parser (``command`` adds a sub-command)."""
    from evals.run import DATASETS, SETTINGS

    ev = command("eval", cmd_eval, EVAL_HELP)
    ev.add_argument("dataset", choices=DATASETS, help="benchmark format of --data")
    ev.add_argument("--data", required=True, help="the dataset file (QASPER JSON or a JSONL)")
    ev.add_argument("--pdfs", help="folder of the dataset's PDFs (LitQA2, FinanceBench, MOSAIC)")
    ev.add_argument(
        "--strategy",
        action="append",
        choices=STRATEGY_NAMES,
        metavar="S",
        help=f"strategy to run (repeatable; default vectree): {', '.join(STRATEGY_NAMES)}",
    )
    ev.add_argument("--limit", type=positive_int, help="only the first N questions")
    ev.add_argument("--seeds", type=positive_int, default=1, help="runs per question (seeds)")
    ev.add_argument(
        "--setting",
        choices=SETTINGS,
        default="gold-paper",
        help="gold-paper: each question gets its document; corpus: it must find it first",
    )
    ev.add_argument("--out", help="output folder (default: eval-results/DATASET-SETTING)")
    ev.add_argument(
        "--workers",
        type=positive_int,
        default=default_workers(),
        help="ingestion worker processes (default: one per core)",
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from evals.run import EvalConfig, command_line, run_eval

    out = Path(args.out or f"eval-results/{args.dataset}-{args.setting}").expanduser().resolve()
    library = Path(args.library).expanduser().resolve() if args.library else out / "library"
    try:
        config = EvalConfig(
            dataset=args.dataset,
            data=Path(args.data).expanduser().resolve(),
            pdfs=Path(args.pdfs).expanduser().resolve() if args.pdfs else None,
            out=out,
            library=library,
            strategies=list(dict.fromkeys(args.strategy or ["vectree"])),
            limit=args.limit,
            seeds=args.seeds,
            setting=args.setting,
            workers=args.workers,
            command=command_line(sys.argv[1:]),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if not config.data.is_file():
        print(f"error: no dataset file {config.data}", file=sys.stderr)
        return EXIT_ERROR
    results = run_eval(config, progress=not args.json)
    if args.json:
        print_json(results)
        return EXIT_OK
    for name, summary in results["strategies"].items():
        shown = []
        for metric in SUMMARY_METRICS:
            stat = summary["metrics"].get(metric)
            if stat:
                shown.append(f"{metric} {stat['mean']:,.3f}".rstrip("0").rstrip("."))
        print(f"{name:>15} ({summary['questions']} questions): " + ", ".join(shown))
    print(f"\n{out / 'report.md'}")
    return EXIT_OK
