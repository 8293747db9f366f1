"""A filing's issuer, form and fiscal period from its cover; the period a question names; the
search order that puts the named period first among one issuer's filings."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ingest.filing import NO_FACTS, asked_period, filing_facts
from tools.schemas import search_documents
from tools.search import FilingFilter, SearchHit, issuer_key, period_order

COVER_10K = """**UNITED STATES**
**SECURITIES AND EXCHANGE COMMISSION**
**FORM 10-K**
☑ **ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934**
**For the fiscal year ended January 28, 2023**
Commission file number 1-9595
##### **BEST BUY CO., INC.**
**(Exact name of registrant as specified in its charter)**
Securities registered pursuant to Section 12(b) of the Act:
|Title of each class|Trading Symbol|Name of exchange on which registered|
|Common Stock, $0.10 par value per share|BBY|New York Stock Exchange|
Securities registered pursuant to Section 12(g) of the Act: None.
Indicate by check mark if the registrant is a well-known seasoned issuer. Yes No
"""


def test_a_10k_cover_gives_issuer_ticker_form_and_period() -> None:
    assert filing_facts([COVER_10K, "Fiscal 2023 was a year of change."]) == {
        "issuer": "BEST BUY CO., INC.",
        "ticker": "BBY",
        "form": "10-K",
        "period_end": "2023-01-28",
        "fiscal_year": 2023,
        "fiscal_quarter": None,
    }


def test_a_year_ending_in_january_follows_the_filings_own_name_for_it() -> None:
    """Foot Locker calls its year ended January 28, 2023 "fiscal 2022"; without such a label
    the year is the calendar year the period ends in (Best Buy's "fiscal 2023")."""
    cover = COVER_10K.replace("BEST BUY CO., INC.", "Foot Locker, Inc.")
    named = "Our fiscal 2022 ended January 28, 2023 and included 52 weeks."
    assert filing_facts([cover, named])["fiscal_year"] == 2022
    in_brackets = "for the year ended January 28, 2023 (“fiscal 2022”), sales fell"
    assert filing_facts([cover, in_brackets])["fiscal_year"] == 2022
    assert filing_facts([cover, "Fiscal 2024 will bring new stores."])["fiscal_year"] == 2023


def test_a_10q_takes_the_quarter_it_names_most_else_the_calendar_quarter() -> None:
    cover = COVER_10K.replace("FORM 10-K", "FORM 10-Q").replace(
        "For the fiscal year ended January 28, 2023", "For the quarterly period ended July 29, 2023"
    )
    body = "Results for the second quarter of fiscal 2024. " * 3 + "the first quarter of 2023"
    facts = filing_facts([cover, body])
    assert (facts["form"], facts["fiscal_year"], facts["fiscal_quarter"]) == ("10-Q", 2024, 2)
    assert filing_facts([cover])["fiscal_quarter"] == 3  # July: the calendar's third quarter


def test_an_8k_is_dated_by_its_report() -> None:
    cover = (
        "FORM 8-K\nCURRENT REPORT\nDate of report (Date of earliest event reported): May\n"
        "20, 2022 (May 18, 2022)\nFoot Locker, Inc.\n(Exact name of registrant as specified "
        "in charter)\n"
    )
    facts = filing_facts([cover])
    assert (facts["form"], facts["period_end"], facts["issuer"]) == (
        "8-K",
        "2022-05-20",
        "Foot Locker, Inc.",
    )


def test_a_cover_without_the_registrant_caption_names_the_line_after_the_file_number() -> None:
    cover = (
        "FORM 10-K\nFor the Fiscal Year Ended June 30, 2016\nCommission File Number 001-37845\n"
        " \nMICROSOFT CORPORATION\nWASHINGTON\n"
    )
    assert filing_facts([cover])["issuer"] == "MICROSOFT CORPORATION"


def test_other_documents_get_no_facts() -> None:
    paper = "Attention Is All You Need\nAbstract. We propose a new network architecture."
    assert filing_facts([paper, "1 Introduction"]) == NO_FACTS


@pytest.mark.parametrize(
    ("question", "year", "quarter"),
    [
        ("What is the FY2018 capital expenditure amount for 3M?", 2018, None),
        ("the FY2015 - FY2017 3 year average net profit margin", 2017, None),
        ("any drop in cash between FY 2023 and Q2 of FY2024?", 2024, 2),
        ("sales in the second quarter of fiscal 2024", 2024, 2),
        ("Q3 FY24 revenue", 2024, 3),
        ("revenue in fiscal year 2023", 2023, None),
        ("total debt as of December 31, 2022", 2022, None),
    ],
)
def test_the_latest_period_a_question_names(question: str, year: int, quarter: int | None) -> None:
    assert asked_period(question) == {"fiscal_year": year, "fiscal_quarter": quarter}


def test_a_question_without_a_period_names_none() -> None:
    assert asked_period("Does Foot Locker's new CEO have previous CEO experience?") is None
    assert asked_period("How many papers does S2ORC contain, 81.1M?") is None


def test_issuers_are_one_however_their_filings_print_them() -> None:
    assert issuer_key("BEST BUY CO., INC.") == issuer_key("Best Buy Co., Inc.") == "best buy"
    assert issuer_key("##### **NIKE, Inc.**") == issuer_key("NIKE Inc") == "nike"
    assert issuer_key(None) is None


def hit(doc_id: str) -> SearchHit:
    return SearchHit(doc_id, doc_id, [], None, None, 10, "", 1.0, None, None)


FACTS: dict[str, dict[str, Any]] = {
    "bby-2023-10k": {"issuer": "Best Buy Co., Inc.", "form": "10-K", "fiscal_year": 2023},
    "bby-2024-q2": {
        "issuer": "BEST BUY CO., INC.",
        "form": "10-Q",
        "fiscal_year": 2024,
        "fiscal_quarter": 2,
    },
    "bby-2019-10k": {"issuer": "BEST BUY CO., INC.", "form": "10-K", "fiscal_year": 2019},
    "nke-2019-10k": {"issuer": "NIKE, Inc.", "ticker": "NKE", "form": "10-K", "fiscal_year": 2019},
    "paper": {},
}


def order(question: str, ranked: list[str]) -> list[str]:
    hits = period_order([hit(d) for d in ranked], question, lambda d: FACTS[d])
    return [h.doc_id for h in hits]


def test_the_named_period_comes_first_among_its_issuers_filings_and_nothing_else_moves() -> None:
    ranked = ["bby-2023-10k", "paper", "nke-2019-10k", "bby-2019-10k", "bby-2024-q2"]
    assert order("Best Buy inventories at year end FY2019?", ranked) == [
        "bby-2019-10k",
        "paper",
        "nke-2019-10k",
        "bby-2023-10k",  # the others keep their order
        "bby-2024-q2",
    ]
    assert order("Best Buy stores between FY2023 and Q2 of FY2024?", ranked)[0] == "bby-2024-q2"
    assert order("What does Best Buy sell?", ranked) == ranked  # no period: no change
    assert sorted(order("Nike FY2019 revenue", ranked)) == sorted(ranked)  # nothing is dropped
    by_ticker = order("NKE revenue in FY2019", ["bby-2019-10k", "nke-2019-10k"])
    assert by_ticker == ["bby-2019-10k", "nke-2019-10k"]  # one filing per issuer: no change


def test_a_period_without_a_company_orders_every_filing_found() -> None:
    """Without a company named, the period is all the question says about which filing."""
    ranked = ["nke-2019-10k", "paper", "bby-2023-10k", "bby-2024-q2"]
    assert order("Any drop in cash between FY 2023 and Q2 of FY2024?", ranked) == [
        "bby-2024-q2",
        "paper",
        "nke-2019-10k",
        "bby-2023-10k",
    ]


def test_an_earnings_release_is_known_by_its_headline() -> None:
    page = (
        "FOR IMMEDIATE RELEASE\nFebruary 5, 2025\nTHE WALT DISNEY COMPANY REPORTS\nFIRST QUARTER "
        "EARNINGS FOR FISCAL 2025\nThe Walt Disney Company today reported earnings for its first "
        "fiscal quarter ended December 28, 2024."
    )
    assert filing_facts([page]) == {
        "issuer": "THE WALT DISNEY COMPANY",
        "ticker": None,
        "form": "earnings release",
        "period_end": "2024-12-28",
        "fiscal_year": 2025,
        "fiscal_quarter": 1,
    }


def test_a_filing_filter_keeps_an_issuer_form_and_period() -> None:
    bby_q2 = FACTS["bby-2024-q2"]
    assert FilingFilter(issuer="best buy", form="10-Q", fiscal_year=2024).admits(bby_q2)
    assert FilingFilter(fiscal_quarter=2).admits(bby_q2)
    assert not FilingFilter(fiscal_quarter=1).admits(bby_q2)
    assert not FilingFilter(issuer="nike").admits(bby_q2)
    assert FilingFilter(issuer="NKE").admits(FACTS["nke-2019-10k"])  # its ticker
    assert not FilingFilter(form="10-K").admits(FACTS["paper"])  # not a filing
    assert not FilingFilter().active and FilingFilter(fiscal_year=2019).active


def test_the_models_filing_filters_are_validated() -> None:
    with pytest.raises(ValidationError, match="'10-K'"):
        search_documents(query="revenue", form="annual")
    with pytest.raises(ValidationError, match="less than or equal to 4"):
        search_documents(query="revenue", fiscal_quarter=5)
    assert search_documents(query="revenue", issuer="Nike", fiscal_year=2019).fiscal_year == 2019
