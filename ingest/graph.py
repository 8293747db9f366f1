"""The ingestion graph, exported in langgraph.json as ``ingest``.

``build_ingest_graph(with_index=False)`` stops after ``embed``: parallel CLI workers run that
part (parsing to embedding) in separate processes and hand the finished state to the parent,
which owns the (single) Qdrant client and runs the ``index`` node itself.

The exported graph is built ``confined``: its callers are the server's clients, so it starts with
``check_input`` (sources only from the inbox, only the server's library). The CLI builds the
same nodes without it, since its user may name any file. Confinement is chosen when the graph is
built, never by a field of the input or the context, which a caller could set.
"""

from __future__ import annotations

import itertools
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ingest import nodes
from ingest.context import IngestContext, ServedIngestContext
from ingest.state import IngestInput, IngestOutput, IngestState

STEPS = (
    "parse",
    "structure",
    "verify",
    "tree",
    "split",
    "summarise",
    "describe",
    "embed",
    "index",
)


def _continue_to(following: str):  # type: ignore[no-untyped-def]
    """Route to the next step unless the document failed or was already present."""

    def route(state: IngestState) -> str:
        return END if state.get("status") in ("failed", "present", "invalid") else following

    return route


NODES = {
    "check_input": nodes.check_input,
    "parse": nodes.parse,
    "structure": nodes.structure,
    "verify": nodes.verify,
    "tree": nodes.tree,
    "split": nodes.split,
    "summarise": nodes.summarise_node,
    "describe": nodes.describe_node,
    "embed": nodes.embed,
    "index": nodes.index,
}


def build_ingest_graph(
    with_index: bool = True, confined: bool = False
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the per-document pipeline; a failed or already-present document ends early.

    ``confined`` puts ``check_input`` before ``parse``: a refused request ends there, failed,
    with a one-line reason.
    """
    builder = StateGraph(
        IngestState,
        context_schema=ServedIngestContext if confined else IngestContext,
        input_schema=IngestInput,
        output_schema=IngestOutput if with_index else IngestState,
    )
    steps = (("check_input",) if confined else ()) + (STEPS if with_index else STEPS[:-1])
    for name in steps:
        builder.add_node(name, NODES[name])  # type: ignore[call-overload]
    builder.add_edge(START, steps[0])
    for name, following in itertools.pairwise(steps):
        builder.add_conditional_edges(name, _continue_to(following), [following, END])
    builder.add_edge(steps[-1], END)
    return builder.compile(name="ingest")


def build_index_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """Just the ``index`` node, for states prepared by ``build_ingest_graph(with_index=False)``."""
    builder = StateGraph(IngestState, context_schema=IngestContext, output_schema=IngestOutput)
    builder.add_node("index", nodes.index)  # type: ignore[call-overload]
    builder.add_edge(START, "index")
    builder.add_edge("index", END)
    return builder.compile(name="ingest-index")


graph = build_ingest_graph(confined=True)
