"""The flat BM25 routing baselines: Okapi arithmetic, passage max-aggregation, ranking, cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from evals import baselines
from evals.baselines import (
    BASELINES,
    baseline_summaries,
    best_per_document,
    cached_rankings,
    document_units,
    passage_units,
    rank_library,
    top_documents,
)
from evals.datasets import EvalQuestion
from store.bm25 import BM25Index, bm25_tokens

TINY = [["cat", "sat"], ["cat", "cat", "dog"], ["bird"]]


def test_bm25_scores_follow_the_okapi_formula_by_hand() -> None:
    scores = BM25Index.build(TINY).scores([["cat"], ["dog", "dog"], ["fish"]])
    # N = 3, mean length 2; "cat" is in 2 units: idf ln(1.5/2.5 + 1) = ln 1.6; the
    # length norm is 1.2·(0.25 + 0.75·length/2), and tf·2.2/(tf + norm) saturates tf.
    assert scores[0, 0] == pytest.approx(math.log(1.6))  # tf 1, length = mean: saturation 1
    assert scores[0, 1] == pytest.approx(math.log(1.6) * 4.4 / (2 + 1.2 * 1.375))
    assert scores[0, 2] == 0.0
    # "dog" asked twice counts twice; idf ln(2.5/1.5 + 1) = ln(8/3); length 3: norm 1.65
    assert scores[1].tolist() == pytest.approx([0.0, 2 * math.log(8 / 3) * 2.2 / 2.65, 0.0])
    assert scores[2].tolist() == [0.0, 0.0, 0.0]  # an unknown term adds nothing


class FormulaIdfOkapi(BM25Okapi):
    """rank_bm25's Okapi with the IDF replaced by ln((N − n + 0.5)/(n + 0.5) + 1), which
    ours uses (rank_bm25 floors a negative Robertson IDF at ε·mean instead)."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, frequency in nd.items():
            self.idf[word] = math.log((self.corpus_size - frequency + 0.5) / (frequency + 0.5) + 1)


def test_bm25_scores_match_rank_bm25_given_the_same_idf() -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(12)]
    corpus = [list(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(25)]
    queries = [list(rng.choice(words, size=4)) for _ in range(6)] + [["w3", "absent"]]
    reference = FormulaIdfOkapi(corpus, k1=1.2, b=0.75)
    scores = BM25Index.build(corpus).scores(queries)
    for row, query in enumerate(queries):
        assert scores[row] == pytest.approx(reference.get_scores(query))


def test_bm25_over_no_units_or_no_queries_is_empty() -> None:
    assert BM25Index.build([]).scores([["cat"]]).shape == (1, 0)
    assert BM25Index.build(TINY).scores([]).shape == (0, 3)
    assert BM25Index.build([[], []]).scores([["cat"]]).tolist() == [[0.0, 0.0]]


def test_a_document_scores_as_its_best_passage() -> None:
    scores = np.array([[1.0, 3.0, 2.0, 0.5], [0.0, 0.0, 4.0, 0.0]])
    documents, folded = best_per_document(scores, ["a", "b", "a", "c"])
    assert documents == ["a", "b", "c"]
    assert folded.tolist() == [[2.0, 3.0, 0.5], [4.0, 0.0, 0.0]]
    assert best_per_document(np.zeros((2, 0)), [])[1].shape == (2, 0)


def test_ranking_leaves_out_unmatched_documents_and_keeps_ties_in_order() -> None:
    scores = np.array([0.0, 2.0, 2.0, 1.0])
    assert top_documents(scores, ["w", "x", "y", "z"], 10) == ["x", "y", "z"]
    assert top_documents(scores, ["w", "x", "y", "z"], 2) == ["x", "y"]


def test_tokens_are_the_products_bm25_terms() -> None:
    tokens = bm25_tokens("The running dogs' BM25-scores (FY22)")
    assert tokens == ("run", "dog", "bm25", "score", "fy22")  # stop words out, stems in


PAGES = {
    "doc-a": ["Gradient boosting of decision trees.", "Tree ensembles and their pruning."],
    "doc-b": ["Protein folding with attention networks."],
    "doc-c": ["Quarterly revenue of the retail segment."],
}


def test_units_are_whole_documents_or_the_dense_passages() -> None:
    assert document_units("doc-a", PAGES["doc-a"]) == ["\n".join(PAGES["doc-a"])]
    long_pages = [" ".join(f"word{i}" for i in range(300))] * 6
    passages = passage_units("long", long_pages)
    assert len(passages) > 1  # 800-token windows with 400 overlap over the whole document
    assert passages[0].split()[0] == "word0"


def test_both_baselines_rank_the_matching_document_first() -> None:
    queries = ["How are decision trees pruned?", "protein attention", "nothing shared"]
    for spec in BASELINES.values():
        ranked = rank_library(spec.units, sorted(PAGES), PAGES.__getitem__, queries)
        assert ranked == [["doc-a"], ["doc-b"], []]


def test_summaries_score_routing_recall_against_the_dataset_keys() -> None:
    questions = [
        EvalQuestion(qid="q1", dataset="qasper", question="?", doc_keys=("paper-a",)),
        EvalQuestion(qid="q2", dataset="qasper", question="?", doc_keys=("paper-b",)),
    ]
    rankings = {name: {"q1": ["doc-a"], "q2": ["doc-c", "doc-b"]} for name in BASELINES}
    keys = {"doc-a": "paper-a", "doc-b": "paper-b"}  # doc-c: a distractor keeps its doc id
    summaries = baseline_summaries(rankings, questions, keys)
    assert list(summaries) == list(BASELINES)
    summary = summaries["bm25-chunks"]
    assert summary["kind"] == "baseline" and summary["questions"] == 2
    assert summary["description"] == BASELINES["bm25-chunks"].description
    metrics = summary["metrics"]
    assert set(metrics) == {"routing_recall@1", "routing_recall@5", "routing_recall@10"}
    assert metrics["routing_recall@1"]["mean"] == 0.5
    assert metrics["routing_recall@5"]["mean"] == 1.0
    assert json.loads(json.dumps(summaries)) == summaries


def test_rankings_are_cached_for_the_same_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "routing_baselines.json"
    queries = {"q1": "decision trees", "q2": "protein"}
    first = cached_rankings(path, sorted(PAGES), PAGES.__getitem__, queries)
    assert first["bm25-document"] == {"q1": ["doc-a"], "q2": ["doc-b"]}
    calls: list[int] = []

    def counting(*args: object) -> list[list[str]]:
        calls.append(1)
        return [["doc-b"]]

    monkeypatch.setattr(baselines, "rank_library", counting)
    assert cached_rankings(path, sorted(PAGES), PAGES.__getitem__, {"q1": "trees"}) == first
    assert not calls  # a resumed evaluation (a subset of the questions) reads them back
    changed = cached_rankings(path, ["doc-a", "doc-b"], PAGES.__getitem__, {"q1": "trees"})
    assert len(calls) == len(BASELINES)  # another library: computed again
    assert changed["bm25-chunks"] == {"q1": ["doc-b"]}
    path.write_text('{"key": ', encoding="utf-8")  # torn: recomputed, not an error
    cached_rankings(path, ["doc-a", "doc-b"], PAGES.__getitem__, {"q1": "trees"})
    assert len(calls) == 2 * len(BASELINES)
