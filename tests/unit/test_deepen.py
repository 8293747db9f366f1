"""Body headings deepen a tree whose top levels came from a printed contents list."""

from __future__ import annotations

from ingest.structure.deepen import deepen
from store.types import HeadingCandidate, SectionEntry


def cand(page: int, text: str, size: float = 12.0) -> HeadingCandidate:
    return HeadingCandidate(page=page, text=text, size=size, bold=True, y_frac=0.2)


PAGES = [
    "Cover",
    "## II. Interpretation\n\n### A. Background\n\ntext\n\n### B. Components\n\ntext",
    "#### a. First component\n\ntext\n\n#### (1) A detail\n\ntext",
    "## III. Economics\n\n### Overview\n\ntext",
]
LISTED = [
    SectionEntry(level=1, title="II. Interpretation", start_page=2),
    SectionEntry(level=2, title="A. Background", start_page=2),
    SectionEntry(level=2, title="B. Components", start_page=2),
    SectionEntry(level=1, title="III. Economics", start_page=4),
]


def test_headings_inside_listed_sections_become_their_children() -> None:
    candidates = [
        cand(2, "II. Interpretation", 14),  # the listed entry itself: not added twice
        cand(2, "B. Components", 12),
        cand(3, "a. First component", 11),
        cand(3, "(1) A detail", 10),
        cand(4, "Overview", 12),
    ]
    entries = deepen(LISTED, candidates, PAGES, [])
    assert [(e["level"], e["title"], e["start_page"]) for e in entries] == [
        (1, "II. Interpretation", 2),
        (2, "A. Background", 2),
        (2, "B. Components", 2),
        (3, "a. First component", 3),
        (4, "(1) A detail", 3),
        (1, "III. Economics", 4),
        (2, "Overview", 4),
    ]


def test_headings_on_contents_pages_are_never_added() -> None:
    pages = ["Contents\nII. Interpretation\nStray Heading", *PAGES[1:]]
    entries = deepen(LISTED, [cand(1, "Stray Heading", 14)], pages, [[1, 0, len(pages[0])]])
    assert [e["title"] for e in entries] == [e["title"] for e in LISTED]


def test_the_contents_node_covers_only_its_own_pages() -> None:
    """A heading printed after the contents list, before the first listed section, stands
    beside the contents node instead of under it."""
    pages = [
        "Table of Contents\nII. Interpretation 2",
        "Forward-Looking Statements\n\ntext",
        *PAGES[1:],
    ]
    listed = [
        SectionEntry(level=1, title="Table of Contents", start_page=1),
        *[SectionEntry(**{**e, "start_page": e["start_page"] + 1}) for e in LISTED],
    ]
    spans = [[1, len("Table of Contents\n"), len(pages[0])]]
    entries = deepen(listed, [cand(2, "Forward-Looking Statements", 14)], pages, spans)
    assert [(e["level"], e["title"]) for e in entries][:3] == [
        (1, "Table of Contents"),
        (1, "Forward-Looking Statements"),
        (1, "II. Interpretation"),
    ]


PLAN = [
    "Contents\n1. Healthcare 2",
    "## 1. Healthcare\n\n### Strategy 1.1 Access\n\ntext",
    "## 2. Education\n\n### Strategy 2.1 Schools\n\ntext",
    "## 3. Housing\n\ntext",
    "## Appendix A\n\n## 1. What is a goal?\n\ntext",
]


def test_a_list_that_names_only_the_first_goal_never_hides_the_others() -> None:
    """The contents names "1. Healthcare" alone: the goals that number on from it are its
    siblings, and the strategies under them stay theirs, so goal 1 ends where goal 2 starts."""
    listed = [
        SectionEntry(level=1, title="1. Healthcare", start_page=2),
        SectionEntry(level=1, title="Appendix A", start_page=5),
    ]
    candidates = [
        cand(2, "Strategy 1.1 Access", 12),
        cand(3, "2. Education", 14),
        cand(3, "Strategy 2.1 Schools", 12),
        cand(4, "3. Housing", 14),
        cand(5, "1. What is a goal?", 14),  # another list's numbering: under the appendix
    ]
    entries = deepen(listed, candidates, PLAN, [[1, 0, len(PLAN[0])]])
    assert [(e["level"], e["title"]) for e in entries] == [
        (1, "1. Healthcare"),
        (2, "Strategy 1.1 Access"),
        (1, "2. Education"),
        (2, "Strategy 2.1 Schools"),
        (1, "3. Housing"),
        (1, "Appendix A"),
        (2, "1. What is a goal?"),
    ]
