"""Wrapping features: white space around a line, merged lines and continued sentences."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from evals.train_labeller import page_texts
from ingest.structure.features.wrapping import MAX_GAP_LINES
from ingest.structure.typography import document_lines
from tests.pages import BODY, features_by_text


def test_gaps_are_counted_in_body_lines_and_capped(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    for row in range(6):
        page.insert_text((72, 100 + 12 * row), BODY, fontsize=10, fontname="helv")
    page.insert_text((72, 220), "2 Methods", fontsize=14, fontname="hebo")
    page.insert_text((72, 240), "which continues the sentence begun above it", fontsize=10)
    doc.save(tmp_path / "g.pdf")
    rows = features_by_text(document_lines(page_texts(tmp_path / "g.pdf")), 1)
    heading = rows["2 Methods"]
    assert 2.0 < heading["gap_before"] < MAX_GAP_LINES  # white space of a few body lines
    assert heading["next_starts_lower"] == 1.0
    assert rows[BODY]["gap_before"] == MAX_GAP_LINES  # first line of its page
    assert heading["merged_lines"] == 1.0
