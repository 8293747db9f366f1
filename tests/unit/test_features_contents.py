"""Contents features: rows ending in page numbers, dot leaders, contents-like pages."""

from __future__ import annotations

from pathlib import Path

from ingest.structure.features.contents import ends_with_page_number, has_leader
from tests.pages import BODY_FONT, HEADING_FONT, body, features_by_text, pdf_lines


def test_contents_rows_and_their_page(tmp_path: Path) -> None:
    lines = pdf_lines(
        tmp_path / "c.pdf",
        [
            [("Contents", 14, HEADING_FONT), ("Risk Factors ........ 12", 10, BODY_FONT)],
            [("Risk Factors", 14, HEADING_FONT), *body(6)],
        ],
        footer=False,
    )
    rows = features_by_text(lines, 2)
    row = rows["Risk Factors ........ 12"]
    assert row["ends_with_page_number"] == 1.0 and row["leader_dots"] == 1.0
    assert row["numbered_share_of_page"] == 0.5  # one of the page's two lines
    assert rows["Risk Factors"]["numbered_share_of_page"] == 0.0


def test_what_counts_as_a_contents_row() -> None:
    assert ends_with_page_number("Management's Discussion 45")
    assert ends_with_page_number("Appendix xiv") and not ends_with_page_number("45")
    assert not ends_with_page_number("2023 results")  # a number first is no title
    assert has_leader("Scope . . . . 3") and not has_leader("See note 3.")
