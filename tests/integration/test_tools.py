"""The seven tools over the real development library: payload budgets and misuse answers."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from graph.recorder import Recorder
from graph.tool_engine import ToolEngine
from store.catalog import open_catalog
from store.embeddings import count_tokens
from store.library import Library
from tools.toolbox import Toolbox

pytestmark = pytest.mark.integration

QUERIES = [
    "semantic scholar open research corpus",
    "dependency parsing",
    "earth mover's distance similarity search",
    "broker-dealer investment adviser exclusion",
    "quarterly earnings revenue",
    "summarization of legal documents",
]


def _tools(corpus: tuple[Path, Any]) -> ToolEngine:
    """The seven tools behind the tool engine, with a budget no test reaches."""
    return ToolEngine(Toolbox(open_catalog(corpus[0])).tools(), 1000, Recorder())


def _doc(corpus: tuple[Path, Any], name: str) -> str:
    return next(r["doc_id"] for r in Library(corpus[0]).documents() if r["source"].endswith(name))


def test_search_results_stay_near_fifty_tokens_each(corpus: tuple[Path, Any]) -> None:
    tools = _tools(corpus)
    per_result = []
    for query in QUERIES:
        result = tools.call("search_documents", {"query": query, "limit": 5})
        assert result.ok and result.artifact["results"], query
        lines = result.text.splitlines()
        assert len(lines) == len(result.artifact["results"])
        per_result.extend(count_tokens(line) for line in lines)
        assert all(hit["matching_sections"] for hit in result.artifact["results"])
    print(
        f"tokens per search result: mean {statistics.mean(per_result):.1f}, max {max(per_result)}"
    )
    assert statistics.mean(per_result) <= 70 and max(per_result) <= 90


def test_trees_of_typical_papers_fit_200_to_500_tokens(corpus: tuple[Path, Any]) -> None:
    tools = _tools(corpus)
    sizes = {}
    for record in Library(corpus[0]).documents():
        result = tools.call("get_document_tree", {"doc_id": record["doc_id"]})
        assert result.ok
        sizes[record["source"].rsplit("/", 1)[-1]] = result.tokens
    print(sizes)
    papers = [
        sizes[name]
        for name in (
            "2020.acl-main.447.pdf",
            "P07-1088.pdf",
            "bohnet09.pdf",
            "mooney05.pdf",
            "earthmover.pdf",
            "2304.02623v1.pdf",
        )
    ]
    assert all(150 <= size <= 520 for size in papers), papers
    assert statistics.median(sizes.values()) <= 500


def test_pages_come_labelled_and_capped_at_ten(corpus: tuple[Path, Any]) -> None:
    tools = _tools(corpus)
    doc = _doc(corpus, "four-lectures.pdf")
    result = tools.call("get_page_content", {"doc_id": doc, "pages": list(range(1, 11))})
    assert result.ok and result.pages == list(range(1, 11))
    assert result.text.count(f"=== {doc} p.") == 10
    too_many = tools.call("get_page_content", {"doc_id": doc, "pages": list(range(1, 12))})
    assert not too_many.ok and "at most 10 pages" in too_many.text and too_many.pages == []


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("get_document_tree", {"doc_id": "ffffffffffffffff"}, "unknown doc_id"),
        ("get_page_content", {"doc_id": "DOC", "pages": [0]}, "do not exist"),
        ("get_page_content", {"doc_id": "DOC", "pages": []}, "pages is empty"),
        ("get_page_content", {"doc_id": "DOC"}, "pages: Field required"),
        ("get_page_content", {"doc_id": "DOC", "pages": [1], "extra": 1}, "extra: Extra inputs"),
        ("search_documents", {"query": "x", "limit": 500}, "limit: Input should be less"),
        ("get_page_image", {"doc_id": "DOC", "image": "../../../etc/passwd"}, "no image"),
        ("get_page_image", {"doc_id": "DOC", "image": "../metadata.json"}, "no image"),
        ("teleport", {}, "unknown tool 'teleport'"),
    ],
)
def test_misuse_is_answered_with_an_instructive_error(
    corpus: tuple[Path, Any], tool: str, args: dict[str, Any], expected: str
) -> None:
    doc = _doc(corpus, "duplicate_media.pdf")
    args = {k: (doc if v == "DOC" else v) for k, v in args.items()}
    result = _tools(corpus).call(tool, args)
    assert not result.ok
    assert expected in result.text
    assert result.text.startswith("Error: ")


def test_images_are_listed_and_returned_as_image_blocks(corpus: tuple[Path, Any]) -> None:
    tools = _tools(corpus)
    doc = _doc(corpus, "duplicate_media.pdf")
    listed = tools.call("list_images", {"doc_id": doc})
    assert listed.ok and listed.artifact["images"]
    first = listed.artifact["images"][0]
    image = tools.call("get_page_image", {"doc_id": doc, "image": first["name"]})
    assert image.ok and image.pages == [first["page"]]
    assert isinstance(image.content, list)
    assert image.content[1]["image_url"]["url"].startswith("data:image/")


def test_metadata_and_within_paper_search(corpus: tuple[Path, Any]) -> None:
    tools = _tools(corpus)
    doc = _doc(corpus, "2020.acl-main.447.pdf")
    meta = tools.call("get_paper_metadata", {"doc_id": doc})
    assert meta.ok and "S2ORC" in meta.text and "cite as: Lo et al., 2020" in meta.text
    within = tools.call(
        "search_within_paper", {"doc_id": doc, "query": "PDF parsing pipeline", "limit": 3}
    )
    assert within.ok and len(within.artifact["sections"]) == 3
    assert any(
        "pdf" in s["title"].lower() or "pdf" in s["summary"].lower()
        for s in within.artifact["sections"]
    )
    pages = within.artifact["pages"]
    assert 0 < len(pages) <= 10 and all(0.0 <= p["section"] <= 1.0 for p in pages)
    assert [p["score"] for p in pages] == sorted((p["score"] for p in pages), reverse=True)
    # The best page lies in one of the best sections (the section signal is the best there).
    spans = [(s["start_page"], s["end_page"]) for s in within.artifact["sections"]]
    assert any(a <= pages[0]["page"] <= b for a, b in spans)
    assert "Best pages (text, meaning and section): p." in within.text
    assert not within.pages  # page numbers and scores only: nothing of a page is disclosed
