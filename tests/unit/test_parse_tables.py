"""Table detection is skipped only on pages that cannot hold a ruled table, and the page text
is what one full pymupdf4llm conversion gives."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pymupdf4llm
import pytest

from ingest.parse import _markdown_pages, _page_texts, _to_markdown, may_hold_table
from ingest.pipeline import Job, default_workers, expected_cost


def _ruled_table(page: pymupdf.Page) -> None:
    """A 3 x 3 grid with a word in every cell."""
    for row in range(4):
        page.draw_line((72, 100 + 30 * row), (372, 100 + 30 * row))
    for column in range(4):
        page.draw_line((72 + 100 * column, 100), (72 + 100 * column, 190))
    for row in range(3):
        for column in range(3):
            page.insert_text((80 + 100 * column, 120 + 30 * row), f"cell{row}{column}")


@pytest.fixture()
def pdf(tmp_path: Path) -> Path:
    doc = pymupdf.open()
    prose = doc.new_page()
    prose.insert_text((72, 100), "A page of prose with one rule under its title.", fontsize=14)
    prose.draw_line((72, 105), (400, 105))
    _ruled_table(doc.new_page())
    doc.new_page().insert_text((72, 100), "No graphics at all.")
    path = tmp_path / "mixed.pdf"
    doc.save(path)
    return path


def test_only_the_gridded_page_may_hold_a_table(pdf: Path) -> None:
    with pymupdf.open(pdf) as doc:
        assert [may_hold_table(page) for page in doc] == [False, True, False]


def test_pages_match_one_full_conversion(pdf: Path) -> None:
    pymupdf4llm.use_layout(False)
    with pymupdf.open(pdf) as doc:
        full = _page_texts(doc, _to_markdown(doc))
    with pymupdf.open(pdf) as doc:
        split = _markdown_pages(doc, layout=False)
    assert split == full
    assert "cell11" in split[1] and "|" in split[1]  # the grid still comes out as a table


def test_largest_files_first_and_one_worker_per_core(pdf: Path, tmp_path: Path) -> None:
    small = tmp_path / "small.pdf"
    small.write_bytes(b"%PDF-1.4\n")
    jobs = [Job(str(small), {}), Job(f"{pdf}#paper", {}), Job(str(tmp_path / "gone.pdf"), {})]
    assert [Path(job.source).name for job in sorted(jobs, key=expected_cost, reverse=True)] == [
        "mixed.pdf#paper",
        "small.pdf",
        "gone.pdf",
    ]
    assert default_workers() >= 1
