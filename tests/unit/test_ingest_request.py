"""The served ingest graph's input: every field checked without coercion, and bounded."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.request import InvalidIngestInput, checked_ingest_request
from store.settings import ServerSettings

LIMITS = ServerSettings(max_pages=3, max_page_chars=50, max_bytes=2_000)
PAGE = "A short page of text."


def refusal(values: dict[str, Any]) -> str:
    with pytest.raises(InvalidIngestInput) as refused:
        checked_ingest_request(values, LIMITS)
    line = str(refused.value)
    assert line.startswith("invalid input: ") and "\n" not in line
    return line


def supplied(**fields: Any) -> dict[str, Any]:
    """A request whose supplied document has a title and one page unless ``fields`` say."""
    return {"supplied": {"title": "t", "pages": [PAGE], **fields}}


NOT_A_STRING = "Input should be a valid string"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (supplied(pages="abc"), "supplied.pages: Input should be a valid list"),
        (supplied(pages={"a": 1}), "supplied.pages: Input should be a valid list"),
        (supplied(pages=[1]), f"supplied.pages.0: {NOT_A_STRING}"),
        (supplied(entries=[[1, 2, 3]]), "supplied.entries.0:"),
        ({"source": 5}, f"source: {NOT_A_STRING}"),
        ({"source": "a\x00.pdf"}, "source: contains a NUL byte"),
        ({"doc_id": "d\x00"}, "doc_id: contains a NUL byte"),
        (supplied(title=None), f"supplied.title: {NOT_A_STRING}"),
        (supplied(title=" "), "supplied.title: the title is blank"),
        (supplied(pages=["", " "]), "supplied.pages: every page is empty"),
        (supplied(year="2020"), "supplied.year:"),
        (supplied(authorz=[]), "supplied.authorz: is not a known field (known: title, pages"),
        ({}, "source: give the path of a PDF in the inbox, or a supplied document"),
    ],
)
def test_malformed_requests_are_refused_in_one_line_naming_the_field(
    values: dict[str, Any], expected: str
) -> None:
    assert expected in refusal(values)


def test_the_operators_limits_bound_pages_characters_and_bytes() -> None:
    assert "4 pages, more than the limit of 3" in refusal(
        {"supplied": {"title": "t", "pages": [PAGE] * 4}}
    )
    assert "supplied.pages.1: 51 characters, more than the limit of 50" in refusal(
        {"supplied": {"title": "t", "pages": [PAGE, "x" * 51]}}
    )
    assert "more than the limit of 2000 (VECTREE_INGEST_MAX_BYTES)" in refusal(
        {"supplied": {"title": "t", "pages": [PAGE], "abstract": "y" * 3_000}}
    )
    entry = {"level": 1, "title": "Intro", "start_page": 2}
    assert "supplied.entries.0.start_page: page 2 of a document of 1 pages" in refusal(
        {"supplied": {"title": "t", "pages": [PAGE], "entries": [entry]}}
    )


def test_a_sound_request_passes_normalised() -> None:
    entry = {"level": 1, "title": "Intro", "start_page": 1}
    request = checked_ingest_request(
        {"supplied": {"title": "  A note ", "pages": [PAGE], "entries": [entry]}}, LIMITS
    )
    assert request.supplied is not None
    assert request.supplied.model_dump() == {
        "title": "A note",
        "pages": [PAGE],
        "entries": [entry],
        "year": None,
        "venue": None,
        "abstract": "",
    }
    assert checked_ingest_request({"source": "paper.pdf"}, LIMITS).source == "paper.pdf"
