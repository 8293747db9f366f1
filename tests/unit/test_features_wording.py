"""Wording features: capitals, length, punctuation, digits and title-like wording."""

from __future__ import annotations

from pathlib import Path

from tests.pages import BODY_FONT, HEADING_FONT, body, features_by_text, pdf_lines


def test_capitals_punctuation_and_captions(tmp_path: Path) -> None:
    lines = pdf_lines(
        tmp_path / "w.pdf",
        [
            [
                ("RISK FACTORS", 12, HEADING_FONT),
                *body(4),
                ("Figure 3: Revenue by year", 9, BODY_FONT),
                *body(4),
                ("Net sales were as follows:", 12, HEADING_FONT),
            ]
        ],
    )
    rows = features_by_text(lines, 1)
    assert rows["RISK FACTORS"]["upper_share"] == 1.0 and rows["RISK FACTORS"]["words"] == 2.0
    assert rows["RISK FACTORS"]["reads_like_title"] == 1.0
    assert rows["Figure 3: Revenue by year"]["reads_like_title"] == 0.0
    assert rows["Figure 3: Revenue by year"]["digit_share"] > 0.0
    assert rows["Net sales were as follows:"]["ends_colon"] == 1.0
