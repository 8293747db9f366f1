"""Which fiscal year and quarter a filing covers, in the company's own calendar.

Companies number their years and quarters from their own year end: Amcor's quarter ended
31 December 2022 is the second of its fiscal 2023 (its years end on 30 June), Microsoft's
quarter ended 31 March is its third. Reading a quarter from the calendar month of its end
gets both wrong. A 10-Q says which quarter it is without naming it: the longest span its
statements cover up to the period end ("six months ended December 31, 2022" is a second
quarter, "thirty-nine weeks ended" a third). The fiscal year is then the one that ends the
remaining quarters later, named after the calendar year in which it ends, unless the filing
binds its own name to the period ("fiscal 2022 ended January 28, 2023": retailers differ on
this, so the filing's own words win).

A year that ends in the first days of January (a 52/53-week year closing on the Saturday or
Sunday nearest 31 December, such as Johnson & Johnson's 1 January 2023) is named after the
year almost all of it fell in.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta

QUARTER_LABEL = re.compile(
    r"\b(?P<ordinal>first|second|third|fourth)\s+quarter\s+of\s+(?:fiscal\s+)?(?:year\s+)?"
    r"(?P<year>(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
SPAN = re.compile(
    r"\b(?P<span>three|six|nine|thirteen|twenty[-\s]six|thirty[-\s]nine)\s+(?:months|weeks)"
    r"\s+ended",
    re.IGNORECASE,
)
QUARTERS_IN_SPAN = {
    "three": 1,
    "thirteen": 1,
    "six": 2,
    "twenty-six": 2,
    "nine": 3,
    "thirty-nine": 3,
}
"""Year-to-date spans a 10-Q's statements print, and the quarter each ends."""
EARLY_JANUARY_DAYS = 7
"""A year ending on or before 7 January is a 52/53-week year named for the year before."""


def quarter_period(ended: date | None, text: str) -> tuple[int | None, int | None]:
    """A 10-Q's fiscal year and quarter: the quarter from the longest year-to-date span its
    statements print (else the quarter it names most, else the calendar's), the year from the
    label the filing gives that quarter, else from the fiscal year end it implies."""
    labels = Counter(
        (int(m.group("year")), ORDINALS[m.group("ordinal").lower()])
        for m in QUARTER_LABEL.finditer(text)
    )
    quarter = _quarter_from_spans(text)
    if quarter is None and labels:
        quarter = labels.most_common(1)[0][0][1]
    if quarter is None:
        if ended is None:
            return None, None
        quarter = (ended.month - 1) // 3 + 1
    named = [year for (year, q), _ in labels.most_common() if q == quarter]
    if named:
        return named[0], quarter
    return (year_named(_add_months(ended, 3 * (4 - quarter))) if ended else None), quarter


def annual_year(ended: date, text: str) -> int:
    """A 10-K's fiscal year: the label the filing binds to its period end, else the name of
    the year by when it ends."""
    return bound_label(ended, text) or year_named(ended)


def year_named(year_end: date) -> int:
    """The usual name of a fiscal year by its end: the calendar year it ends in, or the one
    before for a 52/53-week year ending in the first days of January."""
    if year_end.month == 1 and year_end.day <= EARLY_JANUARY_DAYS:
        return year_end.year - 1
    return year_end.year


def bound_label(ended: date, text: str) -> int | None:
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


def _quarter_from_spans(text: str) -> int | None:
    """The quarter a 10-Q ends: the longest year-to-date span it prints (None without one)."""
    spans = [
        QUARTERS_IN_SPAN[re.sub(r"[-\s]+", "-", m.group("span").lower())]
        for m in SPAN.finditer(text)
    ]
    return max(spans) if spans else None


def _add_months(day: date, months: int) -> date:
    """Roughly ``months`` later (to within the few days a 52/53-week calendar drifts)."""
    return day + timedelta(days=round(months * 30.44))
