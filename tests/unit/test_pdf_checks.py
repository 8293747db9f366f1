"""Unusable PDFs become BadInputError with a one-line reason."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from ingest.errors import BadInputError, IngestError
from ingest.pdf.checks import open_checked_pdf

TEXT = "This page has a real text layer with more than enough characters to count."


def text_pdf(path: Path, text: str = TEXT) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), text)
    doc.save(path)
    doc.close()
    return path


def reason(path: Path) -> str:
    with pytest.raises(BadInputError) as caught:
        open_checked_pdf(path)
    assert isinstance(caught.value, IngestError)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_good_pdf_opens(tmp_path: Path) -> None:
    doc = open_checked_pdf(text_pdf(tmp_path / "good.pdf"))
    try:
        assert doc.page_count == 1
        assert TEXT in doc[0].get_text("text")
    finally:
        doc.close()


def test_missing_file(tmp_path: Path) -> None:
    assert reason(tmp_path / "missing.pdf").startswith("not a file:")


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder.pdf"
    folder.mkdir()
    assert reason(folder).startswith("not a file:")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    assert reason(path) == "empty file (0 bytes)"


def test_non_pdf_renamed_to_pdf(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_text("Just some notes, definitely not a PDF document.", encoding="utf-8")
    assert reason(path).startswith("not a PDF (no %PDF- header)")


@pytest.mark.parametrize("keep", ["half", "header"])
def test_truncated_pdf_is_corrupt(tmp_path: Path, keep: str) -> None:
    data = text_pdf(tmp_path / "good.pdf").read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2] if keep == "half" else data[:60])
    assert reason(path).startswith("corrupt PDF")


def test_garbage_after_header_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 4)
    assert reason(path).startswith("corrupt PDF, cannot be opened")


def test_encrypted_pdf(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), TEXT)
    path = tmp_path / "secret.pdf"
    aes = pymupdf.PDF_ENCRYPT_AES_256  # type: ignore[attr-defined]
    doc.save(path, encryption=aes, user_pw="x", owner_pw="y")
    doc.close()
    assert reason(path) == "encrypted PDF: a password is required to read it"


def test_pdf_with_zero_pages(tmp_path: Path) -> None:
    path = tmp_path / "zero.pdf"
    path.write_bytes(
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    )
    assert reason(path) == "PDF has zero pages"


def test_drawing_only_pdf_has_no_text_layer(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(10, 10, 100, 100), color=(0, 0, 0), fill=(1, 0, 0))
    path = tmp_path / "drawing.pdf"
    doc.save(path)
    doc.close()
    assert reason(path).startswith("no text layer (scanned or image-only PDF)")


def test_image_only_pdf_has_no_text_layer(tmp_path: Path) -> None:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 20, 20), False)
    pix.clear_with(128)
    doc = pymupdf.open()
    doc.new_page().insert_image(pymupdf.Rect(50, 50, 150, 150), pixmap=pix)
    path = tmp_path / "scan.pdf"
    doc.save(path)
    doc.close()
    assert "OCR" in reason(path)


def test_too_little_text_counts_as_no_text_layer(tmp_path: Path) -> None:
    path = text_pdf(tmp_path / "tiny.pdf", text="Page 1")
    assert reason(path).startswith("no text layer")
