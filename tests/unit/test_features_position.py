"""Position features: indentation from the body's margin, order and height on the page."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from evals.train_labeller import page_texts
from ingest.structure.typography import document_lines
from tests.pages import BODY, features_by_text


def test_indent_is_measured_from_the_body_margin(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((200, 60), "A Centred Title", fontsize=14, fontname="hebo")
    for row in range(10):
        page.insert_text((72, 100 + 14 * row), BODY, fontsize=10, fontname="helv")
    page.insert_text((108, 260), "Indented note text", fontsize=10, fontname="helv")
    doc.save(tmp_path / "p.pdf")
    rows = features_by_text(document_lines(page_texts(tmp_path / "p.pdf")), 1)
    assert rows[BODY]["indent"] == 0.0
    assert rows["Indented note text"]["indent"] == pytest.approx(36 / page.rect.width, abs=0.01)
    assert rows["A Centred Title"]["first_on_page"] == 1.0 and rows[BODY]["first_on_page"] == 0.0
    assert rows["A Centred Title"]["line_position"] == 0.0
    assert rows["Indented note text"]["line_position"] == 1.0
    assert rows["A Centred Title"]["y_frac"] < rows["Indented note text"]["y_frac"]
