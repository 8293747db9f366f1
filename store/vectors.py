"""The numpy forms of the index's vectors, shared by the live search and the exhaustive scorers.

Dense rows are float32, BM25 term ids int64 with float32 weights; a query's BM25 vector is a
:class:`SparseQuery`. Kept apart from ``store.search_engine`` (the live search) and
``store.snapshot`` (every point in memory, for the chunk baselines and the benchmarks) so that
neither takes its types from the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from qdrant_client import models

FloatArray = NDArray[np.float32]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class SparseQuery:
    """A BM25 query vector: term ids and their weights (fastembed gives 1.0 per term)."""

    indices: IntArray
    values: FloatArray

    @classmethod
    def from_vector(cls, vector: models.SparseVector) -> SparseQuery:
        return cls(
            np.asarray(vector.indices, dtype=np.int64), np.asarray(vector.values, dtype=np.float32)
        )
