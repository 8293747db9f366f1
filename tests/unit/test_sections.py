"""Slicing each node's own body text out of the pages."""

from __future__ import annotations

from ingest.sections import node_bodies
from ingest.tree import Draft, build_tree, iter_drafts, page_windows
from store.types import SectionEntry


def entry(level: int, title: str, page: int, begins: bool) -> SectionEntry:
    return SectionEntry(
        level=level, title=title, start_page=page, verified=True, begins_page=begins
    )


PAGES = [
    "Title\n1 Intro\nintro text here.\n2 Method\nmethod preamble.\n2.1 Data\ndata text",
    "data cont.\n2.2 Model\nmodel text",
    "3 Results\nresults text",
    "results page two",
]


def roots() -> list[Draft]:
    return build_tree(
        [
            entry(1, "1 Intro", 1, False),
            entry(1, "2 Method", 1, False),
            entry(2, "2.1 Data", 1, False),
            entry(2, "2.2 Model", 2, False),
            entry(1, "3 Results", 3, True),
        ],
        len(PAGES),
    )


def test_leaf_body_runs_from_heading_to_next_heading() -> None:
    tree = roots()
    bodies = dict(zip([d.title for d in iter_drafts(tree)], node_bodies(tree, PAGES), strict=True))
    assert bodies["1 Intro"] == "1 Intro\nintro text here.\n"
    assert bodies["2.1 Data"] == "2.1 Data\ndata text\ndata cont.\n"
    assert bodies["2.2 Model"] == "2.2 Model\nmodel text"
    assert bodies["3 Results"] == "3 Results\nresults text\nresults page two"


def test_parent_body_is_its_preamble() -> None:
    tree = roots()
    bodies = node_bodies(tree, PAGES)
    titles = [d.title for d in iter_drafts(tree)]
    assert bodies[titles.index("2 Method")] == "2 Method\nmethod preamble.\n"


def test_bodies_follow_iter_drafts_order() -> None:
    tree = roots()
    assert len(node_bodies(tree, PAGES)) == len(iter_drafts(tree)) == 5


def test_node_whose_heading_is_not_printed_starts_at_top_of_page() -> None:
    pages = ["alpha", "beta", "gamma"]
    tree = page_windows(1, 3, level=1)
    assert node_bodies(tree, pages) == ["alpha\nbeta\ngamma"]


def test_parent_preamble_spans_pages_until_first_child() -> None:
    pages = ["Part I\nintro", "more intro", "Chapter 1\nchapter text"]
    child = Draft("Chapter 1", 2, 3, 3)
    parent = Draft("Part I", 1, 1, 3, children=[child])
    assert node_bodies([parent], pages) == [
        "Part I\nintro\nmore intro\n",
        "Chapter 1\nchapter text",
    ]
