"""Scoring one recorded run: pages read from the trajectory, answer clean-up, routing order."""

from __future__ import annotations

from evals.datasets import EvalQuestion
from evals.scoring import (
    QuestionContext,
    RunOutput,
    answer_text,
    documents_in_order,
    pages_disclosed,
    score_run,
)
from graph.extractive import EXTRACTIVE_NOTE

STEPS = [
    {
        "seq": 1,
        "layer": 0,
        "tool": "search_documents",
        "ok": True,
        "doc_id": None,
        "pages": [],
        "found": ["dddd", "bbbb"],
    },
    {"seq": 2, "layer": 1, "tool": "get_document_tree", "ok": True, "doc_id": "bbbb", "pages": []},
    {"seq": 3, "layer": 2, "tool": "get_page_content", "ok": True, "doc_id": "bbbb", "pages": [4]},
    {"seq": 4, "layer": 2, "tool": "get_page_content", "ok": False, "doc_id": "cccc", "pages": [9]},
    {
        "seq": 5,
        "layer": 0,
        "tool": "retrieve_passages",
        "ok": True,
        "doc_id": None,
        "pages": [],
        "disclosed": {"aaaa": [1], "bbbb": [5, 6]},
    },
]


def test_pages_read_are_those_successful_steps_disclosed_once_each() -> None:
    assert pages_disclosed(STEPS) == [("bbbb", 4), ("aaaa", 1), ("bbbb", 5), ("bbbb", 6)]


def test_routing_order_is_the_order_documents_were_first_touched() -> None:
    assert documents_in_order(STEPS) == ["dddd", "bbbb", "aaaa"]


def test_answer_text_drops_the_extractive_preamble_bullets_and_citations() -> None:
    answer = f"{EXTRACTIVE_NOTE}\n- Recall was 0.9 (Lo et al., 2020, 0123456789abcdef, p.3)\n- Yes."
    assert answer_text(answer) == "Recall was 0.9 Yes."


def test_a_qasper_run_is_scored_against_the_best_annotator_in_dataset_keys() -> None:
    question = EvalQuestion(
        qid="q1",
        dataset="qasper",
        question="What recall?",
        doc_keys=("1901.00001",),
        evidence_sets=(frozenset({("1901.00001", 4)}), frozenset({("1901.00001", 6)})),
        answers=({"type": "extractive", "text": "0.9"}, {"type": "boolean", "text": "Yes"}),
    )
    run = RunOutput(
        answer="Recall was 0.9 (Lo et al., 2020, bbbb0000, p.4)",
        status="answered",
        steps=[*STEPS[:4], {**STEPS[2], "seq": 5, "pages": [5]}],
        usage={"prompt_tokens": 100, "completion_tokens": 20},
        wall_s=0.5,
    )
    ctx = QuestionContext(keys={"bbbb": "1901.00001"}, doc_pages=lambda d: [], corpus_setting=True)
    scores = score_run(question, run, ctx).scores
    assert scores["evidence_precision"] == 0.5  # pages 4 and 5 read, page 4 is gold
    assert scores["evidence_recall"] == 1.0
    assert scores["answer_f1"] == 0.5  # "recall was 0.9" vs "0.9": P 1/3, R 1
    assert scores["evidence_f1_official"] == 2 * 0.5 * 1.0 / 1.5
    assert scores["tokens"] == 120
    assert scores["routing_recall@1"] == 0.0  # the search ranked another document first
    assert scores["routing_recall@5"] == 1.0
    assert scores["layer_adherence"] == 1.0
    assert scores["evidence_f1_official_text"] == 0.0  # no text-only sets given here
    assert "correct" not in scores  # no judge, no judged metric


def test_litqa2_key_passage_pages_are_a_diagnostic_of_what_was_read() -> None:
    question = EvalQuestion(
        qid="l1",
        dataset="litqa2",
        question="Which enzyme?",
        doc_keys=("10.1/x",),
        options=("hexokinase", "phosphatase"),
        correct_option=0,
        evidence_texts=("The enzyme was hexokinase in every assay.",),
    )
    pages = ["Intro text.", "Results: the enzyme was hexokinase in every assay.", "Methods."]
    run = RunOutput(
        answer="hexokinase",
        status="answered",
        steps=[{**STEPS[2], "doc_id": "dddd", "pages": [2]}],
        usage={},
        wall_s=0.1,
    )
    ctx = QuestionContext(keys={"dddd": "10.1/x"}, doc_pages=lambda d: pages, corpus_setting=False)
    scores = score_run(question, run, ctx).scores
    assert scores["key_passage_page_recall"] == 1.0
    assert (
        scores["offline_accuracy"] == 1.0
    )  # page 2 supports option A; the gold label is not an input
    unread = RunOutput(
        "hexokinase", "answered", [{**STEPS[2], "doc_id": "dddd", "pages": [3]}], {}, 0
    )
    assert score_run(question, unread, ctx).scores["key_passage_page_recall"] == 0.0
