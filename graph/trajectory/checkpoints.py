"""The SQLite checkpointer of ``graph.api.ask`` (and so of the CLI), and reading recorded
threads back from it.

Every step of every run is checkpointed in ``LIBRARY/checkpoints.sqlite``, so a trajectory can
be read after the fact, by thread id, from a new process.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from graph.trajectory.adherence import layer_adherence

CHECKPOINT_FILE = "checkpoints.sqlite"


def sqlite_checkpointer(library_root: Path) -> SqliteSaver:
    """A checkpointer on the library's SQLite file (created on first use)."""
    library_root.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(library_root / CHECKPOINT_FILE, check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()
    return saver


def thread_values(saver: SqliteSaver, thread_id: str) -> dict[str, Any] | None:
    """The latest state values recorded for a thread, or None when there is no such thread."""
    checkpoint = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if checkpoint is None:
        return None
    return dict(checkpoint.checkpoint.get("channel_values", {}))


def list_threads(saver: SqliteSaver) -> list[dict[str, Any]]:
    """Each recorded thread with its question, last update time and number of tool calls."""
    latest: dict[str, Any] = {}
    for item in saver.list(None):
        thread_id = item.config["configurable"]["thread_id"]
        if thread_id not in latest:  # newest checkpoint first
            latest[thread_id] = item
    threads = []
    for thread_id, item in latest.items():
        values = item.checkpoint.get("channel_values", {})
        threads.append(
            {
                "thread_id": thread_id,
                "question": values.get("question", ""),
                "time": item.checkpoint.get("ts", ""),
                "steps": len(values.get("trajectory", []) or []),
                "status": values.get("status", ""),
            }
        )
    return sorted(threads, key=lambda t: t["time"], reverse=True)


def trace_record(thread_id: str, values: dict[str, Any]) -> dict[str, Any]:
    """The trajectory of a thread in the `vectree trace --json` shape."""
    steps = [
        {
            key: step.get(key)
            for key in ("seq", "layer", "tool", "args", "ok", "payload_tokens", "pages")
        }
        | {"doc_id": step.get("doc_id"), "error": step.get("error")}
        | {key: step[key] for key in ("disclosed", "found") if step.get(key)}
        for step in values.get("trajectory", []) or []
    ]
    return {
        "thread_id": thread_id,
        "question": values.get("question", ""),
        "answer": values.get("answer", ""),
        "citations": values.get("citations", []),
        "status": values.get("status", ""),
        "status_detail": values.get("status_detail", ""),
        "strategy": values.get("strategy", "vectree"),
        "usage": values.get("usage", {}),
        "model_turns": values.get("model_turns", 0),
        "steps": steps,
        "adherence": layer_adherence(steps).as_dict(),
    }
