"""A page's text extracted once per conversion, not once per column box or table cell.

pymupdf4llm writes a page column box by column box, and for each box its ``get_raw_lines``
extracts the *whole* page's text dictionary again before keeping the lines inside the box: a
page of seven boxes is extracted seven times, about a tenth of the conversion. ``raw_lines``
extracts a text page's blocks once and hands ``get_raw_lines`` a fresh copy of them for each
box through the function's own ``blocks`` argument. The copy is needed because
``get_raw_lines`` edits the span dictionaries it is given (it replaces their boxes, adds line
numbers and joins split words), so each call must start from the extracted values: the spans it
may reach are copied, one dictionary each.

Tables are written the same way: PyMuPDF's ``Table.to_markdown`` calls ``extract_cells`` once
per cell, and each call extracts the page's characters again (a 12-row table of 4 columns:
48 extractions). ``table_cell_text`` hands it a view of the text page whose character
dictionary is extracted once; ``extract_cells`` only reads it, so it is shared as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pymupdf
import pymupdf.table
from pymupdf4llm.helpers.get_text_lines import get_raw_lines
from pymupdf4llm.helpers.utils import are_disjoint, bbox_is_empty

TEXT_BLOCK = 0


class _LastPage(threading.local):
    """What was last extracted in this thread, by kind: the text page and the result
    (pymupdf4llm converts pages one after another, so one page is all the reuse there is)."""

    def __init__(self) -> None:
        self.extracted: dict[str, tuple[pymupdf.TextPage, Any]] = {}

    def once(self, kind: str, textpage: pymupdf.TextPage, extract: Callable[[], Any]) -> Any:
        """``extract()`` for this text page, run once per page and kind."""
        last = self.extracted.get(kind)
        if last is None or last[0] is not textpage:
            last = self.extracted[kind] = (textpage, extract())
        return last[1]


_LAST = _LastPage()


def _text_blocks_of(textpage: pymupdf.TextPage) -> list[dict[str, Any]]:
    return [
        block
        for block in textpage.extractDICT()["blocks"]
        if block["type"] == TEXT_BLOCK and not bbox_is_empty(block["bbox"])
    ]


def text_blocks(textpage: pymupdf.TextPage, clip: Any) -> list[dict[str, Any]]:
    """The non-empty text blocks of ``textpage`` (as ``get_raw_lines`` selects them), extracted
    once. The spans of lines that reach into ``clip`` are copies the caller may change; blocks
    and lines outside it, which ``get_raw_lines`` skips unread, are shared."""
    blocks = _LAST.once("blocks", textpage, lambda: _text_blocks_of(textpage))
    area = textpage.rect if clip is None else clip
    return [
        block if are_disjoint(block["bbox"], area) else _copy_block(block, area) for block in blocks
    ]


def _copy_block(block: dict[str, Any], area: Any) -> dict[str, Any]:
    lines = [
        line
        if are_disjoint(line["bbox"], area)
        else {**line, "spans": [dict(span) for span in line["spans"]]}
        for line in block["lines"]
    ]
    return {**block, "lines": lines}


def raw_lines(
    textpage: pymupdf.TextPage | None = None,
    blocks: list[dict[str, Any]] | None = None,
    clip: Any = None,
    tolerance: float = 3,
    ignore_invisible: bool = True,
    only_horizontal: bool = True,
) -> list[Any]:
    """``get_raw_lines`` with the page's blocks extracted once (same signature and result)."""
    if blocks is None and isinstance(textpage, pymupdf.TextPage):
        blocks = text_blocks(textpage, clip)
    return list(
        get_raw_lines(
            textpage=textpage,
            blocks=blocks,
            clip=clip,
            tolerance=tolerance,
            ignore_invisible=ignore_invisible,
            only_horizontal=only_horizontal,
        )
    )


EXTRACT_CELLS = pymupdf.table.extract_cells
"""PyMuPDF's own cell reader (kept before ``ingest.parse`` replaces it)."""


class _CharactersOnce:
    """The part of a text page ``extract_cells`` uses, its character dictionary extracted once
    per page and thread."""

    def __init__(self, textpage: pymupdf.TextPage) -> None:
        self.textpage = textpage

    def extractRAWDICT(self) -> dict[str, Any]:  # PyMuPDF's name: extract_cells calls it
        return page_characters(self.textpage)


def page_characters(textpage: pymupdf.TextPage) -> dict[str, Any]:
    """The text page's character dictionary (``extractRAWDICT``), extracted once per page and
    thread and shared: its readers (the table finder's character records, the cells' text) do
    not change it."""
    chars: dict[str, Any] = _LAST.once("chars", textpage, textpage.extractRAWDICT)
    return chars


def table_cell_text(textpage: pymupdf.TextPage, cell: Any, markdown: bool = False) -> str:
    """``pymupdf.table.extract_cells`` with the page's characters extracted once."""
    return str(EXTRACT_CELLS(_CharactersOnce(textpage), cell, markdown))
