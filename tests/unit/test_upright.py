"""Pages turned a quarter are read in the frame their text runs in: a slide printed sideways
keeps its title at the top and its lines out of any table row."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from evals.train_labeller import page_texts
from ingest.pdf.upright import DOWN, LEFT, RIGHT, UP, main_direction, upright
from ingest.structure.typography import body_size, document_lines, looks_like_heading

TITLE = "Basic Building Blocks of C"
BODY = ["source code written by the programmer", "compiler translates it into an object file"]


def _sideways_slide(path: Path, turn: int) -> None:
    """A landscape slide (title, then body lines, then a footer) printed turned by ``turn``
    degrees on a portrait page, as slide handouts and landscape tables are."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    lines = [(TITLE, 28.0), *[(text, 20.0) for text in BODY * 3], ("Lecture 1 – p.7/20", 8.0)]
    step = 0.0
    for text, size in lines:
        step += size * 1.6
        # Turned 90°, text runs up the page and later lines stand further right; turned 270°,
        # it runs down and they stand further left.
        point = pymupdf.Point(40 + step, 780) if turn == 90 else pymupdf.Point(555 - step, 60)
        page.insert_text(point, text, fontsize=size, fontname="helv", rotate=turn)
    doc.save(path)


@pytest.mark.parametrize("turn", [90, 270])
def test_a_slide_printed_sideways_keeps_its_title_at_the_top_and_out_of_table_rows(
    tmp_path: Path, turn: int
) -> None:
    _sideways_slide(tmp_path / "s.pdf", turn)
    lines = document_lines(page_texts(tmp_path / "s.pdf"))
    title = next(line for line in lines if line.text == TITLE)
    assert not any(line.in_table for line in lines)
    assert title.y_frac < 0.2
    assert title.box[2] - title.box[0] > title.box[3] - title.box[1]  # wide, not tall
    assert looks_like_heading(title, body_size(lines))


def test_the_direction_most_characters_run_in_decides_the_frame() -> None:
    def page(*dirs: tuple[float, float]) -> dict[str, object]:
        spans = [{"text": "x" * 10, "bbox": (0, 0, 1, 1), "origin": (0, 1)}]
        lines = [{"dir": d, "bbox": (0, 0, 1, 1), "spans": spans} for d in dirs]
        return {
            "width": 100.0,
            "height": 200.0,
            "blocks": [{"type": 0, "bbox": (0, 0, 1, 1), "lines": lines}],
        }

    assert main_direction(page((1.0, 0.0), (0.0, -1.0), (0.0, -1.0))) == UP
    assert main_direction(page((0.0, 1.0))) == DOWN
    assert main_direction(page((-1.0, 0.0))) == LEFT
    assert main_direction(page((0.7, 0.7))) == RIGHT  # slanted text turns nothing
    upright_page = page((1.0, 0.0))
    assert upright(upright_page) is upright_page
    turned = upright(page((0.0, -1.0)))
    assert (turned["width"], turned["height"]) == (200.0, 100.0)
