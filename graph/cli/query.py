"""`vectree ask | trace | threads | search`: asking, and inspecting how answers were found."""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graph.api import answer_text, ask
from graph.cli.common import CommandError, library_of, resolve_doc
from graph.console import EXIT_ERROR, EXIT_OK, print_json
from graph.context import AgentContext
from graph.inputs import checked_request
from graph.state import Step, status_text
from graph.trajectory.adherence import LAYER_NAMES, summary_line
from graph.trajectory.checkpoints import (
    list_threads,
    sqlite_checkpointer,
    thread_values,
    trace_record,
)
from graph.trajectory.remote import server_trace
from graph.trajectory.timeline import write_timeline
from store.catalog import open_catalog
from tools import formatting


def _step_line(step: Mapping[str, Any]) -> str:
    status = "ok" if step["ok"] else f"error: {step['error']}"
    pages = _disclosed(step)
    args = ", ".join(f"{k}={v!r}" for k, v in step["args"].items())
    return (
        f"  [{step['seq']:>2}] layer {step['layer']} ({LAYER_NAMES.get(step['layer'], '?')}) "
        f"{step['tool']}({args[:80]}) → {status}, {step['payload_tokens']} tokens{pages}"
    )


def _print_step(step: Step) -> None:
    print(_step_line(step), file=sys.stderr)


def cmd_ask(args: argparse.Namespace) -> int:
    library = library_of(args)
    doc_ids = []
    for wanted in args.doc or []:
        doc_ids.append(resolve_doc(library, wanted))
    checked_request({"question": args.question, "doc_ids": doc_ids})
    try:
        context = AgentContext(
            library=str(library.root), gates=not args.no_gates, strategy=args.strategy
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    thread_id = args.thread or uuid.uuid4().hex[:12]
    if not args.json:
        print(f"thread {thread_id}", file=sys.stderr)
    on_step = None if args.json else _print_step
    values = ask(library.root, args.question, doc_ids, thread_id, context, on_step)
    citations = [
        {
            "doc_id": c["doc_id"],
            "page": c["page"],
            "label": c["label"],
            "quote": c["quote"],
            "ocr": c.get("ocr", False),
        }
        for c in values.get("citations", [])
    ]
    if args.json:
        print_json(
            {
                "answer": values.get("answer", ""),
                "citations": citations,
                "thread_id": thread_id,
                "tool_calls": values.get("tool_calls", 0),
                "model_turns": values.get("model_turns", 0),
                "status": values.get("status", ""),
                "status_detail": values.get("status_detail", ""),
                "strategy": values.get("strategy", context.strategy),
                "usage": values.get("usage", {}),
            }
        )
    else:
        print(answer_text(values, thread_id))
    return EXIT_OK if values.get("status") == "answered" else EXIT_ERROR


def _disclosed(step: Mapping[str, Any]) -> str:
    """Pages a step disclosed: its own page list, or per document for passage searches."""
    if step.get("pages"):
        return f" pages {step['pages']}"
    spread = step.get("disclosed") or {}
    return "".join(f" {doc[:8]}:{pages}" for doc, pages in spread.items())


def _load_trace(args: argparse.Namespace) -> dict[str, Any] | None:
    """The thread's trace record from a running server (--server) or the local checkpointer."""
    if args.server:
        try:
            return server_trace(args.server, args.thread_id)
        except Exception as exc:  # connection refused, 404, … — say what and where
            print(
                f"error: cannot read thread {args.thread_id!r} from {args.server}: {exc}",
                file=sys.stderr,
            )
            return None
    library = library_of(args)
    values = thread_values(sqlite_checkpointer(library.root), args.thread_id)
    if values is None:
        print(
            f"error: no thread {args.thread_id!r} in {library.root} (see `vectree threads`)",
            file=sys.stderr,
        )
        return None
    return trace_record(args.thread_id, values)


def cmd_trace(args: argparse.Namespace) -> int:
    record = _load_trace(args)
    if record is None:
        return EXIT_ERROR
    if args.html:
        written = write_timeline(Path(args.html).expanduser().resolve(), record, library_of(args))
        print(written, file=sys.stderr if args.json else sys.stdout)  # keep --json parseable
        if not args.json:
            return EXIT_OK
    if args.json:
        print_json(record)
        return EXIT_OK
    print(f"thread {record['thread_id']} [{record['strategy']}]: {record['question']}")
    for step in record["steps"]:
        print(_step_line(step))
    status = status_text(record["status"], record.get("status_detail", ""))
    print(f"\n{status} after {record['model_turns']} model turns")
    print(summary_line(record["adherence"]))
    print(record["answer"])
    return EXIT_OK


def cmd_threads(args: argparse.Namespace) -> int:
    threads = list_threads(sqlite_checkpointer(library_of(args).root))
    if args.json:
        print_json(threads)
        return EXIT_OK
    for t in threads:
        print(
            f"{t['thread_id']}  {t['time'][:19]}  {t['status'] or '-':11}  {t['steps']:>3} steps  "
            f"{t['question'][:60]}"
        )
    if not threads:
        print('no recorded threads; ask something with `vectree ask "QUESTION"`')
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from tools.filings import FilingFilter
    from tools.search import DocumentSearch

    catalog = open_catalog(library_of(args).root)
    hits = [
        h.as_dict()
        for h in DocumentSearch(catalog).search(
            args.query,
            limit=args.limit,
            year_min=args.year_min,
            year_max=args.year_max,
            journal=args.journal,
            author=args.author,
            gates=not args.no_gates,
            filing=FilingFilter(args.issuer, args.form, args.fiscal_year, args.fiscal_quarter),
        )
    ]
    if args.json:
        print_json(
            {
                "results": [
                    {k: h[k] for k in ("doc_id", "title", "score", "filing", "matching_sections")}
                    for h in hits
                ]
            }
        )
        return EXIT_OK
    for rank, hit in enumerate(hits, start=1):
        print(formatting.search_line(rank, hit))
    if not hits:
        print("no matching documents")
    return EXIT_OK
