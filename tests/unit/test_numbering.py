"""Numbering schemes, the levels they imply, and title clean-up."""

from __future__ import annotations

import pytest

from ingest.structure.numbering import (
    LevelAssigner,
    Numbering,
    clean_title,
    numbering_prefix,
    parse_numbering,
)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("2.1 Foo", Numbering("arabic", 2)),
        ("3 Method", Numbering("arabic", 1)),
        ("1.2.3 Deep Layers", Numbering("arabic", 3)),
        ("1. Investment Discretion", Numbering("arabic", 1)),
        ("IV. Results", Numbering("roman", 1)),
        ("II) Related Work", Numbering("roman", 1)),
        ("A. Background", Numbering("letter", 1)),
        ("A Multi-LexSum release", Numbering("appendix", 1)),
        ("A.1 Accessing", Numbering("appendix", 2)),
        ("B.2.1 Deeper Detail", Numbering("appendix", 3)),
        ("Appendix B Proofs", Numbering("appendix", 1)),
        ("APPENDIX C: Extra tables", Numbering("appendix", 1)),
        ("5 EXPERIMENTS", Numbering("arabic", 1)),
        ("9.3 SPI Mode", Numbering("arabic", 2)),  # an acronym opens many a specification's title
        ("5.2.3 PAE Paging", Numbering("arabic", 3)),
        ("2-8 GROUNDING, BONDING", Numbering("arabic", 2)),  # chapter 2, section 8
        ("2-8.1 Cable Entrance Grounding", Numbering("arabic", 3)),
        ("2.3.59-4 Exhibit Title", Numbering("arabic", 3)),  # an exhibit of section 2.3.59
        ("1.1: Typographical Conventions", Numbering("arabic", 2)),  # a manual's colon
        ("3.5.12: ISA Mode", Numbering("arabic", 3)),
        ("Strategy 1.1.2 Choices", Numbering("labelled", 3)),
        ("Register 2-1: Status Register", Numbering("labelled", 2)),  # a data sheet's chapter 2
    ],
)
def test_parse_numbering_recognises_schemes(title: str, expected: Numbering) -> None:
    assert parse_numbering(title) == expected


@pytest.mark.parametrize(
    "title",
    [
        "17 CFR Part 276",  # a citation, not a heading number
        "2019) was a busy year",
        "12 cases were reported",
        "A. a lowercase fragment",
        "Introduction",
        "Related Work",
        "3.5",
        "1: Input: the observed reward",  # an algorithm's step
        "0: Indicates the entry is not present",  # a field's value
        "",
    ],
)
def test_parse_numbering_rejects_unnumbered_or_implausible(title: str) -> None:
    assert parse_numbering(title) is None


def _levels(titles: list[str]) -> list[int]:
    assigner = LevelAssigner()
    out = []
    for title in titles:
        numbering = parse_numbering(title)
        assert numbering is not None, title
        out.append(assigner.level(numbering))
    return out


def test_letter_under_roman_is_level_two_and_arabic_under_both_is_level_three() -> None:
    titles = [
        "I. Introduction",
        "A. Background",
        "1. Investment Discretion",
        "2. Other Duties",
        "B. Scope",
        "II. Results",
        "1. Direct Effects",
    ]
    assert _levels(titles) == [1, 2, 3, 3, 2, 1, 2]


def test_appendix_letters_are_top_level_with_dotted_children() -> None:
    titles = ["1 Introduction", "2.1 Data", "A Multi-LexSum release", "A.1 Accessing", "B Proofs"]
    assert _levels(titles) == [1, 2, 1, 2, 1]


def test_appendix_closes_roman_and_letter_sections() -> None:
    assert _levels(["I. Scope", "A. Terms", "Appendix A Forms", "1. First Form"]) == [1, 2, 1, 1]


def test_plain_arabic_levels_follow_dots() -> None:
    assert _levels(["1 Intro", "2 Method", "2.1 Data", "2.1.1 Cleaning", "3 Results"]) == [
        1,
        1,
        2,
        3,
        1,
    ]


def test_letter_without_roman_is_top_level() -> None:
    assert _levels(["A. Overview", "1. Details"]) == [1, 2]


def test_small_caps_heading_parses_after_cleaning() -> None:
    title = clean_title("I. I NTRODUCTION")
    assert parse_numbering(title) == Numbering("roman", 1)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("PART I", Numbering("part", 1)),
        ("Part II — Other Information", Numbering("part", 1)),
        ("ITEM 1A. RISK FACTORS", Numbering("item", 1)),
        ("Item 2.02 Results of Operations", Numbering("item", 1)),
        ("Item 9B.", Numbering("item", 1)),
        ("Note 3 — Revenue", Numbering("note", 1)),
        ("NOTE 12: LEASES", Numbering("note", 1)),
        ("Chapter 4 Results", Numbering("chapter", 1)),
        ("a. Components", Numbering("sub", 1)),
        ("(1) General Rule", Numbering("sub", 2)),
        ("(ii) Scope", Numbering("sub", 3)),
    ],
)
def test_parse_numbering_recognises_filing_and_legal_schemes(
    title: str, expected: Numbering
) -> None:
    assert parse_numbering(title) == expected


@pytest.mark.parametrize("title", ["Items 1 and 2 are", "Item 1 of this report", "Part 276"])
def test_filing_words_in_sentences_are_not_numbering(title: str) -> None:
    assert parse_numbering(title) is None


def test_filing_levels_part_item_note() -> None:
    titles = [
        "PART I",
        "Item 1. Business",
        "Item 1A. Risk Factors",
        "PART II",
        "Item 8. Financial Statements",
        "Note 1 — Summary",
        "Note 2 — Revenue",
        "Item 9. Changes",
    ]
    assert _levels(titles) == [1, 2, 2, 1, 2, 3, 3, 2]


def test_items_without_parts_are_top_level() -> None:
    assert _levels(["Item 2.02 Results of Operations", "Item 9.01 Exhibits"]) == [1, 1]


@pytest.mark.parametrize(
    ("title", "prefix", "scheme", "depth"),
    [
        ("CHAPTER ONE INTRODUCTION", "CHAPTER ONE ", "chapter", 1),
        ("Strategy 1.02: Create a work environment", "Strategy 1.02: ", "labelled", 2),
        ("Strategic Goal 3: Serve as the thought leader", "Strategic Goal 3: ", "labelled", 1),
        ("Task 1.1.1.1 Outreach", "Task 1.1.1.1 ", "labelled", 4),
        ("Exhibit 2.3.59-4 Command Code BMFOL", "Exhibit 2.3.59-4 ", "appendix", 1),
        ("2.3.59-1 Command Code BMFOL", "2.3.59-1 ", "arabic", 3),
        ("1.1: Typographical Conventions", "1.1: ", "arabic", 2),
        ("Schedule II Valuation and Qualifying Accounts", "Schedule II ", "appendix", 1),
    ],
)
def test_labelled_spelled_and_exhibit_numbering(
    title: str, prefix: str, scheme: str, depth: int
) -> None:
    numbering = parse_numbering(title)
    assert numbering is not None and (numbering.scheme, numbering.depth) == (scheme, depth)
    assert numbering_prefix(title) == prefix


@pytest.mark.parametrize(
    "title",
    ["Figure 3. Overview of the system", "Line 12 Other income", "The 2 Things", "Phase 2 plan"],
)
def test_words_before_a_number_that_name_no_heading(title: str) -> None:
    assert parse_numbering(title) is None


def test_a_dotted_number_run_into_its_title_is_parted() -> None:
    assert clean_title("16.10.1Font selection") == "16.10.1 Font selection"
    assert clean_title("14.10TGA") == "14.10 TGA"
    assert clean_title("3.5GHz Processors") == "3.5GHz Processors"


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("Strategic Objective 1 .1: Drive hiring", Numbering("labelled", 2)),  # period spaced off
        ("Initiative1.2 Expand digital services", Numbering("labelled", 2)),  # label run in
        ("Objective1 Dramatically improve services", Numbering("labelled", 1)),
    ],
)
def test_numbers_spaced_off_or_run_into_their_label_parse_after_cleaning(
    printed: str, expected: Numbering
) -> None:
    assert parse_numbering(printed) is None
    assert parse_numbering(clean_title(printed)) == expected


def test_cleaning_leaves_figures_and_words_with_digits_alone() -> None:
    assert clean_title("rose 3 .5 percent") == "rose 3.5 percent"
    assert clean_title("Figure 2-1 – Cabling") == "Figure 2-1 – Cabling"
    assert parse_numbering(clean_title("Figure 2-1 – Cabling")) is None
    assert clean_title("MP3 players") == "MP3 players"
