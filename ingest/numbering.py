"""Heading numbering schemes ("2.1", "IV.", "A.", "Appendix B") and the levels they imply."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

ROMAN = re.compile(r"^(?P<num>[IVX]{1,5})[.)]\s+(?P<rest>\S.*)$")
DOTTED_LETTER = re.compile(r"^(?P<num>[A-Z])[.)]\s+(?P<rest>\S.*)$")
APPENDIX = re.compile(r"^(?P<num>appendix\s+[A-Z0-9]+)[.:]?\s*(?P<rest>.*)$", re.IGNORECASE)
LETTER_SUB = re.compile(r"^(?P<num>[A-Z](\.\d+)+)\.?\s+(?P<rest>\S.*)$")
BARE_LETTER = re.compile(r"^(?P<num>[A-Z])\s+(?P<rest>[A-Z][a-z].*)$")
ARABIC = re.compile(r"^(?P<num>\d{1,2}(\.\d{1,2})*)\.?\s+(?P<rest>\S.*)$")
SPLIT_SMALL_CAPS = re.compile(r"\b([A-Z]) ([A-Z]{2,})\b")


@dataclass(frozen=True)
class Numbering:
    """The numbering of a heading: its scheme and depth within that scheme (1 = top)."""

    scheme: str  # "roman" | "letter" | "appendix" | "arabic"
    depth: int


def clean_title(text: str) -> str:
    """Collapse whitespace and re-join small caps split by extraction ("I NTRODUCTION")."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return SPLIT_SMALL_CAPS.sub(lambda m: m.group(1) + m.group(2), text)


def _plausible_rest(rest: str) -> bool:
    """The words after a number must read like a title, not like "CFR Part 276" or "2019)"."""
    words = rest.split()
    if not words or not words[0][0].isalpha():
        return False
    first = words[0]
    if first.isupper() and len(first) > 1:
        letters = [ch for ch in rest if ch.isalpha()]
        return sum(ch.isupper() for ch in letters) >= 0.8 * len(letters)
    return first[0].isupper()


def parse_numbering(title: str) -> Numbering | None:
    """Recognise the numbering prefix of a heading, or None for an unnumbered heading."""
    for pattern, scheme in (
        (APPENDIX, "appendix"),
        (LETTER_SUB, "letter"),
        (ROMAN, "roman"),
        (DOTTED_LETTER, "letter"),
        (BARE_LETTER, "appendix"),
        (ARABIC, "arabic"),
    ):
        match = pattern.match(title)
        if not match:
            continue
        if scheme != "appendix" and not _plausible_rest(match.group("rest")):
            return None
        depth = match.group("num").count(".") + 1 if scheme in ("arabic", "letter") else 1
        if scheme == "letter" and "." in match.group("num") and match.group("num")[-1] != ".":
            return Numbering("appendix", depth)
        if scheme == "letter":
            return Numbering("letter", 1)
        return Numbering(scheme, depth)
    return None


class LevelAssigner:
    """Turns numbering into outline levels the way nested legal and scientific outlines work.

    Roman numerals and appendix letters are top level; a dotted letter ("A.") sits under the
    current roman section; plain arabic numbers sit under an open roman/letter section, else
    they are top level with one more level per dot.
    """

    def __init__(self) -> None:
        self._roman_open = False
        self._letter_open = False

    def level(self, numbering: Numbering) -> int:
        """The level for the next heading with this numbering (updates the open schemes)."""
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
