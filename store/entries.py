"""The structural index entries: one per document, one per top-level section.

Each entry has two texts. Its dense vector embeds a short, abstract-like text (the document's
title, description, authors and section titles; a section's title and summary), so the index
never holds passage vectors and grows with N·(1+S) rather than with the corpus' tokens. Its BM25
vector is built from the text the entry stands for: the section's whole text (its title and every
page of its range), and for the document entry its short text plus the whole document. A
question about a detail deep inside a section (a dataset size, a fiscal-year figure) can then
still reach it by its words: on the QASPER development questions this lifts layer-0 routing
recall@5 from 0.505 (BM25 over the short texts) to 0.544, above BM25 over whole documents (0.538).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from store.library import Library
from store.types import DocumentMetadata, TreeNode

ENTRIES_VERSION = 2
"""Bumped when what an entry holds changes (2: BM25 vectors carry the section's whole text).
``vectree check`` reports documents indexed by an older version; ``--repair`` re-indexes them."""


class IndexEntry(TypedDict):
    """The compact text to embed densely, the full text for BM25, and the stored payload."""

    key: str
    text: str
    content: str
    payload: dict[str, Any]


class EntryVectors(TypedDict):
    """An entry's dense vector and BM25 vector (term ids and weights), as JSON values: they are
    computed where the document was prepared (a worker process) and travel in its state."""

    dense: list[float]
    sparse_indices: list[int]
    sparse_values: list[float]


class EmbeddedEntry(IndexEntry):
    """An entry with its vectors, ready to be written to the index."""

    vectors: EntryVectors


def document_entries(
    doc_id: str, metadata: DocumentMetadata, tree: list[TreeNode], pages: list[str]
) -> list[IndexEntry]:
    """The document entry followed by one entry per top-level section."""
    total_pages = len(pages)
    facts: Mapping[str, Any] = metadata.get("filing") or {}
    base = {
        "doc_id": doc_id,
        "year": metadata["year"],
        "venue": metadata["venue"],
        "authors": metadata["authors"],
        "title": metadata["title"],
        "section_ids": [node["node_id"] for node in tree],
        "total_pages": total_pages,
        "entries_version": ENTRIES_VERSION,
        **({field: facts.get(field) for field in FILING_FIELDS} if facts.get("form") else {}),
    }
    doc_text = "\n".join(
        part
        for part in (
            metadata["title"],
            metadata["description"],
            ", ".join(metadata["authors"]),
            metadata["venue"] or "",
            filing_line(facts),
            "Sections: " + "; ".join(node["title"] for node in tree),
        )
        if part
    )
    entries = [
        IndexEntry(
            key="document",
            text=doc_text,
            content="\n".join([doc_text, *pages]),
            payload={**base, "entry_type": "document"},
        )
    ]
    for node in tree:
        entries.append(
            IndexEntry(
                key=f"section:{node['node_id']}",
                text=f"{node['title']}\n{node['summary']}",
                content="\n".join([node["title"], *section_pages(node, pages)]),
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


FILING_FIELDS = ("issuer", "ticker", "form", "fiscal_year", "fiscal_quarter", "period_end")
"""What an entry's payload carries of its filing's facts (other documents carry none)."""


def filing_line(facts: Mapping[str, Any]) -> str:
    """A filing's facts in words, for the document entry's text ("" for other documents)."""
    if not facts.get("form"):
        return ""
    parts = [f"Form {facts['form']}"]
    if facts.get("issuer"):
        ticker = f" ({facts['ticker']})" if facts.get("ticker") else ""
        parts.append(f"of {facts['issuer']}{ticker}")
    if facts.get("fiscal_year"):
        quarter = f"Q{facts['fiscal_quarter']} " if facts.get("fiscal_quarter") else ""
        parts.append(f"for fiscal {quarter}{facts['fiscal_year']}")
    ended = f", period ended {facts['period_end']}" if facts.get("period_end") else ""
    return " ".join(parts) + ended


def stored_entries(library: Library, doc_id: str) -> list[IndexEntry]:
    """A visible document's entries rebuilt from its files, exactly as ingestion made them from
    the same values, so lost index points can be restored without parsing the PDF again."""
    return document_entries(
        doc_id, library.metadata(doc_id), library.tree(doc_id), library.pages(doc_id)
    )


def section_pages(node: TreeNode, pages: list[str]) -> list[str]:
    """The texts of a node's inclusive page range (1-based)."""
    return pages[node["start_page"] - 1 : node["end_page"]]
