"""The registry of selectable retrieval strategies, each declared once in ``STRATEGY_SPECS``.

``vectree`` and its ablations (``no-tree``, ``no-vector``, ``no-gates``) run the agent loop
(``model_turn`` → layer nodes) with some tools or the gates taken away; a strategy whose model
calls its own tools runs, with a model, as the ``tool_loop`` subgraph; every other run goes
through the ``strategy`` node and the strategy's runner (imported on first use, so a strategy's
dependencies load only when it runs; the runners live in ``graph.strategies``). All of them
record their trajectory in the same step format. The CLI choices, the context field's allowed
values and help, the tools an ablation removes, its system-prompt note, the chunk stores an
evaluation builds and the README table all come from this one list.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class StrategySpec:
    """One strategy: its name, what it does, and how it runs."""

    name: str
    help: str
    runner: str | None = None
    """``module:function`` of a strategy with its own retrieval; None = the agent loop."""
    tool_loop: str | None = None
    """``module:function`` giving the tools, budget and prompt of a strategy whose model calls
    its own tools: with a model it runs as the graph's ``tool_loop`` subgraph, one checkpointed
    step per model turn and per batch of calls (offline, its runner's fixed policy runs)."""
    loop_for_one_document: bool = False
    """True: the tool loop runs only when the run is restricted to one document (several
    documents run through the runner, which may run one loop per document)."""
    chunk_scheme: str | None = None
    """The chunk store (``store.chunks``) it searches, built per document on first use."""
    disabled_tools: frozenset[str] = frozenset()
    """Agent tools an ablation takes away."""
    prompt_note: str = ""
    """What the system prompt tells the model about an ablation."""
    gates: bool = True
    """False: document search without relevance gates."""

    @property
    def uses_agent_loop(self) -> bool:
        return self.runner is None


STRATEGY_SPECS: tuple[StrategySpec, ...] = (
    StrategySpec("vectree", "the default agent: search documents → section trees → pages"),
    StrategySpec(
        "no-tree",
        "ablation: no tree tools; search results name their sections' page ranges",
        disabled_tools=frozenset({"get_document_tree", "search_within_paper"}),
        prompt_note=(
            "\n\nThis run has no section-tree tools (get_document_tree, search_within_paper): "
            "choose pages from the page ranges of the sections that search results name."
        ),
    ),
    StrategySpec(
        "no-vector",
        "ablation: no document search; every tree in scope is in the first message",
        disabled_tools=frozenset({"search_documents", "get_paper_metadata"}),
        prompt_note=(
            "\n\nThis run has no document search (search_documents, get_paper_metadata): the "
            "section trees of every document are in the question message; choose pages from "
            "them."
        ),
    ),
    StrategySpec("no-gates", "ablation: document search with raw fusion, no gates", gates=False),
    StrategySpec(
        "pageindex",
        "PageIndex-style tree search: one validated action per turn over an outline",
        runner="graph.strategies.pageindex:run",
        tool_loop="graph.strategies.pageindex:declared_loop",
        loop_for_one_document=True,
        chunk_scheme="dense",
    ),
    StrategySpec(
        "verified-tree",
        "the model proposes node ids, each is verified; lexical fallback",
        runner="graph.strategies.verified_tree:run",
        tool_loop="graph.strategies.verified_tree:declared_loop",
        loop_for_one_document=True,
    ),
    StrategySpec(
        "rit",
        "RIT-RAG: node-aligned chunk search induces sub-trees, then reads nodes",
        runner="graph.strategies.rit:run",
        tool_loop="graph.strategies.rit:declared_loop",
        chunk_scheme="rit",
    ),
    StrategySpec(
        "agentic-search",
        "chunk-level agent: search_chunks and read_chunks",
        runner="graph.strategies.agentic_search:run",
        tool_loop="graph.strategies.agentic_search:declared_loop",
        chunk_scheme="rit",
    ),
    StrategySpec(
        "dense",
        "800-token passages, top 10 by cosine, one answer call",
        runner="graph.strategies.dense:run_dense",
        chunk_scheme="dense",
    ),
    StrategySpec(
        "dense-rerank",
        "30 passages reranked to 10, one answer call",
        runner="graph.strategies.dense:run_dense_rerank",
        chunk_scheme="dense",
    ),
    StrategySpec(
        "raptor",
        "RAPTOR collapsed-tree retrieval over clustered summaries",
        runner="graph.strategies.raptor:run",
        chunk_scheme="dense",
    ),
    StrategySpec(
        "search-o1",
        "Search-o1: the model issues searches, notes condense them",
        runner="graph.strategies.search_o1:run",
        tool_loop="graph.strategies.search_o1:declared_loop",
        chunk_scheme="dense",
    ),
)
STRATEGIES: dict[str, StrategySpec] = {spec.name: spec for spec in STRATEGY_SPECS}
STRATEGY_NAMES: tuple[str, ...] = tuple(STRATEGIES)
STRATEGY_HELP = "Retrieval strategy: " + "; ".join(
    f"{spec.name} ({spec.help})" for spec in STRATEGY_SPECS
)


def strategy_spec(name: str) -> StrategySpec:
    """The declaration of a strategy (``KeyError`` for an unknown name)."""
    return STRATEGIES[name]


def declared(strategy: str, kind: Literal["runner", "tool_loop"]) -> Any:
    """The function a strategy's ``module:function`` declaration names, imported on first use
    (typed where its signature is known: ``base.runner``, ``tool_loop.strategy_loop``)."""
    target = getattr(STRATEGIES[strategy], kind)
    if target is None:
        missing = "declares no tool loop" if kind == "tool_loop" else "runs the agent loop"
        raise ValueError(f"strategy {strategy!r} {missing}")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
