"""The programmatic entry point: ask the checkpointed agent a question from Python.

Each run is recorded under its thread id in the library's SQLite checkpointer, so its
trajectory can be read back afterwards (``graph.trajectory``, ``vectree trace``). The command
line and the benchmarks both ask through here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.context import AgentContext
from graph.state import Step
from graph.trajectory.checkpoints import sqlite_checkpointer


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
    as the run has made it.
    """
    from graph.agent import compile_agent

    graph = compile_agent(sqlite_checkpointer(library_root))
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    shown = 0
    inputs: dict[str, Any] = {"question": question, "doc_ids": doc_ids}
    for chunk in graph.stream(inputs, config, context=context, stream_mode="updates"):
        for update in chunk.values():
            steps = (update or {}).get("trajectory") or []
            for step in steps[shown:]:
                if on_step is not None:
                    on_step(step)
            shown = max(shown, len(steps))
    return dict(graph.get_state(config).values)
