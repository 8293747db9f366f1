"""Heading candidates from PDF typography: lines set larger or bolder than the body text.

pymupdf4llm's markdown only marks some headings with ``#``; the font sizes and weights PyMuPDF
reports are a steadier signal, so the parse step records candidate lines for the headings method.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from store.types import HeadingCandidate

MAX_HEADING_CHARS = 120
MAX_HEADING_WORDS = 16
BOLD_FLAG = 16
# A line beside a cell of at most this many words is in a table row.
TABLE_CELL_WORDS = 4
# Under this share of long lines crossing the middle, a page is set in two columns.
TWO_COLUMN_SHARE = 0.2
BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|cmbx|\.b$|-b$", re.IGNORECASE)


@dataclass
class _Line:
    page: int
    text: str
    size: float
    bold: bool
    y_frac: float
    block_lines: int
    chars: int
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    in_table: bool = False


def heading_candidates(pages: list[tuple[int, dict[str, Any], float]]) -> list[HeadingCandidate]:
    """Lines whose size, weight or numbering suggests a heading, in reading order.

    ``pages`` holds (page number, PyMuPDF text dict, page height) so that one text extraction
    per page serves both this and the layout of the contents parser.
    """
    lines = [line for number, text, height in pages for line in _page_lines(number, text, height)]
    body = _body_size(lines)
    return [
        HeadingCandidate(
            page=line.page,
            text=line.text,
            size=round(line.size, 2),
            bold=line.bold,
            y_frac=round(line.y_frac, 3),
        )
        for line in lines
        if _looks_like_heading(line, body)
    ]


def _page_lines(number: int, text: dict[str, Any], height: float) -> list[_Line]:
    """Lines of a page, with short same-style runs merged (wrapped or split headings).

    A heading often shares its text block with the paragraph it opens, so blocks are cut into
    runs of consecutive lines of one style; a run of up to three lines becomes one candidate.
    """
    height = height or 1.0
    out: list[_Line] = []
    for block in text["blocks"]:
        if block.get("type") != 0:
            continue
        lines = [_line_record(number, raw, height) for raw in block["lines"]]
        for run in _style_runs([line for line in lines if line.text]):
            if len(run) <= 3:
                out.append(_merge(run))
                continue
            for line in run:
                line.block_lines = len(run)
            out.extend(run)
    _mark_table_cells(out, float(text.get("width") or 0.0))
    return out


def _mark_table_cells(lines: list[_Line], width: float) -> None:
    """Flag lines that share their row with short cells (numbers, column labels): a table.

    On a two-column page only lines in the same column count, so a heading level with the
    last words of a paragraph in the other column is not mistaken for a table cell.
    """
    middle = width / 2
    crossing = [line for line in lines if line.chars >= 40]
    spanning = sum(line.box[0] < middle < line.box[2] for line in crossing)
    two_columns = bool(crossing) and spanning < TWO_COLUMN_SHARE * len(crossing)
    by_top = sorted(lines, key=lambda line: line.box[1])
    for index, line in enumerate(by_top):
        for other in by_top[index + 1 :]:
            if other.box[1] >= line.box[3]:
                break  # sorted by top: no later line can share this row
            if not _same_row(line, other) or _overlap_x(line, other):
                continue
            if two_columns and (line.box[0] < middle) != (other.box[0] < middle):
                continue
            if len(other.text.split()) <= TABLE_CELL_WORDS:
                line.in_table = True
            if len(line.text.split()) <= TABLE_CELL_WORDS:
                other.in_table = True


def _same_row(a: _Line, b: _Line) -> bool:
    top, bottom = max(a.box[1], b.box[1]), min(a.box[3], b.box[3])
    return bottom - top >= 0.5 * min(a.box[3] - a.box[1], b.box[3] - b.box[1])


def _overlap_x(a: _Line, b: _Line) -> bool:
    return min(a.box[2], b.box[2]) > max(a.box[0], b.box[0])


def _style_runs(lines: list[_Line]) -> list[list[_Line]]:
    """Split consecutive lines wherever size or weight changes."""
    runs: list[list[_Line]] = []
    for line in lines:
        if runs and _same_style([runs[-1][-1], line]):
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


def _line_record(page_no: int, raw: dict[str, Any], height: float) -> _Line:
    """Collapse a PyMuPDF line's spans into text plus its dominant size and weight."""
    spans = [s for s in raw["spans"] if s["text"].strip()]
    text = " ".join(" ".join(s["text"] for s in spans).split())
    chars = sum(len(s["text"].strip()) for s in spans) or 1
    size = max((s["size"] for s in spans), default=0.0)
    bold_chars = sum(len(s["text"].strip()) for s in spans if _is_bold(s))
    return _Line(
        page=page_no,
        text=text,
        size=size,
        bold=bold_chars >= 0.8 * chars,
        y_frac=raw["bbox"][1] / height,
        block_lines=1,
        chars=chars,
        box=tuple(raw["bbox"]),
    )


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & BOLD_FLAG) or bool(BOLD_FONT.search(span.get("font", "")))


def _same_style(lines: list[_Line]) -> bool:
    return all(abs(x.size - lines[0].size) < 0.3 and x.bold == lines[0].bold for x in lines)


def _merge(lines: list[_Line]) -> _Line:
    first = lines[0]
    return _Line(
        page=first.page,
        text=" ".join(x.text for x in lines),
        size=first.size,
        bold=first.bold,
        y_frac=first.y_frac,
        block_lines=1,
        chars=sum(x.chars for x in lines),
        box=(
            min(x.box[0] for x in lines),
            first.box[1],
            max(x.box[2] for x in lines),
            lines[-1].box[3],
        ),
    )


def _body_size(lines: list[_Line]) -> float:
    """The font size carrying the most characters is the body size."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 1)] += line.chars
    return weights.most_common(1)[0][0] if weights else 10.0


def _looks_like_heading(line: _Line, body: float) -> bool:
    """Short, not sentence-like, and larger, bold or numbered-and-emphasised."""
    text = line.text
    if not (2 <= len(text) <= MAX_HEADING_CHARS) or len(text.split()) > MAX_HEADING_WORDS:
        return False
    if line.block_lines > 3 or line.in_table or not any(ch.isalpha() for ch in text):
        return False
    if text.endswith((",", ";")) or (text.endswith(".") and len(text.split()) > 8):
        return False
    larger = line.size >= body + 0.8
    if larger and line.size < body * 3:
        return True
    return line.bold and line.size >= body * 0.85 and (line.block_lines == 1 or larger)
