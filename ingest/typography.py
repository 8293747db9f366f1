"""Heading candidates from PDF typography: lines set larger or bolder than the body text.

pymupdf4llm's markdown only marks some headings with ``#``; the font sizes and weights PyMuPDF
reports are a steadier signal, so the parse step records candidate lines for the headings method.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pymupdf

from ingest.types import HeadingCandidate

MAX_HEADING_CHARS = 120
MAX_HEADING_WORDS = 16
BOLD_FLAG = 16
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


def heading_candidates(doc: pymupdf.Document) -> list[HeadingCandidate]:
    """Lines whose size, weight or numbering suggests a heading, in reading order."""
    lines = [line for page in doc.pages() for line in _page_lines(page)]
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


def _page_lines(page: pymupdf.Page) -> list[_Line]:
    """Lines of a page, with short same-style runs merged (wrapped or split headings).

    A heading often shares its text block with the paragraph it opens, so blocks are cut into
    runs of consecutive lines of one style; a run of up to three lines becomes one candidate.
    """
    height = page.rect.height or 1.0
    out: list[_Line] = []
    for block in page.get_text("dict")["blocks"]:
        if block.get("type") != 0:
            continue
        lines = [_line_record(page.number + 1, raw, height) for raw in block["lines"]]
        for run in _style_runs([line for line in lines if line.text]):
            if len(run) <= 3:
                out.append(_merge(run))
                continue
            for line in run:
                line.block_lines = len(run)
            out.extend(run)
    return out


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
    if line.block_lines > 3 or not any(ch.isalpha() for ch in text):
        return False
    if text.endswith((",", ";")) or (text.endswith(".") and len(text.split()) > 8):
        return False
    larger = line.size >= body + 0.8
    if larger and line.size < body * 3:
        return True
    return line.bold and line.size >= body * 0.85 and (line.block_lines == 1 or larger)
