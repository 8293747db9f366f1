"""Numbering sequences: a numbered line belongs to a count the document keeps, or does not."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from ingest.structure.features import FEATURES, feature_matrix
from ingest.structure.features.numbering import (
    SEQUENCE_FEATURES,
    predecessors,
    sequence_features,
    sequence_key,
)
from ingest.structure.typography import Line

BODY = "The text of the section runs on for a while and says what it has to say."


def _lines(texts: list[str]) -> list[Line]:
    return [
        Line(page=1 + i // 40, text=text, size=10, bold=False, y_frac=0.5, block_lines=1, chars=9)
        for i, text in enumerate(texts)
    ]


def test_keys_name_the_count_and_the_number() -> None:
    assert sequence_key("2.1 Methods of study") == ("arabic:2", (2, 1))
    assert sequence_key("AC-3 ACCESS ENFORCEMENT") == ("id:AC", (3,))
    assert sequence_key("Strategic Goal 2: Health") == ("labelledstrategic:1", (2,))
    assert sequence_key("IV. Results") is None  # no digits to count with
    assert sequence_key(BODY) is None


def test_a_first_child_follows_its_parent() -> None:
    assert predecessors(("arabic:2", (2, 1))) == [("arabic:1", (2,))]
    assert predecessors(("arabic:2", (2, 3))) == [("arabic:2", (2, 2))]
    assert predecessors(("arabic:1", (1,))) == []


def test_section_numbers_pages_apart_have_both_neighbours() -> None:
    texts = ["1. Introduction", *[BODY] * 60, "2. Methods", *[BODY] * 60, "3. Results", BODY]
    rows = sequence_features(_lines(texts))
    first, second, third = 0, 61, 122
    assert rows[first, :2].tolist() == [1.0, 0.0]  # a successor, no predecessor
    assert rows[second, 0] == 2.0 and rows[second, 1] == pytest.approx(math.log1p(61))
    assert rows[third, 0] == 1.0  # the count ends here
    assert rows[1, :2].tolist() == [0.0, 0.0]  # body text counts nothing


def test_a_lone_number_belongs_to_no_count() -> None:
    rows = sequence_features(_lines([BODY, "7. Other business of the meeting", BODY]))
    assert rows[1, :2].tolist() == [0.0, 0.0]


def test_list_items_count_lines_apart() -> None:
    rows = sequence_features(_lines(["1. First item", "2. Second item", "3. Third item"]))
    assert rows[1, 1] == pytest.approx(math.log1p(1))  # the predecessor is the line before


def test_the_labeller_sees_the_sequence_features() -> None:
    texts = ["1. Introduction", *[BODY] * 50, "2. Methods", BODY]
    matrix = feature_matrix(_lines(texts), 2)
    columns = [FEATURES.index(name) for name in SEQUENCE_FEATURES]
    assert matrix[51, columns[:2]].tolist() == pytest.approx([1.0, math.log1p(51)])


def test_a_heading_font_is_known_by_the_counts_set_in_it() -> None:
    """Small capitals at body size: the font's numbered lines keep a count, so its unnumbered
    heading ("References") shares the cue; the body font's lone numbered sentence does not."""
    lines = _lines(
        ["1. Introduction", *[BODY] * 30, "2. Methods", *[BODY] * 30, "3. Results", "References"]
    )
    for index in (0, 31, 62, 63):
        lines[index] = replace(lines[index], font="CMCSC10")
    share = sequence_features(lines)[:, 2]
    assert share[63] == pytest.approx(3 / 5)  # three of four lines in the font, plus one
    assert share[1] == 0.0
