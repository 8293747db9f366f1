"""Ranking inside one document: sections by their whole text, then every page, each lent the
score of the best section holding it."""

from __future__ import annotations

import numpy as np
import pytest

from store.bm25 import BM25Index, bm25_tokens
from store.types import TreeNode
from tools.pages import page_score, rank_pages, rank_sections, section_signal


def node(node_id: str, title: str, start: int, end: int) -> TreeNode:
    return TreeNode(
        node_id=node_id, title=title, start_page=start, end_page=end, summary=title, nodes=[]
    )


PAGES = [
    "We introduce a corpus of scientific papers.",
    "The corpus holds 81 million papers with full text.",
    "Parsing uses a PDF pipeline with GROBID.",
    "We thank the reviewers.",
]
TREE = [
    node("0000", "Introduction", 1, 2),
    node("0001", "Method", 3, 3),
    node("0002", "Thanks", 4, 4),
]


def flat_embed(texts: list[str]) -> list[list[float]]:
    """A dense model that sees nothing: every text the same vector."""
    return [[1.0, 0.0] for _ in texts]


def test_one_query_counts_each_term_once() -> None:
    docs = [["corpus", "paper"], ["paper"], ["pdf", "pdf", "pars"]]
    scores = BM25Index.build(docs).score(["pdf", "pdf"])
    idf = np.log((3 - 1 + 0.5) / (1 + 0.5) + 1)
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 2)
    assert scores.tolist() == pytest.approx([0.0, 0.0, idf * 2 * 2.2 / (2 + norm)])


def test_tokens_are_the_index_tokens() -> None:
    assert bm25_tokens("The Papers were parsed") == ("paper", "pars")


def test_page_score_scales_each_signal_by_its_best() -> None:
    scores = page_score(
        np.array([4.0, 2.0, 0.0]),
        np.array([0.2, 0.4, 0.1]),
        np.array([1.0, 0.0, 0.5]),
        dense_weight=2.0,
        section_weight=0.5,
    )
    assert scores.tolist() == pytest.approx([1.0 + 1.0 + 0.5, 0.5 + 2.0, 0.0 + 0.5 + 0.25])


def test_a_page_takes_the_best_section_holding_it() -> None:
    parent = {**node("0000", "Results", 1, 3), "nodes": [node("0001", "Table", 2, 2)]}
    child = parent["nodes"][0]
    signal = section_signal([(child, 4.0), (parent, 2.0)], total_pages=4)
    assert signal.tolist() == [0.5, 1.0, 0.5, 0.0]  # page 4 is in no section
    assert section_signal([(parent, 0.0)], total_pages=2).tolist() == [0.0, 0.0]


def test_sections_rank_by_their_whole_text() -> None:
    ranked = rank_sections("how many million papers", TREE, PAGES, flat_embed)
    assert ranked[0][0]["node_id"] == "0000"  # "million" is on page 2, not in any title


def test_every_page_carries_its_signals_and_its_section() -> None:
    ranked = rank_pages("81 million papers", TREE, PAGES, flat_embed)
    assert [r.page for r in ranked] == [1, 2, 3, 4]
    assert max(ranked, key=lambda r: r.bm25).page == 2
    assert [r.node_id for r in ranked] == ["0000", "0000", "0001", "0002"]
    assert all(r.dense == pytest.approx(1.0) for r in ranked)
    # The introduction (which holds "million") is the best section: its pages get 1.
    assert [r.section for r in ranked][:2] == [1.0, 1.0] and ranked[3].section < 1.0
    assert rank_pages("anything", TREE, [], flat_embed) == []
