"""Verification and repair of structure entries against the page text.

An entry passes when its title occurs within ±1 page of its claimed start page. Failed entries
are re-located in widening windows for at most three rounds (an LLM may propose corrections
when configured), then dropped and reported. Passing entries keep their claimed page.

Bookmarks are links the author placed, so an outline entry whose title is not printed (e.g.
a "References" bookmark over an untitled reference list) is kept but flagged: it counts as
unverified in the rate, and shows up in the report's ``flagged`` list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from ingest.structure.locate import begins_page, find_title
from store.types import SectionEntry, StructureSource, VerificationReport

MAX_REPAIR_ROUNDS = 3
# Search radius (pages) around the claimed page in each repair round; None = between neighbours.
REPAIR_WINDOWS: tuple[int | None, ...] = (3, 10, None)
ABSTRACT_HEADING = re.compile(r"(^|\n)[#*_\s]*abstract\b", re.IGNORECASE)

# Proposes corrected entries for the failed ones: (failed entries, pages) -> proposals.
Repairer = Callable[[list[SectionEntry], list[str]], list[SectionEntry]]


def verify_entries(
    entries: list[SectionEntry],
    pages: list[str],
    method: StructureSource,
    repairer: Repairer | None = None,
) -> tuple[list[SectionEntry], VerificationReport]:
    """Check every entry, repair the failures, and return the surviving entries with a report."""
    # Bookmarks are exact links; other sources' pages are estimates, moved to where the title is.
    settle = method != "outline"
    checked = [_check(entry, pages, settle) for entry in entries]
    initial = _rate(checked)
    rounds, repaired = 0, []
    for window in REPAIR_WINDOWS[:MAX_REPAIR_ROUNDS]:
        failed = [i for i, entry in enumerate(checked) if not entry["verified"]]
        if not failed:
            break
        rounds += 1
        if repairer is not None:
            _apply_llm_proposals(checked, failed, pages, repairer)
        for index in failed:
            # Verified now means the LLM's proposal fixed it this round; else search ourselves.
            if checked[index]["verified"] or _relocate(checked, index, pages, window):
                repaired.append(checked[index]["title"])
    keep_unverified = method == "outline"
    survivors = [entry for entry in checked if entry["verified"] or keep_unverified]
    unverified = [entry["title"] for entry in checked if not entry["verified"]]
    dropped = [] if keep_unverified else unverified
    report = VerificationReport(
        method=method,
        entries=len(entries),
        initial_verification_rate=initial,
        verification_rate=_rate(checked),
        repair_rounds=rounds,
        repaired=repaired,
        dropped=dropped,
        flagged=unverified if keep_unverified else [],
    )
    return survivors, report


def _updated(entry: SectionEntry, **changes: object) -> SectionEntry:
    """A copy of ``entry`` with some fields replaced."""
    return cast(SectionEntry, {**entry, **changes})


def _rate(entries: list[SectionEntry]) -> float | None:
    if not entries:
        return None
    return round(sum(bool(entry["verified"]) for entry in entries) / len(entries), 4)


def _check(entry: SectionEntry, pages: list[str], settle: bool = False) -> SectionEntry:
    """Mark an entry verified when its title is on its claimed page, or one page either side.

    With ``settle`` the entry moves to the page where its title is printed (the claimed page
    was derived, e.g. from a printed page number); otherwise it keeps its claimed page.
    """
    claimed = entry["start_page"]
    for page in (claimed, claimed + 1, claimed - 1):
        if _title_on(entry["title"], page, pages) is not None:
            return _located(entry, page if settle else claimed, pages)
    return _updated(entry, verified=False, begins_page=False)


def _title_on(title: str, page: int, pages: list[str]) -> int | None:
    if not 1 <= page <= len(pages):
        return None
    return find_title(title, pages[page - 1])


def _located(entry: SectionEntry, page: int, pages: list[str]) -> SectionEntry:
    """The entry as verified at ``page``; whether it begins that page decides shared pages."""
    offset = _title_on(entry["title"], page, pages)
    starts = offset is not None and begins_page(pages[page - 1], offset)
    return SectionEntry(
        level=entry["level"],
        title=entry["title"],
        start_page=page,
        verified=True,
        begins_page=starts,
        repaired=entry.get("repaired", False),
    )


def _relocate(
    entries: list[SectionEntry], index: int, pages: list[str], window: int | None
) -> bool:
    """Search for a failed title nearest its claimed page, never crossing verified neighbours."""
    entry = entries[index]
    low, high = _neighbour_bounds(entries, index, len(pages))
    if window is not None:
        low = max(low, entry["start_page"] - window)
        high = min(high, entry["start_page"] + window)
    for page in sorted(range(low, high + 1), key=lambda p: abs(p - entry["start_page"])):
        if _title_on(entry["title"], page, pages) is not None:
            entries[index] = _located(_updated(entry, repaired=True), page, pages)
            return True
    return False


def _neighbour_bounds(entries: list[SectionEntry], index: int, total: int) -> tuple[int, int]:
    """Pages between the closest verified entries before and after ``index``."""
    before = [e["start_page"] for e in entries[:index] if e.get("verified")]
    after = [e["start_page"] for e in entries[index + 1 :] if e.get("verified")]
    return (before[-1] if before else 1), (after[0] if after else total)


def _apply_llm_proposals(
    entries: list[SectionEntry], failed: list[int], pages: list[str], repairer: Repairer
) -> None:
    """Let the LLM re-read focused pages; a proposal counts only if it verifies."""
    proposals = repairer([entries[i] for i in failed], pages)
    for index, proposal in zip(failed, proposals, strict=False):
        fixed = _check(_updated(proposal, level=entries[index]["level"]), pages)
        if fixed["verified"]:
            entries[index] = _updated(fixed, repaired=True)


def insert_abstract(entries: list[SectionEntry], pages: list[str]) -> list[SectionEntry]:
    """Add an Abstract entry when the opening pages have one that no entry covers."""
    if any("abstract" in entry["title"].lower() for entry in entries):
        return entries
    first_page = entries[0]["start_page"] if entries else len(pages)
    for page in range(1, min(first_page, 2) + 1):
        match = ABSTRACT_HEADING.search(pages[page - 1])
        if match is None:
            continue
        first_offset = find_title(entries[0]["title"], pages[page - 1]) if entries else None
        if first_offset is not None and first_page == page and first_offset < match.start():
            return entries
        abstract = SectionEntry(
            level=min((e["level"] for e in entries), default=1),
            title="Abstract",
            start_page=page,
            verified=True,
            begins_page=begins_page(pages[page - 1], match.start()),
        )
        return [abstract, *entries]
    return entries
