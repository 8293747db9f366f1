"""The programmatic entry point: ask the checkpointed agent a question from Python.

Each run is recorded under its thread id in the library's SQLite checkpointer, so its
trajectory can be read back afterwards (``graph.trajectory``, ``vectree trace``). The command
line and the benchmarks both ask through here.

A run records the pid of its process in its checkpoints' metadata, so a run whose process was
killed shows as ``interrupted`` (``graph.trajectory.checkpoints.run_status``); a run that raises
records status ``failed`` with the reason before the error reaches the caller.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from graph.context import AgentContext
from graph.state import Step
from graph.trajectory.checkpoints import OWNER_PID, sqlite_checkpointer
from store.faults import StorageError
from tools.formatting import ocr_mark

LOG = logging.getLogger(__name__)


class RunFailedError(RuntimeError):
    """A run raised. Its thread records status ``failed`` with the reason, so it never lists as
    running; the message is the one line to show (it names the thread)."""


def ask(
    library_root: Path,
    question: str,
    doc_ids: list[str],
    thread_id: str,
    context: AgentContext,
    on_step: Callable[[Step], None] | None = None,
) -> dict[str, Any]:
    """Run one question through the checkpointed agent; returns the final state values.

    An existing ``thread_id`` continues that thread. ``on_step`` sees every tool call as soon
    as the run has made it. A run that raises ends as ``RunFailedError``, recorded as failed.
    """
    from graph.agent import compile_agent

    graph = compile_agent(sqlite_checkpointer(library_root))
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "metadata": {OWNER_PID: os.getpid()},
    }
    shown = 0
    inputs: dict[str, Any] = {"question": question, "doc_ids": doc_ids}
    try:
        for chunk in graph.stream(inputs, config, context=context, stream_mode="updates"):
            for update in chunk.values():
                steps = (update or {}).get("trajectory") or []
                for step in steps[shown:]:
                    if on_step is not None:
                        on_step(step)
                shown = max(shown, len(steps))
    except Exception as exc:
        raise _record_failure(graph, config, exc) from exc
    return dict(graph.get_state(config).values)


def answer_text(values: Mapping[str, Any], thread_id: str) -> str:
    """A finished run as a reader sees it (``vectree ask``, the MCP ``ask`` tool): the answer,
    each cited page with its quote, and the command that shows how the answer was found."""
    lines = [str(values.get("answer", ""))]
    citations = values.get("citations") or []
    if citations:
        lines.append("\nCitations:")
        lines.extend(
            f'  {c["doc_id"]} p.{c["page"]}{ocr_mark(c.get("ocr", False))}: "{c["quote"]}"'
            for c in citations
        )
    lines.append(f"\n(trace: vectree trace {thread_id})")
    return "\n".join(lines)


def _record_failure(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig, exc: Exception
) -> RunFailedError:
    """End the thread's run as ``failed`` with the reason (as if ``finish`` had run, so no node
    is left pending) and return the error to raise."""
    named = str(exc) if isinstance(exc, StorageError) else f"{type(exc).__name__}: {exc}"
    detail = named.splitlines()[0].rstrip(": ")
    ended = {"status": "failed", "status_detail": detail, "answer": "", "citations": []}
    thread_id = config["configurable"]["thread_id"]
    try:
        graph.update_state(config, ended, as_node="finish")
    except Exception as unrecorded:  # a full disk fails the record too: say so, keep the cause
        LOG.warning("thread %s could not record its failure: %s", thread_id, unrecorded)
    return RunFailedError(f"the run failed (thread {thread_id}): {detail}")
