"""Structure from headings found in the pages: typography candidates filtered and levelled."""

from __future__ import annotations

import re
from collections import Counter

from ingest.structure.locate import find_title, title_tokens
from ingest.structure.numbering import LevelAssigner, Numbering, clean_title, parse_numbering
from store.types import HeadingCandidate, SectionEntry

KNOWN_SECTIONS = re.compile(
    r"^(abstract|introduction|summary|executive summary|background|overview|preface|foreword|"
    r"related work|conclusions?|discussion|results|methods?|acknowledge?ments?|references|"
    r"bibliography|appendix|appendices|table of contents|contents)\b",
    re.IGNORECASE,
)
NOISE = re.compile(
    r"^(arxiv:|figure\s+\d|fig\.\s*\d|table\s+\d|algorithm\s+\d|page\s+\d+|\d+$|https?://|"
    r"(theorem|lemma|proof|remarks?|definition|corollary|proposition|example)\b|"
    # "Note:" and "Note 3" in a sentence, but not the numbered notes of financial statements
    # ("Note 1 – Summary of Significant Accounting Policies", "NOTE 2. REVENUE").
    r"note\b(?!\s+\d{1,2}\s*[-–—.:]?\s+[A-Z]))",
    re.IGNORECASE,
)
CONTENTS = re.compile(r"^(table of )?contents$", re.IGNORECASE)
WORD = re.compile(r"[^\W\d_]{3,}")
DIGITS = re.compile(r"\d+")
# Lines repeated on this share of pages (or this many pages) are running headers or footers.
RUNNING_SHARE = 0.3
RUNNING_MAX_PAGES = 8
# Running headers and footers sit in the top or bottom tenth of the page.
MARGIN = 0.1
# A line the line labeller scores at this or more is a heading (its own decision point).
HEADING_THRESHOLD = 0.5
# Headings nest by font size at most this deep: the six levels of HTML's h1–h6.
MAX_SIZE_LEVELS = 6
# Numbering gives the levels when at least this share of the headings are numbered.
NUMBERED_SHARE = 0.25
# Figures inside a line ("TOTAL 369", "12.1 %", "$ 5") mark a table row, not a heading.
FIGURE = re.compile(r"[$%€£]|\d[\d,]*\.\d|\d{1,3}(,\d{3})+")


def entries_from_headings(
    candidates: list[HeadingCandidate],
    pages: list[str],
    listing_spans: list[list[int]] | None = None,
) -> list[SectionEntry]:
    """Choose real section headings from the candidates and give each a level.

    ``listing_spans`` are the ``[page, start, end]`` text spans of printed contents lists:
    a line inside one is a listing, never a body heading.
    """
    kept = _drop_noise(candidates, len(pages))
    kept = [c for c in kept if not _in_listing(c, pages, listing_spans or [])]
    table_rows: dict[int, str] = {}
    kept = [c for c in kept if _labelled(c) or not _in_table(c, pages, table_rows)]
    kept = _drop_contents_pages(kept)
    kept = _drop_title_page(kept)
    return _assign_levels(kept)


def _labelled(cand: HeadingCandidate) -> bool:
    """Whether the line labeller labelled the candidate a heading (rather than the typographic
    rule alone taking it). The labeller has table-cell, contents-entry and title-page labels of
    its own, so its headings are not dropped again as table cells, contents lines or title-page
    lines: those exclusions judge only the rule's candidates."""
    return cand.get("score", 0.0) >= HEADING_THRESHOLD


def _drop_noise(candidates: list[HeadingCandidate], total_pages: int) -> list[HeadingCandidate]:
    """Remove captions, stamps, page numbers and running headers.

    A text repeated on many pages is a running header or footer where it is printed in the
    page's margins, mostly; a heading repeated in the body ("Introduction" opening every
    chapter of a manual, "Line 1" … "Line 64" of a form's instructions) stays.
    """
    margin_pages: dict[str, set[int]] = {}
    counts: Counter[str] = Counter()
    in_margin: Counter[str] = Counter()
    for cand in candidates:
        key = running_key(cand["text"])
        counts[key] += 1
        if _in_margin(cand):
            in_margin[key] += 1
            margin_pages.setdefault(key, set()).add(cand["page"])
    running = {key for key in margin_pages if in_margin[key] * 2 >= counts[key]}
    threshold = max(3, min(int(total_pages * RUNNING_SHARE), RUNNING_MAX_PAGES))
    return [
        cand
        for cand in candidates
        if reads_like_title(cand["text"], _labelled(cand))
        and not _running(cand, running, margin_pages, threshold)
    ]


def _running(
    cand: HeadingCandidate, running: set[str], margin_pages: dict[str, set[int]], threshold: int
) -> bool:
    """A running header: printed mostly in the margins, on ``threshold`` pages or more, or with
    a page number at one end on two pages or more ("4 Chapter 1. The way of the program")."""
    key = running_key(cand["text"])
    if key not in running:
        return False
    words = cand["text"].split()
    folio = words[0].isdigit() or words[-1].isdigit()
    return len(margin_pages[key]) >= (2 if folio else threshold)


def _in_margin(cand: HeadingCandidate) -> bool:
    return not MARGIN <= cand["y_frac"] <= 1 - MARGIN


def running_key(text: str) -> str:
    """Running headers and footers repeat with a changing page number ("2023 FORM 10-K 7")."""
    return DIGITS.sub("#", text.lower())


def _in_listing(cand: HeadingCandidate, pages: list[str], spans: list[list[int]]) -> bool:
    """Whether the candidate sits on a contents page above the end of the list.

    Only text after a list (the first section starting on the same page) can be a heading;
    parsers sometimes move list lines above the list's own heading.
    """
    for page, _, end in spans:
        if page == cand["page"]:
            offset = find_title(cand["text"], pages[page - 1])
            if offset is None or offset < end:
                return True
    return False


def _in_table(cand: HeadingCandidate, pages: list[str], table_rows: dict[int, str]) -> bool:
    """Whether the candidate is a cell of a markdown table row on its page ("| Total | 5 |")."""
    if cand["page"] not in table_rows:
        table_rows[cand["page"]] = _table_text(pages, cand["page"])
    key = " ".join(title_tokens(cand["text"]))
    return bool(key) and key in table_rows[cand["page"]]


def _table_text(pages: list[str], page: int) -> str:
    """The words of a page's markdown table rows, one row per line."""
    if not 1 <= page <= len(pages):
        return ""
    rows = [line for line in pages[page - 1].splitlines() if line.lstrip().startswith("|")]
    return "\n".join(" ".join(title_tokens(row)) for row in rows)


def reads_like_title(text: str, scored_heading: bool = False) -> bool:
    """Reject figure labels, captions, theorem heads and fragments like "(current cost)".

    A figure in the line ("TOTAL 369", "12.1 %") marks a table row unless the line labeller
    took the line for a heading (``scored_heading``: "Line 9", "Form 1040").
    """
    if NOISE.match(text) or not WORD.search(text) or text.endswith(":"):
        return False
    if FIGURE.search(text) and parse_numbering(clean_title(text)) is None and not scored_heading:
        return False
    if any(ord(ch) < 32 for ch in text):
        return False
    if parse_numbering(clean_title(text)) is not None:
        return True  # "(1) Scope", "a. Components": numbered sub-levels of legal outlines
    return not (text[0] in "([{" or text[0].islower())


def _drop_contents_pages(candidates: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """A table of contents repeats later headings; keep the real headings, not the listing."""
    contents_pages = {c["page"] for c in candidates if CONTENTS.match(clean_title(c["text"]))}
    if not contents_pages:
        return candidates
    kept = []
    for index, cand in enumerate(candidates):
        key = _title_key(cand["text"])
        on_contents = cand["page"] in contents_pages
        repeated = any(_title_key(c["text"]) == key for c in candidates[index + 1 :])
        if (
            on_contents
            and not _labelled(cand)
            and (repeated or CONTENTS.match(clean_title(cand["text"])))
        ):
            continue
        kept.append(cand)
    return kept


def _title_key(text: str) -> str:
    """Compare titles without numbering, case or punctuation."""
    title = clean_title(text)
    numbering = parse_numbering(title)
    words = WORD.findall(title.lower())
    if numbering is not None and words and len(title.split()) > 1:
        words = WORD.findall(title.split(" ", 1)[1].lower())
    return " ".join(words)


def _is_anchor(cand: HeadingCandidate) -> bool:
    """A heading that surely opens the body: numbered or a well-known section name."""
    title = clean_title(cand["text"])
    numbering = parse_numbering(title)
    # A bare capital ("A Statistical Parser ...") is too often an article to anchor the body.
    numbered = numbering is not None and not (numbering.scheme == "appendix" and title[1] == " ")
    return numbered or bool(KNOWN_SECTIONS.match(title))


def _drop_title_page(candidates: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """Title-page lines (title, authors, agency banners) before the first anchor heading.

    Only the first page is a title page: a manual whose first numbered heading is on page 39
    keeps the sections before it; a line the labeller labelled a heading stays.
    """
    for index, cand in enumerate(candidates):
        if _is_anchor(cand) or cand["page"] > 1:
            return [c for c in candidates[:index] if _labelled(c)] + candidates[index:]
    return candidates


def _assign_levels(candidates: list[HeadingCandidate]) -> list[SectionEntry]:
    """Numbered headings take their level from numbering, the rest from font size.

    Where numbered headings are few (a form's instructions, an agency report with a handful of
    "Strategic Goal N:" headings), numbering is not what structures the document: every
    heading then takes its level from font size, so the sizes still nest.
    """
    numbered = [parse_numbering(clean_title(cand["text"])) for cand in candidates]
    if sum(n is not None for n in numbered) < NUMBERED_SHARE * len(candidates):
        numbered = [None] * len(candidates)  # levels from type size alone
    assigner = LevelAssigner()
    size_levels = _size_levels(candidates, numbered)
    entries: list[SectionEntry] = []
    for cand, numbering in zip(candidates, numbered, strict=True):
        if numbering is not None:
            level = assigner.level(numbering)
        else:
            level = _unnumbered_level(cand["size"], size_levels)
        title = clean_title(cand["text"])
        entries.append(SectionEntry(level=level, title=title, start_page=cand["page"]))
    return entries


def _size_levels(
    candidates: list[HeadingCandidate], numbered: list[Numbering | None]
) -> dict[float, int]:
    """Level of each heading font size: that of the numbered headings set in it (first seen
    wins) when numbering structures the document (``numbered``: each candidate's numbering, or
    None); otherwise the rank of the size among those of two headings or more (larger type,
    higher level), so an unnumbered book or report still nests."""
    assigner = LevelAssigner()
    sizes: dict[float, int] = {}
    for cand, numbering in zip(candidates, numbered, strict=True):
        if numbering is not None:
            sizes.setdefault(round(cand["size"], 1), assigner.level(numbering))
    if sizes:
        return sizes
    counts = Counter(round(cand["size"] * 2) / 2 for cand in candidates)
    shared = sorted((size for size, count in counts.items() if count >= 2), reverse=True)
    return {size: min(rank, MAX_SIZE_LEVELS) for rank, size in enumerate(shared, start=1)}


def _unnumbered_level(size: float, size_levels: dict[float, int]) -> int:
    """Level of the headings with the closest size; larger than all means top level."""
    if not size_levels:
        return 1
    if size >= max(size_levels) - 0.3:
        return min(size_levels.values())
    if size < min(size_levels) - 0.5:
        return max(size_levels.values()) + 1
    closest = min(size_levels, key=lambda known: abs(known - size))
    return size_levels[closest]
