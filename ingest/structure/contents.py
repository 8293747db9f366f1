"""Structure from a printed table of contents, offline (the PageIndex route without an LLM).

Four steps: find the contents pages (a contents heading with a list under it, or a run of rows
ending in rising page numbers), parse their rows into entries (title, printed page, numbering,
indentation), give each entry a level (numbering schemes and indentation, nested in the order
they appear), and map printed page numbers to physical pages (page labels, folios printed in
the margins, then the offset that lets the most titles verify). A list without page numbers is
placed by finding each title in order. Verification (±1 page) happens afterwards, as for every
structure source, on pages with the contents pages blanked out so that the list never verifies
itself.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ingest.structure.layout import (
    EDGE_ROWS,
    PAGE_TOKEN,
    Cell,
    PageLayout,
    Row,
    row_text,
    split_page_number,
)
from ingest.structure.locate import INLINE_TAG, find_title, mask_spans, title_span, title_tokens
from ingest.structure.numbering import Numbering, clean_title, parse_numbering
from store.types import SectionEntry

HEADING = re.compile(
    r"^(table of contents|contents|index|index to [\w ,&'’]+|[\w ,&'’]+ index)(\s+page)?$",
    re.IGNORECASE,
)
COLUMN_LABEL = re.compile(r"^(page|pages|page no\.?|section|item|part)$", re.IGNORECASE)
# A heading must sit in the upper part of its page.
HEADING_Y = 0.45
# Thresholds for a contents page (rows ending in a page number, share, rising order).
MIN_ENTRIES_WITH_HEADING = 3
MIN_ENTRIES_WITHOUT_HEADING = 8
MIN_LISTED_SHARE = 0.3
MIN_LISTED_SHARE_WITHOUT_HEADING = 0.55
MIN_RISING_SHARE = 0.75
# A page continuing a list without page numbers is mostly numbered lines.
MIN_NUMBERED_SHARE = 0.5
# Printed page numbers may exceed the physical count a little (covers and inserts are unnumbered).
PAGE_SLACK = 30
# A vertical gap this many times the list's row spacing ends the list on its page.
LIST_END_GAP = 2.5
# Rows longer than this read as sentences (notes under a contents list), not entries.
MAX_ENTRY_WORDS = 30
# Indentation within this many points is the same column.
INDENT_TOLERANCE = 6.0
STANDALONE = re.compile(
    r"^(signatures?|exhibits?|exhibit index|index to exhibits|glossary|back cover)$", re.I
)
# How the second line of a wrapped title starts: a lower-case word or a dash.
CONTINUATION = re.compile(r"^(?:[a-z]|[-–—]\s)")
# Dot leaders set with spaces (". . . . .") between a title and its page number.
SPACED_LEADER = re.compile(r"(?:\s*[.·…]){3,}\s*$")
FOLIO_ONLY = re.compile(r"[\divxlc\-–— ]+")
ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


@dataclass
class ContentsEntry:
    """One parsed line of a contents list."""

    title: str
    printed: str | None
    x: float
    numbering: Numbering | None
    list_page: int
    level: int = 1


def contents_pages(layout: PageLayout, total_pages: int) -> list[list[int]]:
    """Runs of consecutive contents pages (a main contents list, then any per-part lists)."""
    running = set(layout.get("running", []))
    runs: list[list[int]] = []
    for page_rows in _pages_of(layout["rows"]):
        page = page_rows[0]["page"]
        previous = runs[-1] if runs and runs[-1][-1] == page - 1 else None
        rows = without_running(page_rows, running)
        if _is_contents_page(rows, total_pages, continues=previous is not None):
            if previous is not None:
                previous.append(page)
            else:
                runs.append([page])
    return runs


def without_running(rows: list[Row], running: set[str] | frozenset[str]) -> list[Row]:
    """A page's rows less the running headers and footers at its top and bottom edges."""
    edges = {id(row) for row in [*rows[:EDGE_ROWS], *rows[-EDGE_ROWS:]]}
    return [row for row in rows if id(row) not in edges or row_text(row).lower() not in running]


def _is_contents_page(rows: list[Row], total_pages: int, continues: bool) -> bool:
    """A contents heading over a list, a long rising list, or the next page of a list."""
    body = [row for row in rows if not _is_margin(row, rows)]
    listed = [(row, page) for row in body if (page := _entry_page(row, total_pages)) is not None]
    numbered = [row for row in body if _leading_numbering(row) is not None]
    share = len(listed) / max(len(body), 1)
    rising = _rising_share(listed)
    if _heading_index(body) is not None:
        with_pages = (
            len(listed) >= MIN_ENTRIES_WITH_HEADING
            and share >= MIN_LISTED_SHARE
            and rising >= MIN_RISING_SHARE
        )
        without_pages = not listed and len(numbered) >= MIN_ENTRIES_WITH_HEADING
        return with_pages or without_pages
    if continues:
        with_pages = (
            len(listed) >= MIN_ENTRIES_WITH_HEADING
            and share >= MIN_LISTED_SHARE
            and rising >= MIN_RISING_SHARE
        )
        without_pages = (
            not listed
            and len(numbered) >= MIN_ENTRIES_WITH_HEADING
            and len(numbered) >= MIN_NUMBERED_SHARE * len(body)
        )
        return with_pages or without_pages
    return (
        len(listed) >= MIN_ENTRIES_WITHOUT_HEADING
        and share >= MIN_LISTED_SHARE_WITHOUT_HEADING
        and rising >= MIN_RISING_SHARE
    )


def _is_margin(row: Row, rows: list[Row]) -> bool:
    """The first or last row of a page when it holds only a printed page number."""
    if row is not rows[0] and row is not rows[-1]:
        return False
    return bool(FOLIO_ONLY.fullmatch(row_text(row)))


def _heading_index(rows: list[Row]) -> int | None:
    """Where the contents heading stands among a page's rows (in the upper part of the page)."""
    return next(
        (i for i, row in enumerate(rows) if row["y"] <= HEADING_Y and HEADING.match(row_text(row))),
        None,
    )


def _entry_page(row: Row, total_pages: int) -> int | None:
    """The printed page of an entry row as a number (roman counts too), if it lists one."""
    title_cells, printed = split_page_number(row["cells"])
    if printed is None or not any(ch.isalpha() for c in title_cells for ch in c["text"]):
        return None
    if any("$" in cell["text"] or "%" in cell["text"] for cell in row["cells"]):
        return None
    value = page_value(printed)
    return value if value is not None and value <= total_pages + PAGE_SLACK else None


def page_value(printed: str) -> int | None:
    """A printed page number as an integer: arabic, roman, or the number of "F-3"."""
    text = printed.strip().lower()
    if text.isdigit():
        return int(text)
    if "-" in text and text.rsplit("-", 1)[1].isdigit():
        return int(text.rsplit("-", 1)[1])
    if text and all(ch in ROMAN_VALUES for ch in text):
        return _roman(text)
    return None


def _roman(text: str) -> int:
    total = 0
    for index, char in enumerate(text):
        value = ROMAN_VALUES[char]
        following = ROMAN_VALUES[text[index + 1]] if index + 1 < len(text) else 0
        total += -value if value < following else value
    return total


def _rising_share(listed: list[tuple[Row, int]]) -> float:
    """Share of neighbouring listed page numbers that do not fall (roman and arabic apart)."""
    kinds = [(page, _page_kind(row)) for row, page in listed]
    pairs = [(a, b) for (a, ka), (b, kb) in itertools.pairwise(kinds) if ka == kb]
    if not pairs:
        return 1.0 if listed else 0.0
    return sum(1 for a, b in pairs if b >= a) / len(pairs)


def _page_kind(row: Row) -> str:
    _, printed = split_page_number(row["cells"])
    return "arabic" if printed and any(ch.isdigit() for ch in printed) else "roman"


def _leading_numbering(row: Row) -> Numbering | None:
    title_cells, _ = split_page_number(row["cells"])
    return parse_numbering(clean_title(" ".join(c["text"] for c in title_cells)))


def parse_entries(
    rows: list[Row], total_pages: int, running: frozenset[str] = frozenset()
) -> list[ContentsEntry]:
    """The entries of one run of contents pages, wrapped titles re-joined, headings skipped."""
    listing = [
        row
        for page in _pages_of(rows)
        for row in split_columns(_list_rows(without_running(page, running), total_pages))
    ]
    entries: list[ContentsEntry] = []
    pending: ContentsEntry | None = None
    expects_pages = _expects_pages(listing, total_pages)
    for row in listing:
        entry = _entry(row, total_pages)
        if entry is None:
            continue
        if pending is not None and _continues(pending, entry):
            entry = _joined(pending, entry)
        elif pending is not None and pending.numbering is not None:
            entries.append(pending)  # a numbered entry printed without its page
        pending = None
        if entry.printed is None and expects_pages:
            pending = entry  # the first line of a wrapped title, or a caption (dropped)
            continue
        entries.append(entry)
    if pending is not None and pending.numbering is not None:
        entries.append(pending)
    return entries


def split_columns(rows: list[Row]) -> list[Row]:
    """A contents list set in columns, read column by column.

    A row whose page number is followed by more titled cells holds one entry per column
    ("Introduction 1   Results 9"): it is cut after each page number, and the pieces are
    read left column first.
    """
    columns: list[list[Row]] = []
    for row in rows:
        for index, piece in enumerate(_row_pieces(row)):
            while len(columns) <= index:
                columns.append([])
            columns[index].append(piece)
    return [piece for column in columns for piece in column]


def _row_pieces(row: Row) -> list[Row]:
    pieces: list[Row] = []
    current: list[Cell] = []
    for cell in row["cells"]:
        current.append(cell)
        if PAGE_TOKEN.match(cell["text"].strip()) and len(current) > 1:
            pieces.append(Row(page=row["page"], y=row["y"], cells=current))
            current = []
    if current and pieces and not any(ch.isalpha() for c in current for ch in c["text"]):
        pieces[-1]["cells"].extend(current)
    elif current:
        pieces.append(Row(page=row["page"], y=row["y"], cells=current))
    return pieces


def _pages_of(rows: list[Row]) -> list[list[Row]]:
    pages: dict[int, list[Row]] = {}
    for row in rows:
        pages.setdefault(row["page"], []).append(row)
    return [pages[number] for number in sorted(pages)]


def _list_rows(rows: list[Row], total_pages: int) -> list[Row]:
    """The rows of the list on one page: below its heading, above where the body resumes.

    The list ends at a vertical gap much wider than its row spacing, or where a title repeats
    (the first section's heading printed right under the contents).
    """
    body = [row for row in rows if not _is_margin(row, rows)]
    heading = _heading_index(body)
    body = body[heading + 1 :] if heading is not None else body
    gaps = sorted(b["y"] - a["y"] for a, b in itertools.pairwise(body))
    spacing = gaps[len(gaps) // 2] if gaps else 0.0
    kept: list[Row] = []
    seen: set[str] = set()
    for row in body:
        key = _title_key(row)
        wide_gap = kept and spacing and row["y"] - kept[-1]["y"] > LIST_END_GAP * spacing
        if len(kept) >= MIN_ENTRIES_WITH_HEADING and (wide_gap or key in seen):
            break
        seen.add(key)
        kept.append(row)
    return kept


def _title_key(row: Row) -> str:
    title_cells, _ = split_page_number(row["cells"])
    return " ".join(title_tokens(" ".join(c["text"] for c in title_cells)))


def _entry(row: Row, total_pages: int) -> ContentsEntry | None:
    """A row as a contents entry; headings, column labels and sentences are not entries."""
    text = row_text(row)
    if HEADING.match(text) or COLUMN_LABEL.match(text) or not any(ch.isalpha() for ch in text):
        return None
    title_cells, printed = split_page_number(row["cells"])
    if printed is not None and _entry_page(row, total_pages) is None:
        printed = None
    title = clean_title(" ".join(cell["text"] for cell in title_cells))
    title = SPACED_LEADER.sub("", title).strip()  # ". . . . ." leaders are not words
    if len(title.split()) > MAX_ENTRY_WORDS or title.startswith("("):
        return None
    return ContentsEntry(
        title=_tidy(title),
        printed=printed,
        x=title_cells[0]["x"],
        numbering=parse_numbering(title),
        list_page=row["page"],
    )


def _expects_pages(rows: list[Row], total_pages: int) -> bool:
    return sum(_entry_page(row, total_pages) is not None for row in rows) >= len(rows) / 3


def _continues(first: ContentsEntry, second: ContentsEntry) -> bool:
    """The second line finishes the first: no numbering of its own, same or deeper indent.

    A numbered first line is finished only by words that cannot open a title (lower case, a
    dash: "7.1 Summary of … testing" / "and linkage to care 67"); otherwise the next line is
    an entry of its own under it ("1 Getting started" / "Installing 3").
    """
    if second.numbering is not None or second.x < first.x - INDENT_TOLERANCE:
        return False
    return first.numbering is None or bool(CONTINUATION.match(second.title))


def _joined(first: ContentsEntry, second: ContentsEntry) -> ContentsEntry:
    return ContentsEntry(
        title=f"{first.title} {second.title}",
        printed=second.printed,
        x=first.x,
        numbering=first.numbering,
        list_page=first.list_page,
    )


def _tidy(title: str) -> str:
    """ "ITEM 1A." → "Item 1A.", "PART II" → "Part II"; trailing dots of leaders removed."""
    title = re.sub(r"^(ITEM|PART|NOTE|CHAPTER|SECTION)\b", lambda m: m.group(1).title(), title)
    return title.rstrip(" .·…_").strip() if not title.endswith("etc.") else title


def assign_levels(entries: list[ContentsEntry]) -> None:
    """Nest entries by numbering scheme and indentation, in the order schemes first appear.

    A scheme seen before closes everything opened after it (its siblings and their children);
    a new scheme opens one level deeper, except after an unnumbered entry set at the same
    indentation ("Preface" before "1 Introduction"): the two are siblings. Unnumbered entries
    are keyed by their indentation. Signatures and exhibits stand beside the items rather than
    under the last one.
    """
    stack: list[tuple[str, float]] = []
    lefts: list[float] = []
    for entry in entries:
        key = _scheme_key(entry)
        if STANDALONE.match(entry.title):
            depth = next((i for i, k in enumerate(stack) if k[0].startswith("item")), 0)
        else:
            depth = next((i for i, k in enumerate(stack) if _same_scheme(k, key)), len(stack))
            if depth == len(stack) and stack and _beside_plain(stack[-1], lefts[-1], entry):
                depth -= 1
        del stack[depth:], lefts[depth:]
        stack.append(key)
        lefts.append(entry.x)
        entry.level = depth + 1


def _beside_plain(previous: tuple[str, float], left: float, entry: ContentsEntry) -> bool:
    """A numbered entry first seen right after an unnumbered one at its indentation."""
    return (
        previous[0] == "plain"
        and entry.numbering is not None
        and abs(left - entry.x) <= INDENT_TOLERANCE
    )


def _scheme_key(entry: ContentsEntry) -> tuple[str, float]:
    if entry.numbering is None:
        return ("plain", entry.x)
    return (f"{entry.numbering.scheme}:{entry.numbering.depth}", -1.0)


def _same_scheme(left: tuple[str, float], right: tuple[str, float]) -> bool:
    if left[0] != right[0]:
        return False
    return left[0] != "plain" or abs(left[1] - right[1]) <= INDENT_TOLERANCE


@dataclass
class PageMap:
    """Printed page → physical page, from labels, folios and a fitted offset."""

    by_label: dict[str, int]
    offset: int

    def physical(self, printed: str) -> int | None:
        key = printed.strip().lower()
        if key in self.by_label:
            return self.by_label[key]
        value = page_value(printed)
        return None if value is None or not key.isdigit() else value + self.offset


def page_map(layout: PageLayout, entries: list[ContentsEntry], pages: list[str]) -> PageMap:
    """Printed → physical pages from the labels the PDF stores, the folios printed in its
    margins, or a plain offset: whichever places the most listed titles on their page.

    Page labels are sometimes just the physical numbers while the printed folios restart after
    the front matter; the titles themselves decide which source to trust (labels first, then
    folios, when they place as many).
    """
    best: PageMap | None = None
    best_hits = -1
    for labels in (_consistent(layout["labels"]), _consistent(layout["folios"]), {}):
        if best is not None and labels and labels == best.by_label:
            continue
        mapping = PageMap(by_label=labels, offset=_best_offset(entries, pages, labels))
        hits = _placed_titles(entries, pages, mapping)
        if hits > best_hits:
            best, best_hits = mapping, hits
    assert best is not None  # the loop always maps at least once
    return best


def _placed_titles(entries: list[ContentsEntry], pages: list[str], mapping: PageMap) -> int:
    """How many listed titles ``mapping`` puts on a page that prints them."""
    hits = 0
    for entry in entries:
        page = mapping.physical(entry.printed) if entry.printed else None
        if page is not None and 1 <= page <= len(pages):
            hits += find_title(entry.title, pages[page - 1]) is not None
    return hits


def _consistent(printed: list[str | None]) -> dict[str, int]:
    """Printed labels whose neighbour pages carry the neighbouring numbers (noise dropped)."""
    found: dict[str, int] = {}
    for index, label in enumerate(printed):
        value = page_value(label) if label else None
        if value is None or label is None:
            continue
        near = [
            page_value(other) if other else None for other in printed[max(0, index - 2) : index + 3]
        ]
        position = index - max(0, index - 2)
        agrees = any(
            v is not None and v - value == k - position for k, v in enumerate(near) if k != position
        )
        if agrees:
            found.setdefault(label.strip().lower(), index + 1)
    return found if len(found) >= 3 else {}


def _best_offset(entries: list[ContentsEntry], pages: list[str], labels: dict[str, int]) -> int:
    """The physical − printed offset under which the most titles are printed on their page."""
    numbered = [
        (entry.title, int(entry.printed))
        for entry in entries
        if entry.printed and entry.printed.isdigit()
    ]
    if not numbered:
        return 0
    hinted = Counter(labels[str(p)] - p for _, p in numbered if str(p) in labels)
    candidates = set(range(-2, min(len(pages), 40))) | set(hinted)

    def score(offset: int) -> tuple[int, int]:
        hits = sum(
            1
            for title, printed in numbered
            if 1 <= printed + offset <= len(pages)
            and find_title(title, pages[printed + offset - 1]) is not None
        )
        return hits, hinted.get(offset, 0)

    return max(sorted(candidates, key=abs), key=score)


@dataclass
class ContentsStructure:
    """Entries read from the printed contents and the text spans the lists occupy."""

    entries: list[SectionEntry]
    listing_spans: list[list[int]]  # [page, start, end] of each list, masked when verifying


# Reads the text of one run of contents pages ({page number: text}) into entries with levels.
ContentsReader = Callable[[dict[int, str]], list[ContentsEntry]]


def entries_from_contents(
    layout: PageLayout, pages: list[str], reader: ContentsReader | None = None
) -> ContentsStructure:
    """Section entries from the printed contents.

    The first run of contents pages is the document's contents; later runs (a list of the
    financial statements inside Item 8, a short list per part) add their entries under the
    entry whose pages hold them. Titles are placed and later verified on pages whose lists
    are blanked, so a list never confirms its own titles. A ``reader`` (the LLM) may read the
    lists instead of the offline parser; its entries go through the same page mapping.
    """
    main: list[SectionEntry] = []
    spans: list[list[int]] = []
    first_list_page, main_heading = 0, None
    for run in contents_pages(layout, len(pages)):
        if reader is not None:
            parsed = reader({page: pages[page - 1] for page in run})
        else:
            rows = [row for row in layout["rows"] if row["page"] in run]
            parsed = parse_entries(rows, len(pages), frozenset(layout.get("running", [])))
            assign_levels(parsed)
        if not parsed:
            continue
        heading = contents_heading([row for row in layout["rows"] if row["page"] == run[0]])
        spans.extend(listing_spans(parsed, pages, heading))
        masked = mask_spans(pages, spans)
        placed = place_entries(parsed, layout, masked, start=run[0], spans=spans)
        if not main:
            main, first_list_page, main_heading = placed, run[0], heading
        else:
            main = nest_listing(main, placed)
    if not main:
        return ContentsStructure(entries=[], listing_spans=[])
    if main_heading is None:
        return ContentsStructure(main, spans)
    return ContentsStructure(with_contents_node(main, first_list_page, main_heading), spans)


def contents_heading(rows: list[Row]) -> str | None:
    """The heading printed over a contents list ("TABLE OF CONTENTS" → "Table of Contents")."""
    index = _heading_index(rows)
    if index is None:
        return None
    words = re.sub(r"\s+page$", "", row_text(rows[index]), flags=re.IGNORECASE)
    if not words.isupper():
        return words
    return words.title().replace(" Of ", " of ").replace(" To ", " to ")


def listing_spans(
    entries: list[ContentsEntry], pages: list[str], heading: str | None = None
) -> list[list[int]]:
    """Per contents page, the text from its first listed title to the end of its last one.

    The list's own heading stays visible even where the parser moved lines above it.
    """
    spans: list[list[int]] = []
    for page in sorted({entry.list_page for entry in entries}):
        text = pages[page - 1]
        found = [title_span(entry.title, text) for entry in entries if entry.list_page == page]
        located = [span for span in found if span is not None]
        if not located:
            continue
        start, end = min(s for s, _ in located), max(e for _, e in located)
        heading_span = title_span(heading, text) if heading else None
        if heading_span is not None and start <= heading_span[0] < end:
            start = heading_span[1]
        spans.append([page, start, end])
    return spans


def place_entries(
    entries: list[ContentsEntry],
    layout: PageLayout,
    pages: list[str],
    start: int,
    spans: list[list[int]],
) -> list[SectionEntry]:
    """Physical start pages: mapped printed numbers, or the titles found in order."""
    mapping = page_map(layout, entries, pages)
    list_ends = {page: end for page, _, end in spans}
    placed: list[SectionEntry] = []
    cursor = start
    for entry in entries:
        page = mapping.physical(entry.printed) if entry.printed else None
        if page is None or not 1 <= page <= len(pages):
            page = _find_in_order(entry.title, pages, cursor, list_ends)
        if page is None:
            continue
        cursor = max(cursor, page)
        placed.append(SectionEntry(level=entry.level, title=entry.title, start_page=page))
    return placed


def _find_in_order(
    title: str, pages: list[str], start: int, list_ends: dict[int, int]
) -> int | None:
    """The first page from ``start`` on where the title opens a line (below any list there)."""
    for number in range(max(start, 1), len(pages) + 1):
        text = pages[number - 1]
        floor = list_ends.get(number, 0)
        offset = find_title(title, text[floor:])
        if offset is not None and _line_start(text, floor + offset):
            return number
    return None


def _line_start(text: str, offset: int) -> bool:
    """Only markdown marks or spaces between the previous line break and ``offset``."""
    line = INLINE_TAG.sub("", text[:offset].rsplit("\n", 1)[-1])
    return not re.search(r"[^\W_]", line)


def nest_listing(main: list[SectionEntry], inner: list[SectionEntry]) -> list[SectionEntry]:
    """Insert a later contents list's entries under the main entry whose pages hold them."""
    result: list[SectionEntry] = []
    pending = list(inner)
    for index, entry in enumerate(main):
        result.append(entry)
        following = main[index + 1]["start_page"] if index + 1 < len(main) else None
        while pending and (following is None or pending[0]["start_page"] < following):
            child = pending.pop(0)
            if child["title"].lower() != entry["title"].lower():
                level = entry["level"] + child["level"]
                result.append(
                    SectionEntry(level=level, title=child["title"], start_page=child["start_page"])
                )
    return result


def _insert_position(entries: list[SectionEntry], page: int) -> int:
    position = 0
    for index, entry in enumerate(entries):
        if entry["start_page"] <= page:
            position = index + 1
    return position


def with_contents_node(entries: list[SectionEntry], page: int, title: str) -> list[SectionEntry]:
    """The contents pages become a node of their own instead of a source of headings."""
    node = SectionEntry(level=1, title=title, start_page=page)
    position = _insert_position(entries, page - 1)
    return [*entries[:position], node, *entries[position:]]
