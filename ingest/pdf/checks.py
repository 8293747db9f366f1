"""Cheap checks that turn unusable PDFs into clear one-line reasons before any parsing starts."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ingest.errors import BadInputError

PDF_MAGIC = b"%PDF-"
# A PDF with fewer extractable characters than this has no usable text layer.
MIN_TEXT_CHARS = 40


def open_checked_pdf(path: Path) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise BadInputError saying exactly why it cannot be used."""
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
    _require_text_layer(doc)
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


def _require_text_layer(doc: pymupdf.Document) -> None:
    """Reject image-only (scanned) PDFs, which would yield empty pages and useless trees."""
    chars = 0
    try:
        for page in doc.pages():
            chars += len(page.get_text("text").strip())
            if chars >= MIN_TEXT_CHARS:
                return
    except Exception as exc:
        doc.close()
        raise BadInputError(f"corrupt PDF, pages cannot be read: {_first_line(exc)}") from exc
    doc.close()
    raise BadInputError(
        "no text layer (scanned or image-only PDF); OCR is not enabled, run OCR first"
    )


def _first_line(exc: Exception) -> str:
    """Keep library error messages to one line."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
