"""Folding verified entries into a section tree with inclusive page ranges and stable ids."""

from __future__ import annotations

import itertools

from ingest.tree import (
    FRONT_MATTER,
    Draft,
    build_tree,
    from_tree_nodes,
    iter_drafts,
    page_windows,
    to_tree_nodes,
)
from store.types import SectionEntry, walk


def entry(level: int, title: str, page: int, begins: bool = True) -> SectionEntry:
    return SectionEntry(
        level=level, title=title, start_page=page, verified=True, begins_page=begins
    )


def ranges(roots: list[Draft]) -> list[tuple[str, int, int, int]]:
    return [(d.title, d.level, d.start_page, d.end_page) for d in iter_drafts(roots)]


def sample_roots() -> list[Draft]:
    return build_tree(
        [
            entry(1, "1 Intro", 2),
            entry(1, "2 Method", 4, begins=False),
            entry(2, "2.1 Data", 5),
            entry(2, "2.2 Model", 7, begins=False),
            entry(1, "3 Results", 9),
        ],
        12,
    )


def test_inclusive_ranges_parent_cover_and_front_matter() -> None:
    assert ranges(sample_roots()) == [
        (FRONT_MATTER, 1, 1, 1),
        ("1 Intro", 1, 2, 4),  # "2 Method" starts mid-page 4: page 4 is shared
        ("2 Method", 1, 4, 8),  # own range ends at 4; widened to its subtree (…8)
        ("2.1 Data", 2, 5, 7),
        ("2.2 Model", 2, 7, 8),  # "3 Results" begins page 9: ends at 8
        ("3 Results", 1, 9, 12),
    ]


def test_no_front_matter_when_first_entry_starts_on_page_one() -> None:
    roots = build_tree([entry(1, "Intro", 1), entry(1, "Body", 3)], 5)
    assert ranges(roots) == [("Intro", 1, 1, 2), ("Body", 1, 3, 5)]


def test_front_matter_takes_the_shallowest_level() -> None:
    roots = build_tree([entry(2, "Deep", 3), entry(2, "Deeper", 4)], 4)
    assert ranges(roots) == [(FRONT_MATTER, 2, 1, 2), ("Deep", 2, 3, 3), ("Deeper", 2, 4, 4)]


def test_next_heading_on_same_page_keeps_range_non_empty() -> None:
    roots = build_tree([entry(1, "A", 1), entry(1, "B", 1), entry(1, "C", 1)], 1)
    assert ranges(roots) == [("A", 1, 1, 1), ("B", 1, 1, 1), ("C", 1, 1, 1)]


def test_start_pages_are_made_monotonic() -> None:
    roots = build_tree([entry(1, "A", 1), entry(1, "B", 5), entry(1, "C", 3)], 8)
    assert ranges(roots) == [("A", 1, 1, 4), ("B", 1, 5, 5), ("C", 1, 5, 8)]


def test_empty_entries_give_ten_page_windows() -> None:
    roots = build_tree([], 25)
    assert ranges(roots) == [
        ("Pages 1–10", 1, 1, 10),
        ("Pages 11–20", 1, 11, 20),
        ("Pages 21–25", 1, 21, 25),
    ]


def test_page_windows_between_pages() -> None:
    windows = page_windows(5, 14, level=3)
    assert [(w.title, w.level, w.start_page, w.end_page) for w in windows] == [
        ("Pages 5–14", 3, 5, 14)
    ]
    assert page_windows(3, 2, level=1) == []


def test_every_page_is_covered_and_starts_never_decrease() -> None:
    total = 12
    roots = sample_roots()
    drafts = iter_drafts(roots)
    starts = [d.start_page for d in drafts]
    assert starts == sorted(starts)
    covered = {p for d in drafts for p in range(d.start_page, d.end_page + 1)}
    assert covered == set(range(1, total + 1))
    assert roots[0].start_page == 1 and roots[-1].end_page == total
    for before, after in itertools.pairwise(roots):
        assert after.start_page <= before.end_page + 1
    for draft in drafts:
        for child in draft.children:
            assert draft.start_page <= child.start_page <= child.end_page <= draft.end_page


def test_to_tree_nodes_gives_depth_first_zero_padded_ids() -> None:
    nodes = to_tree_nodes(sample_roots())
    assert [(n["node_id"], n["title"]) for n in walk(nodes)] == [
        ("0000", FRONT_MATTER),
        ("0001", "1 Intro"),
        ("0002", "2 Method"),
        ("0003", "2.1 Data"),
        ("0004", "2.2 Model"),
        ("0005", "3 Results"),
    ]
    method = nodes[2]
    assert method == {
        "node_id": "0002",
        "title": "2 Method",
        "start_page": 4,
        "end_page": 8,
        "summary": "",
        "nodes": [
            {
                "node_id": "0003",
                "title": "2.1 Data",
                "start_page": 5,
                "end_page": 7,
                "summary": "",
                "nodes": [],
            },
            {
                "node_id": "0004",
                "title": "2.2 Model",
                "start_page": 7,
                "end_page": 8,
                "summary": "",
                "nodes": [],
            },
        ],
    }


def test_from_tree_nodes_round_trip() -> None:
    roots = sample_roots()
    roots[2].summary = "How it works."
    roots[2].children[0].summary = "The data."
    nodes = to_tree_nodes(roots)
    thawed = from_tree_nodes(nodes)
    assert to_tree_nodes(thawed) == nodes
    assert [(d.title, d.level, d.summary) for d in iter_drafts(thawed)][2:4] == [
        ("2 Method", 1, "How it works."),
        ("2.1 Data", 2, "The data."),
    ]
