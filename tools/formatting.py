"""Compact serialisations of tool results, sized for a model's context.

Search results aim at about 50 tokens each, a typical tree at 200–500 tokens; page text is
returned whole but labelled page by page so that citations can name the page.
"""

from __future__ import annotations

import re
from typing import Any

from store.embeddings import count_tokens
from store.types import DocumentMetadata, TreeNode

TREE_TOKEN_TARGET = 460
MIN_SUMMARY_WORDS = 4
MAX_SUMMARY_WORDS = 24
DESCRIPTION_WORDS = 8
SECTION_TITLE_WORDS = 4
TITLE_WORDS = 10
VENUE_WORDS = 4


def words(text: str, limit: int) -> str:
    """The first ``limit`` words of ``text`` (with an ellipsis when cut)."""
    parts = text.split()
    return " ".join(parts[:limit]) + (" …" if len(parts) > limit else "")


def author_label(authors: list[str], year: int | None) -> str:
    """'Lo et al., 2020' — the author/year part of a citation."""
    if not authors:
        who = "Anon."
    else:
        surname = authors[0].split()[-1] if authors[0].split() else authors[0]
        who = surname if len(authors) == 1 else f"{surname} et al."
    return f"{who}, {year if year else 'n.d.'}"


def citation(authors: list[str], year: int | None, doc_id: str, page: int) -> str:
    """The inline citation format: (Author et al., Year, doc_id, p.X)."""
    return f"({author_label(authors, year)}, {doc_id}, p.{page})"


def short_venue(venue: str) -> str:
    """'Proceedings of the 58th Annual Meeting of the ACL' → 'Annual Meeting of the …'."""
    core = re.sub(r"^(proceedings of (the )?)?(\d+(st|nd|rd|th)\s+)?", "", venue, flags=re.I)
    return words(core, VENUE_WORDS)


def search_line(rank: int, hit: dict[str, Any], section_pages: bool = False) -> str:
    """One search result in roughly 50 tokens (plus the sections' page ranges when the tree
    layer is ablated and search results are the only way to pages)."""
    sections = "; ".join(
        words(s["title"], SECTION_TITLE_WORDS)
        + (f" p.{s['start_page']}-{s['end_page']}" if section_pages else "")
        for s in hit["matching_sections"][: 3 if section_pages else 2]
    )
    venue = f" | {short_venue(hit['venue'])}" if hit.get("venue") else ""
    venue += f" | {hit['filing']}" if hit.get("filing") else ""
    return (
        f"[{rank}] {hit['doc_id']} | {words(hit['title'], TITLE_WORDS)} | "
        f"{author_label(hit['authors'], hit['year'])}{venue} | {hit['total_pages']}p"
        f" — {words(hit['description'], DESCRIPTION_WORDS)}"
        + (f" | sections: {sections}" if sections else "")
        + (" | weak match" if hit.get("weak") else "")
    )


def tree_lines(nodes: list[TreeNode]) -> list[str]:
    """Indented outline, one line per node, summaries cut to keep the tree near its budget.

    The structure (ids, titles, page ranges) is always shown whole; what is left of the token
    target is shared among the summaries, so a long tree gets terse summaries (or none).
    """
    flat = _with_depth(nodes, 0)
    skeleton = [f"{'  ' * d}{n['node_id']} {n['title']} {node_pages(n)}" for d, n in flat]
    for per_node_words in range(MAX_SUMMARY_WORDS, MIN_SUMMARY_WORDS - 1, -2):
        lines = [
            f"{line} {words(n['summary'], per_node_words)}"
            for line, (_, n) in zip(skeleton, flat, strict=True)
        ]
        if count_tokens("\n".join(lines)) <= TREE_TOKEN_TARGET:
            return lines
    return skeleton


def _with_depth(nodes: list[TreeNode], depth: int) -> list[tuple[int, TreeNode]]:
    out: list[tuple[int, TreeNode]] = []
    for node in nodes:
        out.append((depth, node))
        out.extend(_with_depth(node["nodes"], depth + 1))
    return out


OCR_MARK = "(OCR)"
"""Follows a page or a section whose text OCR read from the page image, so that a reader, and
a model, know its words and figures may hold recognition errors."""


def ocr_mark(read_by_ocr: bool) -> str:
    """The mark after the label of a page or section read by OCR (" (OCR)"), else nothing."""
    return f" {OCR_MARK}" if read_by_ocr else ""


CITATION_FORMAT = "(Author et al., Year, doc_id, p.N)"
"""How an answer cites a page: every prompt and tool description shows it from here, and
``graph.citations`` parses it."""


def page_label(start: int | str, end: int | None = None) -> str:
    """A page or an inclusive page range as citations write it: "p.3", "p.3-5"."""
    return f"p.{start}" if end is None or end == start else f"p.{start}-{end}"


def node_page_label(node: TreeNode) -> str:
    """A section's inclusive page range as citations write it."""
    return page_label(node["start_page"], node["end_page"])


def node_pages(node: TreeNode) -> str:
    """A section's page range in brackets, marked when OCR read some of its pages."""
    return f"[{node_page_label(node)}]{ocr_mark(node.get('ocr', False))}"


def format_citation(label: str, doc_id: str, first: int | str, last: int | None = None) -> str:
    """One inline citation: "(Lo et al., 2020, f83d85b272d5efd7, p.3)" or "…, p.3-5)"
    (``first`` "N" gives the pattern shown to a model beside a document's text)."""
    return f"({label}, {doc_id}, {page_label(first, last)})"


def metadata_text(doc_id: str, meta: DocumentMetadata, top: list[TreeNode], pages: int) -> str:
    """Metadata plus top-level sections, one field per line."""
    fields = [
        f"doc_id: {doc_id}",
        f"title: {meta['title']}",
        f"authors: {', '.join(meta['authors']) or 'unknown'}",
        f"year: {meta['year'] or 'unknown'}",
        f"venue: {meta['venue'] or 'unknown'}",
        f"doi: {meta['doi'] or 'none'}",
        f"pages: {pages}",
        f"cite as: {author_label(meta['authors'], meta['year'])}",
        f"description: {meta['description']}",
        f"keywords: {', '.join(meta['keywords'])}",
        "sections: " + "; ".join(f"{n['node_id']} {n['title']} {node_pages(n)}" for n in top),
    ]
    return "\n".join(fields)
