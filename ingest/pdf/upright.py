"""A page's text dictionary in the frame its text is read in.

PyMuPDF reports positions in the page's unrotated space. On a page turned a quarter (a
landscape table in a portrait report, slide handouts printed sideways, ``/Rotate 90``) the
text then runs up or down the page: every line of a slide "shares a row" with every other, so
each one looks like a table cell, and a title's place on the page reads as its distance from
the left edge. Everything that reads layout (rows, columns, white space, the top of the page)
assumes text that runs left to right, so the page's boxes are turned into the frame of the
direction most of its text runs in, once, before anything reads them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

Box = tuple[float, float, float, float]
# Directions as PyMuPDF gives them (cosine, sine of the baseline), rounded to quarter turns.
RIGHT, UP, DOWN, LEFT = (1, 0), (0, -1), (0, 1), (-1, 0)


def upright(text: dict[str, Any]) -> dict[str, Any]:
    """``text`` (``page.get_text("dict")``) with every box in the reading frame of the page's
    main text direction, its ``width`` and ``height`` those of that frame; a page whose text
    mostly runs left to right is returned as it is."""
    direction = main_direction(text)
    if direction == RIGHT:
        return text
    width, height = float(text["width"]), float(text["height"])

    def frame(box: Box) -> Box:
        return _turned(box, direction, width, height)

    blocks = [_turned_block(block, frame) for block in text["blocks"]]
    if direction == LEFT:
        return {**text, "blocks": blocks}
    return {**text, "width": height, "height": width, "blocks": blocks}


def main_direction(text: dict[str, Any]) -> tuple[int, int]:
    """The quarter turn most of the page's characters run in."""
    weights: Counter[tuple[int, int]] = Counter()
    for block in text["blocks"]:
        for line in block.get("lines", []):
            chars = sum(len(span["text"].strip()) for span in line["spans"])
            weights[(round(line["dir"][0]), round(line["dir"][1]))] += chars
    direction = weights.most_common(1)[0][0] if weights else RIGHT
    return direction if direction in (UP, DOWN, LEFT) else RIGHT


def _turned(box: Box, direction: tuple[int, int], width: float, height: float) -> Box:
    """``box`` seen with the page turned so that ``direction`` runs left to right."""
    x0, y0, x1, y1 = box
    if direction == UP:  # read bottom to top: lines follow one another to the right
        return (height - y1, x0, height - y0, x1)
    if direction == DOWN:  # read top to bottom: lines follow one another to the left
        return (y0, width - x1, y1, width - x0)
    return (width - x1, height - y1, width - x0, height - y0)  # upside down


def _turned_block(block: dict[str, Any], frame: Callable[[Box], Box]) -> dict[str, Any]:
    """A copy of ``block`` with its, its lines' and its spans' boxes turned; lines then run
    left to right."""
    turned = {**block, "bbox": frame(block["bbox"])}
    if "lines" in block:
        turned["lines"] = [
            {
                **line,
                "bbox": frame(line["bbox"]),
                "dir": RIGHT,
                "spans": [_turned_span(span, frame) for span in line["spans"]],
            }
            for line in block["lines"]
        ]
    return turned


def _turned_span(span: dict[str, Any], frame: Callable[[Box], Box]) -> dict[str, Any]:
    x, y = span.get("origin", span["bbox"][:2])
    origin = frame((x, y, x, y))
    return {**span, "bbox": frame(span["bbox"]), "origin": (origin[0], origin[1])}
