"""pymupdf4llm's own column finder and line extractor, made deterministic, as the reference the
faster ones (``ingest.pdf.columns``, ``ingest.pdf.textlines``) are compared with.

pymupdf4llm caches which drawn box holds a text box under the text box's ``id()``; a rectangle
freed mid-page can hand its id to a new one, which then inherits a stale answer, so the
library's own output can change from one run to the next. Keeping every rectangle alive while
the reference runs removes that, and leaves the algorithm as written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymupdf
import pymupdf.table
import pytest
from pymupdf4llm.helpers import multi_column, pymupdf_rag
from pymupdf4llm.helpers.get_text_lines import get_raw_lines

from ingest import parse
from ingest.pdf import tablechars, textlines


@contextmanager
def pinned_rects(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every ``pymupdf.Rect`` made inside stays alive until the block ends."""
    kept: list[Any] = []
    original = pymupdf.Rect.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        kept.append(self)

    with monkeypatch.context() as patch:
        patch.setattr(pymupdf.Rect, "__init__", init)
        yield


@contextmanager
def reference_conversion(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``ingest.parse`` converting with pymupdf4llm's own functions (rectangles pinned)."""
    with monkeypatch.context() as patch, pinned_rects(monkeypatch):
        patch.setattr(parse, "faster_pymupdf4llm", lambda: None)
        patch.setattr(pymupdf_rag, "column_boxes", multi_column.column_boxes)
        patch.setattr(pymupdf_rag, "get_raw_lines", get_raw_lines)
        patch.setattr(pymupdf.table, "extract_cells", textlines.EXTRACT_CELLS)
        patch.setattr(pymupdf.table, "make_chars", tablechars.MAKE_CHARS)
        yield
