"""Extractive node summaries and text clean-up."""

from __future__ import annotations

from ingest.summarise import (
    KEEP_TEXT_TOKENS,
    SUMMARY_TOKENS,
    clean_text,
    extractive_summary,
    needs_summary,
    summarise_drafts,
)
from ingest.tree import Draft, iter_drafts
from store.embeddings import count_tokens
from store.text import split_sentences

LONG_SENTENCES = [
    "The widget classifier reaches 91.5 % accuracy on the WidgetBench dataset with 12,000 "
    "labelled examples collected from three public sources over two years of careful work.",
    "Training uses a learning rate of 0.001 and a batch size of 64 for twenty epochs on a "
    "single accelerator while the validation loss is monitored after every epoch.",
    "The baseline classifier without pretraining reaches only 78.2 % accuracy on the same "
    "WidgetBench dataset and the same labelled examples used by the proposed widget model.",
    "Errors concentrate on rare widget categories with fewer than fifty labelled examples, "
    "which suggests that collecting more labelled examples for rare categories would help.",
    "Annotators agreed on 94 % of the widget labels, measured on a random sample of 500 "
    "examples that two annotators labelled independently without seeing each other.",
    "Inference takes 12 milliseconds per example on the accelerator, which is fast enough "
    "for the interactive widget search application described in the introduction above.",
    "Ablations show that removing the pretraining stage costs 13.3 points of accuracy, while "
    "removing data augmentation costs only 1.1 points on the WidgetBench test split.",
    "Larger models with 350 million parameters improve accuracy by 0.4 points at four times "
    "the inference cost, so the smaller widget model remains the recommended default.",
]


def test_clean_text_strips_markup_and_joins_hyphenation() -> None:
    raw = (
        "# 1 Intro\n**Bold** text with<sup>12</sup> a [link](http://x.y) and Refine-\nment,\n"
        "`code` | cell | and __under__ _it_ <br>done"
    )
    assert clean_text(raw) == (
        "1 Intro Bold text with a link and Refinement, code cell and under it done"
    )


def test_clean_text_keeps_inner_underscores_and_hyphens() -> None:
    assert clean_text("snake_case and well-known") == "snake_case and well-known"


def test_short_section_keeps_its_own_text() -> None:
    draft = Draft("2 Method", 1, 3, 4)
    body = "## 2 Method\nWe use a **small** model. It works."
    assert extractive_summary(draft, body) == "We use a small model. It works."


def test_empty_leaf_gets_a_structural_summary() -> None:
    assert extractive_summary(Draft("2 Method", 1, 3, 4), "2 Method\n") == (
        "2 Method (pages 3–4); no extractable text."
    )
    assert extractive_summary(Draft("Blank", 1, 5, 5), "") == (
        "Blank (pages 5–5); no extractable text."
    )


def test_empty_parent_lists_its_children() -> None:
    parent = Draft("Parent", 1, 3, 9, children=[Draft("Child A", 2, 3, 5), Draft("B", 2, 6, 9)])
    assert extractive_summary(parent, "Parent") == "Pages 3–9. Subsections: Child A; B."


def test_needs_summary_threshold_is_200_tokens() -> None:
    assert KEEP_TEXT_TOKENS == 200
    assert needs_summary(" ".join(["word"] * 199)) is False
    assert needs_summary(" ".join(["word"] * 200)) is True


def test_long_section_gets_short_extractive_summary_from_its_sentences() -> None:
    body = "## 4 Results\n" + " ".join(LONG_SENTENCES)
    assert count_tokens(clean_text(body)) > KEEP_TEXT_TOKENS
    summary = extractive_summary(Draft("4 Results", 1, 7, 8), body)
    assert summary
    assert count_tokens(summary) <= SUMMARY_TOKENS == 90
    pieces = split_sentences(summary)
    assert len(pieces) >= 2
    # Whole sentences come verbatim from the body; the last may be cut at the token budget.
    for piece in pieces[:-1]:
        assert piece in LONG_SENTENCES
    assert any(sentence.startswith(pieces[-1]) for sentence in LONG_SENTENCES)
    # Chosen sentences keep reading order.
    order = [LONG_SENTENCES.index(p) for p in pieces[:-1]]
    assert order == sorted(order)


def test_long_section_summary_is_deterministic() -> None:
    body = " ".join(LONG_SENTENCES)
    draft = Draft("Results", 1, 1, 1)
    assert extractive_summary(draft, body) == extractive_summary(draft, body)


def test_summarise_drafts_fills_every_summary_and_returns_bodies() -> None:
    pages = ["1 Intro\nShort intro text here.\n2 Body", " ".join(LONG_SENTENCES)]
    roots = [Draft("1 Intro", 1, 1, 1), Draft("2 Body", 1, 1, 2)]
    bodies = summarise_drafts(roots, pages)
    assert bodies[0] == "1 Intro\nShort intro text here.\n"
    assert bodies[1].startswith("2 Body\n")
    drafts = iter_drafts(roots)
    assert drafts[0].summary == "Short intro text here."
    assert drafts[1].summary and count_tokens(drafts[1].summary) <= SUMMARY_TOKENS
