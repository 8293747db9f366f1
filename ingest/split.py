"""Split nodes that exceed BOTH 20,000 tokens and 10 pages.

Structure extraction is re-run on the node's own pages (headings, or the LLM when configured);
when that finds nothing usable the node is cut into 10-page windows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from ingest.structure.headings import entries_from_headings
from ingest.structure.verify import verify_entries
from ingest.tree import Draft, fold_entries, iter_drafts, page_windows
from store.embeddings import count_tokens
from store.types import HeadingCandidate, SectionEntry

SPLIT_TOKENS = 20_000
SPLIT_PAGES = 10

# Proposes entries for pages first..last of a document: (pages, first, last) -> entries.
SubStructure = Callable[[list[str], int, int], list[SectionEntry]]


def is_oversized(draft: Draft, pages: list[str]) -> bool:
    span = draft.end_page - draft.start_page + 1
    if span <= SPLIT_PAGES:
        return False
    text = "\n".join(pages[draft.start_page - 1 : draft.end_page])
    return count_tokens(text) > SPLIT_TOKENS


def split_oversized(roots: list[Draft], pages: list[str], extract: SubStructure) -> list[str]:
    """Give every oversized leaf children; returns the titles of the nodes that were split."""
    split: list[str] = []
    for draft in iter_drafts(roots):
        if draft.children or not is_oversized(draft, pages):
            continue
        entries = _inner_entries(draft, extract(pages, draft.start_page, draft.end_page))
        entries, _ = verify_entries(entries, pages, method="headings")
        children = fold_entries(entries, draft.end_page) if len(entries) >= 2 else []
        if not children:
            children = page_windows(draft.start_page, draft.end_page, draft.level + 1)
        for child in iter_drafts(children):
            if not child.children and is_oversized(child, pages):
                child.children = page_windows(child.start_page, child.end_page, child.level + 1)
        draft.children = children
        split.append(draft.title)
    return split


def _inner_entries(draft: Draft, entries: list[SectionEntry]) -> list[SectionEntry]:
    """Entries strictly inside the node, re-levelled to hang directly under it."""
    inside = [
        e
        for e in entries
        if draft.start_page <= e["start_page"] <= draft.end_page
        and e["title"].strip().lower() != draft.title.strip().lower()
    ]
    if not inside:
        return []
    shift = draft.level + 1 - min(e["level"] for e in inside)
    return [cast(SectionEntry, {**e, "level": e["level"] + shift}) for e in inside]


def headings_within(candidates: list[HeadingCandidate]) -> SubStructure:
    """Offline sub-structure: the typography headings found on the node's pages."""

    def extract(pages: list[str], first: int, last: int) -> list[SectionEntry]:
        inside = [c for c in candidates if first <= c["page"] <= last]
        return entries_from_headings(inside, pages)

    return extract
