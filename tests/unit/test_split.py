"""Splitting nodes over BOTH 20,000 tokens and 10 pages."""

from __future__ import annotations

from ingest.split import (
    SPLIT_PAGES,
    SPLIT_TOKENS,
    SubStructure,
    headings_within,
    is_oversized,
    split_oversized,
)
from ingest.tree import Draft, iter_drafts
from store.embeddings import count_tokens
from store.types import HeadingCandidate, SectionEntry


def filler(tokens: int) -> str:
    return " ".join(["word"] * tokens)


def cand(page: int, text: str, size: float) -> HeadingCandidate:
    return HeadingCandidate(page=page, text=text, size=size, bold=True, y_frac=0.1)


def no_structure(_pages: list[str], _first: int, _last: int) -> list[SectionEntry]:
    return []


def shape(roots: list[Draft]) -> list[tuple[str, int, int, int]]:
    return [(d.title, d.level, d.start_page, d.end_page) for d in iter_drafts(roots)]


def big_pages(count: int, tokens: int = 2_000) -> list[str]:
    return [filler(tokens) for _ in range(count)]


def test_fixture_sizes() -> None:
    assert count_tokens(filler(2_000)) == 2_000
    assert SPLIT_TOKENS == 20_000 and SPLIT_PAGES == 10


def test_is_oversized_needs_both_bounds() -> None:
    pages = big_pages(12)  # 24,000 tokens over 12 pages
    assert is_oversized(Draft("All", 1, 1, 12), pages) is True
    assert is_oversized(Draft("Ten pages", 1, 1, 10), pages) is False  # 20,000 tokens, 10 pages
    assert is_oversized(Draft("Eleven", 1, 1, 11), pages) is True  # 22,000 tokens, 11 pages


def test_oversized_leaf_is_split_by_headings_within() -> None:
    pages = big_pages(12)
    pages[0] = "Chapter One\n" + pages[0]
    pages[3] = "Part A Overview\n" + pages[3]
    pages[7] = "Part B Details\n" + pages[7]
    candidates = [
        cand(1, "Chapter One", 18),
        cand(4, "Part A Overview", 14),
        cand(8, "Part B Details", 14),
    ]
    roots = [Draft("Chapter One", 1, 1, 12)]
    assert split_oversized(roots, pages, headings_within(candidates)) == ["Chapter One"]
    assert shape(roots) == [
        ("Chapter One", 1, 1, 12),
        ("Part A Overview", 2, 4, 7),
        ("Part B Details", 2, 8, 12),
    ]


def test_inner_entries_are_relevelled_under_the_node() -> None:
    pages = big_pages(12)
    pages[2] = "Deep One\n" + pages[2]
    pages[6] = "Deep Two\n" + pages[6]

    def extract(_pages: list[str], first: int, last: int) -> list[SectionEntry]:
        assert (first, last) == (1, 12)
        return [
            SectionEntry(level=4, title="Deep One", start_page=3),
            SectionEntry(level=5, title="Deep One Sub", start_page=3),  # not printed: dropped
            SectionEntry(level=4, title="Deep Two", start_page=7),
            SectionEntry(level=4, title="Outside", start_page=20),
        ]

    roots = [Draft("Top", 2, 1, 12)]
    split_oversized(roots, pages, extract)
    assert shape(roots) == [
        ("Top", 2, 1, 12),
        ("Deep One", 3, 3, 6),
        ("Deep Two", 3, 7, 12),
    ]


def test_oversized_leaf_without_inner_headings_gets_page_windows() -> None:
    pages = big_pages(12)
    roots = [Draft("Chapter One", 1, 1, 12)]
    assert split_oversized(roots, pages, no_structure) == ["Chapter One"]
    assert shape(roots) == [
        ("Chapter One", 1, 1, 12),
        ("Pages 1–10", 2, 1, 10),
        ("Pages 11–12", 2, 11, 12),
    ]


def test_single_inner_heading_is_not_enough_and_falls_back_to_windows() -> None:
    pages = big_pages(12)
    pages[4] = "Lonely Heading\n" + pages[4]
    roots = [Draft("Chapter", 1, 1, 12)]
    split_oversized(roots, pages, headings_within([cand(5, "Lonely Heading", 14)]))
    assert [d.title for d in roots[0].children] == ["Pages 1–10", "Pages 11–12"]


def test_oversized_child_from_headings_is_itself_windowed() -> None:
    pages = big_pages(14)
    pages[1] = "Part A Overview\n" + pages[1]
    pages[2] = "Part B Details\n" + pages[2]
    candidates = [cand(2, "Part A Overview", 14), cand(3, "Part B Details", 14)]
    roots = [Draft("Chapter", 1, 1, 14)]
    split_oversized(roots, pages, headings_within(candidates))
    assert shape(roots) == [
        ("Chapter", 1, 1, 14),
        ("Part A Overview", 2, 2, 2),
        ("Part B Details", 2, 3, 14),
        ("Pages 3–12", 3, 3, 12),
        ("Pages 13–14", 3, 13, 14),
    ]


def test_many_pages_but_few_tokens_is_not_split() -> None:
    pages = big_pages(30, tokens=100)
    roots = [Draft("Long but thin", 1, 1, 30)]
    assert split_oversized(roots, pages, no_structure) == []
    assert roots[0].children == []


def test_few_pages_but_many_tokens_is_not_split() -> None:
    pages = big_pages(5, tokens=5_000)
    roots = [Draft("Short but dense", 1, 1, 5)]
    assert split_oversized(roots, pages, no_structure) == []
    assert roots[0].children == []


def test_only_leaves_are_split() -> None:
    pages = big_pages(24)
    child = Draft("Small child", 2, 1, 2)
    parent = Draft("Parent", 1, 1, 12, children=[child])
    leaf = Draft("Leaf", 1, 13, 24)
    roots = [parent, leaf]
    assert split_oversized(roots, pages, no_structure) == ["Leaf"]
    assert parent.children == [child]
    assert [d.title for d in leaf.children] == ["Pages 13–22", "Pages 23–24"]


def test_headings_within_only_uses_candidates_in_range() -> None:
    extract: SubStructure = headings_within(
        [cand(2, "1 Early", 14), cand(5, "2 Inside", 14), cand(9, "3 Later", 14)]
    )
    entries = extract(["p"] * 10, 4, 8)
    assert entries == [{"level": 1, "title": "2 Inside", "start_page": 5}]
