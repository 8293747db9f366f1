"""Text columns of a page for pymupdf4llm, computed on plain floats.

pymupdf4llm orders a page's text by the columns ``helpers.multi_column.column_boxes`` finds:
text blocks are joined into boxes by pairwise rectangle tests, each written with
``pymupdf.Rect``, whose every operation builds new objects through PyMuPDF's argument parsing.
On pages with many blocks that is most of the conversion (mooney05.pdf: 14 of 19 profiled
seconds). ``column_boxes`` below takes the same steps in the same order on a slotted box of
four floats and returns the same boxes as ``pymupdf.Rect`` (``ingest.parse`` has pymupdf4llm
use it). The page text is what pymupdf4llm's own function gives (compared page by page in
``tests/integration/test_columns_on_pdfs.py``).

Three details are kept on purpose, because they shape the output:

* boxes are mutable objects and pymupdf4llm widens them in place, so a box's background (which
  drawn box holds it) is looked up once per object, as pymupdf4llm's cache does;
* unions follow ``Rect.include_rect`` (an empty side gives the other one);
* drawn rectangles of zero width or height are widened by half their line width *in the
  caller's path dicts*, as pymupdf4llm does, since later steps of its page conversion read them.

Unions need no rounding to MuPDF's 32-bit floats: every coordinate comes from MuPDF, so the
minimum and maximum of two of them are already exact 32-bit values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pymupdf
from pymupdf4llm.helpers.utils import WHITE_CHARS

INF_MIN, INF_MAX = pymupdf.FZ_MIN_INF_RECT, pymupdf.FZ_MAX_INF_RECT
SAME_BOTTOM = 3
"""Boxes whose bottoms differ by at most this are one row (read left to right)."""
SAME_EDGE = 3
GAP_BELOW = 10
HORIZONTAL = 1e-3


class Box:
    """A rectangle ``(x0, y0, x1, y1)`` with ``pymupdf.Rect``'s semantics, minus its overhead."""

    __slots__ = ("x0", "x1", "y0", "y1")

    def __init__(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.x0, self.y0, self.x1, self.y1 = float(x0), float(y0), float(x1), float(y1)

    @classmethod
    def of(cls, rect: Any) -> Box:
        """From a ``pymupdf.Rect`` or any sequence of four numbers."""
        if isinstance(rect, pymupdf.Rect):
            return cls(rect.x0, rect.y0, rect.x1, rect.y1)
        x0, y0, x1, y1 = rect
        return cls(x0, y0, x1, y1)

    @property
    def key(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)

    @property
    def empty(self) -> bool:
        return self.x0 >= self.x1 or self.y0 >= self.y1

    @property
    def infinite(self) -> bool:
        return self.x0 == self.y0 == INF_MIN and self.x1 == self.y1 == INF_MAX

    def union(self, other: Box) -> Box:
        """A new box holding both (``Rect.__or__``)."""
        if self.infinite or other.infinite:
            return Box(INF_MIN, INF_MIN, INF_MAX, INF_MAX)
        if other.empty:
            return Box(*self.key)
        if self.empty:
            return Box(*other.key)
        return Box(
            min(self.x0, other.x0),
            min(self.y0, other.y0),
            max(self.x1, other.x1),
            max(self.y1, other.y1),
        )

    def contains(self, inner: Box) -> bool:
        """``inner in self`` for rectangles."""
        return (
            self.x0 <= inner.x0 <= inner.x1 <= self.x1
            and self.y0 <= inner.y0 <= inner.y1 <= self.y1
        )

    def intersects(self, other: Box) -> bool:
        """A non-empty common area (``Rect.intersects``; coordinates first, the cheap part)."""
        return (
            self.x0 < other.x1
            and other.x0 < self.x1
            and self.y0 < other.y1
            and other.y0 < self.y1
            and not self.empty
            and not other.empty
            and not self.infinite
            and not other.infinite
        )

    def touches(self, other: Box) -> bool:
        """Not strictly apart: a shared edge or corner counts (``are_disjoint(strict=True)``)."""
        return not (
            self.x0 > other.x1 or self.x1 < other.x0 or self.y0 > other.y1 or self.y1 < other.y0
        )

    def rect(self) -> pymupdf.Rect:
        return pymupdf.Rect(self.x0, self.y0, self.x1, self.y1)


EMPTY = (INF_MAX, INF_MAX, INF_MIN, INF_MIN)
"""``pymupdf.EMPTY_RECT()``: the start of a union."""


def holder(box: Box, boxes: Sequence[Box]) -> int:
    """1-based position of the first of ``boxes`` containing ``box``; 0 when none does."""
    for number, outer in enumerate(boxes, start=1):
        if outer.contains(box):
            return number
    return 0


class Backgrounds:
    """Which drawn box holds a text box, looked up once per box object (see the module
    docstring: boxes widened later keep the answer found for them first)."""

    def __init__(self, drawn: Sequence[Box]) -> None:
        self.drawn = drawn
        self._found: dict[int, tuple[Box, int]] = {}

    def __call__(self, box: Box) -> int:
        found = self._found.get(id(box))
        if found is None:
            found = (box, holder(box, self.drawn))  # the box is kept, so its id stays its own
            self._found[id(box)] = found
        return found[1]


def can_extend(temp: Box, own: Box, others: Sequence[Box | None], vertical: Sequence[Box]) -> bool:
    """Whether ``temp`` (``own`` grown) overlaps none of ``others`` nor touches vertical text."""
    if not others:
        return True
    if any(temp.touches(box) for box in vertical):
        return False
    x0, y0, x1, y1 = temp.key
    own_key = own.key
    for box in others:  # an area in common, inlined: most of the column time is here
        if (
            box is not None
            and max(x0, box.x0) < min(x1, box.x1)
            and max(y0, box.y0) < min(y1, box.y1)
            and box.key != own_key
        ):
            return False
    return True


def page_boxes(
    blocks: Iterable[dict[str, Any]], images: Sequence[Box], no_image_text: bool
) -> tuple[list[Box], list[Box]]:
    """Bounding boxes of the visible lines of each horizontal text block, and the boxes of the
    blocks whose text is not horizontal."""
    boxes: list[Box] = []
    vertical: list[Box] = []
    for block in blocks:
        bbox = Box.of(block["bbox"])
        if no_image_text and holder(bbox, images):
            continue
        lines = block["lines"]
        if not lines:
            continue
        if abs(1 - lines[0]["dir"][0]) > HORIZONTAL:
            vertical.append(bbox)
            continue
        seen = Box(*EMPTY)
        for line in lines:
            if not WHITE_CHARS.issuperset("".join(span["text"] for span in line["spans"])):
                seen = seen.union(Box.of(line["bbox"]))
        if not seen.empty:
            boxes.append(seen)
    return boxes, vertical


def join_blocks(boxes: list[Box], vertical: Sequence[Box], background: Backgrounds) -> list[Box]:
    """Grow column boxes block by block, never across columns, backgrounds or other text."""
    joined = [boxes[0]]
    pending: list[Box | None] = list(boxes[1:])
    for i, box in enumerate(pending):
        assert box is not None
        fits = False
        target = 0
        grown = box
        for target in range(len(joined)):
            block = joined[target]
            if block.x1 < box.x0 or box.x1 < block.x0:
                continue
            if background(block) != background(box):
                continue
            grown = box.union(block)
            fits = can_extend(grown, block, joined, vertical)
            if fits:
                break
        if not fits:
            joined.append(box)
            target = len(joined) - 1
            grown = joined[target]
        if can_extend(grown, box, pending, vertical):
            joined[target] = grown
        else:
            joined.append(box)
        pending[i] = None
    return joined


def clean(blocks: list[Box]) -> list[Box]:
    """Drop repeated boxes and read boxes that end at about the same height left to right."""
    if len(blocks) < 2:
        return blocks
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i - 1].key == blocks[i].key:  # at 0 this compares with the last box
            del blocks[i]
    if not blocks:
        return blocks
    bottom, first, last = blocks[0].y1, 0, -1
    for i in range(1, len(blocks)):
        if abs(blocks[i].y1 - bottom) > SAME_BOTTOM:
            if last > first:
                blocks[first : last + 1] = sorted(blocks[first : last + 1], key=lambda b: b.x0)
            bottom, first = blocks[i].y1, i
        last = i
    if last > first:
        blocks[first : last + 1] = sorted(blocks[first : last + 1], key=lambda b: b.x0)
    return blocks


def align_edges(blocks: list[Box]) -> list[Box]:
    """Even out left and right edges within a few points (in place, in order), then join
    boxes stacked with the same edges."""
    for box in blocks:
        box.x0 = min([other.x0 for other in blocks if abs(other.x0 - box.x0) <= SAME_EDGE])
        box.x1 = max([other.x1 for other in blocks if abs(other.x1 - box.x1) <= SAME_EDGE])
    ordered = sorted(blocks, key=lambda b: (b.x0, b.y0))
    joined = [ordered[0]]
    for box in ordered[1:]:
        last = joined[-1]
        if (
            abs(box.x0 - last.x0) <= SAME_EDGE
            and abs(box.x1 - last.x1) <= SAME_EDGE
            and abs(last.y1 - box.y0) <= GAP_BELOW
        ):
            joined[-1] = last.union(box)
            continue
        joined.append(box)
    return joined


def merge_alone(blocks: list[Box], background: Backgrounds) -> list[Box]:
    """Join two boxes of one column and background when their union meets no third box."""
    pending = blocks[:]
    done: list[Box] = []
    while pending:
        first = pending[0]
        repeat = True
        while repeat:
            repeat = False
            for i in range(len(pending) - 1, 0, -1):
                other = pending[i]
                if other.x0 > first.x1 or other.x1 < first.x0:
                    continue
                if background(first) != background(other):
                    continue
                grown = first.union(other)
                if meets_only(grown, {first.key, other.key}, pending, done):
                    first = pending[0] = grown
                    del pending[i]
                    repeat = True
        done.append(first)
        del pending[0]
    return done


def meets_only(
    grown: Box, keys: set[tuple[float, float, float, float]], *groups: list[Box]
) -> bool:
    """Whether the boxes ``grown`` intersects are exactly those with ``keys`` (stopping at the
    first other one, which is how most joins fail)."""
    met = set()
    for group in groups:
        for box in group:
            if box.intersects(grown):
                if box.key not in keys:
                    return False
                met.add(box.key)
    return met == keys


def reading_order(blocks: list[Box]) -> list[Box]:
    """Sort by (top, left), where a box right of a vertically overlapping box takes that box's
    top, so a column is read before the one to its right."""
    keyed = []
    for box in blocks:
        left = sorted(
            [
                other
                for other in blocks
                if other.x1 < box.x0
                and (box.y0 <= other.y0 <= box.y1 or box.y0 <= other.y1 <= box.y1)
            ],
            key=lambda other: other.x1,
        )
        keyed.append((box, (left[-1].y0, box.x0) if left else (box.y0, box.x0)))
    keyed.sort(key=lambda item: item[1])
    return [box for box, _ in keyed]


def drawn_boxes(paths: Iterable[dict[str, Any]]) -> list[Box]:
    """The drawings' rectangles, lines given half their width (written back, see above)."""
    boxes = []
    for path in paths:
        rect = path["rect"]
        half = 0.5 if path["width"] is None else path["width"] * 0.5
        if rect.width == 0:
            rect.x0 -= half
            rect.x1 += half
        if rect.height == 0:
            rect.y0 -= half
            rect.y1 += half
        boxes.append(Box.of(rect))
    boxes.sort(key=lambda b: (b.y0, b.x0))
    return boxes


def column_boxes(
    page: pymupdf.Page,
    *,
    footer_margin: float = 50,
    header_margin: float = 50,
    no_image_text: bool = True,
    textpage: pymupdf.TextPage | None = None,
    paths: list[dict[str, Any]] | None = None,
    avoid: Sequence[Any] | None = None,
    ignore_images: bool = False,
) -> list[pymupdf.Rect]:
    """The page's text column boxes in reading order (pymupdf4llm's signature and result)."""
    clip = +page.rect
    clip.y1 -= footer_margin
    clip.y0 += header_margin
    if paths is None:
        paths = [
            p
            for p in page.get_drawings()
            if p["rect"].width < clip.width and p["rect"].height < clip.height
        ]
    if textpage is None:
        textpage = page.get_textpage(clip=clip, flags=pymupdf.TEXT_ACCURATE_BBOXES)
    images = [Box.of(rect) for rect in avoid or ()]
    drawn = drawn_boxes(paths)
    if ignore_images is False:
        for item in page.get_images():
            images.extend(Box.of(rect) for rect in page.get_image_rects(item[0]))
    boxes, vertical = page_boxes(textpage.extractDICT()["blocks"], images, no_image_text)
    boxes.sort(key=lambda b: (holder(b, drawn), b.y0, b.x0))
    if not boxes:
        return []
    background = Backgrounds(drawn)
    blocks = clean(join_blocks(boxes, vertical, background))
    if not blocks:
        return []
    blocks = merge_alone(align_edges(blocks), background)
    return [box.rect() for box in reading_order(blocks)]
