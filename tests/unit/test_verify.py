"""Verification and repair of structure entries against page text."""

from __future__ import annotations

import pytest

from ingest.structure.verify import MAX_REPAIR_ROUNDS, insert_abstract, verify_entries
from store.types import SectionEntry

MID = "x" * 200 + "\n"  # enough text before a heading that it no longer begins its page


def entry(level: int, title: str, page: int) -> SectionEntry:
    return SectionEntry(level=level, title=title, start_page=page)


@pytest.fixture
def pages() -> list[str]:
    return [
        "A Paper Title\nJane Doe\nAbstract\nWe study widgets.",  # 1
        "1 Introduction\nIntro text.",  # 2
        "more intro text",  # 3
        MID + "2 Method\nMethod text.",  # 4
        "filler",  # 5
        "filler",  # 6
        "filler",  # 7
        "filler",  # 8
        "3 Results\nResults text.",  # 9
        "4 Conclusion\nThe end.",  # 10
    ]


def test_entry_on_claimed_page_passes_unchanged(pages: list[str]) -> None:
    survivors, report = verify_entries([entry(1, "1 Introduction", 2)], pages, "headings")
    assert survivors == [
        {
            "level": 1,
            "title": "1 Introduction",
            "start_page": 2,
            "verified": True,
            "begins_page": True,
            "repaired": False,
        }
    ]
    assert report["initial_verification_rate"] == 1.0
    assert report["verification_rate"] == 1.0
    assert report["repair_rounds"] == 0
    assert report["repaired"] == []
    assert report["dropped"] == []
    assert report["entries"] == 1
    assert report["method"] == "headings"


@pytest.mark.parametrize("claimed", [1, 3])
def test_bookmark_within_one_page_keeps_its_claimed_page(pages: list[str], claimed: int) -> None:
    survivors, report = verify_entries([entry(1, "1 Introduction", claimed)], pages, "outline")
    assert [(e["start_page"], e["verified"], e["repaired"]) for e in survivors] == [
        (claimed, True, False)
    ]
    assert report["repaired"] == []
    assert report["repair_rounds"] == 0


@pytest.mark.parametrize("method", ["headings", "toc"])
@pytest.mark.parametrize("claimed", [1, 3])
def test_derived_entry_within_one_page_moves_to_where_its_title_is_printed(
    pages: list[str], claimed: int, method: str
) -> None:
    survivors, report = verify_entries([entry(1, "1 Introduction", claimed)], pages, method)  # type: ignore[arg-type]
    assert [(e["start_page"], e["verified"], e["repaired"]) for e in survivors] == [
        (2, True, False)
    ]
    assert report["repaired"] == []
    assert report["repair_rounds"] == 0


def test_heading_mid_page_does_not_begin_its_page(pages: list[str]) -> None:
    survivors, _ = verify_entries([entry(1, "2 Method", 4)], pages, "headings")
    assert survivors[0]["verified"] is True
    assert survivors[0]["begins_page"] is False


def test_failed_entry_is_relocated_and_reported(pages: list[str]) -> None:
    entries = [
        entry(1, "1 Introduction", 2),
        entry(1, "2 Method", 4),
        entry(1, "3 Results", 6),  # printed on page 9: found in the first window (±3)
        entry(1, "4 Conclusion", 10),
    ]
    survivors, report = verify_entries(entries, pages, "headings")
    results = survivors[2]
    assert (results["title"], results["start_page"]) == ("3 Results", 9)
    assert results["repaired"] is True and results["verified"] is True
    assert results["begins_page"] is True
    assert report["initial_verification_rate"] == 0.75
    assert report["verification_rate"] == 1.0
    assert report["repair_rounds"] == 1
    assert report["repaired"] == ["3 Results"]
    assert report["dropped"] == []


def test_wider_windows_are_used_in_later_rounds(pages: list[str]) -> None:
    # Claimed page 2 is 7 pages from page 9: beyond ±3, within ±10.
    entries = [entry(1, "3 Results", 2), entry(1, "4 Conclusion", 10)]
    survivors, report = verify_entries(entries, pages, "headings")
    assert [(e["title"], e["start_page"]) for e in survivors] == [
        ("3 Results", 9),
        ("4 Conclusion", 10),
    ]
    assert report["repair_rounds"] == 2
    assert report["initial_verification_rate"] == 0.5
    assert report["verification_rate"] == 1.0


def test_never_found_entry_is_dropped_after_all_rounds(pages: list[str]) -> None:
    entries = [entry(1, "1 Introduction", 2), entry(1, "Ghost Section", 5)]
    survivors, report = verify_entries(entries, pages, "headings")
    assert [e["title"] for e in survivors] == ["1 Introduction"]
    assert report["dropped"] == ["Ghost Section"]
    assert report["repaired"] == []
    assert report["repair_rounds"] == MAX_REPAIR_ROUNDS == 3
    assert report["initial_verification_rate"] == 0.5
    assert report["verification_rate"] == 0.5


def test_relocation_never_crosses_verified_neighbours(pages: list[str]) -> None:
    # "3 Results" is printed on page 9, past the verified "2 Method" (page 4) that follows it.
    entries = [entry(1, "1 Introduction", 2), entry(1, "3 Results", 3), entry(1, "2 Method", 4)]
    survivors, report = verify_entries(entries, pages, "headings")
    assert [e["title"] for e in survivors] == ["1 Introduction", "2 Method"]
    assert report["dropped"] == ["3 Results"]


def test_outline_entries_are_flagged_not_dropped(pages: list[str]) -> None:
    entries = [entry(1, "1 Introduction", 2), entry(1, "References", 10)]
    survivors, report = verify_entries(entries, pages, "outline")
    assert [(e["title"], e["verified"]) for e in survivors] == [
        ("1 Introduction", True),
        ("References", False),
    ]
    assert report["dropped"] == []
    assert report["flagged"] == ["References"]
    assert report["verification_rate"] == 0.5


def test_no_entries_gives_empty_report(pages: list[str]) -> None:
    survivors, report = verify_entries([], pages, "headings")
    assert survivors == []
    assert report["initial_verification_rate"] is None
    assert report["verification_rate"] is None
    assert report["repair_rounds"] == 0


def test_llm_proposal_that_verifies_is_applied(pages: list[str]) -> None:
    calls: list[list[SectionEntry]] = []

    def repairer(failed: list[SectionEntry], _pages: list[str]) -> list[SectionEntry]:
        calls.append(failed)
        return [entry(7, "3 Results", 9)]

    entries = [entry(1, "1 Introduction", 2), entry(1, "3 Resluts", 9)]
    survivors, report = verify_entries(entries, pages, "llm", repairer=repairer)
    assert len(calls) == 1
    assert [e["title"] for e in calls[0]] == ["3 Resluts"]
    fixed = survivors[1]
    assert (fixed["title"], fixed["start_page"], fixed["level"]) == ("3 Results", 9, 1)
    assert fixed["repaired"] is True and fixed["verified"] is True
    assert report["repaired"] == ["3 Results"]
    assert report["repair_rounds"] == 1
    assert report["verification_rate"] == 1.0
    assert report["dropped"] == []


def test_llm_proposal_that_does_not_verify_is_ignored(pages: list[str]) -> None:
    calls: list[list[SectionEntry]] = []

    def repairer(failed: list[SectionEntry], _pages: list[str]) -> list[SectionEntry]:
        calls.append(failed)
        return [entry(1, "Totally Invented Heading", 5)]

    entries = [entry(1, "1 Introduction", 2), entry(1, "Ghost Section", 5)]
    survivors, report = verify_entries(entries, pages, "llm", repairer=repairer)
    assert [e["title"] for e in survivors] == ["1 Introduction"]
    assert len(calls) == MAX_REPAIR_ROUNDS
    assert report["dropped"] == ["Ghost Section"]
    assert report["repaired"] == []


def test_insert_abstract_when_uncovered(pages: list[str]) -> None:
    entries = [entry(2, "1 Introduction", 2)]
    out = insert_abstract(entries, pages)
    assert out[0] == {
        "level": 2,
        "title": "Abstract",
        "start_page": 1,
        "verified": True,
        "begins_page": True,
    }
    assert out[1:] == entries


def test_insert_abstract_not_when_an_entry_already_is_the_abstract(pages: list[str]) -> None:
    entries = [entry(1, "ABSTRACT", 1), entry(1, "1 Introduction", 2)]
    assert insert_abstract(entries, pages) == entries


def test_insert_abstract_not_when_first_entry_precedes_it(pages: list[str]) -> None:
    entries = [entry(1, "A Paper Title", 1), entry(1, "1 Introduction", 2)]
    assert insert_abstract(entries, pages) == entries


def test_insert_abstract_not_without_an_abstract_heading() -> None:
    pages = ["Title\nWe study widgets.", "1 Introduction\ntext"]
    entries = [entry(1, "1 Introduction", 2)]
    assert insert_abstract(entries, pages) == entries


def test_insert_abstract_on_page_two_mid_page() -> None:
    pages = ["Cover page", "x" * 200 + "\n**Abstract**\nWe study.", "1 Introduction"]
    out = insert_abstract([entry(1, "1 Introduction", 3)], pages)
    assert [(e["title"], e["start_page"], e.get("begins_page")) for e in out] == [
        ("Abstract", 2, False),
        ("1 Introduction", 3, None),
    ]
