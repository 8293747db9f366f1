"""What the line labeller sees of a line, as numbers: one module per kind of layout.

| module | kind of layout |
| --- | --- |
| ``typography`` | size, weight, font and style against the document's body text |
| ``wording`` | capitals, length, punctuation, digits, title-like wording |
| ``numbering`` | numbering scheme and depth, and the counts numbers belong to |
| ``position`` | indentation, centring, width, place on the page |
| ``wrapping`` | white space around a line, wrapped titles, continued sentences |
| ``repetition`` | running text: texts and styles repeated across pages |
| ``tables`` | table and statement rows, dense pages |
| ``contents`` | dot leaders and contents lists |

Every feature is relative to the document it comes from (``context.Body``), so a labeller
learned on some documents applies to others set in other fonts and sizes; each module keeps
its own constants and names its own features. :data:`FEATURES` is the order of the
labeller's columns (the model file records it), whichever module computes each.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ingest.structure.features import (
    contents,
    numbering,
    position,
    repetition,
    tables,
    typography,
    wording,
    wrapping,
)
from ingest.structure.features.context import Around, Body
from ingest.structure.typography import NUMBER_ONLY, Line, length_limits

MODULES = (typography, wording, numbering, position, wrapping, repetition, tables, contents)
FEATURES = (
    "size_ratio",
    "size_rank",
    "bold",
    "italic",
    "body_font",
    "upper_share",
    "capitalised_share",
    "words",
    "chars",
    "ends_period",
    "ends_colon",
    "ends_comma",
    "digit_share",
    "scheme",
    "numbering_depth",
    "indent",
    "centre_offset",
    "width_share",
    "y_frac",
    "gap_before",
    "gap_after",
    "merged_lines",
    "block_lines",
    "running_share",
    "in_table",
    "ends_with_page_number",
    "leader_dots",
    "next_starts_lower",
    "prev_same_style",
    "next_same_style",
    "style_char_share",
    "style_page_share",
    "font_char_share",
    "typographic_rule",
    "reads_like_title",
    "first_on_page",
    "line_position",
    "size_vs_previous",
    "size_vs_next",
    "page_density",
    "numbered_share_of_page",
    *numbering.SEQUENCE_FEATURES,
)
# Longer lines are never headings (a heading wrapped over three lines stays under these).
MAX_HEADING_LINE_CHARS = 200
MAX_HEADING_LINE_WORDS = 30


def feature_matrix(lines: list[Line], total_pages: int) -> np.ndarray:
    """One row of :data:`FEATURES` per line (float32), in the order of ``lines``."""
    rows = np.zeros((len(lines), len(FEATURES)), dtype=np.float32)
    if not lines:
        return rows
    body = Body.of(lines)
    measures = [module.measure(lines, total_pages, body) for module in MODULES]
    for index, around in _neighbourhoods(lines):
        values: dict[str, float] = {}
        for measure in measures:
            values.update(measure(lines[index], around))
        rows[index] = [values[name] for name in FEATURES]
    return rows


def _neighbourhoods(lines: list[Line]) -> list[tuple[int, Around]]:
    """Each line's index and its neighbours on its page, page by page."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for index, line in enumerate(lines):
        by_page[line.page].append(index)
    found = []
    for indices in by_page.values():
        last = len(indices) - 1
        for place, index in enumerate(indices):
            around = Around(
                index=index,
                previous=lines[indices[place - 1]] if place > 0 else None,
                following=lines[indices[place + 1]] if place < last else None,
                position=place / max(last, 1),
            )
            found.append((index, around))
    return found


def could_be_heading(line: Line) -> bool:
    """The hard exclusion before any scoring: a sentence-long line, or one without letters
    that is not a heading's number printed apart."""
    text = line.text
    if NUMBER_ONLY.match(text):
        return True
    longest, most_words = length_limits(text, MAX_HEADING_LINE_CHARS, MAX_HEADING_LINE_WORDS)
    return (
        len(text) <= longest
        and len(text.split()) <= most_words
        and any(ch.isalpha() for ch in text)
    )
