"""Evaluation metrics on small cases computed by hand."""

from __future__ import annotations

from typing import Any

import pytest

from evals.metrics import (
    LAYER_ADHERENCE,
    AnswerF1,
    EvidenceScores,
    adherence_scores,
    bootstrap_ci,
    composite,
    cosine,
    evidence_pr,
    mechanical_option,
    normalize_answer,
    offline_option,
    paragraph_f1,
    qasper_answer_f1,
    qasper_evidence_f1,
    routing_recall,
    scaled_cosine,
    token_f1,
)

# -- QASPER answers ---------------------------------------------------------------------------


def test_normalize_answer_follows_the_official_order() -> None:
    # Punctuation goes before articles, so "the-end" fuses into one token and stays.
    assert normalize_answer("The  Cat's, hat!") == "cats hat"
    assert normalize_answer("the-end of An era") == "theend of era"


def test_token_f1_by_hand() -> None:
    # prediction tokens: cat sat on mat (4); gold tokens: cat on mat (3); shared 3
    # precision 3/4, recall 3/3, F1 = 2 * 0.75 * 1 / 1.75 = 6/7
    assert token_f1("The cat sat on the mat.", "a cat on a mat") == pytest.approx(6 / 7)


def test_token_f1_counts_repeated_tokens_as_a_multiset() -> None:
    # prediction "yes yes" vs gold "yes": shared 1, precision 1/2, recall 1 → 2/3
    assert token_f1("yes yes", "yes") == pytest.approx(2 / 3)


def test_token_f1_of_two_empty_normalisations_is_zero() -> None:
    assert token_f1("The", "a") == 0.0


BOOL_AND_NONE = [
    {"type": "none", "text": "Unanswerable"},
    {"type": "boolean", "text": "Yes"},
]


def test_qasper_answer_f1_takes_the_best_annotator_and_its_type() -> None:
    assert qasper_answer_f1("Yes.", BOOL_AND_NONE) == AnswerF1(1.0, "boolean")
    assert qasper_answer_f1("unanswerable", BOOL_AND_NONE) == AnswerF1(1.0, "none")


def test_qasper_answer_f1_ties_go_to_the_first_annotator() -> None:
    assert qasper_answer_f1("No", BOOL_AND_NONE) == AnswerF1(0.0, "none")


def test_qasper_answer_f1_without_annotators() -> None:
    assert qasper_answer_f1("anything", []) == AnswerF1(0.0, None)


# -- QASPER evidence --------------------------------------------------------------------------


def test_paragraph_f1_official_edge_rules() -> None:
    assert paragraph_f1([], []) == 1.0  # unanswerable and nothing predicted
    assert paragraph_f1(["p1"], []) == 0.0
    assert paragraph_f1([], ["p1"]) == 0.0
    assert paragraph_f1(["p1"], ["p2"]) == 0.0


def test_qasper_evidence_f1_is_the_max_over_annotators() -> None:
    gold = [frozenset({("a", 1), ("a", 2)}), frozenset({("a", 3)})]
    assert qasper_evidence_f1({("a", 3)}, gold) == 1.0
    # first: P 1/2, R 1/2 → 0.5; second: P 1/2, R 1 → 2/3
    assert qasper_evidence_f1({("a", 1), ("a", 3)}, gold) == pytest.approx(2 / 3)


def test_qasper_evidence_f1_of_an_unanswerable_question() -> None:
    gold: list[frozenset[tuple[str, int]]] = [frozenset(), frozenset()]
    assert qasper_evidence_f1(set(), gold) == 1.0
    assert qasper_evidence_f1({("a", 4)}, gold) == 0.0


def test_qasper_evidence_f1_counts_repeated_reads_once() -> None:
    assert qasper_evidence_f1([("a", 1), ("a", 1)], [frozenset({("a", 1)})]) == 1.0


# -- evidence precision / recall --------------------------------------------------------------


def test_evidence_pr_uses_the_best_matching_annotator() -> None:
    read = {("d", 1), ("d", 2), ("d", 3), ("d", 9)}
    small = frozenset({("d", 1), ("d", 2)})  # P 2/4, R 1, F1 2/3
    large = frozenset({("d", 1), ("d", 2), ("d", 3), ("d", 4)})  # P 3/4, R 3/4, F1 3/4
    assert evidence_pr(read, [small, large]) == pytest.approx(EvidenceScores(0.75, 0.75, 0.75))


def test_evidence_pr_breaks_f1_ties_by_recall() -> None:
    read = {("d", 1), ("d", 2)}
    wide = frozenset({("d", 1), ("d", 2), ("d", 3), ("d", 4)})  # P 1, R 1/2, F1 2/3
    narrow = frozenset({("d", 1)})  # P 1/2, R 1, F1 2/3
    assert evidence_pr(read, [wide, narrow]) == pytest.approx(EvidenceScores(0.5, 1.0, 2 / 3))


def test_evidence_pr_counts_repeats_once() -> None:
    read = [("d", 1), ("d", 1), ("d", 1), ("d", 2)]
    assert evidence_pr(read, [frozenset({("d", 1)})]) == pytest.approx(
        EvidenceScores(0.5, 1.0, 2 / 3)
    )


def test_evidence_pr_without_gold_is_undefined() -> None:
    assert evidence_pr({("d", 1)}, [frozenset(), frozenset()]) == EvidenceScores(None, None, None)
    assert evidence_pr({("d", 1)}, []) == EvidenceScores(None, None, None)


def test_evidence_pr_skips_annotators_without_evidence() -> None:
    assert evidence_pr({("d", 1)}, [frozenset(), frozenset({("d", 1)})]) == (1.0, 1.0, 1.0)


def test_evidence_pr_when_nothing_was_read() -> None:
    assert evidence_pr(set(), [frozenset({("d", 1)})]) == EvidenceScores(None, 0.0, 0.0)


def test_page_level_evidence_needs_document_and_page() -> None:
    gold = [frozenset({("10-K", 3), ("10-Q", 5)})]
    # ("10-Q", 3) has the right page in the wrong document: only one of two reads is a hit.
    assert evidence_pr({("10-K", 3), ("10-Q", 3)}, gold) == pytest.approx((0.5, 0.5, 0.5))


# -- routing, adherence -----------------------------------------------------------------------


def test_routing_recall_at_k_over_distinct_documents() -> None:
    ranked = ["a", "b", "a", "c", "d"]
    assert routing_recall(ranked, {"a", "d"}, ks=(1, 3, 4)) == {1: 0.5, 3: 0.5, 4: 1.0}
    assert routing_recall(ranked, {"z"}) == {1: 0.0, 5: 0.0, 10: 0.0}
    assert routing_recall(ranked, set()) == {1: None, 5: None, 10: None}


def step(seq: int, layer: int, tool: str, doc_id: str | None = None) -> dict[str, Any]:
    """A successful step; page reads (layer 2) disclose a page, as recorded ones do."""
    pages = [3] if layer == 2 else []
    return {"seq": seq, "layer": layer, "tool": tool, "ok": True, "doc_id": doc_id, "pages": pages}


def test_adherence_scores_of_an_ordered_and_a_jumping_trajectory() -> None:
    ordered = [
        step(1, 0, "search_documents"),
        step(2, 1, "get_document_tree", "d1"),
        step(3, 2, "get_page_content", "d1"),
    ]
    assert adherence_scores(ordered) == {
        LAYER_ADHERENCE: 1.0,
        "backward_jumps": 0.0,
        "pages_without_tree": 0.0,
    }
    jumping = [step(1, 0, "search_documents"), step(2, 2, "get_page_content", "d1")]
    jumping.append(step(3, 0, "search_documents"))
    assert adherence_scores(jumping) == {
        LAYER_ADHERENCE: 0.0,
        "backward_jumps": 1.0,
        "pages_without_tree": 1.0,
    }


def test_adherence_scores_without_tool_calls_are_undefined() -> None:
    assert set(adherence_scores([]).values()) == {None}


# -- multiple choice --------------------------------------------------------------------------

OPTIONS = ["15%", "5%", "no change", "a change in growth"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("B", 1),
        ("(C)", 2),
        ("B) 5%", 1),
        ("Answer: D", 3),
        ("The answer is (A), since the assay shows it.", 0),
        ("The correct option is B.", 1),
        ("B. 5%\nThis matches the figure.", 1),
        ("Growth fell by 5% in the mutant.", 1),  # text only; "5%" inside "15%" is not a match
        ("The mutant showed no change.", 2),
        ("A change in growth, not no change.", None),  # two options by text: ambiguous
        ("Either (A) or (B).", None),  # two letters: ambiguous
        ("A protein was measured.", None),  # an article, not a letter
        ("I cannot tell.", None),
        ("(F)", None),  # a letter with no option
    ],
)
def test_mechanical_option(answer: str, expected: int | None) -> None:
    assert mechanical_option(answer, OPTIONS) == expected


def test_mechanical_option_prefers_the_longer_option_that_contains_a_shorter_one() -> None:
    assert mechanical_option("Growth rose by 15%.", OPTIONS) == 0


EVIDENCE = [
    "We grew the knockout strain for 48 hours. Knockout cells grew 40% slower than wild type.",
    "Wild type cells were grown in rich medium.",
]


def test_offline_option_picks_the_option_the_evidence_states() -> None:
    options = ["20% slower", "40% slower", "60% slower"]
    assert offline_option("How much slower did knockout cells grow?", options, EVIDENCE) == 1


def test_offline_option_abstains_without_support_or_on_a_tie() -> None:
    question = "How much slower did knockout cells grow?"
    assert offline_option(question, ["10%", "90%"], EVIDENCE) is None
    both = ["Knockout cells grew 20% or 40% slower, depending on the medium."]
    assert offline_option(question, ["20%", "40%"], both) is None
    assert offline_option(question, ["40%", "20%"], []) is None


def test_offline_option_ignores_words_every_option_shares() -> None:
    options = ["knockout grew 20% slower", "knockout grew 40% slower"]
    assert offline_option("By how much?", options, EVIDENCE) == 1


# -- composite, bootstrap ---------------------------------------------------------------------


def test_composite_weights_f1_and_scaled_cosine() -> None:
    # 0.75 · 0.6 + 0.25 · (0.2 + 1) / 2 = 0.45 + 0.15
    assert composite(0.6, 0.2) == pytest.approx(0.6)
    assert scaled_cosine(-1.0) == 0.0
    assert scaled_cosine(1.5) == 1.0
    assert composite(None, 0.5) is None
    assert composite(0.5, None) is None


def test_cosine() -> None:
    assert cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 2.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0


def test_bootstrap_ci_on_a_known_sample() -> None:
    sample = [0.0, 1.0] * 50
    result = bootstrap_ci(sample, seed=7)
    assert result is not None
    mean, low, high = result
    assert mean == 0.5
    assert low <= mean <= high
    # standard error of the mean is 0.05, so the 95% interval is about ±0.1
    assert 0.38 <= low <= 0.42 and 0.58 <= high <= 0.62
    assert bootstrap_ci(sample, seed=7) == result


def test_bootstrap_ci_of_a_constant_sample_has_zero_width() -> None:
    assert bootstrap_ci([0.3] * 20) == pytest.approx((0.3, 0.3, 0.3))


def test_bootstrap_ci_ignores_none_and_returns_none_when_empty() -> None:
    assert bootstrap_ci([1.0, None, 1.0]) == (1.0, 1.0, 1.0)
    assert bootstrap_ci([None, None]) is None
    assert bootstrap_ci([]) is None
