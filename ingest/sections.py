"""Slice the body text of each tree node out of the page texts.

A node's own text runs from its heading to the next heading in document order: for a leaf that
is its whole section, for a parent its preamble before the first child.
"""

from __future__ import annotations

from ingest.structure.locate import find_title
from ingest.tree import Draft, iter_drafts


def _heading_offset(draft: Draft, pages: list[str]) -> int:
    """Where the node's heading sits on its start page (0 when not found, e.g. page windows)."""
    offset = find_title(draft.title, pages[draft.start_page - 1])
    return offset or 0


def node_bodies(roots: list[Draft], pages: list[str]) -> list[str]:
    """The own text of every draft, depth-first (the order of ``iter_drafts``)."""
    drafts = iter_drafts(roots)
    starts = [(d.start_page, _heading_offset(d, pages)) for d in drafts]
    bodies = []
    for index, draft in enumerate(drafts):
        start_page, start_offset = starts[index]
        end_page, end_offset = draft.end_page, None
        if index + 1 < len(drafts):
            next_page, next_offset = starts[index + 1]
            if next_page <= draft.end_page:
                end_page, end_offset = next_page, next_offset
        bodies.append(_slice(pages, start_page, start_offset, end_page, end_offset))
    return bodies


def _slice(
    pages: list[str], first: int, first_offset: int, last: int, last_offset: int | None
) -> str:
    """Concatenate pages first..last, cut at the given offsets."""
    if first == last:
        page = pages[first - 1]
        end = last_offset if last_offset is not None and last_offset >= first_offset else len(page)
        return page[first_offset:end]
    parts = [pages[first - 1][first_offset:]]
    parts.extend(pages[p - 1] for p in range(first + 1, last))
    tail = pages[last - 1]
    parts.append(tail[:last_offset] if last_offset is not None else tail)
    return "\n".join(parts)
