"""Selectable retrieval strategies: the default agent, its ablations, and the other systems.

``vectree`` and its ablations (``no-tree``, ``no-vector``, ``no-gates``) run the agent loop
(``model_turn`` → layer nodes); every other strategy runs inside the ``strategy`` node through
the runner named here (imported on first use, so a strategy's dependencies load only when it
runs). All of them record their trajectory in the same step format.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graph.strategies.base import StrategyOutcome, StrategyRequest

Runner = Callable[["StrategyRequest"], "StrategyOutcome"]

RUNNERS: dict[str, str] = {
    "pageindex": "graph.strategies.pageindex:run",
    "verified-tree": "graph.strategies.verified_tree:run",
    "rit": "graph.strategies.rit:run",
    "agentic-search": "graph.strategies.agentic_search:run",
    "dense": "graph.strategies.dense:run_dense",
    "dense-rerank": "graph.strategies.dense:run_dense_rerank",
    "raptor": "graph.strategies.raptor:run",
    "search-o1": "graph.strategies.search_o1:run",
}

CHUNK_SCHEMES: dict[str, str] = {
    "dense": "dense",
    "dense-rerank": "dense",
    "search-o1": "dense",
    "raptor": "dense",
    "rit": "rit",
    "agentic-search": "rit",
    "pageindex": "dense",
}
"""The chunk store (``store.chunks``) a strategy searches (``pageindex`` only to choose
documents in corpus mode); built per document on first use."""


def runner(strategy: str) -> Runner:
    """The run function of a strategy that does not use the agent loop."""
    module, _, name = RUNNERS[strategy].partition(":")
    run: Runner = getattr(importlib.import_module(module), name)
    return run
