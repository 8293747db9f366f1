"""The structural index entries: one per document, one per top-level section (SPEC §2).

Entries are short, abstract-like texts; the index never holds passages or chunks, so its size
grows with N·(1+S) rather than with the corpus' tokens.
"""

from __future__ import annotations

from typing import Any, TypedDict

from store.library import Library
from store.types import DocumentMetadata, TreeNode


class IndexEntry(TypedDict):
    """Text to embed plus the payload stored with it."""

    key: str
    text: str
    payload: dict[str, Any]


def document_entries(
    doc_id: str, metadata: DocumentMetadata, tree: list[TreeNode], total_pages: int
) -> list[IndexEntry]:
    """The document entry followed by one entry per top-level section."""
    base = {
        "doc_id": doc_id,
        "year": metadata["year"],
        "venue": metadata["venue"],
        "authors": metadata["authors"],
        "title": metadata["title"],
        "section_ids": [node["node_id"] for node in tree],
        "total_pages": total_pages,
    }
    doc_text = "\n".join(
        part
        for part in (
            metadata["title"],
            metadata["description"],
            ", ".join(metadata["authors"]),
            metadata["venue"] or "",
            "Sections: " + "; ".join(node["title"] for node in tree),
        )
        if part
    )
    entries = [
        IndexEntry(key="document", text=doc_text, payload={**base, "entry_type": "document"})
    ]
    for node in tree:
        entries.append(
            IndexEntry(
                key=f"section:{node['node_id']}",
                text=f"{node['title']}\n{node['summary']}",
                payload={
                    **base,
                    "entry_type": "section",
                    "node_id": node["node_id"],
                    "section_title": node["title"],
                    "start_page": node["start_page"],
                    "end_page": node["end_page"],
                },
            )
        )
    return entries


def stored_entries(library: Library, doc_id: str) -> list[IndexEntry]:
    """A visible document's entries rebuilt from its files, exactly as ingestion made them from
    the same values, so lost index points can be restored without parsing the PDF again."""
    return document_entries(
        doc_id, library.metadata(doc_id), library.tree(doc_id), library.record(doc_id)["pages"]
    )
