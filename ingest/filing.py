"""Who issued a filing, which form it is and which fiscal period it covers, from its own pages.

An analyst's library holds every year's filing of the same companies, and questions name the
company and the period ("FY2018 capital expenditure for 3M", "as of Q2 of FY2024"). So
ingestion reads, from the first pages of an SEC filing, what its cover page prints:

- ``issuer``: the line above "(Exact name of registrant as specified in its charter)";
- ``ticker``: the symbol in the "Trading Symbol(s)" table (filings since 2019 print one);
- ``form``: ``10-K``, ``10-Q``, ``8-K``, ``20-F`` from "FORM …";
- ``period_end``: "For the fiscal year / quarterly period ended <date>" (ISO date), or for an
  8-K the "Date of report";
- ``fiscal_year`` and ``fiscal_quarter`` (None for an annual report).

**The fiscal year follows the filing's own naming.** Companies whose year ends early in the
calendar year name it differently: Best Buy calls the year ended January 28, 2023 "fiscal
2023", Foot Locker calls its year ended January 28, 2023 "fiscal 2022". So a label the filing
binds to its own period end ("fiscal 2022 ended January 28, 2023", "January 28, 2023 (fiscal
2022)") wins; without one, the fiscal year is the calendar year in which the period ends (the
usual convention, and SEC's for the cover's period). A 10-Q's quarter and fiscal year come from
the phrase it repeats most ("second quarter of fiscal 2024"); without one, the calendar quarter
and year of its period end.

A document that is not an SEC filing gets no facts: every field is None (a paper already has its
year from its metadata).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from typing import TypedDict

from store.text import clean_text
from store.types import FilingFacts

PAGES_READ = 3
"""Cover pages: the facts are all on the first one or two."""
PAGES_FOR_LABELS = 40
"""Pages searched for the filing's own fiscal-year and quarter labels."""
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
PERIOD_END = re.compile(
    r"for\s+the\s+(?:fiscal\s+)?(?:year|quarterly\s+period|quarter|period)\s+ended:?\s+" + DATE,
    re.IGNORECASE,
)
REPORT_DATE = re.compile(r"date\s+of\s+report[^:]{0,60}:\s*" + DATE, re.IGNORECASE)
REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+registrant", re.IGNORECASE)
TRADING_SYMBOL = re.compile(r"trading\s+symbols?(?:\(s\))?", re.IGNORECASE)
TICKER = re.compile(r"^[A-Z]{1,5}(?:\.[A-Z])?$")
QUARTER_LABEL = re.compile(
    r"\b(?P<ordinal>first|second|third|fourth)\s+quarter\s+of\s+(?:fiscal\s+)?(?:year\s+)?"
    r"(?P<year>(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
CELL_BREAK = re.compile(r"\*\*\s+\*\*|\|")
SYMBOL_IN_ROW = re.compile(
    r"per\s+share\s+(?P<symbol>[A-Z]{1,5})\s+(?:The\s+)?(?:New\s+York|NYSE|Nasdaq|NASDAQ)"
)
EARNINGS_RELEASE = "earnings release"
RELEASE = re.compile(
    r"(?P<issuer>(?:[A-Z][A-Z0-9.,&'\-]*\s+){0,8}[A-Z][A-Z0-9.,&'\-]*)\s+(?:REPORTS|ANNOUNCES)\s+"
    r"(?:(?P<ordinal>FIRST|SECOND|THIRD|FOURTH)\s+QUARTER\s+)?(?P<full>(?:AND\s+)?FULL[- ]YEAR\s+)?"
    r"(?:FISCAL\s+)?(?:\d{4}\s+)?(?:EARNINGS|RESULTS|FINANCIAL\s+RESULTS)"
    r"(?:\s+FOR\s+(?:FISCAL\s+)?(?:YEAR\s+)?(?P<year>(?:19|20)\d{2}))?"
)
"""The headline of an earnings release: who reports which quarter (or year) of which fiscal
year. Uppercase words only, as headlines are set, so a sentence of a filing does not match."""
RELEASE_PERIOD_END = re.compile(r"(?:quarter|year|period)\s+ended\s+" + DATE, re.IGNORECASE)
SECTION_12B = re.compile(r"section\s+12\s*\(b\)", re.IGNORECASE)
FILE_NUMBER = re.compile(r"commission\s+file\s+(?:number|no\.?)[:\s]*[\d-]+", re.IGNORECASE)
NOT_TICKERS = frozenset({"YES", "NO", "NONE", "N/A", "NYSE"})


NO_FACTS = FilingFacts(
    issuer=None, ticker=None, form=None, period_end=None, fiscal_year=None, fiscal_quarter=None
)


def filing_facts(pages: list[str]) -> FilingFacts:
    """The facts of an SEC filing from its pages; ``NO_FACTS`` for any other document."""
    cover = plain_lines(pages[:PAGES_READ])
    flat = " ".join(cover.split())
    form = FORM.search(flat)
    if form is None:
        return release_facts(" ".join(plain_lines(pages[:1]).split()))
    kind = form.group("form").upper()
    ended = PERIOD_END.search(flat) or (REPORT_DATE.search(flat) if kind == "8-K" else None)
    period_end = _date(ended) if ended else None
    labels = " ".join(plain_lines(pages[:PAGES_FOR_LABELS]).split())
    year, quarter = _fiscal_period(kind, period_end, labels)
    return FilingFacts(
        issuer=_issuer(cover),
        ticker=_ticker(cover),
        form=kind,
        period_end=period_end.isoformat() if period_end else None,
        fiscal_year=year,
        fiscal_quarter=quarter,
    )


def release_facts(first_page: str) -> FilingFacts:
    """An earnings release's facts from its headline ("THE WALT DISNEY COMPANY REPORTS FIRST
    QUARTER EARNINGS FOR FISCAL 2025"), or ``NO_FACTS`` when the first page has none."""
    headline = RELEASE.search(first_page)
    if headline is None:
        return NO_FACTS
    ended = RELEASE_PERIOD_END.search(first_page)
    period_end = _date(ended) if ended else None
    ordinal = headline.group("ordinal")
    quarter = ORDINALS[ordinal.lower()] if ordinal and not headline.group("full") else None
    year = headline.group("year") or (ended and str(period_end.year if period_end else ""))
    return FilingFacts(
        issuer=" ".join(headline.group("issuer").split()),
        ticker=None,
        form=EARNINGS_RELEASE,
        period_end=period_end.isoformat() if period_end else None,
        fiscal_year=int(year) if year else None,
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


def _issuer(cover: str) -> str | None:
    """The registrant's name: the last text line before "(Exact name of registrant …", or,
    on a cover without that caption, the first line after the commission file number."""
    found = REGISTRANT.search(cover)
    if found is not None:
        lines = list(reversed(cover[: found.start()].splitlines()))
    else:
        file_number = FILE_NUMBER.search(cover)
        lines = cover[file_number.end() :].splitlines()[1:8] if file_number else []
    for line in lines:
        name = " ".join(line.split()).strip(" _")
        if name and sum(c.isalpha() for c in name) >= 2:
            return re.sub(r"\s+([.,])", r"\1", name)
    return None


def _ticker(cover: str) -> str | None:
    """The first symbol in the table of securities registered under Section 12(b), when the
    table has a "Trading Symbol(s)" column (its caption may be printed above or below)."""
    start = SECTION_12B.search(cover)
    if start is None or not TRADING_SYMBOL.search(cover):
        return None
    table = re.split(r"indicate by check mark|section 12\(g\)", cover[start.end() :], flags=re.I)
    for line in table[0].splitlines():
        token = line.strip()
        if TICKER.match(token) and token not in NOT_TICKERS:
            return token
    in_a_row = SYMBOL_IN_ROW.search(table[0])  # the row printed as one line of text
    return in_a_row.group("symbol") if in_a_row else None


def _fiscal_period(kind: str, ended: date | None, text: str) -> tuple[int | None, int | None]:
    """The fiscal year (and, for a 10-Q, quarter) in the filing's own naming."""
    if kind == "10-Q":
        labels = Counter(
            (int(m.group("year")), ORDINALS[m.group("ordinal").lower()])
            for m in QUARTER_LABEL.finditer(text)
        )
        if labels:
            (year, quarter), _ = labels.most_common(1)[0]
            return year, quarter
        if ended is None:
            return None, None
        return ended.year, (ended.month - 1) // 3 + 1
    if ended is None:
        return None, None
    return _bound_label(ended, text) or ended.year, None


def _bound_label(ended: date, text: str) -> int | None:
    """A fiscal-year label the filing ties to its own period end ("fiscal 2022 ended January
    28, 2023", "January 28, 2023 (fiscal 2022)"), when it prints one."""
    day = rf"{ended.strftime('%B')}\.?\s+{ended.day},\s*{ended.year}"
    patterns = (
        rf"\bfiscal\s+(?:year\s+)?((?:19|20)\d{{2}})\b[^.;]{{0,40}}?\bended\s+(?:on\s+)?{day}",
        rf"{day}\s*\(\s*[\"“]?fiscal\s+(?:year\s+)?((?:19|20)\d{{2}})",
    )
    for pattern in patterns:
        found = re.search(pattern, text, re.IGNORECASE)
        if found and abs(int(found.group(1)) - ended.year) <= 1:
            return int(found.group(1))
    return None


# -- the period a question asks about ----------------------------------------------------------
class AskedPeriod(TypedDict):
    """The latest fiscal period a question names: its year, and its quarter when it names one."""

    fiscal_year: int
    fiscal_quarter: int | None


YEAR = r"(?P<year>(?:19|20)\d{2}|'?\d{2})\b"
OF_FISCAL = r"\s*(?:of\s+)?(?:FY\s*|fiscal\s+(?:year\s+)?)?"
ASKED = (
    re.compile(r"\bQ(?P<quarter>[1-4])" + OF_FISCAL + YEAR, re.IGNORECASE),
    re.compile(r"\b(?P<ordinal>first|second|third|fourth)\s+quarter" + OF_FISCAL + YEAR, re.I),
    re.compile(r"\bFY\s*" + YEAR, re.IGNORECASE),
    re.compile(r"\bfiscal\s+(?:year\s+)?(?P<year>(?:19|20)\d{2})\b", re.IGNORECASE),
    re.compile(r"\bas\s+of\s+" + DATE, re.IGNORECASE),
)


def asked_period(question: str) -> AskedPeriod | None:
    """The latest fiscal period a question names ("FY2018", "fiscal 2023", "Q2 of FY2024",
    "second quarter of fiscal 2024", "as of December 31, 2022"), or None. Of several, the
    latest is the one the answer is read from (a filing reports its own period and the ones
    before it); a quarter counts only where it is attached to that latest year."""
    found: list[tuple[int, int | None]] = []
    for pattern in ASKED:
        for match in pattern.finditer(question):
            year = _full_year(match.group("year"))
            if year is None:
                continue
            groups = match.groupdict()
            quarter = int(groups["quarter"]) if groups.get("quarter") else None
            if groups.get("ordinal"):
                quarter = ORDINALS[groups["ordinal"].lower()]
            found.append((year, quarter))
    if not found:
        return None
    latest = max(year for year, _ in found)
    quarters = {quarter for year, quarter in found if year == latest and quarter is not None}
    return AskedPeriod(
        fiscal_year=latest, fiscal_quarter=quarters.pop() if len(quarters) == 1 else None
    )


def _full_year(text: str) -> int | None:
    """A four-digit year from "2018", "18" or "'18" (two digits are this century)."""
    digits = text.lstrip("'")
    if len(digits) == 4:
        return int(digits)
    return 2000 + int(digits) if len(digits) == 2 else None
