"""Dense RAG baselines: flat passage retrieval, then a single answer call.

``dense`` ranks the ``dense`` chunk store (800-token passages, 400-token overlap) of the run's
documents by cosine to the question and answers from the top 10. ``dense-rerank`` takes the top
30 by cosine, rescores them with a :class:`Reranker` and answers from the best 10.

No cross-encoder weights are available offline (ONNX rerankers such as flashrank fetch theirs
from a model hub at run time, and no installable package was found that ships ms-marco or BGE
reranker weights), so the reranker here is :class:`WindowReranker`, named
``minilm-window-max``. It addresses the largest blind spot of the first stage: MiniLM reads at
most 256 tokens, so a passage's stored vector describes only its first ~254 of 800 tokens. The
reranker embeds every passage whole, in windows of up to 250 tokens, keeps its best window's
cosine to the question, and adds the idf-weighted share of the question's content words the
passage contains (a cross-encoder's exact-term signal). A real cross-encoder drops in by
implementing ``name`` and ``score(query, texts)``. The recorded step and the run's status name
the reranker.

Offline (no model), retrieval is the same and the answer comes from the extractive reader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from pydantic import Field

from graph.strategies.base import (
    StrategyOutcome,
    StrategyRequest,
    answer_from_passages,
    passages_result,
)
from store.chunks import dense_chunks
from store.snapshot import unit_rows
from store.text import lexical_relevance
from tools.passages import Method, PassageSearch, ScoredChunk
from tools.results import Passage, Tool, ToolResult
from tools.schemas import ToolArgs

TOP_K = 10
RERANK_POOL = 30
WINDOW_TOKENS = 250
NO_CROSS_ENCODER = "no cross-encoder weights are available offline"


class PassageSearcher(Protocol):
    """What the flat strategies need from a passage search (``tools.passages.PassageSearch``)."""

    def search(
        self, query: str, doc_ids: list[str], limit: int, method: Method = "hybrid"
    ) -> list[ScoredChunk]: ...


class Reranker(Protocol):
    """Scores passages for a query; higher is better."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


class WindowReranker:
    """``minilm-window-max``: best-window MiniLM cosine plus question-term coverage (see the
    module docstring for why); ``embed`` maps texts to vectors."""

    name = "minilm-window-max"

    def __init__(
        self,
        embed: Callable[[list[str]], Sequence[Sequence[float]]],
        window_tokens: int = WINDOW_TOKENS,
    ) -> None:
        self.embed = embed
        self.window_tokens = window_tokens

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        windows = [token_windows(text, self.window_tokens) for text in texts]
        flat = [w for ws in windows for w in ws]
        vectors = unit_rows(np.asarray(self.embed([query, *flat]), dtype=np.float32))
        cosine = vectors[1:] @ vectors[0]
        best, start = [], 0
        for ws in windows:
            best.append(float(cosine[start : start + len(ws)].max()) if ws else 0.0)
            start += len(ws)
        coverage = term_coverage(query, texts)
        return [0.5 * b + 0.5 * c for b, c in zip(best, coverage, strict=True)]


def token_windows(text: str, size: int) -> list[str]:
    """The text cut into consecutive pieces of at most ``size`` embedding tokens (whole words,
    by the chunkers' own windowing)."""
    return [chunk.text for chunk in dense_chunks("", [text], size=size, overlap=0)]


def term_coverage(query: str, texts: Sequence[str]) -> list[float]:
    """Share of the query's content words each text contains, weighted by idf over the texts
    (the navigator's lexical relevance)."""
    return [float(c) for c in lexical_relevance(query, texts)]


def rerank(query: str, hits: list[ScoredChunk], reranker: Reranker) -> list[ScoredChunk]:
    """Hits by descending reranker score (ties keep the retrieval order)."""
    scores = reranker.score(query, [h.chunk.text for h in hits])
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [hits[int(i)] for i in order]


def as_passage(hit: ScoredChunk) -> Passage:
    return Passage(hit.chunk.doc_id, hit.chunk.segments)


class retrieve_passages(ToolArgs):
    """The passages of the run's documents closest to a query by cosine (layer 0), reranked
    when the strategy has a reranker."""

    layer = 0

    query: str = Field(min_length=1, description="What the passages should be about.")
    limit: int = Field(default=TOP_K, ge=1, le=RERANK_POOL, description="How many passages.")


def retrieval_tool(
    searcher: PassageSearcher, doc_ids: list[str], reranker: Reranker | None = None
) -> Tool:
    """Flat retrieval as the strategy's one tool: cosine top ``limit`` (from a pool of
    RERANK_POOL, reranked, when there is a reranker)."""

    def run(query: str, limit: int) -> ToolResult:
        pool = RERANK_POOL if reranker else limit
        hits = searcher.search(query, doc_ids, pool, method="dense")
        details: dict[str, object] = {"method": "dense", "documents": len(doc_ids)}
        if reranker:
            details |= {"candidates": len(hits), "reranker": reranker.name}
            details["note"] = NO_CROSS_ENCODER
            hits = rerank(query, hits, reranker)
        return passages_result([as_passage(h) for h in hits[:limit]], **details)

    return Tool(retrieve_passages, run, limit=1)


def dense_rag(
    request: StrategyRequest,
    searcher: PassageSearcher,
    doc_ids: list[str],
    reranker: Reranker | None = None,
) -> StrategyOutcome:
    """Retrieve (and rerank) once through the tool engine, answer once."""
    engine = request.engine([retrieval_tool(searcher, doc_ids, reranker)], max_calls=1)
    result = engine.call("retrieve_passages", {"query": request.question, "limit": TOP_K})
    if not result.ok:
        return StrategyOutcome("", "failed", str(result.error))
    outcome = answer_from_passages(request, result.passages)
    if reranker and outcome.status == "answered":
        outcome.detail = f"reranker: {reranker.name}; {NO_CROSS_ENCODER}"
    return outcome


def run_dense(request: StrategyRequest) -> StrategyOutcome:
    """``dense``: top 10 passages by cosine, one answer call."""
    return dense_rag(request, PassageSearch(request.catalog, "dense"), request.scoped_doc_ids())


def run_dense_rerank(request: StrategyRequest) -> StrategyOutcome:
    """``dense-rerank``: top 30 by cosine, reranked to 10, one answer call."""
    return dense_rag(
        request,
        PassageSearch(request.catalog, "dense"),
        request.scoped_doc_ids(),
        WindowReranker(request.catalog.index.embed_dense),
    )
