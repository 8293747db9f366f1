"""Text lines with their typography, read once from PyMuPDF's text dictionaries.

pymupdf4llm's markdown only marks some headings with ``#``; the font sizes, weights and positions
PyMuPDF reports are a steadier signal. Every line of the document becomes a :class:`Line`
(short runs of one style merged, so a wrapped heading is one line); the line labeller
(``ingest.structure.labeller``) scores them, and the rule kept from before
(:func:`looks_like_heading`) is one of its features.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ingest.structure.locate import REVISION_DATE
from ingest.structure.numbering import ARABIC_NUMBER, clean_title, parse_numbering

MAX_HEADING_CHARS = 120
MAX_HEADING_WORDS = 16
# A numbered title may run longer ("Strategic Goal 6: Provide leadership in helping agencies
# create inclusive work environments where …", wrapped over up to nine lines).
MAX_NUMBERED_HEADING_CHARS = 320
MAX_NUMBERED_HEADING_WORDS = 48
BOLD_FLAG = 16
ITALIC_FLAG = 2
# A line beside a cell of at most this many words is in a table row.
TABLE_CELL_WORDS = 4
# A cell holding a figure: digits, a currency or a percent sign.
FIGURE_CELL = re.compile(r"[\d$%€£]")
# Under this share of running-text lines crossing the middle, a page is set in two columns.
TWO_COLUMN_SHARE = 0.2
# Lines this long are running text: their extents show where a page's text columns are.
RUNNING_TEXT_CHARS = 40
# Two lines are in different text columns when at least this many lines of running text set
# across each of them stop short of the other.
COLUMN_EVIDENCE = 2
# Runs of at most this many lines of one style are one line (a heading wrapped over lines)...
MAX_MERGED_LINES = 3
# ...and so are longer runs, up to this many lines, of a numbered title set in bold capitals.
MAX_CAPITALS_TITLE_LINES = 10
# A line whose letters are at least this share capitals is set in capitals.
CAPITALS_SHARE = 0.8
BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|cmbx|\.b$|-b$", re.IGNORECASE)

# A bare number ("1.1", "2-8.1", "IV.", "Chapter 3") printed apart from its title (beside or
# above it): the numbers the numbering schemes read (``ARABIC_NUMBER``), a roman or a letter.
NUMBER_ONLY = re.compile(
    r"^(?:(?:part|chapter|section|article|appendix|item|note)\s+)?"
    rf"(?:{ARABIC_NUMBER}|[IVXivx]{{1,5}}|[A-Z](?:\.\d{{1,2}})*)\.?$",
    re.IGNORECASE,
)
# One page as parse reads it: (1-based page number, PyMuPDF text dict, page height).
PageText = tuple[int, dict[str, Any], float]


@dataclass
class Line:
    """One visual line (or a merged run of up to three same-style lines) and its typography."""

    page: int
    text: str
    size: float
    bold: bool
    y_frac: float
    block_lines: int
    chars: int
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    in_table: bool = False
    font: str = ""
    italic: bool = False
    merged: int = 1
    page_width: float = 0.0


def document_lines(pages: list[PageText]) -> list[Line]:
    """Every non-empty line of the document in reading order (PyMuPDF's block order)."""
    return [line for number, text, height in pages for line in page_lines(number, text, height)]


def page_lines(number: int, text: dict[str, Any], height: float) -> list[Line]:
    """Lines of a page, with short same-style runs merged (wrapped or split headings).

    A heading often shares its text block with the paragraph it opens, so blocks are cut into
    runs of consecutive lines of one style; a run of up to three lines becomes one line.
    """
    height = height or 1.0
    width = float(text.get("width") or 0.0)
    out: list[Line] = []
    for block in text["blocks"]:
        if block.get("type") != 0:
            continue
        lines = [_line_record(number, raw, height, width) for raw in block["lines"]]
        for run in _style_runs([line for line in lines if line.text]):
            if len(run) <= MAX_MERGED_LINES or _capitals_title(run):
                out.append(merge_lines(run))
                continue
            for line in run:
                line.block_lines = len(run)
            out.extend(run)
    _mark_table_cells(out, width)
    return out


def _capitals_title(run: list[Line]) -> bool:
    """A numbered title in bold capitals wrapped over many short lines ("STRATEGIC GOAL 6:
    PROVIDE" / "LEADERSHIP IN HELPING AGENCIES" / …): body text is never set that way."""
    return (
        len(run) <= MAX_CAPITALS_TITLE_LINES
        and all(line.bold and _capitals(line.text) for line in run)
        and parse_numbering(clean_title(run[0].text)) is not None
    )


def _capitals(text: str) -> bool:
    """Whether a line is set in capitals."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(ch.isupper() for ch in letters) >= CAPITALS_SHARE * len(letters)


def _mark_table_cells(lines: list[Line], width: float) -> None:
    """Flag lines that share their row with a figure cell ("1,234", "$", "2022") or with two
    or more other short cells: a table row. A heading's number printed beside it is no cell.

    A heading level with the last words of paragraphs in other columns ("ing a separate
    return", "$100 or more") is not in a table: on a page set in two, three or more columns,
    only lines of the same text column count (:func:`_other_column`).
    """
    running = [line for line in lines if line.chars >= RUNNING_TEXT_CHARS]
    middle = width / 2
    spanning = sum(line.box[0] < middle < line.box[2] for line in running)
    left = sum(line.box[2] <= middle for line in running)
    right = sum(line.box[0] >= middle for line in running)
    # Running text in both halves and little across the middle: two columns. A statement's
    # long row labels, all in the left half, make no second column of its figures.
    two_columns = min(left, right) >= COLUMN_EVIDENCE and spanning < TWO_COLUMN_SHARE * len(running)
    by_top = sorted(lines, key=lambda line: line.box[1])
    row_cells: dict[int, list[Line]] = {id(line): [] for line in lines}
    for index, line in enumerate(by_top):
        for other in by_top[index + 1 :]:
            if other.box[1] >= line.box[3]:
                break  # sorted by top: no later line can share this row
            if not _same_row(line, other) or _overlap_x(line, other):
                continue
            if two_columns and (line.box[0] < middle) != (other.box[0] < middle):
                continue
            if _other_column(line, other, running):
                continue
            row_cells[id(line)].append(other)
            row_cells[id(other)].append(line)
    for line in lines:
        short = [
            o
            for o in row_cells[id(line)]
            if len(o.text.split()) <= TABLE_CELL_WORDS and not _number_beside(o, line)
        ]
        line.in_table = any(FIGURE_CELL.search(o.text) for o in short) or len(short) >= 2


def _number_beside(cell: Line, line: Line) -> bool:
    """A heading's number printed in a margin column left of its title ("A.1" beside
    "Accreditation of PIV Card Issuers"): no figure cell of a table row."""
    return cell.box[2] <= line.box[0] and bool(NUMBER_ONLY.match(cell.text.strip()))


def _other_column(a: Line, b: Line, running: list[Line]) -> bool:
    """Whether ``a`` and ``b`` sit in different text columns: lines of running text set across
    the left one stop before the right one begins, and lines set across the right one start
    after the left one ends. Running text above or below a table spans all of its cells, and a
    statement's long row labels have no running text beside them in the figures' columns."""
    left, right = (a, b) if a.box[0] <= b.box[0] else (b, a)
    left_centre = (left.box[0] + left.box[2]) / 2
    right_centre = (right.box[0] + right.box[2]) / 2
    left_column = sum(
        r.box[0] <= left_centre <= r.box[2] and r.box[2] <= right.box[0] for r in running
    )
    right_column = sum(
        r.box[0] <= right_centre <= r.box[2] and r.box[0] >= left.box[2] for r in running
    )
    return min(left_column, right_column) >= COLUMN_EVIDENCE


def _same_row(a: Line, b: Line) -> bool:
    top, bottom = max(a.box[1], b.box[1]), min(a.box[3], b.box[3])
    return bottom - top >= 0.5 * min(a.box[3] - a.box[1], b.box[3] - b.box[1])


def _overlap_x(a: Line, b: Line) -> bool:
    return min(a.box[2], b.box[2]) > max(a.box[0], b.box[0])


def _style_runs(lines: list[Line]) -> list[list[Line]]:
    """Split consecutive lines wherever size or weight changes, and between lines set side by
    side: cells of one table row ("TOTAL" | "369") are no title wrapped over lines. A heading's
    number printed beside its title ("A.1" | "Accreditation …") stays with it."""
    runs: list[list[Line]] = []
    for line in lines:
        previous = runs[-1][-1] if runs else None
        if previous is not None and same_style(previous, line) and _stacked(previous, line):
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


def _stacked(upper: Line, lower: Line) -> bool:
    """Whether ``lower`` continues ``upper`` under it (not beside it, not in another column)."""
    if NUMBER_ONLY.match(upper.text.strip()):
        return True
    return not _same_row(upper, lower) and _overlap_x(upper, lower)


def _line_record(page_no: int, raw: dict[str, Any], height: float, width: float) -> Line:
    """Collapse a PyMuPDF line's spans into text plus its dominant size, font and weight."""
    spans = [s for s in raw["spans"] if s["text"].strip()]
    text = " ".join(REVISION_DATE.sub(" ", " ".join(s["text"] for s in spans)).split())
    chars = sum(len(s["text"].strip()) for s in spans) or 1
    size = max((s["size"] for s in spans), default=0.0)
    bold_chars = sum(len(s["text"].strip()) for s in spans if _is_bold(s))
    italic_chars = sum(len(s["text"].strip()) for s in spans if s["flags"] & ITALIC_FLAG)
    fonts: Counter[str] = Counter()
    for span in spans:
        fonts[span.get("font", "")] += len(span["text"].strip())
    return Line(
        page=page_no,
        text=text,
        size=size,
        bold=bold_chars >= 0.8 * chars,
        y_frac=raw["bbox"][1] / height,
        block_lines=1,
        chars=chars,
        box=tuple(raw["bbox"]),
        font=fonts.most_common(1)[0][0] if fonts else "",
        italic=italic_chars >= 0.8 * chars,
        page_width=width,
    )


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & BOLD_FLAG) or bool(BOLD_FONT.search(span.get("font", "")))


def same_style(a: Line, b: Line) -> bool:
    """Same size (within 0.3 pt) and weight."""
    return abs(a.size - b.size) < 0.3 and a.bold == b.bold


def merge_lines(lines: list[Line]) -> Line:
    """One line from consecutive lines: texts joined, box united, the first line's style."""
    first = lines[0]
    return Line(
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
        in_table=any(x.in_table for x in lines),
        font=first.font,
        italic=first.italic,
        merged=sum(x.merged for x in lines),
        page_width=first.page_width,
    )


def body_line_height(lines: list[Line], body: float) -> float:
    """The median height of single body-size lines: the unit of vertical white space."""
    heights = [
        ln.box[3] - ln.box[1] for ln in lines if ln.merged == 1 and abs(ln.size - body) < 0.3
    ]
    return float(np.median(heights)) if heights else body * 1.2


def body_size(lines: list[Line]) -> float:
    """The font size carrying the most characters is the body size."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 1)] += line.chars
    return weights.most_common(1)[0][0] if weights else 10.0


def length_limits(text: str, chars: int, words: int) -> tuple[int, int]:
    """The most characters and words a heading may have: ``chars`` and ``words``, or more for a
    numbered title, which may run longer ("Strategic Goal 6: Provide leadership in …")."""
    if parse_numbering(clean_title(text)) is not None:
        return MAX_NUMBERED_HEADING_CHARS, MAX_NUMBERED_HEADING_WORDS
    return chars, words


def looks_like_heading(line: Line, body: float) -> bool:
    """The typographic rule: short, not sentence-like, and larger, bold or emphasised."""
    text = line.text
    longest, most_words = length_limits(text, MAX_HEADING_CHARS, MAX_HEADING_WORDS)
    if not 2 <= len(text) <= longest or len(text.split()) > most_words:
        return False
    if line.block_lines > MAX_MERGED_LINES or line.in_table or not any(c.isalpha() for c in text):
        return False
    if text.endswith((",", ";")) or (len(text.split()) > 8 and _sentence_end(line)):
        return False
    larger = line.size >= body + 0.8
    if larger and line.size < body * 3:
        return True
    return line.bold and line.size >= body * 0.85 and (line.block_lines == 1 or larger)


def _sentence_end(line: Line) -> bool:
    """A closing period marks a sentence, except after a form's item set in bold, whose
    official wording ends in one ("Item 5.02. Departure of Directors or Certain Officers; …
    Compensatory Arrangements of Certain Officers."). Other bold numbered lines ending in a
    period are mostly requirements and list items ("3.3.4 Alert in the event of …")."""
    if not line.text.endswith("."):
        return False
    numbering = parse_numbering(clean_title(line.text))
    return not (line.bold and numbering is not None and numbering.scheme == "item")
