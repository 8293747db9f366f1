"""Inline citation parsing and enforcement."""

from __future__ import annotations

from graph.citations import best_sentence, citation_list, enforce, find_citations, unread_pages

DOC = "0123456789abcdef"
TEXT = (
    f"Widgets fail at 3.5 percent (Lovelace et al., 2021, {DOC}, p.3). "
    f"They are cheap (Lovelace et al., 2021, {DOC}, pp. 4-5)."
)


def test_find_citations_reads_single_pages_and_ranges() -> None:
    found = find_citations(TEXT)
    assert [(c.label, c.doc_id, c.pages) for c in found] == [
        ("Lovelace et al., 2021", DOC, (3,)),
        ("Lovelace et al., 2021", DOC, (4, 5)),
    ]


def test_text_without_the_citation_format_has_no_citations() -> None:
    assert find_citations("As shown before (see Section 3) and (Smith 2020).") == []


def test_unread_pages_are_listed() -> None:
    assert unread_pages(TEXT, {DOC: [3, 4]}) == [f"{DOC} p.5"]
    assert unread_pages(TEXT, {}) == [f"{DOC} p.3", f"{DOC} p.4", f"{DOC} p.5"]


def test_enforce_removes_or_narrows_citations_of_unread_pages() -> None:
    cleaned, removed = enforce(TEXT, {DOC: [4]})
    assert removed == 2
    assert "p.3" not in cleaned
    assert f"(Lovelace et al., 2021, {DOC}, p.4)" in cleaned
    untouched, none = enforce(TEXT, {DOC: [3, 4, 5]})
    assert none == 0 and untouched == TEXT


def test_citation_list_is_distinct_pages_in_order_with_quotes() -> None:
    pages = {
        (DOC, 3): "Intro text. The failure rate of widgets was 3.5 percent in 2021. Other.",
        (DOC, 4): "Widgets are cheap to make.",
    }
    citations = citation_list(TEXT + f" Again (L, 2021, {DOC}, p.3).", pages)
    assert [(c["doc_id"], c["page"]) for c in citations] == [(DOC, 3), (DOC, 4), (DOC, 5)]
    assert citations[0]["quote"] == "The failure rate of widgets was 3.5 percent in 2021."
    assert citations[1]["quote"] == "Widgets are cheap to make."
    assert citations[2]["quote"] == ""


def test_best_sentence_strips_markdown() -> None:
    page = "**1** **Introduction** We study **widgets** in <sup>1</sup> factories."
    assert (
        best_sentence("widgets factories", page) == "1 Introduction We study widgets in factories."
    )
