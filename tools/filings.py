"""Which of the library's filings a question or a filter means.

Questions name a company and a period ("FY2018 capital expenditure for 3M", "as of Q2 of
FY2024"); the model's filters name an issuer, a form, a year. Read at query time, against the
facts ingestion stored for each filing (``ingest.filing``): the period a question names, whether
it names an issuer, and the order that puts the filing it means first among one issuer's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, TypeVar

from ingest.filing import DATE
from ingest.fiscal import ORDINALS
from store.text import tokens


class Ranked(Protocol):
    """A search result: anything that names its document."""

    doc_id: str


HitT = TypeVar("HitT", bound=Ranked)


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


def filing_label(facts: Mapping[str, Any] | None) -> str:
    """ "10-K FY2019", "10-Q Q2 FY2024", "8-K 2022-05-20"; "" for other documents."""
    if not facts or not facts.get("form"):
        return ""
    if facts["form"] == "8-K" or not facts.get("fiscal_year"):
        return f"{facts['form']} {facts.get('period_end') or ''}".strip()
    quarter = f"Q{facts['fiscal_quarter']} " if facts.get("fiscal_quarter") else ""
    return f"{facts['form']} {quarter}FY{facts['fiscal_year']}"


@dataclass(frozen=True)
class FilingFilter:
    """Only the filings of an issuer (name words or ticker), a form, a fiscal year or quarter;
    with any of them set, other documents are left out."""

    issuer: str | None = None
    form: str | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None

    @property
    def active(self) -> bool:
        conditions = (self.issuer, self.form, self.fiscal_year, self.fiscal_quarter)
        return any(condition is not None for condition in conditions)

    def admits(self, facts: Mapping[str, Any]) -> bool:
        """Whether a document's filing facts pass every condition set."""
        if not facts.get("form"):
            return False
        if self.issuer is not None and not issuer_matches(self.issuer, facts):
            return False
        if self.form is not None and str(facts["form"]).lower() != self.form.lower():
            return False
        if self.fiscal_year is not None and facts.get("fiscal_year") != self.fiscal_year:
            return False
        return self.fiscal_quarter is None or facts.get("fiscal_quarter") == self.fiscal_quarter


def issuer_matches(wanted: str, facts: Mapping[str, Any]) -> bool:
    """A name whose words are all in the issuer's ("best buy" for "BEST BUY CO., INC."), or
    its ticker."""
    ticker = str(facts.get("ticker") or "")
    if ticker and wanted.strip().upper() == ticker:
        return True
    asked, issuer = issuer_key(wanted), issuer_key(facts.get("issuer"))
    return bool(asked and issuer) and set(str(asked).split()) <= set(str(issuer).split())


# -- fiscal periods --------------------------------------------------------------------------------
ENTITY_WORDS = frozenset(
    {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "plc", "llc", "the"}
)


def issuer_key(issuer: str | None) -> str | None:
    """An issuer's name as every filing of it prints it, near enough ("BEST BUY CO., INC." and
    "Best Buy Co., Inc." are one issuer; "NIKE, Inc." and "NIKE Inc" too)."""
    words = tokens(issuer or "")
    kept = [word for word in words if word not in ENTITY_WORDS]
    return " ".join(kept) or None


def same_issuer(one: str | None, other: str | None) -> bool:
    """Whether two filings' issuers are one ("BEST BUY CO., INC." and "Best Buy Co., Inc.")."""
    key = issuer_key(one)
    return key is not None and key == issuer_key(other)


def names_issuer(question: str, facts: Mapping[str, Any]) -> bool:
    """Whether a question names a filing's issuer: every word of its name ("Best Buy"), the
    first word of a longer name written as a name ("Adobe" for Adobe Systems Incorporated,
    "AMCOR" for Amcor plc), or its ticker."""
    words = set(tokens(question))
    key = issuer_key(facts.get("issuer"))
    if key and set(key.split()) <= words:
        return True
    first = key.split()[0] if key else ""
    if len(first) >= FIRST_WORD_LETTERS and re.search(
        rf"\b(?:{re.escape(first.capitalize())}|{re.escape(first.upper())})\b", question
    ):
        return True
    ticker = facts.get("ticker")
    return bool(ticker) and re.search(rf"\b{re.escape(str(ticker))}\b", question) is not None


FIRST_WORD_LETTERS = 5
"""A shorter first word is too often an ordinary one ("Best practices" is not Best Buy)."""
ANNUAL_FORMS = frozenset({"10-K", "20-F"})
OTHER_FILINGS_RANK = 2


def period_rank(facts: Mapping[str, Any], asked: AskedPeriod | None) -> tuple[int, int]:
    """For a named period: 0 the filing of exactly that period (its quarter's 10-Q, or for a
    year its annual report), 1 another filing of the asked fiscal year, 2 any other. Without
    one, the comprehensive filing: annual reports first, then 10-Qs, then 8-Ks and releases,
    the latest first within each."""
    if asked is None:
        form = facts.get("form")
        kind = 0 if form in ANNUAL_FORMS else 1 if form == "10-Q" else OTHER_FILINGS_RANK
        return kind, -int(facts.get("fiscal_year") or 0)
    if facts.get("fiscal_year") != asked["fiscal_year"]:
        return OTHER_FILINGS_RANK, 0
    if asked["fiscal_quarter"] is not None:
        return (0 if facts.get("fiscal_quarter") == asked["fiscal_quarter"] else 1), 0
    return (0 if facts.get("form") in ANNUAL_FORMS else 1), 0


def period_order(
    hits: list[HitT], question: str, facts_of: Callable[[str], Mapping[str, Any]]
) -> list[HitT]:
    """Among the results of one issuer, the filing the question means first.

    A question naming a period ("FY2018", "Q2 of FY2024") is about one filing, and the same
    company's other filings match its words as well (each reports the years before it too).
    A question naming the company but no period ("What industry does AMCOR operate in?") is
    about the company, which its latest annual report describes whole; an 8-K or a release
    only adds to it. So the places the issuer's filings hold in the ranking are refilled with
    them in that order (``period_rank``); every other result keeps its place, and nothing is
    dropped: a comparative figure in a later filing is still there, just after. A question
    that names a period but none of the issuers found is ordered the same way across all the
    filings found: the period is then all it says about which one it means.
    """
    asked = asked_period(question)
    facts = [facts_of(hit.doc_id) for hit in hits]
    named = {p for p, fact in enumerate(facts) if fact.get("form") and names_issuer(question, fact)}
    if asked is None and not named:
        return hits
    places: dict[str, list[int]] = {}
    for position, fact in enumerate(facts):
        key = issuer_key(fact.get("issuer")) if fact.get("form") else None
        if key is None or (asked is None and position not in named):
            continue
        places.setdefault(key if named else "", []).append(position)
    ordered = list(hits)
    for positions in places.values():
        ranked = sorted(positions, key=lambda p: (period_rank(facts[p], asked), p))
        for place, position in zip(positions, ranked, strict=True):
            ordered[place] = hits[position]
    return ordered
