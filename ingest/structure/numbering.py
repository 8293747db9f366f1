"""Heading numbering schemes ("2.1", "IV.", "A.", "Appendix B") and the levels they imply."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# Filing and legal conventions: "PART II", "Item 1A.", "Item 2.02", "Note 3 —", "Chapter 4".
PART = re.compile(r"^(?P<num>part\s+[IVX]{1,4})\b[.:]?\s*(?:[-–—:]\s*)?(?P<rest>.*)$", re.I)
ITEM = re.compile(
    r"^(?P<num>item\s+\d{1,2}(?:\.\d{2})?[A-C]?)(?![\w.]\w)\.?\s*(?:[-–—:]\s*)?(?P<rest>.*)$",
    re.IGNORECASE,
)
NOTE = re.compile(r"^(?P<num>note\s+\d{1,2})\b[.:]?\s*(?:[-–—:]\s*)?(?P<rest>\S.*)$", re.I)
# "Chapter 4", "CHAPTER IV", "CHAPTER ONE" (numbers spelled out up to twenty).
SPELLED = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty"
)
CHAPTER = re.compile(
    rf"^(?P<num>chapter\s+(\d{{1,2}}|[IVX]{{1,4}}|{SPELLED}))\b[.:]?\s*(?P<rest>.*)$", re.I
)
LOWER_LETTER = re.compile(r"^(?P<num>[a-z])[.)]\s+(?P<rest>\S.*)$")
PAREN_NUMBER = re.compile(r"^(?P<num>\((\d{1,2}|[a-z]|[ivx]{1,4})\))\s+(?P<rest>\S.*)$")
ROMAN = re.compile(r"^(?P<num>[IVX]{1,5})[.)]\s+(?P<rest>\S.*)$")
DOTTED_LETTER = re.compile(r"^(?P<num>[A-Z])[.)]\s+(?P<rest>\S.*)$")
APPENDIX = re.compile(
    r"^(?P<num>(?:appendix|annex|exhibit|schedule)\s+[A-Z0-9]+(?:[.-][A-Z0-9]+)*)[.:]?\s*"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)
LETTER_SUB = re.compile(r"^(?P<num>[A-Z](\.\d+)+)\.?\s+(?P<rest>\S.*)$")
BARE_LETTER = re.compile(r"^(?P<num>[A-Z])\s+(?P<rest>[A-Z][a-z].*)$")
# "2.1", "3.", the numbered exhibits of manuals ("2.3.59-4"), and the chapter-section numbers of
# standards and criteria ("2-8 GROUNDING", "2-8.1 Cable Entrance"), where the dash is a level.
# The number ends with a period ("2.1."), or with a colon when it has two levels or more
# ("1.1: Typographical Conventions"); a bare "1:" numbers an algorithm's step or a field value.
ARABIC_NUMBER = r"\d{1,2}-\d{1,3}(?:\.\d{1,2})*|\d{1,2}(?:\.\d{1,2})*(?:-\d{1,3})?"
ARABIC = re.compile(
    rf"^(?P<num>{ARABIC_NUMBER})"
    r"(?:\.|(?<=[.-]\d):|(?<=[.-]\d\d):|(?<=[.-]\d\d\d):)?\s+(?P<rest>\S.*)$"
)
CHAPTER_DASH = re.compile(r"^\d{1,2}-\d")
# A number of two levels or more ("9.3", "2-8"): never a citation's bare number.
MULTI_LEVEL = re.compile(r"\d[.-]\d")
# A label word (or two) and a number: "Strategy 1.01:", "Strategic Goal 2:", "Task 1.1.1.1",
# "Section 4 –", "Article 12.", "Register 2-1:" (agency plans, regulations, standards, data
# sheets); the number is an arabic number as above.
LABELLED = re.compile(
    rf"^(?P<num>(?:(?:[A-Z][a-z]+|[A-Z]{{2,}})\s+){{1,2}}(?:{ARABIC_NUMBER}))(?![\d,])\.?\s*[:\-–—.]?\s+"
    r"(?P<rest>\S.*)$"
)
# Words that introduce a number without naming a heading ("Figure 3", "Line 12", "Page 4").
NOT_LABELS = frozenset(
    {
        "figure",
        "fig",
        "table",
        "page",
        "line",
        "lines",
        "form",
        "exhibit",
        "schedule",
        "step",
        "phase",
        "version",
        "rev",
        "vol",
        "volume",
        "no",
        "number",
        "equation",
        "example",
        "the",
        "a",
        "an",
        "and",
        "of",
        "in",
        "for",
        "to",
        "with",
        "from",
        "by",
        "at",
        "on",
        "our",
        "all",
    }
)
SPLIT_SMALL_CAPS = re.compile(r"\b([A-Z]) ([A-Z]{2,})\b")
# Extraction that spaces a number's period off ("Strategic Objective 1 .1:", letter-spaced
# type) or runs a label into its number ("Initiative1.1 Improve", "Objective1 Dramatically").
SPACED_PERIOD = re.compile(r"(?<=\d) \.(?=\d)")
GLUED_LABEL = re.compile(r"^([A-Z][a-z]{2,})(?=\d{1,2}(?:\.\d{1,2})*\s+[A-Z])")
# Titles whose cleaning and numbering are remembered (a long document's distinct lines).
TITLES_REMEMBERED = 1 << 16


@dataclass(frozen=True)
class Numbering:
    """The numbering of a heading: its scheme and depth within that scheme (1 = top)."""

    scheme: str  # part | item | note | chapter | roman | letter | appendix | arabic | sub
    # | labelled
    depth: int


# A multi-level number run into its title ("16.10.1Font selection", "14.10TGA"; not "3.5GHz").
GLUED_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d{1,3})+\.?)(?=[A-Z][a-z]|[A-Z]{2,}(?:\s|$))")


@lru_cache(maxsize=TITLES_REMEMBERED)
def clean_title(text: str) -> str:
    """Collapse whitespace, re-join small caps split by extraction ("I NTRODUCTION") and a
    number's period spaced off ("1 .1"), and part a label or a dotted number from what it was
    printed against ("Initiative1.1", "16.10Styling stories": the number column of a contents
    list too narrow for it). Remembered: the line features and the
    heading filters clean the same line several times."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    text = SPLIT_SMALL_CAPS.sub(lambda m: m.group(1) + m.group(2), text)
    text = GLUED_LABEL.sub(r"\1 ", SPACED_PERIOD.sub(".", text))
    return GLUED_NUMBER.sub(r"\1 ", text)


def _plausible_rest(rest: str, multi_level: bool) -> bool:
    """The words after a number must read like a title, not like "CFR Part 276" or "2019)".

    An acronym after a bare number reads as a citation ("17 CFR Part 276") unless the whole
    title is in capitals; after a multi-level number ("9.3 SPI Mode", "2-8 CCTV Systems") it
    opens a title, as it does throughout hardware and protocol specifications.
    """
    words = rest.split()
    if not words or not words[0][0].isalpha():
        return False
    first = words[0]
    if first.isupper() and len(first) > 1 and not multi_level:
        letters = [ch for ch in rest if ch.isalpha()]
        return sum(ch.isupper() for ch in letters) >= 0.8 * len(letters)
    return first[0].isupper()


@lru_cache(maxsize=TITLES_REMEMBERED)
def parse_numbering(title: str) -> Numbering | None:
    """Recognise the numbering prefix of a heading, or None for an unnumbered heading
    (remembered, as :func:`clean_title` is)."""
    filing = _filing_numbering(title)
    if filing is not None:
        return filing
    for pattern, scheme in (
        (APPENDIX, "appendix"),
        (LETTER_SUB, "letter"),
        (ROMAN, "roman"),
        (DOTTED_LETTER, "letter"),
        (BARE_LETTER, "appendix"),
        (ARABIC, "arabic"),
        (LABELLED, "labelled"),
    ):
        match = pattern.match(title)
        if not match:
            continue
        number = match.group("num")
        multi_level = MULTI_LEVEL.search(number) is not None
        if scheme != "appendix" and not _plausible_rest(match.group("rest"), multi_level):
            return None
        if scheme == "labelled":
            words = number.split()[:-1]
            if any(word.lower() in NOT_LABELS for word in words):
                return None
        dotted = ("arabic", "letter", "labelled")
        depth = number.count(".") + 1 if scheme in dotted else 1
        chapter_dash = CHAPTER_DASH.match(number.split()[-1]) is not None
        depth += int(scheme in ("arabic", "labelled") and chapter_dash)
        if scheme == "letter" and "." in number and number[-1] != ".":
            return Numbering("appendix", depth)
        if scheme == "letter":
            return Numbering("letter", 1)
        return Numbering(scheme, depth)
    return None


def _filing_numbering(title: str) -> Numbering | None:
    """PART / Item / Note / Chapter prefixes, and the "a." / "(1)" / "(i)" of legal outlines."""
    for pattern, scheme in ((PART, "part"), (ITEM, "item"), (NOTE, "note"), (CHAPTER, "chapter")):
        match = pattern.match(title)
        if match:
            rest = match.group("rest")
            return Numbering(scheme, 1) if not rest or rest[0].isupper() or rest[0] == "[" else None
    for pattern, depth in ((LOWER_LETTER, 1), (PAREN_NUMBER, 2)):
        match = pattern.match(title)
        if match and match.group("rest")[0].isupper():
            if depth == 2 and re.fullmatch(r"\([ivx]+\)", match.group("num")):
                depth = 3
            return Numbering("sub", depth)
    return None


class LevelAssigner:
    """Turns numbering into outline levels the way nested legal and scientific outlines work.

    Roman numerals and appendix letters are top level; a dotted letter ("A.") sits under the
    current roman section; plain arabic numbers sit under an open roman/letter section, else
    they are top level with one more level per dot. In filings PART is level 1, an Item sits
    under its part, a Note under the item that holds it; "a." and "(1)" go one and two levels
    below the last numbered heading of the other schemes.
    """

    def __init__(self) -> None:
        self._roman_open = False
        self._letter_open = False
        self._part_open = False
        self._item_open = False
        self._last = 0

    def level(self, numbering: Numbering) -> int:
        """The level for the next heading with this numbering (updates the open schemes)."""
        if numbering.scheme == "sub":
            return self._last + numbering.depth
        self._last = self._level(numbering)
        return self._last

    def _level(self, numbering: Numbering) -> int:
        if numbering.scheme in ("part", "chapter"):
            self._part_open, self._item_open = True, False
            return 1
        if numbering.scheme == "item":
            self._item_open = True
            return 1 + int(self._part_open)
        if numbering.scheme == "note":
            return 1 + int(self._part_open) + int(self._item_open)
        if numbering.scheme == "roman":
            self._roman_open, self._letter_open = True, False
            return 1
        if numbering.scheme == "appendix":
            self._roman_open, self._letter_open = False, False
            return numbering.depth
        if numbering.scheme == "letter":
            self._letter_open = True
            return 2 if self._roman_open else 1
        base = int(self._roman_open) + int(self._letter_open)
        return base + numbering.depth


def numbering_prefix(title: str) -> str:
    """The numbering prefix of a heading as printed ("2.1 ", "Item 7. ", "NOTE 3 – "), or ""."""
    if parse_numbering(title) is None:
        return ""
    for pattern in (
        PART,
        ITEM,
        NOTE,
        CHAPTER,
        LOWER_LETTER,
        PAREN_NUMBER,
        APPENDIX,
        LETTER_SUB,
        ROMAN,
        DOTTED_LETTER,
        BARE_LETTER,
        ARABIC,
        LABELLED,
    ):
        match = pattern.match(title)
        if match:
            return title[: match.start("rest")]
    return ""
