"""Deeper levels from the body: headings printed inside sections a contents list names.

A printed contents list often stops at the top levels ("D. Components" but not its "a." and
"(1)"). The headings found in the pages (typography and numbering) are hung under the listed
section whose text they follow, one level below it, keeping their relative levels. Headings
that repeat a listed title are the listed sections themselves and are not added twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.contents import HEADING
from ingest.headings import entries_from_headings
from ingest.locate import find_title, mask_spans, title_tokens
from store.types import HeadingCandidate, SectionEntry

# A heading this long (letters and digits) that starts or ends a listed title repeats it.
MIN_PARTIAL_KEY = 8


@dataclass(frozen=True)
class _Placed:
    """An entry with its position in reading order (page, character offset)."""

    entry: SectionEntry
    page: int
    offset: int
    listed: bool


def deepen(
    entries: list[SectionEntry],
    candidates: list[HeadingCandidate],
    pages: list[str],
    listing_spans: list[list[int]],
) -> list[SectionEntry]:
    """``entries`` with the body headings between them added as their children."""
    masked = mask_spans(pages, listing_spans)
    listed = [_place(entry, masked, listed=True) for entry in entries]
    keys = [(_key(entry["title"]), entry["start_page"]) for entry in entries]
    found = [
        _place(heading, masked, listed=False)
        for heading in entries_from_headings(candidates, pages, listing_spans)
        if not _repeats_listed(heading, keys)
    ]
    merged = _merge(listed, found)
    return _relevel(merged)


def _place(entry: SectionEntry, pages: list[str], listed: bool) -> _Placed:
    page = entry["start_page"]
    offset = find_title(entry["title"], pages[page - 1]) if 1 <= page <= len(pages) else None
    return _Placed(entry, page, offset if offset is not None else 0, listed)


def _key(title: str) -> str:
    """Letters and digits only: extraction may drop or add spaces ("REGISTRANT'SCOMMON")."""
    return "".join(title_tokens(title))


def _repeats_listed(heading: SectionEntry, keys: list[tuple[str, int]]) -> bool:
    """A listed title within a page of it: the same words, cut off, without its number, or
    run together with a neighbouring heading ("PART III Item 10. Directors ...")."""
    key = _key(heading["title"])
    return any(
        abs(page - heading["start_page"]) <= 1
        and (
            key == listed
            or (len(key) >= MIN_PARTIAL_KEY and key in listed)
            or (len(listed) >= MIN_PARTIAL_KEY and listed in key)
        )
        for listed, page in keys
    )


def _merge(listed: list[_Placed], found: list[_Placed]) -> list[_Placed]:
    """Listed entries keep their order; found headings go where their position falls."""
    merged: list[_Placed] = []
    pending = sorted(found, key=lambda p: (p.page, p.offset))
    for item in listed:
        while pending and (pending[0].page, pending[0].offset) < (item.page, item.offset):
            merged.append(pending.pop(0))
        merged.append(item)
    return [*merged, *pending]


def _relevel(merged: list[_Placed]) -> list[SectionEntry]:
    """Found headings hang one level below the listed entry before them, relative levels kept.

    The contents list's own node covers only its pages: headings after it stand beside it.
    """
    out: list[SectionEntry] = []
    parent_level = 0
    group: list[SectionEntry] = []
    for item in merged:
        if item.listed:
            out.extend(_shifted(group, parent_level))
            group = []
            parent_level = item.entry["level"]
            if HEADING.match(item.entry["title"]):
                parent_level -= 1
            out.append(item.entry)
        else:
            group.append(item.entry)
    out.extend(_shifted(group, parent_level))
    return out


def _shifted(group: list[SectionEntry], parent_level: int) -> list[SectionEntry]:
    if not group:
        return []
    shift = parent_level + 1 - min(entry["level"] for entry in group)
    return [SectionEntry(**{**entry, "level": entry["level"] + shift}) for entry in group]
