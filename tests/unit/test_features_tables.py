"""Table features: lines in table rows and dense pages."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from evals.train_labeller import page_texts
from ingest.structure.typography import document_lines
from tests.pages import BODY, features_by_text


def test_table_rows_and_page_density(tmp_path: Path) -> None:
    doc = pymupdf.open()
    sparse = doc.new_page()
    sparse.insert_text((72, 100), BODY, fontsize=10, fontname="helv")
    dense = doc.new_page()
    for row, (label, figure) in enumerate([("Net sales", "1,234"), ("Cost of sales", "567")]):
        dense.insert_text((72, 100 + 14 * row), label, fontsize=10, fontname="helv")
        dense.insert_text((400, 100 + 14 * row), figure, fontsize=10, fontname="helv")
    for row in range(20):
        dense.insert_text((72, 200 + 12 * row), BODY, fontsize=10, fontname="helv")
    doc.save(tmp_path / "t.pdf")
    lines = document_lines(page_texts(tmp_path / "t.pdf"))
    rows = features_by_text(lines, 2)
    assert rows["Net sales"]["in_table"] == 1.0 and rows[BODY]["in_table"] == 0.0
    first_page = next(i for i, line in enumerate(lines) if line.page == 1)
    assert features_by_text(lines[first_page : first_page + 1], 2)[BODY]["page_density"] == 1.0
    assert rows["Net sales"]["page_density"] > 1.0  # the denser of the two pages
