"""On real papers and a filing, the faster column finder returns pymupdf4llm's boxes on every
page, and the converted page text is the same as with pymupdf4llm's and PyMuPDF's own code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pymupdf
import pytest
from pymupdf4llm.helpers import multi_column, pymupdf_rag

from ingest import parse
from ingest.pdf import columns
from tests.conftest import PDF_DIR, SHARED_DATA, require_shared_data
from tests.pymupdf4llm_reference import pinned_rects, reference_conversion

pytestmark = pytest.mark.integration

PAPERS = [
    PDF_DIR / name
    for name in (
        "2023.eacl-main.121.pdf",
        "bunescu-acl07.pdf",
        "dyer12.pdf",
        "map-reduce.pdf",
        "mooney05.pdf",
        "regbi-interpretive-release.pdf",
    )
]
FILING = SHARED_DATA / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf"


def _copy_paths(paths: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Each finder widens the drawn rectangles it is given, so each gets its own."""
    if paths is None:
        return None
    return [dict(p, rect=pymupdf.Rect(p["rect"])) for p in paths]


@pytest.mark.parametrize("pdf", [*PAPERS, FILING], ids=lambda p: Path(p).name)
def test_every_page_gets_pymupdf4llms_column_boxes(
    pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_shared_data()
    mismatches: list[int] = []

    def both(page: pymupdf.Page, **options: Any) -> list[pymupdf.Rect]:
        mine = columns.column_boxes(page, **{**options, "paths": _copy_paths(options["paths"])})
        with pinned_rects(monkeypatch):
            theirs = multi_column.column_boxes(page, **options)
        if [tuple(r) for r in mine] != [tuple(r) for r in theirs]:
            mismatches.append(page.number + 1)
        return theirs

    monkeypatch.setattr(parse, "faster_pymupdf4llm", lambda: None)
    monkeypatch.setattr(pymupdf_rag, "column_boxes", both)
    with pymupdf.open(pdf) as doc:
        pages = parse._markdown_pages(doc, layout=False)
        assert len(pages) == doc.page_count
    assert mismatches == []


@pytest.mark.parametrize("pdf", [PAPERS[0], FILING], ids=lambda p: Path(p).name)
def test_page_text_is_unchanged(pdf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns, text lines, table characters and table cells all take the faster paths."""
    require_shared_data()
    with pymupdf.open(pdf) as doc:
        with reference_conversion(monkeypatch):
            expected = parse._markdown_pages(doc, layout=False)
        assert parse._markdown_pages(doc, layout=False) == expected
