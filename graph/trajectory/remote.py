"""Reading trajectories from a running LangGraph server through langgraph-sdk.

The SDK returns thread history ten checkpoints at a time by default, which silently truncates a
long run; ``full_history`` pages with ``before=`` until the server has nothing older.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import get_sync_client

from graph.trajectory.checkpoints import trace_record

HISTORY_PAGE = 100


def full_history(url: str, thread_id: str) -> list[dict[str, Any]]:
    """Every checkpoint of a thread, newest first."""
    client = get_sync_client(url=url)
    states: list[dict[str, Any]] = []
    before: Any = None
    while True:
        page = client.threads.get_history(thread_id, limit=HISTORY_PAGE, before=before)
        states.extend(dict(state) for state in page)
        if len(page) < HISTORY_PAGE:
            return states
        before = page[-1]["checkpoint"]


def server_trace(url: str, thread_id: str) -> dict[str, Any]:
    """The trace record of a server thread, plus how many checkpoints its history holds."""
    history = full_history(url, thread_id)
    if not history:
        raise LookupError(f"thread {thread_id!r} has no history on {url}")
    record = trace_record(thread_id, dict(history[0].get("values") or {}))
    record["checkpoints"] = len(history)
    return record
