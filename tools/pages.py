"""Ranking inside one document: its sections, then its pages, the tree lending each page the
score of the best section that holds it.

``search_within_paper`` and the offline navigator go from the tree straight to the best pages
this way instead of reading whole sections in order. Both steps are hybrid, like layer 0: BM25
(``store.bm25``, the index's tokens) and dense cosine (the index's embedding model), each divided
by its best value among the candidates and added.

- Sections (every node) are scored by BM25 over their whole text (title and pages) and dense
  cosine of their title and summary; a parent's text includes its children's.
- Every page is scored by BM25 over its text, dense cosine of its first ``DENSE_WORDS`` words,
  and ``PAGE_SECTION_WEIGHT`` × its section score (the best-scoring node whose page range holds
  it, that score divided by the best node's). The structure so decides between pages whose
  words match about equally: a balance-sheet page inside the section about the balance sheet
  beats the note that mentions it. Only the ``DENSE_POOL`` pages best by BM25 and section are
  embedded, so a 300-page filing costs at most that many embeddings per query on a CPU.
- **Financial statements first.** A question that names a statement ("the balance sheet",
  "statement of cash flows") or a figure only a statement holds ("capital expenditure", "total
  current assets", "COGS") is answered from that statement, whose words the MD&A and the notes
  repeat on many pages. So the pages that print the statement's own title in their first lines
  (``statements.py``) are ranked before every other page, in their own score order: an
  ordering rule, with no weight to fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from store.bm25 import BM25Index, bm25_tokens
from store.chunks import page_owners
from store.entries import section_pages
from store.types import TreeNode, walk
from tools.search import scaled
from tools.statements import asked_statements, statement_pages

Embed = Callable[[list[str]], list[list[float]]]
Floats = NDArray[np.float64]

DENSE_POOL = 40
DENSE_WORDS = 200
PAGE_DENSE_WEIGHT = 2.0
PAGE_SECTION_WEIGHT = 1.0
"""Weights of the dense and the section signal against BM25 when pages are ranked; chosen with
the navigator's reading rule on the QASPER development papers, the choice cross-validated over
5 folds by paper (``python -m evals.tune_reader``; folds in evals/reports/README.md)."""


@dataclass(frozen=True)
class RankedPage:
    """One page of a document with its raw signals (NaN-free: 0 where not scored)."""

    page: int
    bm25: float
    dense: float
    section: float
    node_id: str
    statement: bool = False
    """The page prints a financial statement the question asks for."""

    def as_dict(self, score: float) -> dict[str, float | int | str | bool]:
        return {
            "page": self.page,
            "score": round(score, 4),
            "bm25": round(self.bm25, 4),
            "dense": round(self.dense, 4),
            "section": round(self.section, 4),
            "node_id": self.node_id,
            "statement": self.statement,
        }


def page_score(
    bm25: Floats,
    dense: Floats,
    section: Floats,
    dense_weight: float = PAGE_DENSE_WEIGHT,
    section_weight: float = PAGE_SECTION_WEIGHT,
    statement: NDArray[np.bool_] | None = None,
) -> Floats:
    """Hybrid page score: BM25 and dense, each scaled by its best candidate, plus the section
    score (already scaled within its document); the pages of an asked-for statement are lifted
    above every other page, keeping their own order."""
    score = scaled(bm25) + dense_weight * scaled(dense) + section_weight * section
    if statement is None or not statement.any():
        return score
    return np.where(statement, score + score.max() - score.min() + 1.0, score)


def scores_of(ranked: Sequence[RankedPage]) -> Floats:
    """``page_score`` of ranked pages with the product's weights."""
    return page_score(
        np.array([r.bm25 for r in ranked]),
        np.array([r.dense for r in ranked]),
        np.array([r.section for r in ranked]),
        statement=np.array([r.statement for r in ranked], dtype=bool),
    )


def pages_to_read(scores: Floats, most: int, ratio: float) -> list[int]:
    """Positions of the best-scoring pages, best first: at most ``most``, each scoring at least
    ``ratio`` × the best (the navigator's reading rule, also what ``evals.tune_reader`` tunes)."""
    order = np.argsort(-scores, kind="stable")[:most]
    return [int(i) for i in order if scores[i] >= ratio * scores[order[0]]]


def rank_sections(
    query: str, tree: list[TreeNode], pages: list[str], embed: Embed
) -> list[tuple[TreeNode, float]]:
    """Every node of the tree with its hybrid score, best first (ties in document order)."""
    nodes = walk(tree)
    if not nodes:
        return []
    lexical = BM25Index.build([_section_tokens(n, pages) for n in nodes]).score(bm25_tokens(query))
    dense = _cosines(query, [f"{n['title']}. {n['summary']}" for n in nodes], embed)
    fused = scaled(lexical) + scaled(dense)
    order = np.lexsort((np.arange(len(nodes)), -fused))
    return [(nodes[int(i)], float(fused[i])) for i in order]


def section_signal(sections: Sequence[tuple[TreeNode, float]], total_pages: int) -> Floats:
    """Each page's section score (index 0 is page 1): the best score of a node whose range
    holds the page, divided by the best node's; 0 for pages no node holds."""
    signal = np.zeros(total_pages)
    best = max((score for _, score in sections), default=0.0)
    if best <= 0:
        return signal
    for node, score in sections:
        span = slice(node["start_page"] - 1, min(node["end_page"], total_pages))
        signal[span] = np.maximum(signal[span], score / best)
    return signal


def rank_pages(
    query: str,
    tree: list[TreeNode],
    pages: list[str],
    embed: Embed,
    sections: Sequence[tuple[TreeNode, float]] | None = None,
) -> list[RankedPage]:
    """Every page of the document with its three signals, in page order; ``sections`` is
    ``rank_sections``'s result when the caller already has it."""
    if not pages:
        return []
    ranked = rank_sections(query, tree, pages, embed) if sections is None else sections
    section = section_signal(ranked, len(pages))
    lexical = BM25Index.build([bm25_tokens(t) for t in pages]).score(bm25_tokens(query))
    pool = np.argsort(-(scaled(lexical) + PAGE_SECTION_WEIGHT * section), kind="stable")
    pool = pool[:DENSE_POOL]
    dense = np.zeros(len(pages))
    dense[pool] = _cosines(query, [" ".join(pages[i].split()[:DENSE_WORDS]) for i in pool], embed)
    owners = page_owners(tree, len(pages))
    printed = statement_pages(asked_statements(query), pages)
    return [
        RankedPage(
            n,
            float(lexical[n - 1]),
            float(dense[n - 1]),
            float(section[n - 1]),
            owners[n]["node_id"] if n in owners else "",
            n in printed,
        )
        for n in range(1, len(pages) + 1)
    ]


def _section_tokens(node: TreeNode, pages: list[str]) -> list[str]:
    """A section's title and pages as BM25 tokens (from the cached tokens of each page)."""
    tokens = list(bm25_tokens(node["title"]))
    for text in section_pages(node, pages):
        tokens.extend(bm25_tokens(text))
    return tokens


_VECTORS: dict[str, Floats] = {}
VECTOR_CACHE = 20_000
"""Unit vectors of page and section texts kept per process (about 30 MB): every question
about a document ranks the same texts, and embedding them is the cost of a query on a CPU."""


def _cosines(query: str, texts: list[str], embed: Embed) -> Floats:
    """Cosine of each text to the query; text vectors are cached, the query's is not."""
    if not texts:
        return np.zeros(0)
    if len(_VECTORS) + len(texts) > VECTOR_CACHE:
        _VECTORS.clear()
    missing = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
    vectors = _unit(embed([query, *missing]))
    _VECTORS.update(zip(missing, vectors[1:], strict=True))
    return np.array([float(_VECTORS[t] @ vectors[0]) for t in texts])


def _unit(rows: list[list[float]]) -> Floats:
    vectors = np.asarray(rows, dtype=np.float64)
    return np.asarray(vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12))
