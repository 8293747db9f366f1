"""Which lines are cells of a table row: text columns beside a heading are not cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pymupdf
import pytest

from ingest.structure.typography import Line, document_lines, page_lines

COLUMN_TEXT = "words of running text set in a narrow column"  # 44 characters


def _lines(path: Path, draw: list[tuple[float, float, str, str]]) -> list[Line]:
    """Lines of a one-page PDF holding (x, y, text, font) strings."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for x, y, text, font in draw:
        page.insert_text((x, y), text, fontsize=7, fontname=font)
    doc.save(path)
    with pymupdf.open(path) as pdf:
        first = pdf[0]
        return document_lines([(1, first.get_text("dict"), first.rect.height)])


def _text(lines: list[Line], text: str) -> Line:
    return next(line for line in lines if line.text == text)


def test_a_heading_in_the_third_of_three_columns_is_no_table_cell(tmp_path: Path) -> None:
    # Three columns of running text, 160 points wide, written column after column. Level
    # with the heading in the third: the short last lines of two paragraphs, one with a figure.
    ends = {40: "a separate return.", 230: "$100 or more."}
    draw: list[tuple[float, float, str, str]] = []
    for x in (40, 230, 420):
        draw += [(x, 100 + 10 * row, COLUMN_TEXT, "helv") for row in range(8)]
        draw.append((x, 190, ends.get(x, "Line 4"), "helv" if x in ends else "hebo"))
    draw += [(420, 200 + 10 * row, COLUMN_TEXT, "helv") for row in range(4)]
    lines = _lines(tmp_path / "columns.pdf", draw)
    assert not _text(lines, "Line 4").in_table


@pytest.mark.parametrize("with_paragraph", [True, False])
def test_a_statement_row_with_long_labels_stays_a_table_row(
    tmp_path: Path, with_paragraph: bool
) -> None:
    """With or without running text across the page: long row labels in the left half make no
    second text column of the figures."""
    labels = [
        "Net cash provided by operating activities of the company",
        "Net cash used in investing activities during the year",
        "Net cash used in financing activities during the year",
        "Effect of exchange rate changes on cash and equivalents",
        "Total",
    ]
    paragraph = ("The statements below are read together with the notes to them. " * 2).strip()
    draw = [(40, 80, paragraph, "helv"), (40, 88, paragraph, "helv")] if with_paragraph else []
    draw += [(40, 100 + 12 * row, label, "helv") for row, label in enumerate(labels)]
    draw += [(400, 100 + 12 * row, f"{1234 + row:,}", "helv") for row in range(len(labels))]
    lines = _lines(tmp_path / "statement.pdf", draw)
    assert _text(lines, "Total").in_table
    assert _text(lines, labels[0]).in_table


@pytest.mark.parametrize("number", ["A.1", "2-8.1", "2-11"])
def test_a_number_printed_beside_its_heading_is_no_figure_cell(tmp_path: Path, number: str) -> None:
    """Numbers of every scheme the numbering reads, chapter-section numbers of standards
    ("2-8.1 Closed-Circuit Television") included."""
    draw = [(100, 100, "Accreditation of Card Issuers", "hebo")]
    draw += [(100, 110 + 10 * row, COLUMN_TEXT, "helv") for row in range(4)]
    draw.append((40, 100, number, "hebo"))  # set apart, in the margin column
    lines = _lines(tmp_path / "appendix.pdf", draw)
    assert not _text(lines, "Accreditation of Card Issuers").in_table


def test_a_numbered_title_in_bold_capitals_over_many_lines_is_one_line(tmp_path: Path) -> None:
    title = [
        "STRATEGIC GOAL 6: PROVIDE",
        "LEADERSHIP IN HELPING AGENCIES",
        "CREATE INCLUSIVE WORK",
        "ENVIRONMENTS WHERE A DIVERSE",
        "FEDERAL WORKFORCE IS FULLY ENGAGED",
    ]
    draw = [(40, 100 + 10 * row, text, "hebo") for row, text in enumerate(title)]
    draw += [(40, 160 + 10 * row, COLUMN_TEXT, "helv") for row in range(4)]
    unnumbered = [text.replace("STRATEGIC GOAL 6: ", "") for text in title]
    draw += [(40, 220 + 10 * row, text, "hebo") for row, text in enumerate(unnumbered)]
    lines = _lines(tmp_path / "goal.pdf", draw)
    assert _text(lines, " ".join(title)).merged == len(title)
    assert sum(line.text in unnumbered for line in lines) == len(unnumbered)


def _raw_line(text: str, box: tuple[float, float, float, float]) -> dict[str, Any]:
    span = {"text": text, "size": 9.0, "flags": 16, "font": "Helvetica-Bold", "bbox": box}
    return {"spans": [span], "bbox": box, "dir": (1.0, 0.0)}


def test_cells_of_one_row_in_one_block_are_no_wrapped_title() -> None:
    block = {
        "type": 0,
        "lines": [
            _raw_line("U.S. RETAIL STORES", (56, 100, 118, 110)),
            _raw_line("NUMBER", (300, 100, 330, 110)),
            _raw_line("TOTAL", (56, 112, 84, 122)),
            _raw_line("369", (310, 112, 325, 122)),
        ],
    }
    wrapped = {
        "type": 0,
        "lines": [
            _raw_line("2.3", (56, 200, 70, 210)),  # a heading's number beside its title
            _raw_line("Significant Customer", (80, 200, 180, 210)),
        ],
    }
    lines = page_lines(1, {"width": 612, "blocks": [block, wrapped]}, 792)
    assert [line.text for line in lines] == [
        "U.S. RETAIL STORES",
        "NUMBER",
        "TOTAL",
        "369",
        "2.3 Significant Customer",
    ]
    assert _text(lines, "TOTAL").in_table
