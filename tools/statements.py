"""Which financial statement a question asks for, and which pages print it.

A filing's figures live in its statements; the MD&A and the notes repeat their words on many
more pages. A question names the statement ("according to the balance sheet", "the statement
of cash flows") or a figure that one statement holds ("capital expenditure" is read from the
cash flows, "total current assets" from the balance sheet, "COGS" from the income statement).
A page prints a statement when one of its first lines is the statement's title, as statements
are set ("CONSOLIDATED BALANCE SHEETS", "NIKE, Inc. Consolidated Statements of Cash Flows"),
not a sentence that mentions it (an auditor's report, a note); a page whose first lines hold
three or more statements' titles is their index, not one of them.
"""

from __future__ import annotations

import re

from store.text import clean_text

FIRST_LINES = 8
"""Lines of a page in which a statement's title must appear (after a running header or two)."""
STATEMENTS_OF = r"statements?\s+of\s+(?:consolidated\s+)?"
TITLES = {
    "balance": rf"balance\s+sheets?|{STATEMENTS_OF}financial\s+(?:position|condition)",
    "income": rf"{STATEMENTS_OF}(?:income|operations|earnings)|income\s+statements?",
    "cash": rf"{STATEMENTS_OF}cash\s+flows?|cash\s+flows?\s+statements?",
}
"""How each statement's title is printed (and named in a question)."""
NAMED = {kind: re.compile(rf"\b(?:{title})\b", re.IGNORECASE) for kind, title in TITLES.items()}
SET_AS_TITLE = {
    kind: re.compile(
        rf"(?:[\w.,&'’-]+\s+){{0,4}}(?:{title})(?:\s*[-–—:]?\s*\(?(?:continued|unaudited)\)?)?[.:]?",
        re.IGNORECASE,
    )
    for kind, title in TITLES.items()
}
"""A line that is a statement's title: at most four words before it (the company, "condensed
consolidated"), nothing after it but "(continued)" or "(unaudited)"."""
FIGURES = {
    "balance": re.compile(
        r"\b(?:total\s+)?(?:current\s+)?(?:assets|liabilities)\b|\binventor(?:y|ies)\b|"
        r"\baccounts\s+(?:payable|receivable)\b|\bshareholders'?\s+equity\b|\bworking\s+capital\b|"
        r"\bcash\s+(?:&|and)\s+cash\s+equivalents\b",
        re.IGNORECASE,
    ),
    "income": re.compile(
        r"\b(?:net\s+)?revenues?\b|\bnet\s+sales\b|\bcost\s+of\s+(?:goods\s+sold|sales|revenues?)\b|"
        r"\bCOGS\b|\bgross\s+(?:profits?|margins?)\b|\boperating\s+income\b|\bnet\s+(?:income|earnings)\b|"
        r"\bearnings\s+per\s+share\b|\bEPS\b",
        re.IGNORECASE,
    ),
    "cash": re.compile(
        r"\bcapital\s+expenditures?\b|\bcapex\b|\b(?:operating|investing|financing)\s+activities\b|"
        r"\bcash\s+flows?\b|\bfree\s+cash\b|\bpurchases?\s+of\s+property",
        re.IGNORECASE,
    ),
}
"""Figures each statement holds, as questions name them."""


def asked_statements(question: str) -> set[str]:
    """The statements a question names; failing that, those holding the figures it names."""
    named = {kind for kind, title in NAMED.items() if title.search(question)}
    if named:
        return named
    return {kind for kind, figure in FIGURES.items() if figure.search(question)}


def statement_pages(kinds: set[str], pages: list[str]) -> set[int]:
    """The (1-based) pages that print one of these statements: its title in their first
    lines, and not beside two other statements' titles (an index of statements)."""
    if not kinds:
        return set()
    printed: set[int] = set()
    for number, text in enumerate(pages, start=1):
        lines = [clean_text(line) for line in text.splitlines() if line.strip()][:FIRST_LINES]
        titled = {
            kind for kind, title in SET_AS_TITLE.items() for line in lines if title.fullmatch(line)
        }
        if titled & kinds and len(titled) < 3:
            printed.add(number)
    return printed
