"""The feature table: every feature computed by exactly one layout module, in the model's order."""

from __future__ import annotations

from pathlib import Path

from ingest.structure.features import FEATURES, MODULES, feature_matrix
from ingest.structure.features.context import Around, Body
from tests.pages import HEADING_FONT, body, pdf_lines


def test_every_feature_comes_from_exactly_one_module(tmp_path: Path) -> None:
    lines = pdf_lines(tmp_path / "a.pdf", [[("1 Introduction", 16, HEADING_FONT), *body(3)]])
    around = Around(index=0, previous=None, following=lines[1], position=0.0)
    named = [
        name
        for module in MODULES
        for name in module.measure(lines, 1, Body.of(lines))(lines[0], around)
    ]
    assert sorted(named) == sorted(FEATURES) and len(set(named)) == len(named)


def test_one_row_per_line_and_none_for_an_empty_document(tmp_path: Path) -> None:
    lines = pdf_lines(tmp_path / "a.pdf", [[("1 Introduction", 16, HEADING_FONT), *body(3)]])
    assert feature_matrix(lines, 1).shape == (len(lines), len(FEATURES))
    assert feature_matrix([], 0).shape == (0, len(FEATURES))
