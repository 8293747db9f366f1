"""Choosing real section headings from typography candidates and levelling them."""

from __future__ import annotations

from ingest.structure.headings import entries_from_headings
from ingest.structure.typography import Line, looks_like_heading
from store.types import HeadingCandidate


def cand(
    page: int,
    text: str,
    size: float = 12.0,
    bold: bool = True,
    y_frac: float = 0.2,
    score: float = 0.0,
) -> HeadingCandidate:
    """A candidate the typographic rule took (``score`` 0), or, with a score of 0.5 or more,
    one the line labeller labelled a heading."""
    return HeadingCandidate(page=page, text=text, size=size, bold=bold, y_frac=y_frac, score=score)


def titles(candidates: list[HeadingCandidate], total_pages: int = 20) -> list[str]:
    return [entry["title"] for entry in entries_from_headings(candidates, [""] * total_pages)]


def test_empty_candidates_give_no_entries() -> None:
    assert entries_from_headings([], [""] * 5) == []


def test_drops_stamps_captions_theorems_and_fragments() -> None:
    candidates = [
        cand(1, "1 Introduction", 14),
        cand(1, "arXiv:2101.00001v1 [cs.CL] 1 Jan 2021", 10),
        cand(2, "Figure 3: Overview of the system", 10),
        cand(2, "Fig. 2 shows the pipeline", 10),
        cand(2, "Table 2", 10),
        cand(2, "Algorithm 1 Greedy search", 10),
        cand(3, "Theorem 1", 12),
        cand(3, "Lemma 2.", 12),
        cand(3, "Proof.", 12),
        cand(3, "Definition 4 (Tree)", 12),
        cand(3, "(current cost)", 12),
        cand(3, "lowercase fragment of a sentence", 12),
        cand(3, "Results:", 12),
        cand(3, "42", 12),
        cand(3, "https://example.org/data", 12),
        cand(4, "2 Method", 14),
    ]
    assert titles(candidates) == ["1 Introduction", "2 Method"]


def test_running_headers_repeated_on_many_pages_are_dropped() -> None:
    candidates = [cand(1, "1 Introduction", 14)]
    candidates += [cand(page, "Journal of Things", 9, y_frac=0.04) for page in range(1, 11)]
    candidates += [cand(5, "2 Method", 14), cand(7, "Discussion", 14), cand(9, "Discussion", 14)]
    candidates.sort(key=lambda c: c["page"])
    # "Discussion" is on 2 of 10 pages (below the threshold of 3), the header on all 10.
    assert titles(candidates, total_pages=10) == [
        "1 Introduction",
        "2 Method",
        "Discussion",
        "Discussion",
    ]


def test_running_header_threshold_scales_with_page_count() -> None:
    repeated = [cand(page, "Chapter Notes", 9, y_frac=0.95) for page in (10, 20, 30, 40, 50)]
    candidates = [cand(1, "1 Introduction", 14), *repeated]
    # 5 pages of 100 is under 30 %: kept; 5 pages of 10 is over: dropped.
    assert titles(candidates, total_pages=100).count("Chapter Notes") == 5
    assert "Chapter Notes" not in titles(candidates, total_pages=10)


def test_a_heading_repeated_in_the_body_is_no_running_header() -> None:
    """A manual opens every chapter with "Introduction": printed in the body, not a margin."""
    candidates = [cand(1, "1 Overview", 14)]
    candidates += [cand(page, "Introduction", 12, y_frac=0.3) for page in range(2, 12)]
    assert titles(candidates, total_pages=12).count("Introduction") == 10


def test_title_page_lines_before_the_first_anchor_are_dropped() -> None:
    candidates = [
        cand(1, "A Great Paper Title", 20),
        cand(1, "Jane Doe and John Smith", 11),
        cand(1, "Department of Widgets", 11),
        cand(1, "Abstract", 14),
        cand(1, "1 Introduction", 14),
        cand(3, "2 Method", 14),
    ]
    assert titles(candidates) == ["Abstract", "1 Introduction", "2 Method"]


def test_bare_capital_article_does_not_anchor_the_body() -> None:
    candidates = [
        cand(1, "A Statistical Parser for Text", 20),
        cand(1, "1 Introduction", 14),
    ]
    assert titles(candidates) == ["1 Introduction"]


def test_without_any_anchor_only_page_one_is_dropped() -> None:
    candidates = [
        cand(1, "Report Title", 20),
        cand(1, "Some Agency Banner", 14),
        cand(2, "Overview Of Stuff", 16),
        cand(3, "Details Here", 12),
    ]
    entries = entries_from_headings(candidates, [""] * 20)
    assert [(e["title"], e["start_page"], e["level"]) for e in entries] == [
        ("Overview Of Stuff", 2, 1),
        ("Details Here", 3, 1),
    ]


def test_single_page_document_without_anchor_keeps_its_candidates() -> None:
    candidates = [cand(1, "Memo To Staff", 14), cand(1, "Next Steps", 12)]
    assert titles(candidates, total_pages=1) == ["Memo To Staff", "Next Steps"]


def test_table_of_contents_listing_is_dropped_but_real_headings_kept() -> None:
    candidates = [
        cand(1, "Report Title", 20),
        cand(2, "Table of Contents", 14),
        cand(2, "1 Introduction", 12),
        cand(2, "2 Findings", 12),
        cand(2, "Executive Summary", 12),
        cand(3, "Executive Summary", 14),
        cand(4, "1 Introduction", 14),
        cand(6, "2 Findings", 14),
        cand(7, "2.1 Detail", 12),
    ]
    entries = entries_from_headings(candidates, [""] * 20)
    assert [(e["title"], e["start_page"], e["level"]) for e in entries] == [
        ("Executive Summary", 3, 1),
        ("1 Introduction", 4, 1),
        ("2 Findings", 6, 1),
        ("2.1 Detail", 7, 2),
    ]


def test_levels_from_roman_letter_and_arabic_numbering() -> None:
    candidates = [
        cand(1, "I. I NTRODUCTION", 14),
        cand(2, "II. Rules", 14),
        cand(2, "A. Background", 12),
        cand(3, "1. Investment Discretion", 11),
        cand(4, "B. Scope", 12),
        cand(5, "III. Conclusion", 14),
    ]
    entries = entries_from_headings(candidates, [""] * 20)
    assert [(e["title"], e["level"], e["start_page"]) for e in entries] == [
        ("I. INTRODUCTION", 1, 1),
        ("II. Rules", 1, 2),
        ("A. Background", 2, 2),
        ("1. Investment Discretion", 3, 3),
        ("B. Scope", 2, 4),
        ("III. Conclusion", 1, 5),
    ]


def test_unnumbered_headings_take_the_level_of_similar_font_sizes() -> None:
    candidates = [
        cand(1, "1 Introduction", 14),
        cand(2, "1.1 Motivation", 12),
        cand(3, "Related Work", 14.2),  # as large as the level-1 numbered headings
        cand(3, "Prior Systems", 12.1),  # closest to the level-2 size
        cand(4, "Fine Print Notes", 9),  # smaller than every numbered heading
        cand(5, "Huge Banner Heading", 18),  # larger than all: top level
    ]
    entries = entries_from_headings(candidates, [""] * 20)
    assert [(e["title"], e["level"]) for e in entries] == [
        ("1 Introduction", 1),
        ("1.1 Motivation", 2),
        ("Related Work", 1),
        ("Prior Systems", 2),
        ("Fine Print Notes", 3),
        ("Huge Banner Heading", 1),
    ]


def test_where_few_headings_are_numbered_every_heading_nests_by_size() -> None:
    # a form's instructions: four sizes of heading, one "Chapter 11 …" among them
    sizes = [("Filing Status", 16), ("Line 1", 14), ("Single", 12), ("Exception", 10)]
    candidates = [cand(page, f"{text} {page}", size) for page in (2, 3) for text, size in sizes]
    candidates.append(cand(4, "Chapter 11 Bankruptcy Cases", 12))
    entries = entries_from_headings(candidates, [""] * 20)
    assert [e["level"] for e in entries] == [1, 2, 3, 4, 1, 2, 3, 4, 3]


def test_entries_carry_page_and_no_verification_flags() -> None:
    entries = entries_from_headings([cand(3, "Introduction", 14)], [""] * 10)
    assert entries == [{"level": 1, "title": "Introduction", "start_page": 3}]


def test_running_footers_with_changing_page_numbers_are_dropped() -> None:
    candidates = [cand(1, "1 Introduction", 14)]
    candidates += [cand(page, f"2023 FORM 10-K {page}", 9, y_frac=0.95) for page in range(2, 12)]
    candidates.append(cand(6, "2 Method", 14))
    candidates.sort(key=lambda c: c["page"])
    assert titles(candidates, total_pages=12) == ["1 Introduction", "2 Method"]


def test_table_cells_and_figures_are_not_headings() -> None:
    pages = ["## 1 Results\n\n| **Total** | 369 |\n|---|---|\n| Stores | 12 |\n", "text"]
    candidates = [
        cand(1, "1 Results", 14),
        cand(1, "Total", 12),  # a cell of the markdown table on its page
        cand(1, "TOTAL 369", 12),  # a figure in the line
        cand(2, "EBIT Margin 12.1 %", 12),
    ]
    assert [e["title"] for e in entries_from_headings(candidates, pages)] == ["1 Results"]


def test_the_labellers_headings_are_not_judged_again_as_cells_contents_or_title_page() -> None:
    """Table cells, contents lines and title-page lines are labels of the line labeller: a line
    it labelled a heading stays, while the same lines taken by the typographic rule alone go."""
    pages = ["Contents\n", "| Overview | Scope |\n|---|---|\n| a | b |\n", "text", "text"]
    labelled = [
        cand(1, "Agency Banner", 14, score=0.8),  # on the title page, before any anchor
        cand(1, "Contents", 14),
        cand(1, "Scope", 12, score=0.7),  # on a contents page and repeated later
        cand(2, "Overview", 12, score=0.9),  # a cell of the markdown table on its page
        cand(3, "Scope", 14, score=0.9),
        cand(4, "1 Method", 14, score=0.9),
    ]

    def kept(candidates: list[HeadingCandidate]) -> list[str]:
        return [entry["title"] for entry in entries_from_headings(candidates, pages)]

    assert kept(labelled) == ["Agency Banner", "Scope", "Overview", "Scope", "1 Method"]
    assert kept([{**c, "score": 0.0} for c in labelled]) == ["Scope", "1 Method"]


def test_lines_of_a_contents_list_are_not_headings() -> None:
    pages = ["Contents\n1 Introduction\n2 Method", "## 1 Introduction\ntext", "## 2 Method\n"]
    candidates = [cand(1, "1 Introduction", 12), cand(2, "1 Introduction", 14)]
    candidates.append(cand(3, "2 Method", 14))
    entries = entries_from_headings(candidates, pages, [[1, 9, len(pages[0])]])
    assert [(e["title"], e["start_page"]) for e in entries] == [
        ("1 Introduction", 2),
        ("2 Method", 3),
    ]


def _typeset(text: str, bold: bool = True) -> Line:
    return Line(page=2, text=text, size=9.0, bold=bold, y_frac=0.1, block_lines=1, chars=len(text))


def test_a_form_item_in_bold_ending_in_a_period_is_a_heading_but_a_sentence_is_not() -> None:
    item = (
        "Item 5.02. Departure of Directors or Certain Officers; Election of Directors; "
        "Appointment of Certain Officers; Compensatory Arrangements of Certain Officers."
    )
    assert looks_like_heading(_typeset(item), body=9.0)
    assert not looks_like_heading(_typeset(item, bold=False), body=9.0)
    # A bold numbered requirement or list item closing with a period stays a sentence.
    requirement = "3.3.4 Alert in the event of an audit logging process failure and report it."
    assert not looks_like_heading(_typeset(requirement), body=9.0)
