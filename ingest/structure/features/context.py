"""What every feature module measures a line against: the document's body text and the line's
neighbours on its page.

Features are relative to the document they come from, so that a labeller learned on some
documents applies to others set in other fonts and sizes; the body text (its size, font, left
margin and line height) is that reference, computed once per document here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ingest.structure.typography import Line, body_line_height, body_size

# Lines within this many points of the body size are set in the body's type.
BODY_SIZE_TOLERANCE = 0.3


@dataclass(frozen=True)
class Body:
    """The document's body text: the size carrying the most characters, the font and the left
    edge most of that text uses, and the height of one of its lines."""

    size: float
    font: str
    left: float
    line_height: float

    @classmethod
    def of(cls, lines: list[Line]) -> Body:
        size = body_size(lines)
        fonts: Counter[str] = Counter()
        lefts: Counter[float] = Counter()
        for line in lines:
            if abs(line.size - size) < BODY_SIZE_TOLERANCE:
                fonts[line.font] += line.chars
                lefts[round(line.box[0])] += line.chars
        return cls(
            size=size,
            font=fonts.most_common(1)[0][0] if fonts else "",
            left=float(lefts.most_common(1)[0][0]) if lefts else 0.0,
            line_height=body_line_height(lines, size),
        )


@dataclass(frozen=True)
class Around:
    """Where a line stands: its index in the document, the lines before and after it on its
    page (None at the page's edges) and its share of the way down the page's lines."""

    index: int
    previous: Line | None
    following: Line | None
    position: float


# A feature module's measure of one line: its features' values by name.
Measure = Callable[[Line, Around], dict[str, float]]
