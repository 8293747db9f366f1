"""Every point of a collection in numpy: exhaustive scores for the chunk baselines and tools.

The structural search runs on Qdrant (``store.search_engine``). Some jobs instead need a score
for *every* point: the chunk baselines (``store.chunks``) rerank and mix whole score vectors,
``evals.calibrate_gates`` reads the score distribution of every (question, document) pair,
and ``evals.bench_search`` measures recall against exact scoring. They load the points once
(``Rows``, a paged scroll) and score them here with Qdrant's own formulas: cosine of unit
vectors, and BM25 as Qdrant's IDF modifier times the stored term weights.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from qdrant_client import models

from store.index import COMMITTED, DENSE, SPARSE, scroll_points
from store.index_client import IndexClient
from store.vectors import BoolArray, FloatArray, IntArray, SparseQuery


def qdrant_idf(document_frequency: NDArray[Any], corpus_size: int) -> NDArray[np.float64]:
    """Qdrant's IDF modifier: ln((N - n + 0.5) / (n + 0.5) + 1), N = points with some term
    (Edge and the server also count deleted points until their segment is vacuumed)."""
    df = np.asarray(document_frequency, dtype=np.float64)
    return np.log((corpus_size - df + 0.5) / (df + 0.5) + 1.0)


@dataclass
class Postings:
    """A BM25 inverted index: for term ``terms[i]``, rows/values in ``starts[i]:starts[i+1]``."""

    terms: IntArray
    starts: IntArray
    rows: IntArray
    values: FloatArray
    document_frequency: IntArray  # over every live point with a sparse vector, like Qdrant
    corpus_points: int

    def bm25(self, query: SparseQuery, rows_total: int) -> tuple[FloatArray, BoolArray]:
        """BM25 of every row (Qdrant's IDF × stored term weights) and which rows share a term."""
        scores = np.zeros(rows_total, dtype=np.float32)
        touched = np.zeros(rows_total, dtype=bool)
        for term, weight in zip(query.indices.tolist(), query.values.tolist(), strict=True):
            rows, values, df = self.lookup(term)
            if not len(rows):
                continue
            idf = float(qdrant_idf(np.array(df), self.corpus_points))
            scores[rows] += np.float32(weight * idf) * values  # a term occurs once per row
            touched[rows] = True
        return scores, touched

    def lookup(self, term: int) -> tuple[IntArray, FloatArray, int]:
        """Rows and weights of one term among committed rows, and its collection-wide df."""
        at = int(np.searchsorted(self.terms, term))
        if at >= len(self.terms) or self.terms[at] != term:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), 0
        lo, hi = int(self.starts[at]), int(self.starts[at + 1])
        return self.rows[lo:hi], self.values[lo:hi], int(self.document_frequency[at])


@dataclass
class Rows:
    """Committed points as pulled from Qdrant (any order), plus collection-wide term counts."""

    payloads: list[dict[str, Any]]
    dense: FloatArray
    sparse: list[tuple[IntArray, FloatArray]]
    every_term: IntArray  # term ids of every point with some BM25 term, concatenated
    sparse_points: int  # how many such points (Qdrant's N for IDF)

    @classmethod
    def from_records(cls, records: Iterable[models.Record]) -> Rows:
        """From scrolled records; uncommitted points count for IDF but are not searchable."""
        payloads: list[dict[str, Any]] = []
        dense: list[list[float]] = []
        sparse: list[tuple[IntArray, FloatArray]] = []
        terms: list[IntArray] = []
        for record in records:
            vectors = record.vector if isinstance(record.vector, dict) else {}
            vector = vectors.get(SPARSE)
            pair = _sparse_pair(vector if isinstance(vector, models.SparseVector) else None)
            if len(pair[0]):  # Qdrant's N counts the points that have some term
                terms.append(pair[0])
            values = vectors.get(DENSE)
            payload = record.payload or {}
            if payload.get("committed") == COMMITTED and isinstance(values, list):
                payloads.append(payload)
                dense.append(cast(list[float], values))
                sparse.append(pair)
        return cls(payloads, _matrix(dense), sparse, _concat(terms), len(terms))

    @classmethod
    def load(cls, client: IndexClient, collection: str, payload: list[str] | bool = True) -> Rows:
        """Every point of a collection (a paged scroll); committed ones are searchable."""
        if not client.collection_exists(collection):
            return cls([], _matrix([]), [], _ints(), 0)
        return cls.from_records(scroll_points(client, collection, None, True, payload))


def _sparse_pair(vector: models.SparseVector | None) -> tuple[IntArray, FloatArray]:
    if vector is None:
        return _ints(), np.zeros(0, np.float32)
    return np.asarray(vector.indices, np.int64), np.asarray(vector.values, np.float32)


def _matrix(rows: list[list[float]]) -> FloatArray:
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1 if rows else 0)


def _concat(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays).astype(np.int64) if arrays else _ints()


def cosine_scores(matrix: FloatArray, query: FloatArray) -> FloatArray:
    """Cosine similarity of every row to the query (rows are unit length)."""
    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    return np.asarray(matrix @ (q / norm if norm > 0 else q), dtype=np.float32)


def unit_rows(dense: FloatArray) -> FloatArray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return (dense / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _ints() -> IntArray:
    return np.zeros(0, dtype=np.int64)


def build_postings(vectors: Sequence[tuple[IntArray, FloatArray]], rows: Rows) -> Postings:
    """Invert the committed rows' sparse vectors; df counted over every live point (Qdrant)."""
    lengths = np.array([len(indices) for indices, _ in vectors], dtype=np.int64)
    if not len(lengths) or lengths.sum() == 0:
        terms = _ints()
        return Postings(terms, np.zeros(1, np.int64), _ints(), np.zeros(0, np.float32), terms, 0)
    indices = np.concatenate([indices for indices, _ in vectors])
    values = np.concatenate([values for _, values in vectors])
    row_ids = np.repeat(np.arange(len(vectors), dtype=np.int64), lengths)
    order = np.argsort(indices, kind="stable")
    indices, values, row_ids = indices[order], values[order], row_ids[order]
    terms, starts = np.unique(indices, return_index=True)
    known, counts = np.unique(rows.every_term, return_counts=True)
    at = np.minimum(np.searchsorted(known, terms), max(len(known) - 1, 0))
    frequency = counts[at] if len(known) else np.zeros(len(terms), np.int64)
    return Postings(
        terms=terms.astype(np.int64),
        starts=np.append(starts, len(indices)).astype(np.int64),
        rows=row_ids,
        values=values,
        document_frequency=frequency.astype(np.int64),
        corpus_points=rows.sparse_points,
    )
