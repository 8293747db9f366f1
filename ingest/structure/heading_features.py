"""What the heading model sees of a line: typography, position, wording and context, as numbers.

Each feature is relative to the document it comes from (size against the body text, position
against the body's left margin, style frequency across pages), so that a model learned on some
documents applies to others set in other fonts and sizes. The rules used before the model
(the typographic rule, title-like wording, running headers, table cells, contents rows) are
features too; the hard exclusions stay in ``ingest.structure.headings``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from ingest.structure.headings import reads_like_title, running_key
from ingest.structure.layout import PAGE_TOKEN
from ingest.structure.numbering import clean_title, parse_numbering
from ingest.structure.sequences import SEQUENCE_FEATURES, sequence_features
from ingest.structure.typography import (
    NUMBER_ONLY,
    Line,
    body_line_height,
    body_size,
    length_limits,
    looks_like_heading,
    same_style,
)

SCHEMES = (
    "part",
    "item",
    "note",
    "chapter",
    "roman",
    "letter",
    "appendix",
    "arabic",
    "sub",
    "labelled",
)
# A gap wider than this many body lines (or none: first line of a page) counts as this.
MAX_GAP_LINES = 10.0
# Longer lines are never headings (a heading wrapped over three lines stays under these).
MAX_HEADING_LINE_CHARS = 200
MAX_HEADING_LINE_WORDS = 30
LEADER = re.compile(r"(?:[.·…_]\s*){4,}")
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
    *SEQUENCE_FEATURES,
)


@dataclass(frozen=True)
class _DocumentStats:
    """What every line is measured against: the body text and the styles of the document."""

    body: float
    body_font: str
    body_left: float
    line_height: float
    larger_chars: dict[float, float]
    style_chars: dict[tuple[float, bool], float]
    style_pages: dict[tuple[float, bool], float]
    font_chars: dict[str, float]
    running: dict[str, float]
    page_chars: dict[int, int]
    median_page_chars: float
    numbered_rows: dict[int, float]


def feature_matrix(lines: list[Line], total_pages: int) -> np.ndarray:
    """One row of :data:`FEATURES` per line (float32), in the order of ``lines``."""
    if not lines:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    stats = _document_stats(lines, total_pages)
    by_page: dict[int, list[int]] = defaultdict(list)
    for index, line in enumerate(lines):
        by_page[line.page].append(index)
    rows = np.zeros((len(lines), len(FEATURES)), dtype=np.float32)
    for indices in by_page.values():
        for position, index in enumerate(indices):
            previous = lines[indices[position - 1]] if position > 0 else None
            following = lines[indices[position + 1]] if position + 1 < len(indices) else None
            rows[index, : len(FEATURES) - len(SEQUENCE_FEATURES)] = _features(
                lines[index], previous, following, position / max(len(indices) - 1, 1), stats
            )
    rows[:, len(FEATURES) - len(SEQUENCE_FEATURES) :] = sequence_features(lines)
    return rows


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


def _document_stats(lines: list[Line], total_pages: int) -> _DocumentStats:
    body = body_size(lines)
    fonts: Counter[str] = Counter()
    lefts: Counter[float] = Counter()
    sizes: Counter[float] = Counter()
    styles: Counter[tuple[float, bool]] = Counter()
    style_pages: dict[tuple[float, bool], set[int]] = defaultdict(set)
    all_fonts: Counter[str] = Counter()
    keys: dict[str, set[int]] = defaultdict(set)
    page_chars: Counter[int] = Counter()
    numbered: Counter[int] = Counter()
    rows_per_page: Counter[int] = Counter()
    for line in lines:
        style = (round(line.size, 1), line.bold)
        sizes[round(line.size, 1)] += line.chars
        styles[style] += line.chars
        style_pages[style].add(line.page)
        all_fonts[line.font] += line.chars
        keys[running_key(line.text)].add(line.page)
        page_chars[line.page] += line.chars
        rows_per_page[line.page] += 1
        numbered[line.page] += int(_ends_with_page_number(line.text))
        if abs(line.size - body) < 0.3:
            fonts[line.font] += line.chars
            lefts[round(line.box[0])] += line.chars
    total_chars = sum(sizes.values()) or 1
    larger = {
        size: sum(c for s, c in sizes.items() if s > size + 0.25) / total_chars for size in sizes
    }
    pages = max(total_pages, 1)
    return _DocumentStats(
        body=body,
        body_font=fonts.most_common(1)[0][0] if fonts else "",
        body_left=float(lefts.most_common(1)[0][0]) if lefts else 0.0,
        line_height=body_line_height(lines, body),
        larger_chars=larger,
        style_chars={style: chars / total_chars for style, chars in styles.items()},
        style_pages={style: len(found) / pages for style, found in style_pages.items()},
        font_chars={font: chars / total_chars for font, chars in all_fonts.items()},
        running={key: len(found) / pages for key, found in keys.items()},
        page_chars=dict(page_chars),
        median_page_chars=float(np.median(list(page_chars.values()))) or 1.0,
        numbered_rows={page: numbered[page] / rows_per_page[page] for page in rows_per_page},
    )


def _features(
    line: Line,
    previous: Line | None,
    following: Line | None,
    position: float,
    stats: _DocumentStats,
) -> list[float]:
    text = line.text
    title = clean_title(text)
    letters = [ch for ch in text if ch.isalpha()]
    words = text.split()
    numbering = parse_numbering(title)
    width = line.page_width or 1.0
    style = (round(line.size, 1), line.bold)
    return [
        line.size / (stats.body or 1.0),
        stats.larger_chars.get(round(line.size, 1), 0.0),
        float(line.bold),
        float(line.italic),
        float(line.font == stats.body_font),
        sum(ch.isupper() for ch in letters) / max(len(letters), 1),
        sum(w[0].isupper() for w in words if w[0].isalpha()) / max(len(words), 1),
        float(len(words)),
        float(len(text)),
        float(text.endswith(".")),
        float(text.endswith(":")),
        float(text.endswith((",", ";"))),
        sum(ch.isdigit() for ch in text) / max(len(text), 1),
        float(SCHEMES.index(numbering.scheme) + 1) if numbering else 0.0,
        float(numbering.depth) if numbering else 0.0,
        (line.box[0] - stats.body_left) / width,
        abs((line.box[0] + line.box[2]) / 2 - width / 2) / width,
        (line.box[2] - line.box[0]) / width,
        line.y_frac,
        _gap(previous.box[3] if previous else None, line.box[1], stats),
        _gap(line.box[3], following.box[1] if following else None, stats),
        float(line.merged),
        float(line.block_lines),
        stats.running.get(running_key(text), 0.0),
        float(line.in_table),
        float(_ends_with_page_number(text)),
        float(bool(LEADER.search(text))),
        float(bool(following and following.text[:1].islower())),
        float(bool(previous and same_style(previous, line))),
        float(bool(following and same_style(following, line))),
        stats.style_chars.get(style, 0.0),
        stats.style_pages.get(style, 0.0),
        stats.font_chars.get(line.font, 0.0),
        float(looks_like_heading(line, stats.body)),
        float(reads_like_title(text)),
        float(previous is None),
        position,
        line.size - previous.size if previous else 0.0,
        line.size - following.size if following else 0.0,
        stats.page_chars.get(line.page, 0) / stats.median_page_chars,
        stats.numbered_rows.get(line.page, 0.0),
    ]


def _gap(top: float | None, bottom: float | None, stats: _DocumentStats) -> float:
    """Vertical white space between two lines, in body line heights (capped)."""
    if top is None or bottom is None:
        return MAX_GAP_LINES
    return float(min(max((bottom - top) / (stats.line_height or 1.0), -1.0), MAX_GAP_LINES))


def _ends_with_page_number(text: str) -> bool:
    """A contents row: words, then a printed page number ("Risk Factors 12")."""
    words = text.split()
    return len(words) >= 2 and bool(PAGE_TOKEN.match(words[-1])) and words[0][0].isalpha()
