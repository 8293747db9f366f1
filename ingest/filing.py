"""Who issued a filing, which form it is and which fiscal period it covers, from its own pages.

An analyst's library holds every year's filing of the same companies, and questions name the
company and the period ("FY2018 capital expenditure for 3M", "as of Q2 of FY2024"). So
ingestion reads, from the first pages of an SEC filing, what its cover page prints:

- ``issuer``: the line above "(Exact name of registrant as specified in its charter)", with
  spacing, capitals and split small capitals mended (``issuer_name``);
- ``ticker``: the symbol in the "Trading Symbol(s)" table (filings since 2019 print one);
- ``form``: ``10-K``, ``10-Q``, ``8-K``, ``20-F`` from "FORM …" printed beside the
  Commission's name and address (a release that mentions "our Form 10-Q" is not one);
- ``period_end``: "For the fiscal year / quarterly period ended <date>" (ISO date); an 8-K
  the period its earnings release reports, else its "Date of report";
- ``fiscal_year`` and ``fiscal_quarter`` in the company's own calendar (``ingest.fiscal``).

An earnings release is known by its headline ("PepsiCo Reports First-Quarter 2023 Results").
A document that is neither gets no facts: every field is None (a paper already has its year
from its metadata). ``filing_title`` names a filing by its facts ("Best Buy Co., Inc. — 10-Q,
Q2 fiscal 2024"), since its first line is "FORM 10-K" or the Commission's name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from datetime import date
from typing import Any

from ingest.fiscal import ORDINALS, annual_year, quarter_period
from store.text import clean_text
from store.types import FilingFacts

PAGES_READ = 3
"""Cover pages: the facts are all on the first one or two."""
PAGES_FOR_LABELS = 40
"""Pages searched for the filing's own fiscal-year and quarter labels."""
PAGES_FOR_EXHIBITS = 8
"""Pages of an 8-K searched for the earnings release it furnishes (its exhibit 99.1)."""
FORM_NEAR_COMMISSION = 400
"""Characters from the Commission's name or address to the cover's "FORM …" at most."""
MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
DATE = r"(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2}),\s*(?P<year>(?:19|20)\d{2})"
FORM = re.compile(r"\bFORM\s+(?P<form>10-K|10-Q|8-K|20-F)\b", re.IGNORECASE)
COMMISSION = re.compile(r"securities\s+and\s+exchange\s+commission|\b20549\b", re.IGNORECASE)
PERIOD_END = re.compile(
    r"for\s+the\s+(?:fiscal\s+)?(?:year|quarterly\s+period|quarter|period)\s+ended:?\s+" + DATE,
    re.IGNORECASE,
)
REPORT_DATE = re.compile(r"date\s+of\s+report[^:]{0,60}:\s*" + DATE, re.IGNORECASE)
REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+registrant", re.IGNORECASE)
TRADING_SYMBOL = re.compile(r"trading\b|symbols?\b", re.IGNORECASE)
EXCHANGE = r"(?:The\s+)?(?:New\s+York|NYSE|Nasdaq|NASDAQ|Chicago|Cboe|London|Euronext)"
SYMBOL = re.compile(r"(?:^|\s)(?P<symbol>[A-Z]{1,5}(?:\.[A-Z])?)\s+" + EXCHANGE)
"""A symbol followed by its exchange, in a row of the securities table however it is set."""
CELL_BREAK = re.compile(r"\*\*\s+\*\*|\|")
FILE_NUMBER = re.compile(r"commission\s+file\s+(?:number|no\.?)[:\s]*[\d-]+", re.IGNORECASE)
SECTION_12B = re.compile(r"section\s+12\s*\(b\)", re.IGNORECASE)
NOT_TICKERS = frozenset({"YES", "NO", "NONE", "N/A", "NYSE", "LLC"})
LEGAL_SUFFIX = re.compile(
    r"^(?:plc|p\.l\.c\.|inc\.?|incorporated|corp\.?|corporation|ltd\.?|limited|llc|l\.p\.|"
    r"n\.v\.|s\.a\.|ag|se|co\.?|company)$",
    re.IGNORECASE,
)
"""A line that is only a legal form belongs to the name on the line above ("AMCOR" / "PLC")."""
SMALL_CAPS_SPLIT = re.compile(r"\b(?P<initial>[A-Z]) (?P<rest>[A-Z]{2,})\b")
""""MGM R ESORTS": a capital set larger than the small capitals after it, read as a word."""
EARNINGS_RELEASE = "earnings release"
HEADLINE = re.compile(
    r"^(?P<issuer>[A-Z0-9][\w.,&'’-]*(?:\s+[A-Z0-9&][\w.,&'’-]*){0,6}?)\s+"
    r"(?i:reports|announces|posts|delivers)\s+(?P<rest>.{0,160})"
)
"""The headline of an earnings release: a capitalised name, then what it reports."""
HEADLINE_RESULTS = re.compile(r"\b(?:results|earnings)\b", re.IGNORECASE)
HEADLINE_QUARTER = re.compile(
    r"\b(?:(?P<ordinal>first|second|third|fourth)[-\s]quarter|Q(?P<number>[1-4]))\b", re.I
)
HEADLINE_FULL_YEAR = re.compile(r"\b(?:full[-\s]year|annual)\b", re.IGNORECASE)
HEADLINE_YEAR = re.compile(r"\b(?:fiscal\s+(?:year\s+)?|FY\s*)?(?P<year>(?:19|20)\d{2})\b", re.I)
HEADLINE_LINES = 30
"""Lines of a page searched for a release's headline (it is set near the top)."""
RELEASE_PERIOD_END = re.compile(r"(?:quarter|year|period)\s+ended\s+" + DATE, re.IGNORECASE)


NO_FACTS = FilingFacts(
    issuer=None, ticker=None, form=None, period_end=None, fiscal_year=None, fiscal_quarter=None
)


def filing_facts(pages: list[str]) -> FilingFacts:
    """The facts of an SEC filing or earnings release from its pages; ``NO_FACTS`` for any
    other document."""
    cover = plain_lines(pages[:PAGES_READ])
    flat = " ".join(cover.split())
    released = release_facts(pages)
    kind = _cover_form(flat)
    if kind is None or released["form"]:
        return released
    labels = _labels(pages)
    if kind == "8-K":
        return _current_report(pages, cover, flat, labels)
    ended = PERIOD_END.search(flat)
    period_end = _date(ended) if ended else None
    if kind == "10-Q":
        year, quarter = quarter_period(period_end, labels)
    else:
        year, quarter = (annual_year(period_end, labels) if period_end else None), None
    return FilingFacts(
        issuer=_issuer(cover, labels),
        ticker=_ticker(cover),
        form=kind,
        period_end=period_end.isoformat() if period_end else None,
        fiscal_year=year,
        fiscal_quarter=quarter,
    )


def _current_report(pages: list[str], cover: str, flat: str, labels: str) -> FilingFacts:
    """An 8-K: the period of the earnings release it furnishes, else its date of report."""
    issuer, ticker = _issuer(cover, labels), _ticker(cover)
    for at in range(1, min(len(pages), PAGES_FOR_EXHIBITS)):  # page 1 is the cover
        reported = release_facts(pages, at)
        if reported["fiscal_year"] is not None:
            return {
                **reported,
                "issuer": issuer or reported["issuer"],
                "form": "8-K",
                "ticker": ticker,
            }
    dated = REPORT_DATE.search(flat)
    reported_on = _date(dated) if dated else None
    return FilingFacts(
        issuer=issuer,
        ticker=ticker,
        form="8-K",
        period_end=reported_on.isoformat() if reported_on else None,
        fiscal_year=reported_on.year if reported_on else None,
        fiscal_quarter=None,
    )


def _cover_form(flat: str) -> str | None:
    """The form a cover prints under the Commission's name or address, or None (a release
    says "our Form 10-Q, filed with the Securities and Exchange Commission")."""
    near = [m.end() for m in COMMISSION.finditer(flat)]
    for found in FORM.finditer(flat):
        if any(0 <= found.start() - at <= FORM_NEAR_COMMISSION for at in near):
            return found.group("form").upper()
    return None


def release_facts(pages: list[str], at: int = 0) -> FilingFacts:
    """An earnings release's facts from the headline on page ``at`` ("THE WALT DISNEY COMPANY
    REPORTS FIRST QUARTER EARNINGS FOR FISCAL 2025", "PepsiCo Reports First-Quarter 2023
    Results"), or ``NO_FACTS`` when the page has none."""
    if at >= len(pages):
        return NO_FACTS
    page = plain_lines([pages[at]])
    lines = [" ".join(line.split()) for line in page.splitlines() if line.strip()]
    for first in range(min(len(lines), HEADLINE_LINES)):
        headline = HEADLINE.match(" ".join(lines[first : first + 2]))
        if headline and HEADLINE_RESULTS.search(headline.group("rest")):
            return _release(headline, " ".join(lines), _labels(pages))
    return NO_FACTS


def _labels(pages: list[str]) -> str:
    """The text searched for the filing's own fiscal labels and name spellings, flattened
    (read only once a document is known to be a filing or a release)."""
    return " ".join(plain_lines(pages[:PAGES_FOR_LABELS]).split())


def _release(headline: re.Match[str], page: str, text: str) -> FilingFacts:
    """A release's facts from its headline and the period end its first page states."""
    rest = headline.group("rest")
    results = HEADLINE_RESULTS.search(rest)
    reported = rest[: results.end()] if results else rest  # not "…; Raises Full-Year Outlook"
    ended = RELEASE_PERIOD_END.search(page)
    period_end = _date(ended) if ended else None
    quarter_named = HEADLINE_QUARTER.search(reported)
    quarter = None
    if quarter_named and not HEADLINE_FULL_YEAR.search(reported):
        ordinal, number = quarter_named.group("ordinal"), quarter_named.group("number")
        quarter = ORDINALS[ordinal.lower()] if ordinal else int(number)
    year_named_in = HEADLINE_YEAR.search(rest)
    year = int(year_named_in.group("year")) if year_named_in else None
    if year is None and period_end is not None:
        year = quarter_period(period_end, text)[0] if quarter else annual_year(period_end, text)
    return FilingFacts(
        issuer=issuer_name(headline.group("issuer").strip(" ,"), text),
        ticker=None,
        form=EARNINGS_RELEASE,
        period_end=period_end.isoformat() if period_end else None,
        fiscal_year=year,
        fiscal_quarter=quarter,
    )


def plain_lines(pages: list[str]) -> str:
    """The pages as plain text, one line per line or cell (markdown and tags removed:
    ingestion's pages are markdown, where a cover's name may be a bold heading and the cells of
    its tables are separated by ``|`` or set as bold runs side by side)."""
    return "\n".join(
        clean_text(cell)
        for page in pages
        for line in page.splitlines()
        for cell in CELL_BREAK.split(line)
    )


def _date(found: re.Match[str]) -> date | None:
    """The date a match holds, or None when it is not one."""
    month = MONTHS.get(found.group("month").lower())
    if month is None:
        return None
    try:
        return date(int(found.group("year")), month, int(found.group("day")))
    except ValueError:
        return None


def _issuer(cover: str, text: str) -> str | None:
    """The registrant's name as ``issuer_name`` mends it (None when the cover prints none)."""
    line = _registrant_line(cover)
    return issuer_name(line, text) if line else None


def _registrant_line(cover: str) -> str | None:
    """The last name-like line before "(Exact name of registrant …" (a legal form alone on
    its line joined to the line above), or, on a cover without that caption, the first
    name-like line after the commission file number."""
    found = REGISTRANT.search(cover)
    if found is not None:
        lines = list(reversed(cover[: found.start()].splitlines()))
    else:
        file_number = FILE_NUMBER.search(cover)
        lines = cover[file_number.end() :].splitlines()[1:8] if file_number else []
    names = [
        name for name in (" ".join(line.split()).strip(" _") for line in lines) if _a_name(name)
    ]
    if not names:
        return None
    if found is not None and LEGAL_SUFFIX.match(names[0]) and len(names) > 1:
        return f"{names[1]} {names[0]}"
    return names[0]


def _a_name(line: str) -> bool:
    """Whether a cover line can be a registrant's name: letters, and not a file number, a
    caption in brackets or a row of identifiers."""
    letters = sum(c.isalpha() for c in line)
    return (
        letters >= 2
        and letters > sum(c.isdigit() for c in line)
        and not FILE_NUMBER.search(line)
        and not line.startswith("(")
    )


def issuer_name(name: str, text: str) -> str:
    """A name as a reader writes it: spacing mended ("NIKE, Inc ." → "NIKE, Inc."), capitals
    split from their small capitals joined where the filing prints the word whole ("MGM R
    ESORTS" → "MGM RESORTS"), and a name set in capitals given the mixed case the filing
    itself uses for it most, else capitalised word by word (legal forms kept)."""
    name = re.sub(r"\s+([.,])", r"\1", " ".join(name.split()))
    name = _mend_small_caps(name, set(re.findall(r"[a-z]+", text.lower())))
    if any(c.islower() for c in name):
        return name
    return _printed_case(name, text) or " ".join(_capitalised(word) for word in name.split())


def _mend_small_caps(name: str, words: set[str]) -> str:
    """Join "R ESORTS" where the filing's words include "resorts"; leave "T ROWE" alone."""

    def whole(found: re.Match[str]) -> str:
        joined = found["initial"] + found["rest"]
        return joined if joined.lower() in words else found[0]

    return SMALL_CAPS_SPLIT.sub(whole, name)


def _printed_case(name: str, text: str) -> str | None:
    """The most frequent mixed-case spelling of ``name`` in the filing's text, if any."""
    pattern = r"\s+".join(re.escape(word) for word in name.split())
    spelled = Counter(
        " ".join(m.group(0).split())
        for m in re.finditer(rf"(?<![\w&]){pattern}(?![\w&])", text, re.IGNORECASE)
        if any(c.islower() for c in m.group(0))
    )
    return spelled.most_common(1)[0][0] if spelled else None


def _capitalised(word: str) -> str:
    """ "BEST" → "Best", "CO.," → "Co.,"; a word with digits or without vowels ("3M", "MGM")
    is an initialism and stays."""
    if any(c.isdigit() for c in word) or not re.search(r"[AEIOUY]", word):
        return word
    return word[:1] + word[1:].lower()


def _ticker(cover: str) -> str | None:
    """The first symbol in the table of securities registered under Section 12(b), when the
    table has a trading-symbol column (its caption may be printed above, below or split)."""
    start = SECTION_12B.search(cover)
    if start is None:
        return None
    table = re.split(r"indicate by check mark|section 12\(g\)", cover[start.end() :], flags=re.I)[0]
    if not TRADING_SYMBOL.search(table):
        return None
    for line in table.splitlines():
        token = line.strip()
        if re.fullmatch(r"[A-Z]{1,5}(?:\.[A-Z])?", token) and token not in NOT_TICKERS:
            return token
    in_a_row = [m["symbol"] for m in SYMBOL.finditer(table) if m["symbol"] not in NOT_TICKERS]
    return in_a_row[0] if in_a_row else None


# -- a filing's name ---------------------------------------------------------------------------
def filing_title(facts: FilingFacts) -> str | None:
    """ "Best Buy Co., Inc. — 10-Q, Q2 fiscal 2024", "Foot Locker, Inc. — 8-K, May 20, 2022";
    None for a document that is not a filing or whose issuer is unknown."""
    if not facts["form"] or not facts["issuer"]:
        return None
    return f"{facts['issuer']} — {facts['form']}, {period_words(facts)}".rstrip(", ")


def period_words(facts: Mapping[str, Any]) -> str:
    """The period a filing covers in words: "fiscal 2022", "Q2 fiscal 2024", or an 8-K's
    date of report ("" when unknown)."""
    if facts["fiscal_quarter"] and facts["fiscal_year"]:
        return f"Q{facts['fiscal_quarter']} fiscal {facts['fiscal_year']}"
    if facts["form"] == "8-K" and facts["period_end"]:
        return date.fromisoformat(facts["period_end"]).strftime("%B %-d, %Y")
    return f"fiscal {facts['fiscal_year']}" if facts["fiscal_year"] else ""
