"""Page layout for the contents parser: rows of cells, page-number cells and folios."""

from __future__ import annotations

from typing import Any

from ingest.structure.layout import Cell, Row, folio, page_layout, page_rows, split_page_number


def span(x0: float, y0: float, text: str, size: float = 10.0) -> dict[str, Any]:
    width = 0.5 * size * len(text)
    return {"bbox": (x0, y0, x0 + width, y0 + size), "text": text, "size": size}


def text_dict(*lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {"width": 600, "blocks": [{"type": 0, "lines": [{"spans": s} for s in lines]}]}


def cells(*texts: str) -> list[Cell]:
    return [Cell(x=100.0 * i, text=t) for i, t in enumerate(texts)]


def test_lines_on_one_baseline_form_a_row_and_far_apart_spans_are_cells() -> None:
    page = text_dict(
        [span(56, 100, "ITEM 1.")],
        [span(97, 101, "Business")],  # another line, same row, close: one cell
        [span(516, 100, "4")],
        [span(56, 130, "ITEM 1A.")],
    )
    rows = page_rows(3, page, 800)
    assert [[c["text"] for c in r["cells"]] for r in rows] == [
        ["ITEM 1. Business", "4"],
        ["ITEM 1A."],
    ]
    assert rows[0]["page"] == 3 and 0 < rows[0]["y"] < rows[1]["y"]


def test_page_numbers_are_split_from_titles_in_cells_and_after_dot_leaders() -> None:
    assert split_page_number(cells("Risk Factors", "12")) == (cells("Risk Factors"), "12")
    title, page = split_page_number([Cell(x=0, text="Introduction . . . . . . . xiv")])
    assert (title[0]["text"], page) == ("Introduction", "xiv")
    assert split_page_number(cells("Item 4", "Mine Safety")) == (
        cells("Item 4", "Mine Safety"),
        None,
    )
    assert split_page_number(cells("Financial statements", "F-3"))[1] == "F-3"


def _page(*texts: str) -> list[Row]:
    return [Row(page=1, y=0.1 * i, cells=[Cell(x=50, text=t)]) for i, t in enumerate(texts)]


def test_folios_are_read_from_the_last_or_first_row() -> None:
    assert folio(_page("PART I", "Body text of a page that is long enough", "- 12 -")) == "12"
    assert folio(_page("Body text", "2023 FORM 10-K 7")) == "7"
    assert folio(_page("86 NIKE, INC.", "Body text of the page goes on and on and on")) == "86"
    assert folio(_page("Body text", "Page 5 of 40")) == "5"
    assert folio(_page("Heading", "A last line of body text that is a sentence ending 3")) is None


def test_layout_keeps_rows_only_of_pages_that_may_list_contents() -> None:
    listing = text_dict(
        [span(250, 50, "Contents")],
        *[
            [span(72, 100 + 20 * i, f"Section {i}"), span(500, 100 + 20 * i, str(i + 1))]
            for i in range(4)
        ],
    )
    prose = text_dict([span(72, 100, "Just a paragraph of body text.")], [span(300, 760, "2")])
    layout = page_layout([(1, listing, 800), (2, prose, 800)], [None, None])
    assert {r["page"] for r in layout["rows"]} == {1}
    assert layout["folios"][1] == "2"
    assert layout["labels"] == [None, None]
