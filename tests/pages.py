"""Pages the tests build: PDFs of lines set in given sizes and fonts, read back as the parse
step reads them, and the features of their lines by text."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from evals.train_labeller import page_texts
from ingest.structure.features import FEATURES, feature_matrix
from ingest.structure.typography import Line, document_lines

HEADING_FONT, BODY_FONT = "hebo", "helv"  # PyMuPDF's built-in Helvetica Bold and Helvetica
BODY = "The quick brown fox jumps over the lazy dog while the text runs on and on."
FOOTER = "Annual Report of Things"
PageLines = list[tuple[str, float, str]]


def body(count: int) -> PageLines:
    return [(BODY, 10, BODY_FONT)] * count


def pdf_lines(path: Path, pages: list[PageLines], footer: bool = True) -> list[Line]:
    """The lines of a PDF whose pages hold (text, size, font) lines from the top, one under
    another, with a running footer and a folio at the bottom of each page."""
    doc = pymupdf.open()
    for number, lines in enumerate(pages, start=1):
        page = doc.new_page()
        y = 72.0
        for text, size, font in lines:
            page.insert_text((72, y), text, fontsize=size, fontname=font)
            y += size * 1.6
        if footer:
            page.insert_text((72, 800), FOOTER, fontsize=8, fontname=BODY_FONT)
            page.insert_text((500, 820), str(number), fontsize=8, fontname=BODY_FONT)
    doc.save(path)
    return document_lines(page_texts(path))


def features_by_text(lines: list[Line], total_pages: int) -> dict[str, dict[str, float]]:
    """Each line's features by name, keyed by its text (the first line of a repeated text)."""
    rows = feature_matrix(lines, total_pages)
    found: dict[str, dict[str, float]] = {}
    for line, row in zip(lines, rows.tolist(), strict=True):
        found.setdefault(line.text, dict(zip(FEATURES, row, strict=True)))
    return found
