"""Find a section title in page text despite case, markdown, ligatures, hyphenation and small caps.

Verification, the heading-begins-page decision and section-body slicing all need the offset of a
title inside a page, so the matching lives in one place.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from store.text import UNICODE_WORD

# Between two characters of a word: nothing, a line-break hyphen, or a small-caps gap.
INNER_GAP = r"(?:-\s*|\s)?"
# Inline HTML the markdown parser emits around words ("<u>Business</u>").
INLINE_TAG = re.compile(r"</?[a-z]{1,4}>")
# A revision date printed beside a heading's number ("2.3.59.1 (12-12-2022)") is no part of it.
REVISION_DATE = re.compile(r"\(\d{1,2}[-/]\d{1,2}[-/]\d{2,4}\)")
# Between two words: any run of spaces, punctuation, markdown emphasis, inline HTML tags or
# revision dates.
WORD_GAP = rf"(?:[\W_]|{INLINE_TAG.pattern}|{REVISION_DATE.pattern})*"
# A heading "begins its page" when at most this much text (alphanumerics) precedes it.
BEGIN_CHARS = 150


def normalize(text: str) -> str:
    """NFKC (unfolds ligatures like "ﬁ"), the form page text is stored in."""
    return unicodedata.normalize("NFKC", text)


def title_tokens(title: str) -> list[str]:
    """Lower-case word tokens of a title."""
    return UNICODE_WORD.findall(normalize(title).lower())


@lru_cache(maxsize=4096)
def _title_pattern(title: str) -> re.Pattern[str] | None:
    tokens = title_tokens(title)
    if not tokens:
        return None
    words = [INNER_GAP.join(re.escape(ch) for ch in token) for token in tokens]
    # Whole words only: "Method" must not verify against "Methodology".
    return re.compile(r"(?<![^\W_])" + WORD_GAP.join(words) + r"(?![^\W_])", re.IGNORECASE)


def find_title(title: str, page_text: str) -> int | None:
    """Offset of the first occurrence of ``title`` in ``page_text``, or None."""
    span = title_span(title, page_text)
    return span[0] if span else None


def title_span(title: str, page_text: str) -> tuple[int, int] | None:
    """Start and end offsets of the first occurrence of ``title`` in ``page_text``, or None."""
    pattern = _title_pattern(title)
    if pattern is None:
        return None
    match = pattern.search(page_text)
    return match.span() if match else None


def mask_spans(pages: list[str], spans: list[list[int]]) -> list[str]:
    """Pages with each ``[page, start, end]`` span blanked (same length, so offsets hold)."""
    masked = list(pages)
    for page, start, end in spans:
        text = masked[page - 1]
        blank = re.sub(r"[^\n]", " ", text[start:end])
        masked[page - 1] = text[:start] + blank + text[end:]
    return masked


def begins_page(page_text: str, offset: int) -> bool:
    """Whether a heading at ``offset`` opens its page (only a running header may precede it).

    When in doubt the answer is False: a shared page then belongs to both adjacent sections,
    which costs a little reading but never hides text from the section that owns it.
    """
    before = sum(len(token) for token in UNICODE_WORD.findall(page_text[:offset]))
    return before <= BEGIN_CHARS
