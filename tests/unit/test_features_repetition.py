"""Repetition features: texts and styles printed on many pages."""

from __future__ import annotations

from pathlib import Path

from tests.pages import FOOTER, HEADING_FONT, body, features_by_text, pdf_lines


def test_a_footer_on_every_page_is_running_text(tmp_path: Path) -> None:
    lines = pdf_lines(
        tmp_path / "r.pdf",
        [
            [("Introduction", 14, HEADING_FONT), *body(5)],
            [("Introduction", 14, HEADING_FONT), *body(5)],
            [("Methods", 14, HEADING_FONT), *body(5)],
            body(5),
        ],
    )
    rows = features_by_text(lines, 4)
    assert rows[FOOTER]["running_share"] == 1.0
    assert rows["Introduction"]["running_share"] == 0.5
    assert rows["Methods"]["running_share"] == 0.25
    assert rows["Methods"]["style_page_share"] == 0.75  # the heading style, on three pages
