"""Deeper levels from the body: headings printed inside sections a contents list names.

A printed contents list often stops at the top levels ("D. Components" but not its "a." and
"(1)"). The headings found in the pages (typography and numbering) are hung under the listed
section whose text they follow, one level below it, keeping their relative levels. Headings
that repeat a listed title are the listed sections themselves and are not added twice.

A list that names only the first sections of a numbering ("1. Healthcare" of a plan whose other
goals it leaves out) never hides the rest: a heading found that numbers on from the last listed
entry of its scheme and depth ("2. Education" after "1. Healthcare") is that entry's sibling, at
its level, and the headings after it hang under it, so no listed node runs on over sections it
does not hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.structure.contents import HEADING
from ingest.structure.headings import entries_from_headings
from ingest.structure.locate import find_title, mask_spans, title_tokens
from ingest.structure.numbering import numbering_prefix, parse_numbering
from store.types import HeadingCandidate, SectionEntry

# A heading this long (letters and digits) that starts or ends a listed title repeats it.
MIN_PARTIAL_KEY = 8
DIGITS = re.compile(r"\d+")


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
    """Found headings hang one level below the listed entry before them, relative levels kept;
    a found heading that continues a listed numbering past the list's end (:func:`_continued`)
    stands at that numbering's level instead.

    The contents list's own node covers only its pages: headings after it stand beside it.
    """
    continued = _continued(merged)
    out: list[SectionEntry] = []
    parent_level = 0
    group: list[SectionEntry] = []
    for index, item in enumerate(merged):
        if item.listed or index in continued:
            out.extend(_shifted(group, parent_level))
            group = []
            entry = SectionEntry(
                **{**item.entry, "level": continued.get(index, item.entry["level"])}
            )
            parent_level = entry["level"]
            if HEADING.match(entry["title"]):
                parent_level -= 1
            out.append(entry)
        else:
            group.append(item.entry)
    out.extend(_shifted(group, parent_level))
    return out


def _continued(merged: list[_Placed]) -> dict[int, int]:
    """Found headings that number on from a listed entry past the list's end ("2." after the
    last listed "1.", "Goal 3:" after "Goal 2:"), by position in ``merged``, with the level
    the list gives that entry; each one found may be continued in turn. A listed entry of
    another numbering at the same level or above closes it ("Appendix F" after "4."), and so
    does a found heading of the same numbering out of sequence (an appendix's own "1.")."""
    last: dict[tuple[str, int], tuple[list[int], int]] = {}
    continued: dict[int, int] = {}
    for index, item in enumerate(merged):
        numbering = parse_numbering(item.entry["title"])
        numbers = [int(n) for n in DIGITS.findall(numbering_prefix(item.entry["title"]))]
        key = (numbering.scheme, numbering.depth) if numbering is not None else None
        if item.listed:  # a listed entry closes the numberings it does not continue
            level = item.entry["level"]
            last = {k: v for k, v in last.items() if k == key or v[1] < level}
        if key is None or key[0] == "sub" or not numbers:
            continue
        if item.listed:
            last[key] = (numbers, item.entry["level"])
        elif key in last and numbers == [*last[key][0][:-1], last[key][0][-1] + 1]:
            continued[index] = last[key][1]
            last[key] = (numbers, last[key][1])
        elif key in last:  # another sequence ("1." of an appendix's list) ends the list's
            del last[key]
    return continued


def _shifted(group: list[SectionEntry], parent_level: int) -> list[SectionEntry]:
    if not group:
        return []
    shift = parent_level + 1 - min(entry["level"] for entry in group)
    return [SectionEntry(**{**entry, "level": entry["level"] + shift}) for entry in group]
