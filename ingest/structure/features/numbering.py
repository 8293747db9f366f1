"""Numbering: the scheme a line's number follows ("2.1", "IV.", "Item 7A", "(a)") and its depth,
and whether that number is part of a count the document keeps.

A section's number has a predecessor earlier in the document and a successor later ("2." after
"1.", "2.1" after "2." or "1.4", "AC-2" after "AC-1"), usually pages apart; the items of a
numbered list count too, but lines apart. Two features come from the count, so a numbered
heading set in the body's own type ("1. Introduction" of a journal paper) is told
from a numbered sentence by the count it belongs to, not by its look. The third feature carries the
count over to the type: the share of the lines set in a line's font and size that belong to a
count, high for a heading style however plain it looks (the body-size small capitals of a
mathematics paper's "1. Introduction") and for that style's unnumbered headings too
("References").
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import defaultdict

import numpy as np

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.numbering import clean_title, numbering_prefix, parse_numbering
from ingest.structure.typography import Line

DIGITS = re.compile(r"\d+")
# Control and requirement identifiers: "AC-1 ACCESS CONTROL POLICY", "SR-12 Component Disposal".
IDENTIFIER = re.compile(r"^(?P<series>[A-Z]{2,3})-(?P<num>\d{1,3})\b(?:\(\d+\))?\s+\S")
# A predecessor this many lines back or more counts as this far (the log scale's cap).
MAX_GAP_LINES = 10_000
SEQUENCE_FEATURES = ("sequence_neighbours", "sequence_gap", "sequence_font_share")
# The schemes of ``ingest.structure.numbering``, as the scheme feature numbers them (0: none).
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

Key = tuple[str, tuple[int, ...]]


def sequence_key(text: str) -> Key | None:
    """The count a line's number belongs to and the number itself: ("arabic:2", (2, 1)) for
    "2.1 Methods", ("labelledgoal:1", (2,)) for "Goal 2:", ("id:AC", (3,)) for "AC-3 ACCESS
    ENFORCEMENT"; None for an unnumbered line or a number without digits ("IV.", "A.")."""
    identifier = IDENTIFIER.match(text)
    if identifier:
        return f"id:{identifier.group('series')}", (int(identifier.group("num")),)
    title = clean_title(text)
    numbering = parse_numbering(title)
    numbers = tuple(int(n) for n in DIGITS.findall(numbering_prefix(title)))
    if numbering is None or not numbers:
        return None
    label = numbering_prefix(title).split()[0].lower() if numbering.scheme == "labelled" else ""
    return f"{numbering.scheme}{label}:{len(numbers)}", numbers


def predecessors(key: Key) -> list[Key]:
    """The numbers that may come just before ``key``'s: the previous one at the same depth
    ("2.3" after "2.2") or, for a first child, its parent ("2.1" after "2.")."""
    scheme, numbers = key
    before: list[Key] = []
    if numbers[-1] > 1:
        before.append((scheme, (*numbers[:-1], numbers[-1] - 1)))
    if len(numbers) > 1 and numbers[-1] in (0, 1):
        before.append((f"{scheme.rsplit(':', 1)[0]}:{len(numbers) - 1}", numbers[:-1]))
    return before


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """Each line's numbering scheme and depth, and its place in the document's counts."""
    counts = sequence_features(lines)

    def row(line: Line, around: Around) -> dict[str, float]:
        numbering = parse_numbering(clean_title(line.text))
        return {
            "scheme": float(SCHEMES.index(numbering.scheme) + 1) if numbering else 0.0,
            "numbering_depth": float(numbering.depth) if numbering else 0.0,
            **dict(zip(SEQUENCE_FEATURES, counts[around.index].tolist(), strict=True)),
        }

    return row


def sequence_features(lines: list[Line]) -> np.ndarray:
    """Per line: how many of its neighbours in the count exist (0–2: a predecessor before it,
    a successor after it) and the log distance in lines back to its nearest predecessor (0 for
    an unnumbered line or a first number)."""
    keys = [sequence_key(line.text) for line in lines]
    positions: dict[Key, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        if key is not None:
            positions[key].append(index)
    rows = np.zeros((len(lines), len(SEQUENCE_FEATURES)), dtype=np.float32)
    for index, key in enumerate(keys):
        if key is None:
            continue
        gaps = [
            index - at
            for previous in predecessors(key)
            if (at := _last_before(positions.get(previous, []), index)) is not None
        ]
        scheme, numbers = key
        following = positions.get((scheme, (*numbers[:-1], numbers[-1] + 1)), [])
        rows[index, 0] = float(bool(gaps)) + float(bool(following) and following[-1] > index)
        if gaps:
            rows[index, 1] = math.log1p(min(min(gaps), MAX_GAP_LINES))
    rows[:, 2] = _font_shares(lines, rows[:, 0] > 0)
    return rows


def _font_shares(lines: list[Line], counted: np.ndarray) -> np.ndarray:
    """For each line, the share of the lines in its font and size that belong to a count,
    one line added to the denominator so that a font met twice proves little."""
    styles = [(line.font, round(line.size, 1)) for line in lines]
    totals: dict[tuple[str, float], int] = defaultdict(int)
    counts: dict[tuple[str, float], int] = defaultdict(int)
    for style, in_count in zip(styles, counted.tolist(), strict=True):
        totals[style] += 1
        counts[style] += int(in_count)
    return np.array([counts[s] / (totals[s] + 1) for s in styles], dtype=np.float32)


def _last_before(positions: list[int], index: int) -> int | None:
    """The last of the sorted ``positions`` before ``index``, or None."""
    at = bisect_left(positions, index)
    return positions[at - 1] if at else None
