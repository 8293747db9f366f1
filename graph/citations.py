"""Inline citations: find them, keep only pages the run read, attach a supporting quote.

The format is ``tools.formatting.CITATION_FORMAT`` — a page range "p.N-M" cites each page in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph.state import Citation
from store.text import split_sentences, words

CITATION = re.compile(
    r"\((?P<label>[^()]*?),\s*(?P<doc>[0-9a-f]{6,64}),\s*pp?\.\s*(?P<first>\d+)"
    r"(?:\s*[-–]\s*(?P<last>\d+))?\)"
)
QUOTE_WORDS = 40


@dataclass(frozen=True)
class Cited:
    """One inline citation as written in the answer."""

    start: int
    end: int
    label: str
    doc_id: str
    pages: tuple[int, ...]


def find_citations(text: str) -> list[Cited]:
    """Every inline citation in ``text``."""
    found = []
    for match in CITATION.finditer(text):
        first = int(match.group("first"))
        last = int(match.group("last") or first)
        pages = tuple(range(first, max(first, last) + 1))[:20]
        found.append(
            Cited(
                match.start(), match.end(), match.group("label").strip(), match.group("doc"), pages
            )
        )
    return found


def unread_pages(text: str, pages_read: dict[str, list[int]]) -> list[str]:
    """'doc_id p.N' for every cited page the run never read."""
    return [
        f"{c.doc_id} p.{p}"
        for c in find_citations(text)
        for p in c.pages
        if p not in pages_read.get(c.doc_id, [])
    ]


def enforce(text: str, pages_read: dict[str, list[int]]) -> tuple[str, int]:
    """Remove citations to unread pages; returns the cleaned text and how many were removed."""
    removed = 0
    for cited in reversed(find_citations(text)):
        kept = [p for p in cited.pages if p in pages_read.get(cited.doc_id, [])]
        if len(kept) == len(cited.pages):
            continue
        removed += 1
        replacement = f"({cited.label}, {cited.doc_id}, p.{kept[0]})" if kept else ""
        text = text[: cited.start] + replacement + text[cited.end :]
    return re.sub(r"[ \t]{2,}", " ", text).strip(), removed


def citation_list(
    text: str,
    page_texts: dict[tuple[str, int], str],
    ocr_pages: frozenset[tuple[str, int]] = frozenset(),
) -> list[Citation]:
    """Distinct (doc, page) citations in order, each with the page sentence closest to its
    claim, and marked when OCR read the page (``ocr_pages``)."""
    out: list[Citation] = []
    seen: set[tuple[str, int]] = set()
    for cited in find_citations(text):
        claim = _claim_before(text, cited.start)
        for page in cited.pages:
            key = (cited.doc_id, page)
            if key in seen:
                continue
            seen.add(key)
            quote = best_sentence(claim, page_texts.get(key, ""))
            citation = Citation(doc_id=cited.doc_id, page=page, label=cited.label, quote=quote)
            if key in ocr_pages:
                citation["ocr"] = True
            out.append(citation)
    return out


def _claim_before(text: str, position: int) -> str:
    """The sentence a citation closes."""
    before = CITATION.sub("", text[:position]).rstrip()
    sentences = split_sentences(before)
    return sentences[-1] if sentences else before


def best_sentence(claim: str, page_text: str) -> str:
    """The page sentence sharing most words with the claim (a checkable quote)."""
    claim_words = set(words(claim))
    sentences = split_sentences(page_text)
    if not sentences or not claim_words:
        return ""
    best = max(sentences, key=lambda s: len(claim_words & set(words(s))))
    quote = best.split()
    return " ".join(quote[:QUOTE_WORDS]) + (" …" if len(quote) > QUOTE_WORDS else "")
