"""Okapi BM25 over a handful of texts, with the tokens of the index's BM25 vectors.

The structural index scores BM25 inside Qdrant; ranking *within* one document (its sections,
its pages) and the flat baselines of the evaluation score a few hundred texts at a time, in
process. They tokenise exactly as the index does (fastembed's Bm25: lower case, English stop
words removed, Snowball stems), so a word that matches in layer 0 matches inside the paper too,
and use the standard parameters (k1 = 1.2, b = 0.75, lengths normalised by the texts' mean) with
the IDF Qdrant applies, ln((N − n + 0.5) / (n + 0.5) + 1).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastembed.sparse.bm25 import remove_non_alphanumeric
from numpy.typing import NDArray

from store.embeddings import default_cache_dir, sparse_embedder

K1 = 1.2
B = 0.75


@functools.lru_cache(maxsize=4096)
def bm25_tokens(text: str) -> tuple[str, ...]:
    """The stemmed, stop-word-free tokens the index's BM25 vectors are built from (cached: the
    same pages are ranked again for every question about their document)."""
    model: Any = sparse_embedder(default_cache_dir()).model
    return tuple(model._stem(model.tokenizer.tokenize(remove_non_alphanumeric(text))))


FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def okapi_idf(units: int, frequency: FloatArray) -> FloatArray:
    """ln((N − n + 0.5)/(n + 0.5) + 1): never negative, unlike the classic Robertson IDF."""
    return np.log((units - frequency + 0.5) / (frequency + 0.5) + 1.0)


@dataclass(frozen=True)
class BM25Index:
    """Okapi BM25 over token units as postings (unit, term, weight), one weight per term a unit
    holds: idf · tf·(k1 + 1) / (tf + k1·(1 − b + b·length/mean length)). Scoring every query at
    once is then one matrix product over the terms the queries use."""

    vocabulary: Mapping[str, int]
    unit: IntArray
    term: IntArray
    weight: FloatArray
    size: int

    @classmethod
    def build(cls, units: Sequence[Sequence[str]], k1: float = K1, b: float = B) -> BM25Index:
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        terms: list[int] = []
        counts: list[int] = []
        for row, tokens in enumerate(units):
            for token, count in Counter(tokens).items():
                rows.append(row)
                terms.append(vocabulary.setdefault(token, len(vocabulary)))
                counts.append(count)
        unit = np.asarray(rows, dtype=np.int64)
        term = np.asarray(terms, dtype=np.int64)
        tf = np.asarray(counts, dtype=np.float64)
        lengths = np.asarray([len(tokens) for tokens in units], dtype=np.float64)
        mean = float(lengths.mean()) if len(units) and lengths.any() else 1.0
        frequency = np.bincount(term, minlength=len(vocabulary)).astype(np.float64)
        saturation = tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[unit] / mean))
        weight = okapi_idf(len(units), frequency)[term] * saturation
        return cls(vocabulary, unit, term, weight, len(units))

    def scores(self, queries: Sequence[Sequence[str]]) -> FloatArray:
        """queries × units BM25 scores; a query term repeated counts each time, an unknown
        term adds nothing."""
        known = [self.vocabulary[t] for q in queries for t in q if t in self.vocabulary]
        used = np.unique(np.asarray(known, dtype=np.int64))
        counts = np.zeros((len(queries), len(used)))
        for row, query in enumerate(queries):
            terms = [self.vocabulary[t] for t in query if t in self.vocabulary]
            np.add.at(counts[row], np.searchsorted(used, terms), 1.0)
        weights = np.zeros((self.size, len(used)))
        kept = np.isin(self.term, used)
        weights[self.unit[kept], np.searchsorted(used, self.term[kept])] = self.weight[kept]
        return counts @ weights.T

    def score(self, query: Sequence[str]) -> FloatArray:
        """One query's score per unit, each distinct term counted once (as the index's BM25
        query vectors do)."""
        return np.asarray(self.scores([list(dict.fromkeys(query))])[0])
