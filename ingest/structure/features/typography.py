"""Typography relative to the document's own body text: size, weight, font and style, and how
rare the line's style is (a style kept for headings carries a small share of the text)."""

from __future__ import annotations

from collections import Counter

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.typography import Line, looks_like_heading, same_style

# Sizes more than this many points apart are different sizes (for the share set larger).
LARGER_BY = 0.25


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """The typography of each line against the document's body and its sizes, styles, fonts."""
    sizes: Counter[float] = Counter()
    styles: Counter[tuple[float, bool]] = Counter()
    fonts: Counter[str] = Counter()
    for line in lines:
        sizes[round(line.size, 1)] += line.chars
        styles[(round(line.size, 1), line.bold)] += line.chars
        fonts[line.font] += line.chars
    total = sum(sizes.values()) or 1
    larger = {
        size: sum(c for s, c in sizes.items() if s > size + LARGER_BY) / total for size in sizes
    }
    style_share = {style: chars / total for style, chars in styles.items()}
    font_share = {font: chars / total for font, chars in fonts.items()}

    def row(line: Line, around: Around) -> dict[str, float]:
        previous, following = around.previous, around.following
        return {
            "size_ratio": line.size / (body.size or 1.0),
            "size_rank": larger.get(round(line.size, 1), 0.0),
            "bold": float(line.bold),
            "italic": float(line.italic),
            "body_font": float(line.font == body.font),
            "prev_same_style": float(bool(previous and same_style(previous, line))),
            "next_same_style": float(bool(following and same_style(following, line))),
            "style_char_share": style_share.get((round(line.size, 1), line.bold), 0.0),
            "font_char_share": font_share.get(line.font, 0.0),
            "typographic_rule": float(looks_like_heading(line, body.size)),
            "size_vs_previous": line.size - previous.size if previous else 0.0,
            "size_vs_next": line.size - following.size if following else 0.0,
        }

    return row
