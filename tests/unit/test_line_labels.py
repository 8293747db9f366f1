"""Training labels: bookmarks mark headings, print conventions label every other line."""

from __future__ import annotations

from pathlib import Path

from evals.line_labels import heading_lines, line_labels
from ingest.structure.labeller import LABELS
from ingest.structure.typography import Line
from tests.pages import BODY, BODY_FONT, FOOTER, HEADING_FONT, pdf_lines


def _labelled(lines: list[Line], entries: list[dict[str, object]], pages: int) -> dict[str, str]:
    labels = line_labels(lines, entries, pages)
    return {line.text: LABELS[label] for line, label in zip(lines, labels, strict=True)}


def test_bookmarks_label_their_printed_lines(tmp_path: Path) -> None:
    lines = pdf_lines(
        tmp_path / "a.pdf",
        [
            [("1 Introduction", 16, HEADING_FONT), *[(BODY, 10, BODY_FONT)] * 12],
            [("2.1", 12, HEADING_FONT), ("Methods of Study", 12, HEADING_FONT)],
        ],
    )
    entries = [
        {"level": 1, "title": "1 Introduction", "start_page": 1},
        # Printed one page later than the bookmark says, with its number on a line of its own.
        {"level": 2, "title": "2.1 Methods of Study", "start_page": 1},
    ]
    found = heading_lines(lines, entries)
    taken = [line.text for line, heading in zip(lines, found, strict=True) if heading]
    assert taken == ["1 Introduction", "2.1", "Methods of Study"]


def test_figures_never_complete_a_title(tmp_path: Path) -> None:
    lines = pdf_lines(tmp_path / "t.pdf", [[("$", 10, BODY_FONT), ("Revenue", 12, HEADING_FONT)]])
    found = heading_lines(lines, [{"level": 1, "title": "Revenue", "start_page": 1}])
    assert [line.text for line, heading in zip(lines, found, strict=True) if heading] == ["Revenue"]


def test_every_other_line_takes_the_label_print_gives_it(tmp_path: Path) -> None:
    body = [(BODY, 10, BODY_FONT)] * 6
    lines = pdf_lines(
        tmp_path / "b.pdf",
        [
            [("A Report on Things", 20, HEADING_FONT), ("Jane Doe", 12, BODY_FONT)],
            [
                ("Contents", 14, HEADING_FONT),
                *[(f"Chapter title {n} ..... {n + 2}", 10, BODY_FONT) for n in range(1, 6)],
            ],
            [
                ("Introduction", 14, HEADING_FONT),
                *body,
                ("- first point of a list", 10, BODY_FONT),
                ("Figure 3: Revenue by year", 9, BODY_FONT),
                ("(b) second point of a list", 10, BODY_FONT),
            ],
            [("Methods", 14, HEADING_FONT), *body],
        ],
    )
    entries = [
        {"level": 1, "title": "Introduction", "start_page": 3},
        {"level": 1, "title": "Methods", "start_page": 4},
    ]
    labels = _labelled(lines, entries, 4)
    assert labels["Introduction"] == labels["Methods"] == "heading"
    assert labels["A Report on Things"] == labels["Jane Doe"] == "title_page"
    assert labels["Chapter title 2 ..... 4"] == "contents_entry"
    assert labels["Figure 3: Revenue by year"] == "caption"
    assert labels["- first point of a list"] == labels["(b) second point of a list"] == "list_item"
    assert labels[FOOTER] == "running"
    assert labels["3"] == "page_number"
    assert labels[BODY] == "body"


def test_a_first_page_after_the_first_heading_is_not_a_title_page(tmp_path: Path) -> None:
    lines = pdf_lines(
        tmp_path / "c.pdf",
        [[("Abstract", 14, HEADING_FONT), (BODY, 10, BODY_FONT)]],
        footer=False,
    )
    labels = _labelled(lines, [{"level": 1, "title": "Abstract", "start_page": 1}], 1)
    assert labels == {"Abstract": "heading", BODY: "body"}
