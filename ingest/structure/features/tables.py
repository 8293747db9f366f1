"""Tables and statement rows: whether a line sits in a table row (``Line.in_table``, decided
where the page's lines are read) and how dense its page is against the document's median page
(financial statements and schedules are dense)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.typography import Line


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """Table membership and the page's characters against the median page's."""
    page_chars: Counter[int] = Counter()
    for line in lines:
        page_chars[line.page] += line.chars
    median = float(np.median(list(page_chars.values()))) or 1.0

    def row(line: Line, around: Around) -> dict[str, float]:
        return {
            "in_table": float(line.in_table),
            "page_density": page_chars.get(line.page, 0) / median,
        }

    return row
