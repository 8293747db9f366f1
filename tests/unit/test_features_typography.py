"""Typography features: size, weight and font against the document's own body text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pages import BODY, HEADING_FONT, body, features_by_text, pdf_lines


@pytest.fixture
def rows(tmp_path: Path) -> dict[str, dict[str, float]]:
    lines = pdf_lines(
        tmp_path / "t.pdf",
        [
            [("1 Introduction", 16, HEADING_FONT), *body(12)],
            [("Methods of Study", 12, HEADING_FONT), *body(12)],
        ],
    )
    return features_by_text(lines, 2)


def test_size_and_weight_are_relative_to_the_body(rows: dict[str, dict[str, float]]) -> None:
    heading, text = rows["1 Introduction"], rows[BODY]
    assert heading["size_ratio"] == pytest.approx(1.6) and text["size_ratio"] == 1.0
    assert heading["bold"] == 1.0 and text["bold"] == 0.0
    assert heading["body_font"] == 0.0 and text["body_font"] == 1.0
    assert heading["typographic_rule"] == 1.0 and text["typographic_rule"] == 0.0
    assert heading["size_vs_next"] == pytest.approx(6.0)


def test_a_font_used_only_for_headings_is_rare(rows: dict[str, dict[str, float]]) -> None:
    """Small capitals or a bold face kept for headings carry a small share of the text, even
    where the headings are set at the body's size."""
    assert rows["1 Introduction"]["font_char_share"] < 0.1 < 0.8 < rows[BODY]["font_char_share"]
    assert rows["1 Introduction"]["size_rank"] == 0.0  # nothing is set larger
    assert rows[BODY]["size_rank"] > 0.0
