"""Wrapped titles and the white space around a line: the gap before and after it (in body line
heights), how many printed lines it joins, how long its block runs, and whether the next line
continues its sentence."""

from __future__ import annotations

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.typography import Line

# A gap wider than this many body lines (or none: first or last line of a page) counts as this.
MAX_GAP_LINES = 10.0


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """White space and continuation around each line."""

    def row(line: Line, around: Around) -> dict[str, float]:
        previous, following = around.previous, around.following
        return {
            "gap_before": gap(previous.box[3] if previous else None, line.box[1], body),
            "gap_after": gap(line.box[3], following.box[1] if following else None, body),
            "merged_lines": float(line.merged),
            "block_lines": float(line.block_lines),
            "next_starts_lower": float(bool(following and following.text[:1].islower())),
        }

    return row


def gap(top: float | None, bottom: float | None, body: Body) -> float:
    """Vertical white space between two lines, in body line heights (capped)."""
    if top is None or bottom is None:
        return MAX_GAP_LINES
    return float(min(max((bottom - top) / (body.line_height or 1.0), -1.0), MAX_GAP_LINES))
