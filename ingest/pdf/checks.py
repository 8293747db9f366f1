"""Cheap checks that turn unusable PDFs into clear one-line reasons before any parsing starts."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ingest.errors import BadInputError

PDF_MAGIC = b"%PDF-"
# A PDF (or a page) with fewer extractable characters than this has no usable text layer.
MIN_TEXT_CHARS = 40
OCR_OFF = "OCR is off (--ocr never): ingest with --ocr auto to read its pages with Tesseract"


def open_checked_pdf(path: Path, text_layer: bool = True) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise BadInputError saying exactly why it cannot be used.

    ``text_layer=False`` accepts a PDF without a text layer, for when OCR may still give its
    pages their text (``ingest.pdf.ocr``); its pages must still be readable."""
    if not path.is_file():
        raise BadInputError(f"not a file: {path}")
    head = _read_head(path)
    if not head:
        raise BadInputError("empty file (0 bytes)")
    if PDF_MAGIC not in head:
        raise BadInputError("not a PDF (no %PDF- header); only PDF and QASPER JSON are accepted")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise BadInputError(f"corrupt PDF, cannot be opened: {_first_line(exc)}") from exc
    if doc.needs_pass or doc.is_encrypted:
        doc.close()
        raise BadInputError("encrypted PDF: a password is required to read it")
    if doc.page_count == 0:
        doc.close()
        if not _has_eof_marker(path):
            raise BadInputError("corrupt or truncated PDF: no readable pages, no %%EOF marker")
        raise BadInputError("PDF has zero pages")
    try:
        if not has_text_layer(doc) and text_layer:
            raise no_text_layer(OCR_OFF)
    except BadInputError:
        doc.close()
        raise
    return doc


def _read_head(path: Path) -> bytes:
    """The first KiB, where the PDF header must appear."""
    with path.open("rb") as handle:
        return handle.read(1024)


def _has_eof_marker(path: Path) -> bool:
    """Complete PDFs end with %%EOF (possibly followed by a little padding)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 4096))
        return b"%%EOF" in handle.read()


def has_text_layer(doc: pymupdf.Document) -> bool:
    """Whether the pages hold a usable text layer (image-only, scanned PDFs would yield empty
    pages and useless trees); BadInputError when a page cannot be read."""
    chars = 0
    try:
        for page in doc.pages():
            chars += len(page.get_text("text").strip())
            if chars >= MIN_TEXT_CHARS:
                return True
    except Exception as exc:
        raise BadInputError(f"corrupt PDF, pages cannot be read: {_first_line(exc)}") from exc
    return False


def no_text_layer(remedy: str) -> BadInputError:
    """The refusal of a PDF without a text layer, ending with what to do about it."""
    return BadInputError(f"no text layer (scanned or image-only PDF); {remedy}")


def _first_line(exc: Exception) -> str:
    """Keep library error messages to one line."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
