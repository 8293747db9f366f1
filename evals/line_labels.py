"""Training labels for every line of a bookmarked PDF: exactly one of ``LABELS`` each.

The authors' bookmarks say which lines are headings (a bookmark's title matched to the printed
line or lines on its start page, or a page either side). Nothing says what the other lines are,
so they are labelled by what print conventions make of them, the first that holds winning
(a bookmark's line before all):

==================  ==============================================================
``page_number``     a folio alone on its line in the page's top or bottom margin
``running``         a line in the margins repeated (digits aside) on many pages
``contents_entry``  a title ending in a page number or dot leaders, on a page where
                    several lines do
``table_cell``      a line in a table row (``Line.in_table``)
``caption``         "Figure 3", "Table 2.1", "Chart 4" opening the line
``list_item``       a bullet or a bracketed enumerator ("(a)", "3)") opening the line
``title_page``      the first page's lines before the document's first heading
``body``            every other line
==================  ==============================================================

Only the heading labels come from the authors, so only they are ever scored against the
authors' trees; the other classes teach the labeller what a line is when it is not a heading.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import numpy as np

from ingest.structure.features.contents import ends_with_page_number
from ingest.structure.headings import MARGIN, RUNNING_MAX_PAGES, RUNNING_SHARE, running_key
from ingest.structure.labeller import LABELS
from ingest.structure.layout import FOLIO_TEXT, FOLIO_TOKEN, LEADER
from ingest.structure.locate import title_tokens
from ingest.structure.numbering import clean_title
from ingest.structure.typography import NUMBER_ONLY, Line

# A title printed over this many consecutive lines at most is matched as one heading.
MAX_TITLE_LINES = 3
# A single line whose words overlap a bookmark's this much (Jaccard) is that heading.
FUZZY_OVERLAP = 0.8
# A page with at least this many lines ending in a page number or leaders is a contents page.
CONTENTS_ROWS = 4
CAPTION = re.compile(r"^(figure|fig\.|table|chart|graph|plate|map|box)\s*[\dA-Z][\w.\-]*\b", re.I)
LIST_ITEM = re.compile(r"^(?:[•●▪◦○■□➢►‣⁃∙·*–-]\s|\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})\)\s)")
NUMBER_TOKEN = {
    "part",
    "item",
    "chapter",
    "section",
    "note",
    "appendix",
    "article",
    "exhibit",
    "annex",
    "schedule",
}
HEADING = LABELS.index("heading")


def line_labels(lines: list[Line], entries: list[dict[str, Any]], total_pages: int) -> np.ndarray:
    """The index into :data:`LABELS` of every line (int8), in the order of ``lines``."""
    labels = np.full(len(lines), LABELS.index("body"), dtype=np.int8)
    headings = heading_lines(lines, entries)
    running = _running_keys(lines, total_pages)
    contents_pages = _contents_pages(lines)
    first_heading = int(np.flatnonzero(headings)[0]) if headings.any() else len(lines)
    for index, line in enumerate(lines):
        if headings[index]:
            labels[index] = HEADING
        else:
            label = _label(line, index < first_heading, running, contents_pages)
            labels[index] = LABELS.index(label)
    return labels


def _label(line: Line, before_first_heading: bool, running: set[str], contents: set[int]) -> str:
    """The label of a line no bookmark prints (the module's table, top to bottom)."""
    text = line.text.strip()
    margin = not MARGIN <= line.y_frac <= 1 - MARGIN
    if margin and _folio(text):
        return "page_number"
    if margin and running_key(text) in running:
        return "running"
    if line.page in contents and _contents_row(text):
        return "contents_entry"
    if line.in_table:
        return "table_cell"
    if CAPTION.match(text):
        return "caption"
    if LIST_ITEM.match(text):
        return "list_item"
    if line.page == 1 and before_first_heading:
        return "title_page"
    return "body"


def _folio(text: str) -> bool:
    match = FOLIO_TEXT.match(text)
    return bool(match and FOLIO_TOKEN.match(match["page"]))


def _running_keys(lines: list[Line], total_pages: int) -> set[str]:
    """Texts printed in the margins of many pages (a running header or footer)."""
    pages: dict[str, set[int]] = defaultdict(set)
    for line in lines:
        if not MARGIN <= line.y_frac <= 1 - MARGIN:
            pages[running_key(line.text.strip())].add(line.page)
    least = max(3, min(int(total_pages * RUNNING_SHARE), RUNNING_MAX_PAGES))
    return {key for key, found in pages.items() if len(found) >= least}


def _contents_row(text: str) -> bool:
    """A title, then a printed page number or dot leaders ("Risk Factors ..... 12")."""
    return ends_with_page_number(text) or bool(LEADER.match(text))


def _contents_pages(lines: list[Line]) -> set[int]:
    rows: dict[int, int] = defaultdict(int)
    for line in lines:
        rows[line.page] += int(_contents_row(line.text.strip()))
    return {page for page, count in rows.items() if count >= CONTENTS_ROWS}


def heading_lines(lines: list[Line], entries: list[dict[str, Any]]) -> np.ndarray:
    """True for the lines that print a bookmark's title on its page or a page either side."""
    found_lines = np.zeros(len(lines), dtype=bool)
    by_page: dict[int, list[int]] = {}
    for index, line in enumerate(lines):
        by_page.setdefault(line.page, []).append(index)
    tokens = [_key(title_tokens(clean_title(line.text))) for line in lines]
    for entry in entries:
        wanted = _key(title_tokens(clean_title(entry["title"])))
        if not wanted:
            continue
        for page in (entry["start_page"], entry["start_page"] + 1, entry["start_page"] - 1):
            found = _match(wanted, by_page.get(page, []), tokens, lines)
            if found:
                found_lines[found] = True
                break
    return found_lines


def _key(tokens: list[str]) -> list[str]:
    """Title words without a leading numbering ("1.1", "iv", "a", "Item 7") so that a number
    printed apart from its title, or not at all, still matches."""
    words = list(tokens)
    while words and (words[0].isdigit() or len(words[0]) <= 2 or words[0] in NUMBER_TOKEN):
        if len(words) == 1:
            break
        words = words[1:]
    return words


def _may_hold(line: Line, position: int) -> bool:
    """A line may print part of a title: it has letters, or it is the title's number first."""
    return any(ch.isalpha() for ch in line.text) or (
        position == 1 and bool(NUMBER_ONLY.match(line.text))
    )


def _match(
    wanted: list[str], indices: list[int], tokens: list[list[str]], lines: list[Line]
) -> list[int]:
    """The first run of one to three consecutive lines that prints ``wanted``."""
    for start in range(len(indices)):
        joined: list[str] = []
        for length in range(1, MAX_TITLE_LINES + 1):
            if start + length > len(indices) or not _may_hold(
                lines[indices[start + length - 1]], length
            ):
                break
            joined = _key([*joined, *tokens[indices[start + length - 1]]])
            if joined == wanted:
                return indices[start : start + length]
            if len(joined) >= len(wanted):
                break
    for index in indices:
        if _may_hold(lines[index], 2) and _overlap(wanted, tokens[index]) >= FUZZY_OVERLAP:
            return [index]
    return []


def _overlap(a: list[str], b: list[str]) -> float:
    left, right = set(a), set(b)
    return len(left & right) / len(left | right) if left and right else 0.0
