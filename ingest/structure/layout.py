"""Page layout the contents parser needs: rows of positioned text cells and printed folios.

pymupdf4llm's markdown loses where text sits on the page. A printed table of contents is read
by position (titles at an indentation, page numbers in a right-hand column, dot leaders), and
printed page numbers (folios) sit in the top or bottom margin. One pass over PyMuPDF's text
dictionary per page records both, keeping rows only for pages that may list contents so the
graph state stays small.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, TypedDict

# A page number as printed in a contents list or a margin: 12, xiv, F-3, A-12.
PAGE_TOKEN = re.compile(r"^(?:\d{1,4}|[ivxlcdm]{1,7}|[A-Z]{1,2}-\d{1,3})$", re.IGNORECASE)
# Dot leaders or long gaps between a title and its page number inside one cell.
LEADER = re.compile(r"^(?P<title>.*?\S)\s*(?:[.·…_\-]\s*){3,}\s*(?P<page>\S+)$")
FOLIO_TOKEN = re.compile(r"^(?:\d{1,3}|[ivxlc]{1,6}|[A-Z]{1,2}-\d{1,3})$", re.IGNORECASE)
MAX_FOLIO_WORDS = 6
FOLIO_TEXT = re.compile(r"^(?:page\s+)?[-–—\s]*(?P<page>\S+?)[-–—\s]*(?:\s+of\s+\d+)?$", re.I)
CONTENTS_WORD = re.compile(r"\b(contents|index)\b", re.IGNORECASE)
CONTENTS_HEADING = re.compile(r"(table of )?contents(\s+page)?", re.IGNORECASE)
# Rows this close vertically (share of the line height) belong to one row.
ROW_TOLERANCE = 0.5
# A horizontal gap wider than this many font sizes separates two cells of a row.
CELL_GAP_EMS = 1.0
# Spans closer than this (font sizes) are pieces of one word (kerning, small caps).
KERNING_EMS = 0.12
# A text among the first or last rows of this many pages is a running header or footer.
EDGE_ROWS = 2
RUNNING_PAGES = 4
# A page whose rows end in a page number this often may be a contents page; kept for parsing.
MIN_NUMBERED_ROWS = 3


class Cell(TypedDict):
    """A run of text on one row, left edge in points."""

    x: float
    text: str


class Row(TypedDict):
    """One visual row of a page: its cells left to right, top as a share of page height."""

    page: int
    y: float
    cells: list[Cell]


class PageLayout(TypedDict):
    """Rows of the pages that may list contents, and every page's printed folio and label.

    ``running`` holds the texts printed at the top or bottom of many pages (running headers
    such as a "Table of Contents" link on every page of a filing), which are never headings.
    """

    rows: list[Row]
    folios: list[str | None]
    labels: list[str | None]
    running: list[str]


def page_layout(
    pages: list[tuple[int, dict[str, Any], float]], labels: list[str | None]
) -> PageLayout:
    """Layout of every page from PyMuPDF text dicts: ``(page number, dict, page height)``."""
    kept: list[Row] = []
    folios: list[str | None] = []
    edges: Counter[str] = Counter()
    for number, text_dict, height in pages:
        rows = page_rows(number, text_dict, height)
        folios.append(folio(rows))
        edges.update({row_text(row).lower() for row in [*rows[:EDGE_ROWS], *rows[-EDGE_ROWS:]]})
        if may_list_contents(rows):
            kept.extend(rows)
    running = sorted(text for text, count in edges.items() if count >= RUNNING_PAGES)
    return PageLayout(rows=kept, folios=folios, labels=labels, running=running)


def page_rows(number: int, text_dict: dict[str, Any], height: float) -> list[Row]:
    """Group a page's lines into visual rows of cells, top to bottom."""
    pieces = []
    for block in text_dict.get("blocks", []):
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            spans = [s for s in line["spans"] if s["text"].strip()]
            if spans:
                pieces.append(spans)
    pieces.sort(key=lambda spans: _middle(spans))
    grouped: list[list[dict[str, Any]]] = []
    for spans in pieces:
        if grouped and abs(_middle(grouped[-1]) - _middle(spans)) <= _tolerance(grouped[-1]):
            grouped[-1].extend(spans)
        else:
            grouped.append(list(spans))
    height = height or 1.0
    return [
        Row(page=number, y=round(min(s["bbox"][1] for s in row) / height, 4), cells=_cells(row))
        for row in grouped
    ]


def _middle(spans: list[dict[str, Any]]) -> float:
    return sum((s["bbox"][1] + s["bbox"][3]) / 2 for s in spans) / len(spans)


def _tolerance(spans: list[dict[str, Any]]) -> float:
    return ROW_TOLERANCE * max(s["bbox"][3] - s["bbox"][1] for s in spans)


def _cells(spans: list[dict[str, Any]]) -> list[Cell]:
    """Merge spans left to right into cells; a wide gap starts a new cell."""
    cells: list[Cell] = []
    right: float | None = None
    previous_raw = ""
    for span in sorted(spans, key=lambda s: s["bbox"][0]):
        text = " ".join(span["text"].split())
        size = max(span.get("size", 10.0), 1.0)
        gap = span["bbox"][0] - right if right is not None else 0.0
        if cells and gap <= CELL_GAP_EMS * size:
            spaced = span["text"][:1].isspace() or previous_raw[-1:].isspace()
            joiner = " " if spaced or gap > KERNING_EMS * size else ""
            cells[-1]["text"] = cells[-1]["text"] + joiner + text
        else:
            cells.append(Cell(x=round(span["bbox"][0], 1), text=text))
        right = max(right or 0.0, span["bbox"][2])
        previous_raw = span["text"]
    return cells


def split_page_number(cells: list[Cell]) -> tuple[list[Cell], str | None]:
    """A row's title cells and its trailing printed page number, if it has one."""
    if not cells:
        return cells, None
    last = cells[-1]["text"].strip()
    if len(cells) > 1 and PAGE_TOKEN.match(last):
        return cells[:-1], last
    leader = LEADER.match(last)
    if leader and PAGE_TOKEN.match(leader.group("page")):
        return [*cells[:-1], Cell(x=cells[-1]["x"], text=leader.group("title"))], leader.group(
            "page"
        )
    return cells, None


def may_list_contents(rows: list[Row]) -> bool:
    """Cheap pre-filter: a contents word, or several rows ending in a page number."""
    numbered = sum(
        1
        for row in rows
        if split_page_number(row["cells"])[1] is not None
        and any(ch.isalpha() for cell in row["cells"][:-1] for ch in cell["text"])
    )
    named = any(CONTENTS_WORD.search(row_text(row)) for row in rows)
    return numbered >= MIN_NUMBERED_ROWS or (named and numbered >= 1) or _has_contents_heading(rows)


def _has_contents_heading(rows: list[Row]) -> bool:
    """A contents list without page numbers still shows a contents heading: keep such pages."""
    return any(CONTENTS_HEADING.fullmatch(row_text(row)) for row in rows)


def row_text(row: Row) -> str:
    """The row's cells joined left to right."""
    return " ".join(cell["text"] for cell in row["cells"]).strip()


def folio(rows: list[Row]) -> str | None:
    """The page number printed as the last (preferred) or first row of the page, if any.

    Folios sit at an edge of the row ("2023 FORM 10-K 1", "86 NIKE, INC.", "- 5 -", "Page 5");
    a row of more than a few words is body text, not a margin line.
    """
    for row in [*reversed(rows[-2:]), *rows[:2]]:
        words = row_text(row).replace("-", " - ").split()
        if not words or len(words) > MAX_FOLIO_WORDS:
            continue
        match = FOLIO_TEXT.match(row_text(row))
        if match and _is_folio(match.group("page")):
            return match.group("page")
        for token in (row_text(row).split()[-1], row_text(row).split()[0]):
            if _is_folio(token):
                return token
    return None


def _is_folio(token: str) -> bool:
    return bool(FOLIO_TOKEN.match(token)) and _not_a_word(token)


def _not_a_word(token: str) -> bool:
    """Roman-looking words ("mix", "did", "I") are not folios unless short and lower-case."""
    if token.isdigit() or "-" in token:
        return True
    return token.islower() and len(token) <= 5 and token not in {"mix", "dim", "mid", "did", "lid"}
