"""The character records of PyMuPDF's table finder, computed a page at a time.

Before ``page.find_tables`` looks at a single ruling line it turns every character of the page
into a record (``pymupdf.table.make_chars``), building a ``Rect``, a ``Point`` and a ``Matrix``
per character and transforming two of them through MuPDF: on the development papers that is
most of table detection. ``make_chars`` below builds the same records, in the same order, with
the page's character boxes transformed together in numpy, from the character dictionary that
the table's cells are read from later (``ingest.pdf.textlines.page_characters``), extracted once.

The transformation is MuPDF's own arithmetic: coordinates are 32-bit floats, a point is
``x * a + y * c + e`` (each product and sum rounded to 32 bits), and a rectangle under a matrix
without rotation or skew flips its corners where the matrix mirrors an axis. Pages whose
matrix rotates or skews, and characters whose box is not a proper rectangle, are left to
PyMuPDF's function, so nothing outside the arithmetic above is imitated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymupdf
import pymupdf.table as table

from ingest.pdf.textlines import page_characters

FLT_EPSILON = float(np.finfo(np.float32).eps)
MAKE_CHARS = table.make_chars
"""PyMuPDF's own function (kept before ``ingest.parse`` replaces it)."""


def _axis_aligned(ctm: pymupdf.Matrix) -> bool:
    return abs(ctm.b) < FLT_EPSILON and abs(ctm.c) < FLT_EPSILON


def _transform(x: Any, y: Any, m: pymupdf.Matrix) -> tuple[Any, Any]:
    """MuPDF's point transform on float32 arrays, rounded after every operation."""
    a, b, c, d, e, f = (np.float32(v) for v in (m.a, m.b, m.c, m.d, m.e, m.f))
    return (x * a + y * c) + e, (x * b + y * d) + f


def _rect_y(boxes: Any, m: pymupdf.Matrix) -> tuple[Any, Any]:
    """The transformed top and bottom of each box (``Rect * matrix`` for a matrix without
    rotation or skew)."""
    x0, y0, x1, y1 = (boxes[:, i].astype(np.float32) for i in range(4))
    if m.a < 0:
        x0, x1 = x1, x0
    if m.d < 0:
        y0, y1 = y1, y0
    return _transform(x0, y0, m)[1], _transform(x1, y1, m)[1]


def _ordered_chars(blocks: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(span facts, character) pairs in PyMuPDF's order: lines as extracted, spans and then
    characters left to right."""
    found = []
    for block in blocks:
        for line in block["lines"]:
            cos, sin = (round(line["dir"][0], 4), round(line["dir"][1], 4))
            for span in sorted(line["spans"], key=lambda s: s["bbox"][0]):
                facts = {
                    "cos": cos,
                    "sin": sin,
                    "upright": sin == 0,
                    "fontname": span["font"],
                    "fontsize": span["size"],
                    "bold": bool(span["flags"] & pymupdf.TEXT_FONT_BOLD or span["char_flags"] & 8),
                    "color": pymupdf.sRGB_to_pdf(span["color"]),
                }
                for char in sorted(span["chars"], key=lambda c: c["bbox"][0]):
                    found.append((facts, char))
    return found


def make_chars(page: pymupdf.Page, clip: Any = None) -> pymupdf.TextPage:
    """``pymupdf.table.make_chars``: fill the table finder's character list, return the text
    page."""
    ctm = page.transformation_matrix
    if not _axis_aligned(ctm):
        return MAKE_CHARS(page, clip=clip)
    chars = table.CHARS._list()
    textpage = page.get_textpage(clip=clip, flags=table.FLAGS)
    ordered = _ordered_chars(page_characters(textpage)["blocks"])
    if not ordered:
        return textpage
    boxes = np.array([char["bbox"] for _, char in ordered], dtype=np.float64)
    origins = np.array([char["origin"] for _, char in ordered], dtype=np.float64)
    if np.any(boxes[:, 0] > boxes[:, 2]) or np.any(boxes[:, 1] > boxes[:, 3]):
        return MAKE_CHARS(page, clip=clip)
    top, bottom = _rect_y(boxes, ctm)
    origin_x, origin_y = _transform(
        origins[:, 0].astype(np.float32), origins[:, 1].astype(np.float32), ctm
    )
    page_number = page.number + 1
    doctop_base = page.rect.height * page.number
    rows = zip(
        ordered,
        boxes.tolist(),
        top.astype(np.float64).tolist(),
        bottom.astype(np.float64).tolist(),
        origin_x.astype(np.float64).tolist(),
        origin_y.astype(np.float64).tolist(),
        strict=True,
    )
    for (facts, char), (x0, y0, x1, y1), ctm_y0, ctm_y1, e, f in rows:
        upright = facts["upright"]
        chars.append(
            {
                "adv": x1 - x0 if upright else y1 - y0,
                "bottom": y1,
                "doctop": y0 + doctop_base,
                "fontname": facts["fontname"],
                "height": y1 - y0,
                "matrix": (facts["cos"], -facts["sin"], facts["sin"], facts["cos"], e, f),
                "ncs": "DeviceRGB",
                "non_stroking_color": facts["color"],
                "non_stroking_pattern": None,
                "object_type": "char",
                "page_number": page_number,
                "size": facts["fontsize"] if upright else y1 - y0,
                "stroking_color": facts["color"],
                "stroking_pattern": None,
                "bold": facts["bold"],
                "text": char["c"],
                "top": y0,
                "upright": upright,
                "width": x1 - x0,
                "x0": x0,
                "x1": x1,
                "y0": ctm_y0,
                "y1": ctm_y1,
            }
        )
    return textpage
