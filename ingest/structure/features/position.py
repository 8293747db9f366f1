"""Position on the page: indentation from the body's left margin, centring, width, height on
the page and order among the page's lines."""

from __future__ import annotations

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.typography import Line


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """Where each line sits, in shares of its page's width and of its page's lines."""

    def row(line: Line, around: Around) -> dict[str, float]:
        width = line.page_width or 1.0
        left, _, right, _ = line.box
        return {
            "indent": (left - body.left) / width,
            "centre_offset": abs((left + right) / 2 - width / 2) / width,
            "width_share": (right - left) / width,
            "y_frac": line.y_frac,
            "first_on_page": float(around.previous is None),
            "line_position": around.position,
        }

    return row
