"""Dot leaders and contents lists: a line that ends in a printed page number ("Risk Factors
12"), one with dot leaders, and the share of its page's lines that end in a page number (high
on a contents page)."""

from __future__ import annotations

import re
from collections import Counter

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.layout import PAGE_TOKEN
from ingest.structure.typography import Line

LEADER = re.compile(r"(?:[.·…_]\s*){4,}")


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """Contents-row cues of each line and of its page."""
    numbered: Counter[int] = Counter()
    rows: Counter[int] = Counter()
    for line in lines:
        rows[line.page] += 1
        numbered[line.page] += int(ends_with_page_number(line.text))
    share = {page: numbered[page] / rows[page] for page in rows}

    def row(line: Line, around: Around) -> dict[str, float]:
        return {
            "ends_with_page_number": float(ends_with_page_number(line.text)),
            "leader_dots": float(has_leader(line.text)),
            "numbered_share_of_page": share.get(line.page, 0.0),
        }

    return row


def ends_with_page_number(text: str) -> bool:
    """A contents row: words, then a printed page number ("Risk Factors 12")."""
    words = text.split()
    return len(words) >= 2 and bool(PAGE_TOKEN.match(words[-1])) and words[0][0].isalpha()


def has_leader(text: str) -> bool:
    """Dot leaders between a title and its page number ("Risk Factors ....... 12")."""
    return bool(LEADER.search(text))
