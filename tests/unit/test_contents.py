"""Printed tables of contents: finding the pages, parsing entries, levels and page mapping.

Every layout here is built by the test: rows of positioned cells as
``ingest.structure.layout`` records them from a PDF, and page texts as the markdown parser
would give them.
"""

from __future__ import annotations

from ingest.structure.contents import (
    ContentsEntry,
    assign_levels,
    contents_pages,
    entries_from_contents,
    page_value,
    parse_entries,
    split_columns,
)
from ingest.structure.layout import Cell, PageLayout, Row
from ingest.structure.locate import find_title, mask_spans
from ingest.structure.numbering import parse_numbering


def row(page: int, y: float, *cells: tuple[float, str]) -> Row:
    return Row(page=page, y=y, cells=[Cell(x=x, text=text) for x, text in cells])


def layout(rows: list[Row], pages: int, folios: list[str | None] | None = None) -> PageLayout:
    return PageLayout(rows=rows, folios=folios or [None] * pages, labels=[None] * pages, running=[])


def listing(page: int, items: list[tuple[str, str | None]], heading: str = "Contents") -> list[Row]:
    """A contents page: a heading, then one row per (title, printed page)."""
    rows = [row(page, 0.1, (250, heading))]
    for index, (title, printed) in enumerate(items):
        cells = [(72.0, title)] + ([(520.0, printed)] if printed else [])
        rows.append(row(page, 0.15 + 0.03 * index, *cells))
    return rows


def body(title: str) -> str:
    return f"## {title}\n\nSome text of the section that follows.\n"


FILING_ITEMS = [
    ("PART I", "1"),
    ("Item 1. Business", "1"),
    ("Item 1A. Risk Factors", "3"),
    ("PART II", "5"),
    ("Item 7. Management's Discussion", "5"),
    ("Item 8. Financial Statements", "6"),
]


def filing_pages() -> list[str]:
    """Cover, contents, then printed page N on physical page N + 2."""
    pages = ["FORM 10-K\nAcme Corp", "Contents\n" + "\n".join(t for t, _ in FILING_ITEMS)]
    bodies = {
        1: body("PART I") + body("Item 1. Business"),
        3: body("Item 1A. Risk Factors"),
        5: body("PART II") + body("Item 7. Management's Discussion"),
        6: body("Item 8. Financial Statements"),
    }
    pages += [bodies.get(n, "More text.") for n in range(1, 8)]
    return pages


def test_contents_page_is_found_after_a_cover_and_tables_are_not() -> None:
    table = [
        row(5, 0.2 + 0.03 * i, (72, f"Net revenue line {i}"), (500, f"{i},123")) for i in range(8)
    ]
    runs = contents_pages(layout(listing(2, FILING_ITEMS) + table, 9), 9)
    assert runs == [[2]]


def test_a_long_rising_list_without_heading_is_contents_and_a_falling_one_is_not() -> None:
    rising = [
        row(3, 0.1 + 0.05 * i, (72, f"Section title {i}"), (500, str(2 * i + 1))) for i in range(9)
    ]
    falling = [
        row(4, 0.1 + 0.05 * i, (72, f"Apples and pears {i}"), (500, str(40 - 3 * i)))
        for i in range(9)
    ]
    assert contents_pages(layout(rising + falling, 40), 40) == [[3]]


def test_entries_parse_dot_leaders_wrapped_titles_and_skip_labels_and_notes() -> None:
    rows = [
        row(2, 0.10, (250, "TABLE OF CONTENTS")),
        row(2, 0.12, (500, "Page")),
        row(2, 0.15, (72, "Introduction .......... 1")),
        row(2, 0.18, (72, "A very long section title that wraps")),
        row(2, 0.21, (84, "onto a second line"), (500, "4")),
        row(2, 0.24, (72, "(Except as noted, incorporated by reference.)")),
        row(2, 0.27, (72, "Conclusion"), (500, "9")),
        row(2, 0.95, (300, "ii")),
    ]
    entries = parse_entries(rows, 20)
    assert [(e.title, e.printed) for e in entries] == [
        ("Introduction", "1"),
        ("A very long section title that wraps onto a second line", "4"),
        ("Conclusion", "9"),
    ]


def test_numbered_titles_wrapped_over_lines_and_numbers_run_into_titles() -> None:
    rows = [
        row(5, 0.10, (250, "Contents")),
        row(5, 0.15, (72, "7.1 Summary of existing and new recommendations on uptake")),
        row(5, 0.18, (72, "and linkage to care"), (500, "67")),
        row(5, 0.21, (72, "CHAPTER 8. DETECTION OF VIRAEMIC INFECTION")),
        row(5, 0.24, (72, "– NEW RECOMMENDATIONS"), (500, "74")),
        row(5, 0.27, (72, "Part 2 Getting started")),
        row(5, 0.30, (84, "Installing"), (500, "80")),
        row(5, 0.33, (84, "16.10Styling stories"), (500, "88")),
    ]
    entries = parse_entries(rows, 120)
    assert [(e.title, e.printed) for e in entries] == [
        ("7.1 Summary of existing and new recommendations on uptake and linkage to care", "67"),
        ("Chapter 8. DETECTION OF VIRAEMIC INFECTION – NEW RECOMMENDATIONS", "74"),
        ("Part 2 Getting started", None),
        ("Installing", "80"),
        ("16.10 Styling stories", "88"),
    ]


def _levels(titles: list[tuple[str, float]]) -> list[int]:
    entries = [
        ContentsEntry(title=t, printed="1", x=x, numbering=parse_numbering(t), list_page=2)
        for t, x in titles
    ]
    assign_levels(entries)
    return [e.level for e in entries]


def test_levels_follow_filing_numbering_and_indentation() -> None:
    titles = [
        ("PART I", 56),
        ("Item 1. Business", 56),
        ("General", 97),
        ("Products", 97),
        ("Item 1A. Risk Factors", 56),
        ("PART II", 56),
        ("Item 5. Market", 56),
        ("Signatures", 97),
    ]
    assert _levels(titles) == [1, 2, 3, 3, 2, 1, 2, 2]


def test_levels_follow_legal_outline_numbering() -> None:
    titles = [
        ("I. Introduction", 72),
        ("II. Interpretation", 72),
        ("A. Historical Context", 108),
        ("1. Investment Discretion", 144),
        ("(a) Scope", 180),
        ("B. Scope", 108),
        ("III. Economic Considerations", 72),
    ]
    assert _levels(titles) == [1, 1, 2, 3, 4, 2, 1]


def test_unnumbered_entries_nest_by_indentation() -> None:
    titles = [("Overview", 50), ("Markets", 80), ("Europe", 110), ("Asia", 110), ("Risks", 50)]
    assert _levels(titles) == [1, 2, 3, 3, 1]


def test_printed_pages_offset_from_physical_pages_are_mapped_by_the_titles() -> None:
    pages = filing_pages()
    found = entries_from_contents(layout(listing(2, FILING_ITEMS), len(pages)), pages)
    starts = {e["title"]: e["start_page"] for e in found.entries}
    assert starts == {
        "Contents": 2,
        "Part I": 3,
        "Item 1. Business": 3,
        "Item 1A. Risk Factors": 5,
        "Part II": 7,
        "Item 7. Management's Discussion": 7,
        "Item 8. Financial Statements": 8,
    }
    levels = {e["title"]: e["level"] for e in found.entries}
    assert (levels["Part II"], levels["Item 8. Financial Statements"]) == (1, 2)


def test_folios_printed_in_the_margins_map_pages_when_titles_are_far_from_page_tops() -> None:
    # Body pages carry folios "1".."7" on physical pages 3..9, except one unnumbered insert.
    pages = filing_pages()
    pages.insert(4, "An unnumbered insert page")
    folios: list[str | None] = [None, None, "1", "2", None, "3", "4", "5", "6", "7"]
    pages[5] = body("Item 1A. Risk Factors")
    pages[7] = body("PART II") + body("Item 7. Management's Discussion")
    pages[8] = body("Item 8. Financial Statements")
    found = entries_from_contents(layout(listing(2, FILING_ITEMS), len(pages), folios), pages)
    starts = {e["title"]: e["start_page"] for e in found.entries}
    assert starts["Item 1A. Risk Factors"] == 6
    assert starts["Item 8. Financial Statements"] == 9


def test_roman_front_matter_labels_map_roman_and_arabic_pages() -> None:
    pages = [
        "Cover",
        "Contents",
        body("Foreword"),
        "x",
        body("1 Introduction"),
        "y",
        body("2 Methods"),
    ]
    labels: list[str | None] = [None, "i", "ii", "iii", "1", "2", "3"]
    items = [("Foreword", "ii"), ("1 Introduction", "1"), ("2 Methods", "3")]
    plan = PageLayout(rows=listing(2, items), folios=[None] * 7, labels=labels, running=[])
    found = entries_from_contents(plan, pages)
    assert [(e["title"], e["start_page"]) for e in found.entries][1:] == [
        ("Foreword", 3),
        ("1 Introduction", 5),
        ("2 Methods", 7),
    ]
    assert page_value("xiv") == 14 and page_value("F-3") == 3


def test_a_list_without_page_numbers_is_placed_by_finding_titles_in_order() -> None:
    pages = [
        "Title page",
        "TABLE OF CONTENTS\nI. Introduction\nII. Background\nIII. Results\n\n"
        + body("I. Introduction"),
        "Background is mentioned in passing here.\n" + body("II. Background"),
        body("III. Results"),
    ]
    rows = [row(2, 0.1, (250, "TABLE OF CONTENTS"))]
    rows += [
        row(2, 0.15 + 0.03 * i, (72, t))
        for i, t in enumerate(["I. Introduction", "II. Background", "III. Results"])
    ]
    found = entries_from_contents(layout(rows, 4), pages)
    assert [(e["title"], e["start_page"]) for e in found.entries] == [
        ("Table of Contents", 2),
        ("I. Introduction", 2),
        ("II. Background", 3),
        ("III. Results", 4),
    ]


def test_the_list_is_masked_so_it_never_verifies_its_own_titles() -> None:
    pages = filing_pages()
    found = entries_from_contents(layout(listing(2, FILING_ITEMS), len(pages)), pages)
    masked = mask_spans(pages, found.listing_spans)
    assert find_title("Item 1A. Risk Factors", pages[1]) is not None
    assert find_title("Item 1A. Risk Factors", masked[1]) is None
    assert find_title("Contents", masked[1]) is not None  # the heading stays: it is a node
    assert len(masked[1]) == len(pages[1])


def test_two_column_contents_are_read_column_by_column() -> None:
    rows = [
        row(2, 0.15, (50, "Introduction"), (250, "1"), (320, "Results"), (520, "9")),
        row(2, 0.18, (50, "Methods"), (250, "4"), (320, "Discussion"), (520, "12")),
    ]
    ordered = split_columns(rows)
    assert [r["cells"][0]["text"] for r in ordered] == [
        "Introduction",
        "Methods",
        "Results",
        "Discussion",
    ]


def test_a_later_list_nests_under_the_entry_whose_pages_hold_it() -> None:
    pages = [*filing_pages(), "Notes index", body("Note 1 Summary"), body("Note 2 Revenue")]
    pages.append(body("Note 3 Leases"))
    items = [("Note 1 Summary", "8"), ("Note 2 Revenue", "9"), ("Note 3 Leases", "10")]
    notes = listing(10, items, "Index to Notes")
    found = entries_from_contents(layout(listing(2, FILING_ITEMS) + notes, len(pages)), pages)
    by_title = {e["title"]: e for e in found.entries}
    assert by_title["Note 1 Summary"]["start_page"] == 11
    assert (
        by_title["Note 1 Summary"]["level"] == by_title["Item 8. Financial Statements"]["level"] + 1
    )


def test_a_list_without_page_numbers_continues_on_the_next_page() -> None:
    first = [row(2, 0.1, (250, "TABLE OF CONTENTS"))]
    first += [row(2, 0.2 + 0.05 * i, (72, f"{r}. Part {r}")) for i, r in enumerate(["I", "II"])]
    first.append(row(2, 0.35, (108, "A. Scope")))
    second = [row(3, 0.1 + 0.05 * i, (108, f"{c}. Topic {c}")) for i, c in enumerate("BCD")]
    second.append(row(3, 0.3, (72, "III. Costs")))
    prose = [
        row(4, 0.1 + 0.05 * i, (72, f"Body text line number {i} of the section.")) for i in range(6)
    ]
    assert contents_pages(layout(first + second + prose, 9), 9) == [[2, 3]]
