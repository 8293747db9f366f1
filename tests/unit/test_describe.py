"""Regex document metadata, the one-sentence description and merging LLM refinements."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.describe import merge_llm_metadata, one_sentence, regex_metadata
from store.types import DocumentMetadata, HeadingCandidate

FIRST_PAGE = """# Deep Widgets for Everyone

Jane Doe, John Smith and Ann Lee

## Abstract
We present widgets. They are deep and useful for many tasks in practice.

Keywords: widgets; deep learning; evaluation.

In Proceedings of the 2021 Conference on Widgets, pages 12–20. Vol. 7
https://doi.org/10.1145/3442188.3445922.
"""


def cand(text: str, size: float, page: int = 1) -> HeadingCandidate:
    return HeadingCandidate(page=page, text=text, size=size, bold=True, y_frac=0.1)


def meta(pages: list[str], candidates: list[HeadingCandidate] | None = None, **pdf: Any):
    return regex_metadata(pages, candidates or [], dict(pdf), "fallback-name")


def test_regex_metadata_fields_from_first_page() -> None:
    candidates = [
        cand("arXiv:2104.01234v2 [cs.CL] 3 Apr 2021", 9),
        cand("Deep Widgets for", 20),
        cand("Everyone", 20),
        cand("Jane Doe", 11),
    ]
    found = meta([FIRST_PAGE, "page two"], candidates)
    assert found == {
        "title": "Deep Widgets for Everyone",
        "authors": ["Jane Doe", "John Smith", "Ann Lee"],
        "year": 2021,
        "doi": "10.1145/3442188.3445922",
        "venue": "Proceedings of the 2021 Conference on Widgets",
        "volume": "7",
        "pages": "12–20",
        "description": "",
        "keywords": ["widgets", "deep learning", "evaluation"],
    }


@pytest.mark.parametrize(
    ("text", "doi"),
    [
        ("doi: 10.18653/v1/2020.acl-main.447, 2020", "10.18653/v1/2020.acl-main.447"),
        ("(https://doi.org/10.1000/xyz123)", "10.1000/xyz123"),
        ("DOI 10.1145/3442188.3445922.", "10.1145/3442188.3445922"),
        ("no identifier here 10.12/short", None),
    ],
)
def test_doi(text: str, doi: str | None) -> None:
    assert meta([text])["doi"] == doi


def test_year_from_arxiv_stamp_beats_other_years() -> None:
    page = "We compare with work from 2019 and 2019 and 2018."
    stamp = [cand("arXiv:1912.00001v3 [cs.LG] 14 Feb 2020", 9)]
    assert meta([page], stamp)["year"] == 2020


def test_year_from_copyright_line() -> None:
    assert meta(["Cited 2015, 2015, 2015.\n© 2018 ACM. All rights reserved."])["year"] == 2018
    assert meta(["Copyright 2003 by the authors"])["year"] == 2003


def test_year_from_arxiv_id() -> None:
    assert meta(["Preprint arXiv:1905.01234 under review"])["year"] == 2019


def test_year_most_common_then_pdf_creation_date() -> None:
    assert meta(["In 2010 and 2012 and 2012 we did things."])["year"] == 2012
    assert meta(["No years."], creationDate="D:20150101120000Z")["year"] == 2015
    assert meta(["No years."], creationDate="")["year"] is None


def test_venue_patterns() -> None:
    assert meta(["IEEE Transactions on Pattern Analysis and Machine Intelligence. 2020"])[
        "venue"
    ] == ("Transactions on Pattern Analysis and Machine Intelligence")
    assert meta(["Published in Journal of Widget Research, 2020"])["venue"] == (
        "Journal of Widget Research"
    )
    assert meta(["nothing of note"])["venue"] is None


def test_keywords_fall_back_to_frequent_content_words() -> None:
    found = meta(["alpha beta model model model widget widget data. The and for with"])
    assert found["keywords"] == ["model", "widget", "alpha", "beta", "data"]


def test_index_terms_line_counts_as_keywords() -> None:
    found = meta(["Index Terms—retrieval, section trees, PDF parsing.\nBody."])
    assert found["keywords"] == ["retrieval", "section trees", "PDF parsing"]


def test_title_falls_back_to_pdf_title_then_given_name() -> None:
    assert meta(["x"], title="A Real Title")["title"] == "A Real Title"
    assert meta(["x"], title="Microsoft Word - draft.docx")["title"] == "fallback-name"
    assert meta(["x"])["title"] == "fallback-name"
    # arXiv stamps never become the title
    assert meta(["x"], [cand("arXiv:2101.00001v1 [cs.CL] 1 Jan 2021", 30)])["title"] == (
        "fallback-name"
    )


def test_authors_fall_back_to_pdf_author_field() -> None:
    assert meta(["no abstract heading here"], author="Jane Doe; John Smith")["authors"] == [
        "Jane Doe",
        "John Smith",
    ]


def test_one_sentence_takes_first_full_sentence() -> None:
    text = "Short. This is the first real sentence of the abstract text. Another one follows here."
    assert one_sentence(text) == "This is the first real sentence of the abstract text."


def test_one_sentence_caps_long_sentences() -> None:
    out = one_sentence(" ".join(["word"] * 60) + ".")
    assert out == " ".join(["word"] * 45) + " …"


def test_one_sentence_without_full_sentence_returns_cleaned_text() -> None:
    assert one_sentence("**Tiny** note") == "Tiny note"


def base() -> DocumentMetadata:
    return DocumentMetadata(
        title="Old",
        authors=["A B"],
        year=2001,
        doi=None,
        venue=None,
        volume=None,
        pages=None,
        description="",
        keywords=["x"],
    )


def test_merge_llm_metadata_takes_well_typed_fields() -> None:
    merged = merge_llm_metadata(
        base(),
        {
            "title": "  New Title ",
            "description": "A paper about widgets.",
            "venue": "ACL",
            "doi": "10.1/x",
            "volume": "3",
            "pages": "1-9",
            "authors": ["Jane Doe", " ", "John Smith "],
            "keywords": ["widgets"],
            "year": 2020,
        },
    )
    assert merged == {
        "title": "New Title",
        "authors": ["Jane Doe", "John Smith"],
        "year": 2020,
        "doi": "10.1/x",
        "venue": "ACL",
        "volume": "3",
        "pages": "1-9",
        "description": "A paper about widgets.",
        "keywords": ["widgets"],
    }


@pytest.mark.parametrize(
    "refined",
    [
        {"title": 42, "authors": "Jane Doe", "keywords": [1, 2], "year": "2020"},
        {"title": "   ", "authors": [], "year": 1800, "doi": None},
        {"year": 2101, "venue": ["ACL"], "description": {"text": "x"}},
        {"year": 2020.0, "keywords": ["ok", 3]},
        {},
    ],
)
def test_merge_llm_metadata_ignores_bad_types_and_ranges(refined: dict[str, Any]) -> None:
    assert merge_llm_metadata(base(), refined) == base()
