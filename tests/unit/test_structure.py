"""Choosing the structure source: outline, headings, or the LLM."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ingest.errors import IngestError
from ingest.structure.route import extract_structure
from store.types import HeadingCandidate, SectionEntry

PAGES = [
    "A Title\n1 Introduction\ntext",
    "2 Method\ntext",
    "more method",
    "3 Results\ntext",
    "4 Conclusion\ntext",
]
OUTLINE = [
    SectionEntry(level=1, title="1 Introduction", start_page=1),
    SectionEntry(level=1, title="2 Method", start_page=2),
    SectionEntry(level=1, title="3 Results", start_page=4),
    SectionEntry(level=1, title="4 Conclusion", start_page=5),
]
BAD_OUTLINE = [
    SectionEntry(level=1, title="Chapter Alpha", start_page=1),
    SectionEntry(level=1, title="Chapter Beta", start_page=3),
    SectionEntry(level=1, title="3 Results", start_page=4),
]
LLM_REPLY = json.dumps(
    [
        {"index": "1", "title": "1 Introduction", "start_page": 1},
        {"index": "1.1", "title": "2 Method", "start_page": 2},
    ]
)


def cand(page: int, text: str, size: float = 14.0) -> HeadingCandidate:
    return HeadingCandidate(page=page, text=text, size=size, bold=True, y_frac=0.1)


CANDIDATES = [
    cand(1, "A Title", 20),
    cand(1, "1 Introduction"),
    cand(2, "2 Method"),
    cand(4, "3 Results"),
]


def fake_llm() -> FakeListChatModel:
    return FakeListChatModel(responses=[LLM_REPLY])


def structure(*args: object) -> tuple[list[SectionEntry], str]:
    """extract_structure's entries and method, the parts these tests compare."""
    found = extract_structure(*args)  # type: ignore[arg-type]
    return found.entries, found.method


def titles(entries: list[SectionEntry]) -> list[str]:
    return [e["title"] for e in entries]


def test_forced_outline_requires_an_outline() -> None:
    with pytest.raises(IngestError, match="no outline"):
        structure("outline", PAGES, [], CANDIDATES, None)


def test_forced_outline_is_used_even_when_it_does_not_verify() -> None:
    assert structure("outline", PAGES, BAD_OUTLINE, CANDIDATES, None) == (
        BAD_OUTLINE,
        "outline",
    )


def test_forced_headings() -> None:
    entries, method = structure("headings", PAGES, OUTLINE, CANDIDATES, None)
    assert method == "headings"
    assert titles(entries) == ["1 Introduction", "2 Method", "3 Results"]


def test_forced_llm_requires_a_model() -> None:
    with pytest.raises(IngestError, match="needs an LLM"):
        structure("llm", PAGES, OUTLINE, CANDIDATES, None)


def test_forced_llm_uses_the_model() -> None:
    entries, method = structure("llm", PAGES, OUTLINE, CANDIDATES, fake_llm())
    assert method == "llm"
    assert [(e["level"], e["title"], e["start_page"]) for e in entries] == [
        (1, "1 Introduction", 1),
        (2, "2 Method", 2),
    ]


def test_auto_prefers_an_outline_that_verifies() -> None:
    assert structure("auto", PAGES, OUTLINE, CANDIDATES, fake_llm()) == (
        OUTLINE,
        "outline",
    )


def test_auto_falls_back_to_headings_when_outline_fails() -> None:
    entries, method = structure("auto", PAGES, BAD_OUTLINE, CANDIDATES, fake_llm())
    assert method == "headings"
    assert titles(entries) == ["1 Introduction", "2 Method", "3 Results"]


def test_auto_uses_headings_without_outline() -> None:
    entries, method = structure("auto", PAGES, [], CANDIDATES, None)
    assert (titles(entries), method) == (["1 Introduction", "2 Method", "3 Results"], "headings")


def test_auto_uses_llm_when_headings_find_too_few() -> None:
    few = [cand(1, "1 Introduction")]
    entries, method = structure("auto", PAGES, [], few, fake_llm())
    assert method == "llm"
    assert titles(entries) == ["1 Introduction", "2 Method"]


def test_auto_keeps_few_headings_without_a_model() -> None:
    few = [cand(1, "1 Introduction")]
    entries, method = structure("auto", PAGES, [], few, None)
    assert (titles(entries), method) == (["1 Introduction"], "headings")
