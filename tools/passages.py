"""Passage search over a chunk store (the chunk-based strategies' retriever).

Hybrid by default: cosine and BM25 ranks fused by reciprocal rank fusion (k = 60), the same
fusion the document search uses; ``dense`` ranks by cosine alone (the plain dense baseline).
The documents a search may touch are chunked on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from store.catalog import Catalog
from store.chunks import Chunk, ChunkStore
from store.vectors import SparseQuery
from tools.search import rrf

Method = Literal["hybrid", "dense"]


@dataclass(frozen=True)
class ScoredChunk:
    """A chunk and why it ranked: the fused (or cosine) score and each retriever's score."""

    chunk: Chunk
    score: float
    dense: float | None
    bm25: float | None


class PassageSearch:
    """Search one chunk scheme of a catalog."""

    def __init__(self, catalog: Catalog, scheme: str) -> None:
        self.catalog = catalog
        self.store = ChunkStore(catalog, scheme)

    def prepare(self, doc_ids: list[str]) -> int:
        """Chunk whatever of ``doc_ids`` is not chunked yet; returns how many were added."""
        return self.store.ensure(doc_ids)

    def search(
        self, query: str, doc_ids: list[str], limit: int, method: Method = "hybrid"
    ) -> list[ScoredChunk]:
        """The best ``limit`` chunks of the given documents for ``query``."""
        self.prepare(doc_ids)
        snapshot = self.store.snapshot()
        if not snapshot.chunks or not doc_ids:
            return []
        index = self.catalog.index
        dense_query = np.asarray(index.embed_dense([query])[0], dtype=np.float32)
        sparse_query = SparseQuery.from_vector(index.embed_sparse_query(query))
        mask = snapshot.mask(doc_ids)
        cosine, bm25 = snapshot.scores(dense_query, sparse_query, mask)
        if method == "dense":
            score = np.where(np.isnan(cosine), -np.inf, cosine)
        else:
            score = np.where(mask, rrf(cosine, bm25), -np.inf)
        order = np.lexsort((np.arange(len(score)), -np.nan_to_num(cosine, nan=-2.0), -score))
        hits = [int(i) for i in order[: min(limit, int(mask.sum()))]]
        return [
            ScoredChunk(
                chunk=snapshot.chunks[i],
                score=float(score[i]),
                dense=None if np.isnan(cosine[i]) else float(cosine[i]),
                bm25=None if np.isnan(bm25[i]) else float(bm25[i]),
            )
            for i in hits
        ]
