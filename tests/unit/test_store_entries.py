"""Structural index entries: one per document plus one per top-level section."""

from __future__ import annotations

from store.entries import ENTRIES_VERSION, document_entries
from store.types import DocumentMetadata, TreeNode


def node(node_id: str, title: str, start: int, end: int, children: list[TreeNode]) -> TreeNode:
    return TreeNode(
        node_id=node_id,
        title=title,
        start_page=start,
        end_page=end,
        summary=f"Summary of {title}.",
        nodes=children,
    )


def metadata(venue: str | None = "ACL") -> DocumentMetadata:
    return DocumentMetadata(
        title="Deep Widgets",
        authors=["Jane Doe", "John Smith"],
        year=2021,
        doi=None,
        venue=venue,
        volume=None,
        pages=None,
        description="A paper about widgets.",
        keywords=["widgets"],
    )


PAGES = [f"Text of page {n}." for n in range(1, 10)]

TREE = [
    node("0000", "Abstract", 1, 1, []),
    node("0001", "1 Introduction", 1, 3, [node("0002", "1.1 Scope", 2, 3, [])]),
    node("0003", "2 Method", 4, 9, []),
]


def test_one_document_entry_plus_one_per_top_level_section() -> None:
    entries = document_entries("abc123", metadata(), TREE, PAGES)
    assert len(entries) == 1 + len(TREE) == 4
    assert [e["key"] for e in entries] == [
        "document",
        "section:0000",
        "section:0001",
        "section:0003",
    ]


def test_document_entry_text_and_payload() -> None:
    doc = document_entries("abc123", metadata(), TREE, PAGES)[0]
    assert doc["text"] == (
        "Deep Widgets\nA paper about widgets.\nJane Doe, John Smith\nACL\n"
        "Sections: Abstract; 1 Introduction; 2 Method"
    )
    assert doc["payload"] == {
        "doc_id": "abc123",
        "year": 2021,
        "venue": "ACL",
        "authors": ["Jane Doe", "John Smith"],
        "title": "Deep Widgets",
        "section_ids": ["0000", "0001", "0003"],
        "total_pages": 9,
        "entries_version": ENTRIES_VERSION,
        "entry_type": "document",
    }


def test_section_entry_text_and_payload() -> None:
    section = document_entries("abc123", metadata(), TREE, PAGES)[2]
    assert section["text"] == "1 Introduction\nSummary of 1 Introduction."
    assert section["payload"] == {
        "doc_id": "abc123",
        "year": 2021,
        "venue": "ACL",
        "authors": ["Jane Doe", "John Smith"],
        "title": "Deep Widgets",
        "section_ids": ["0000", "0001", "0003"],
        "total_pages": 9,
        "entries_version": ENTRIES_VERSION,
        "entry_type": "section",
        "node_id": "0001",
        "section_title": "1 Introduction",
        "start_page": 1,
        "end_page": 3,
    }


def test_missing_venue_and_description_are_left_out_of_the_text() -> None:
    meta = metadata(venue=None)
    meta["description"] = ""
    doc = document_entries("abc", meta, TREE[:1], PAGES[:1])[0]
    assert doc["text"] == "Deep Widgets\nJane Doe, John Smith\nSections: Abstract"
    assert doc["payload"]["venue"] is None


def test_document_without_sections_has_one_entry() -> None:
    entries = document_entries("abc", metadata(), [], PAGES[:3])
    assert [e["key"] for e in entries] == ["document"]
    assert entries[0]["payload"]["section_ids"] == []


def test_dense_text_stays_compact_while_bm25_content_is_the_whole_text() -> None:
    doc, abstract, intro, method = document_entries("abc123", metadata(), TREE, PAGES)
    assert doc["content"] == "\n".join([doc["text"], *PAGES])
    assert abstract["content"] == "Abstract\nText of page 1."
    assert intro["content"] == "1 Introduction\nText of page 1.\nText of page 2.\nText of page 3."
    assert "Text of page" not in intro["text"]
    assert method["content"].endswith("Text of page 9.")
