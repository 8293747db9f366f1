"""Flat BM25 routing baselines for the corpus setting, computed in the same evaluation run.

`vectree` routes a question through compact document and section entries; the obvious
question is whether that beats plain lexical search over the documents' text. Two flat
baselines answer it over the same library and questions, scored by the same routing recall:

- ``bm25-document``: one unit per document, its pages joined;
- ``bm25-chunks``: the 800-token passages (400 overlap) the ``dense`` strategy searches, a
  document ranked by its best passage.

Both are standard Okapi BM25 (k1 = 1.2, b = 0.75, lengths normalised by the mean unit length,
IDF ln((N − n + 0.5)/(n + 0.5) + 1), query terms counted with repeats) over the product's own
BM25 tokens, so the comparison is about what is indexed, not about tokenisation. They rank
documents only: they read nothing and answer nothing, so they carry no other metric.

Rankings (the first ``ROUTING_DEPTH`` document ids per question) are cached in the evaluation's
out folder, keyed by the library's documents and the chunker version, so a resumed evaluation
reuses them instead of re-chunking the library.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evals.aggregate import aggregate
from evals.datasets import EvalQuestion
from evals.scoring import ROUTING_KS, routing_scores
from store.bm25 import BM25Index, bm25_tokens
from store.chunks import CHUNKER_VERSION, dense_chunks

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
ROUTING_DEPTH = max(ROUTING_KS)
BASELINES_FILE = "routing_baselines.json"
CACHE_VERSION = 1
"""Bumped whenever the baselines' scoring changes, so cached rankings are recomputed."""


def best_per_document(scores: FloatArray, owners: Sequence[str]) -> tuple[list[str], FloatArray]:
    """Unit scores (queries × units) folded to queries × documents by each document's best
    unit: a document is as relevant as its best passage. Documents in first-seen order."""
    documents = list(dict.fromkeys(owners))
    if not documents:
        return documents, np.zeros((scores.shape[0], 0))
    position = {doc_id: i for i, doc_id in enumerate(documents)}
    columns = np.asarray([position[o] for o in owners], dtype=np.int64)
    order = np.argsort(columns, kind="stable")
    starts = np.searchsorted(columns[order], np.arange(len(documents)))
    return documents, np.maximum.reduceat(scores[:, order], starts, axis=1)


def top_documents(scores: FloatArray, documents: Sequence[str], depth: int) -> list[str]:
    """The ``depth`` best-scoring documents; those sharing no term with the question (score 0)
    are not ranked at all, as a search engine would not return them; ties keep list order."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [documents[i] for i in order.tolist() if scores[i] > 0]


# -- the baselines --------------------------------------------------------------------------------
Units = Callable[[str, list[str]], list[str]]


def document_units(doc_id: str, pages: list[str]) -> list[str]:
    """One unit: the whole document."""
    return ["\n".join(pages)]


def passage_units(doc_id: str, pages: list[str]) -> list[str]:
    """The ``dense`` strategy's passages (800 tokens, 400 overlap, across page breaks)."""
    return [chunk.text for chunk in dense_chunks(doc_id, pages)]


@dataclass(frozen=True)
class Baseline:
    """A flat routing baseline: what it indexes, in words and as units of a document."""

    description: str
    units: Units


BASELINES: dict[str, Baseline] = {
    "bm25-document": Baseline("BM25 over each document's whole text", document_units),
    "bm25-chunks": Baseline(
        "BM25 over 800-token passages (400 overlap), a document ranked by its best passage",
        passage_units,
    ),
}


def rank_library(
    units: Units,
    doc_ids: Sequence[str],
    doc_pages: Callable[[str], list[str]],
    queries: Sequence[str],
) -> list[list[str]]:
    """Each query's ranked doc ids over every document of the library."""
    tokens: list[tuple[str, ...]] = []
    owners: list[str] = []
    for doc_id in doc_ids:
        for text in units(doc_id, doc_pages(doc_id)):
            tokens.append(bm25_tokens(text))
            owners.append(doc_id)
    scores = BM25Index.build(tokens).scores([bm25_tokens(q) for q in queries])
    documents, per_document = best_per_document(scores, owners)
    return [top_documents(row, documents, ROUTING_DEPTH) for row in per_document]


def cached_rankings(
    path: Path,
    doc_ids: Sequence[str],
    doc_pages: Callable[[str], list[str]],
    queries: Mapping[str, str],
) -> dict[str, dict[str, list[str]]]:
    """Baseline name → qid → ranked doc ids, read from ``path`` when it was computed over the
    same documents (and chunker) for every question asked, else computed and written there."""
    key = {"version": CACHE_VERSION, "chunker": CHUNKER_VERSION, "documents": sorted(doc_ids)}
    cached = _read_cache(path)
    if cached.get("key") == key and all(
        set(queries) <= set(cached["rankings"].get(name, {})) for name in BASELINES
    ):
        return {name: dict(cached["rankings"][name]) for name in BASELINES}
    qids, texts = list(queries), list(queries.values())
    rankings = {
        name: dict(zip(qids, rank_library(b.units, doc_ids, doc_pages, texts), strict=True))
        for name, b in BASELINES.items()
    }
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"key": key, "rankings": rankings}), encoding="utf-8")
    tmp.replace(path)
    return rankings


def _read_cache(path: Path) -> dict[str, Any]:
    """The cache file's content, or nothing when it is missing or torn."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return content if isinstance(content, dict) and "rankings" in content else {}


def baseline_summaries(
    rankings: Mapping[str, Mapping[str, list[str]]],
    questions: Sequence[EvalQuestion],
    keys: Mapping[str, str],
) -> dict[str, dict[str, Any]]:
    """Per baseline, routing recall@k over ``questions`` in the strategies' summary shape
    (``questions``, ``metrics``), marked ``kind: baseline`` with its description.

    ``keys`` maps doc ids to the dataset's document names, as the strategies' scoring does;
    a distractor document keeps its doc id, so it can never count as gold."""
    records = [
        {
            "strategy": name,
            "seed": 0,
            "qid": question.qid,
            "scores": routing_scores(
                [keys.get(doc, doc) for doc in rankings[name][question.qid]], question
            ),
        }
        for name in rankings
        for question in questions
    ]
    summary = aggregate(records)
    return {
        name: {
            "kind": "baseline",
            "description": BASELINES[name].description,
            "questions": summary[name]["questions"],
            "metrics": summary[name]["metrics"],
        }
        for name in rankings
        if name in summary
    }
