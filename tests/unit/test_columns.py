"""The faster column finder and line extractor give pymupdf4llm's own results, on synthetic
pages that exercise each rule: two columns, text on a shaded box, vertical text, a ruled table,
repeated and aligned blocks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pymupdf
import pymupdf.table
import pytest
from pymupdf4llm.helpers import multi_column
from pymupdf4llm.helpers.get_text_lines import get_raw_lines

from ingest import parse
from ingest.pdf import tablechars
from ingest.pdf.columns import Box, column_boxes
from ingest.pdf.textlines import raw_lines
from tests.pymupdf4llm_reference import pinned_rects, reference_conversion

WORDS = ("structural", "retrieval", "reads", "the", "section", "tree", "opens", "a", "page")


def _paragraph(seed: int, words: int = 40) -> str:
    return " ".join(WORDS[(seed + i * 7) % len(WORDS)] for i in range(words))


def _two_columns(page: pymupdf.Page) -> None:
    page.insert_textbox(pymupdf.Rect(50, 60, 550, 90), "A Title Across Both Columns", fontsize=16)
    for column, x0 in enumerate((50, 310)):
        for block in range(4):
            top = 110 + block * 150
            rect = pymupdf.Rect(x0, top, x0 + 240, top + 130)
            page.insert_textbox(rect, _paragraph(column * 10 + block), fontsize=10)


def _shaded_box(page: pymupdf.Page) -> None:
    page.draw_rect(pymupdf.Rect(60, 300, 540, 420), color=(0, 0, 0), fill=(0.9, 0.9, 0.9))
    page.insert_textbox(pymupdf.Rect(70, 310, 530, 410), _paragraph(3, 60), fontsize=10)
    page.insert_textbox(pymupdf.Rect(50, 100, 550, 280), _paragraph(5, 80), fontsize=10)
    page.insert_textbox(pymupdf.Rect(50, 440, 550, 700), _paragraph(8, 90), fontsize=10)
    page.draw_line(pymupdf.Point(50, 290), pymupdf.Point(550, 290), width=2)


def _vertical_and_table(page: pymupdf.Page) -> None:
    page.insert_text(pymupdf.Point(30, 600), "Rotated margin note", rotate=90, fontsize=9)
    page.insert_textbox(pymupdf.Rect(60, 80, 540, 250), _paragraph(1, 70), fontsize=10)
    for row in range(4):
        for col in range(3):
            cell = pymupdf.Rect(100 + col * 120, 300 + row * 25, 220 + col * 120, 325 + row * 25)
            page.draw_rect(cell, color=(0, 0, 0), width=0.5)
            page.insert_textbox(
                pymupdf.Rect(cell.x0 + 4, cell.y0 + 4, cell.x1 - 4, cell.y1 - 4),
                f"r{row} c{col}",
                fontsize=9,
                fontname="hebo" if col == 1 else "helv",  # a bold column: styled cells
            )
    page.insert_textbox(pymupdf.Rect(60, 450, 300, 700), _paragraph(2, 50), fontsize=10)
    page.insert_textbox(pymupdf.Rect(60, 450, 300, 700), _paragraph(2, 50), fontsize=10)
    page.insert_textbox(pymupdf.Rect(320, 452, 540, 700), _paragraph(4, 45), fontsize=10)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> pymupdf.Document:
    doc = pymupdf.open()
    for draw in (_two_columns, _shaded_box, _vertical_and_table):
        draw(doc.new_page(width=600, height=800))
    path = Path(tmp_path_factory.mktemp("columns")) / "synthetic.pdf"
    doc.save(path)
    return pymupdf.open(path)


def _boxes(found: list[pymupdf.Rect]) -> list[tuple[float, ...]]:
    return [tuple(rect) for rect in found]


@pytest.mark.parametrize("number", [0, 1, 2])
@pytest.mark.parametrize("ignore_images", [True, False])
def test_column_boxes_match_pymupdf4llm(
    document: pymupdf.Document, number: int, ignore_images: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = document[number]
    textpage = page.get_textpage(flags=pymupdf.TEXT_ACCURATE_BBOXES)

    def paths() -> list[dict[str, object]]:  # each finder widens the rectangles it is given
        return [p for p in page.get_drawings() if p["rect"].width < page.rect.width]

    options = {"textpage": textpage, "ignore_images": ignore_images, "footer_margin": 20}
    with pinned_rects(monkeypatch):
        expected = multi_column.column_boxes(page, paths=paths(), **options)
    found = column_boxes(page, paths=paths(), **options)
    assert _boxes(found) == _boxes(expected)
    assert len(found) >= 2


def test_drawn_lines_are_widened_in_the_callers_paths(document: pymupdf.Document) -> None:
    page = document[1]
    paths = [p for p in page.get_drawings() if p["rect"].height == 0]
    assert paths, "the page draws a hairline"
    column_boxes(page, paths=paths)
    assert all(p["rect"].height == 2 for p in paths)  # half the line width on each side


def test_page_text_matches_pymupdf4llm(
    document: pymupdf.Document, monkeypatch: pytest.MonkeyPatch
) -> None:
    with reference_conversion(monkeypatch):
        expected = parse._markdown_pages(document, layout=False)
    assert parse._markdown_pages(document, layout=False) == expected
    assert (
        "|r1 c0|**r1 c1**|r1 c2|" in expected[2]
        and "|r3 c0|" in expected[2]
        and "Title Across" in expected[0]
    )


def test_raw_lines_match_and_leave_the_next_call_unchanged(document: pymupdf.Document) -> None:
    page = document[0]
    textpage = page.get_textpage()
    clips = [None, pymupdf.Rect(40, 100, 300, 800), pymupdf.Rect(300, 100, 560, 800)]
    for clip in clips * 2:  # a second round would see edits of the first if spans were shared
        assert _lines(raw_lines(textpage, clip=clip)) == _lines(get_raw_lines(textpage, clip=clip))


def _lines(lines: list[list[object]]) -> list[tuple[object, ...]]:
    return [
        (tuple(rect), tuple((span["text"], tuple(span["bbox"])) for span in spans))  # type: ignore[index]
        for rect, spans in lines  # type: ignore[misc]
    ]


def test_box_follows_rect_semantics() -> None:
    empty = Box(*pymupdf.EMPTY_RECT())
    line = Box(10, 10, 20, 20)
    assert empty.union(line).key == line.key == line.union(empty).key
    assert Box(0, 0, 30, 30).contains(line) and not line.contains(Box(0, 0, 30, 30))
    assert not Box(0, 0, 10, 10).intersects(Box(10, 0, 20, 10))  # a shared edge is no area
    assert Box(0, 0, 10, 10).touches(Box(10, 0, 20, 10))
    assert Box(*pymupdf.INFINITE_RECT()).union(line).infinite


@pytest.mark.parametrize("rotation", [0, 90])
def test_table_character_records_match_pymupdf(
    document: pymupdf.Document, rotation: int, tmp_path: Path
) -> None:
    doc = pymupdf.open()
    doc.insert_pdf(document, from_page=2, to_page=2)
    doc[0].set_rotation(rotation)  # a rotated page keeps PyMuPDF's own function
    path = tmp_path / "table.pdf"
    doc.save(path)
    page = pymupdf.open(path)[0]
    records = pymupdf.table.CHARS._list()

    def made(function: Callable[..., object]) -> list[dict[str, object]]:
        records.clear()
        function(page, clip=page.rect)
        made, records[:] = list(records), []
        return made

    expected = made(tablechars.MAKE_CHARS)
    assert made(tablechars.make_chars) == expected
    assert len(expected) > 500 and {"r", "c"} <= {r["text"] for r in expected}
