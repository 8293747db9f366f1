"""Exact scores of every committed structural entry, for calibration and recall measurements.

The search itself runs on Qdrant (``store.search_engine``), whose HNSW graph is approximate.
``evals.calibrate_gates`` needs the score of every (question, document) pair and
``evals.bench_search`` measures recall@10 against exhaustive scoring; both load the entries
once (``store.snapshot.Rows``) and score all of them with Qdrant's formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from store.catalog import Catalog
from store.snapshot import Postings, Rows, build_postings, cosine_scores, unit_rows
from store.vectors import BoolArray, FloatArray, IntArray, SparseQuery


@dataclass
class ExactScorer:
    """Committed entries grouped by document (document entry first), scored exhaustively."""

    payloads: list[dict[str, Any]]
    doc_ids: list[str]
    """One per document, in row order."""
    starts: IntArray
    """First row of each document."""
    matrix: FloatArray
    postings: Postings

    @classmethod
    def load(cls, catalog: Catalog) -> ExactScorer:
        index = catalog.index
        rows = Rows.load(index.client, index.collection)
        order = sorted(range(len(rows.payloads)), key=lambda i: _row_key(rows.payloads[i]))
        payloads = [rows.payloads[i] for i in order]
        doc_of_row = [str(p["doc_id"]) for p in payloads]
        starts = [i for i, d in enumerate(doc_of_row) if i == 0 or d != doc_of_row[i - 1]]
        return cls(
            payloads=payloads,
            doc_ids=[doc_of_row[i] for i in starts],
            starts=np.asarray(starts, dtype=np.int64),
            matrix=unit_rows(rows.dense[order] if order else rows.dense),
            postings=build_postings([rows.sparse[i] for i in order], rows),
        )

    def dense(self, query: FloatArray) -> FloatArray:
        """Cosine of every entry."""
        return cosine_scores(self.matrix, query)

    def bm25(self, query: SparseQuery) -> tuple[FloatArray, BoolArray]:
        """BM25 of every entry and which entries share a term with the query."""
        return self.postings.bm25(query, len(self.payloads))

    def per_document(self, scores: FloatArray) -> FloatArray:
        """Each document's best entry score."""
        return np.asarray(np.maximum.reduceat(scores, self.starts), dtype=np.float32)


def _row_key(payload: dict[str, Any]) -> tuple[str, int, str]:
    return (
        str(payload["doc_id"]),
        0 if payload.get("entry_type") == "document" else 1,
        str(payload.get("node_id") or ""),
    )
