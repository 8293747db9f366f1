"""A filing's issuer, form and fiscal period from its cover; the period a question names; the
search order that puts the named period first among one issuer's filings."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ingest.filing import NO_FACTS, filing_facts, filing_title
from tools.filings import FilingFilter, asked_period, issuer_key, names_issuer, period_order
from tools.schemas import search_documents
from tools.search import SearchHit

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
        "issuer": "Best Buy Co., Inc.",  # capitals as words, legal forms kept
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
        "SECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n"
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
        "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nFor the Fiscal Year Ended "
        "June 30, 2016\nCommission File Number 001-37845\n \nMICROSOFT CORPORATION\nWASHINGTON\n"
    )
    body = "Microsoft Corporation develops software. MICROSOFT CORPORATION"
    assert filing_facts([cover, body])["issuer"] == "Microsoft Corporation"  # as it prints it


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
        "issuer": "The Walt Disney Company",
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


SEC = "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n"


def test_a_release_that_mentions_a_form_is_still_a_release() -> None:
    """PepsiCo's first-quarter release names its Form 10-Q; it is not one."""
    page = (
        "PepsiCo Reports First-Quarter 2023 Results; Raises Full-Year Outlook\n"
        "PURCHASE, N.Y. - April 25, 2023 - for the quarter ended March 25, 2023. Our Form 10-Q "
        "for the quarter will be filed with the Securities and Exchange Commission."
    )
    facts = filing_facts([page])
    assert (facts["issuer"], facts["form"]) == ("PepsiCo", "earnings release")
    assert (facts["fiscal_year"], facts["fiscal_quarter"], facts["period_end"]) == (
        2023,
        1,
        "2023-03-25",
    )


def test_an_8k_takes_the_period_of_the_release_it_furnishes() -> None:
    cover = SEC + "FORM 8-K\nDate of Report (Date of earliest event reported): February 1, 2023\n"
    cover += "AMCOR\nPLC\n(Exact name of registrant as specified in its charter)\n"
    release = (
        "Exhibit 99.1\nAmcor reports second quarter fiscal 2023 results\n"
        "Amcor plc today reported results for the quarter ended December 31, 2022."
    )
    facts = filing_facts([cover, release])
    assert facts["issuer"] == "Amcor plc"  # the legal form on its own line, as the text sets it
    assert (facts["form"], facts["fiscal_year"], facts["fiscal_quarter"]) == ("8-K", 2023, 2)
    assert facts["period_end"] == "2022-12-31"


def test_a_registrants_name_is_not_its_file_number_nor_split_small_capitals() -> None:
    coca_cola = SEC + (
        "FORM 10-K\nFor the fiscal year ended December 31, 2022\nTHE COCA-COLA COMPANY\n"
        "Commission File Number 001-02217\n(Exact name of Registrant as specified in its charter)"
    )
    assert filing_facts([coca_cola, "The Coca-Cola Company"])["issuer"] == "The Coca-Cola Company"
    mgm = SEC + (
        "FORM 10-K\nFor the fiscal year ended December 31, 2022\nMGM R ESORTS I NTERNATIONAL\n"
        "(Exact name of registrant as specified in its charter)"
    )
    assert filing_facts([mgm, "Casino resorts for international guests."])["issuer"] == (
        "MGM Resorts International"
    )


def test_a_filing_is_titled_by_issuer_form_and_period() -> None:
    assert filing_title(filing_facts([COVER_10K])) == "Best Buy Co., Inc. — 10-K, fiscal 2023"
    quarter = {**NO_FACTS, "issuer": "Amcor plc", "form": "10-Q", "fiscal_year": 2023}
    assert filing_title({**quarter, "fiscal_quarter": 2}) == "Amcor plc — 10-Q, Q2 fiscal 2023"
    report = {**NO_FACTS, "issuer": "Foot Locker, Inc.", "form": "8-K", "period_end": "2022-05-20"}
    assert filing_title({**report, "fiscal_year": 2022}) == "Foot Locker, Inc. — 8-K, May 20, 2022"
    assert filing_title(NO_FACTS) is None
    assert filing_title({**quarter, "issuer": None}) is None  # no name to give it


def test_without_a_period_the_issuers_latest_annual_report_comes_first() -> None:
    ranked = ["amcor-8k", "amcor-release", "paper", "amcor-10k-2022", "amcor-10k-2023"]
    facts = {
        "amcor-8k": {"issuer": "Amcor plc", "form": "8-K", "fiscal_year": 2023},
        "amcor-release": {"issuer": "Amcor plc", "form": "earnings release", "fiscal_year": 2023},
        "paper": {},
        "amcor-10k-2022": {"issuer": "Amcor plc", "form": "10-K", "fiscal_year": 2022},
        "amcor-10k-2023": {"issuer": "Amcor plc", "form": "10-K", "fiscal_year": 2023},
    }
    hits = period_order([hit(d) for d in ranked], "What industry is AMCOR in?", facts.__getitem__)
    assert [h.doc_id for h in hits] == [
        "amcor-10k-2023",
        "amcor-10k-2022",
        "paper",  # every other result keeps its place
        "amcor-8k",
        "amcor-release",
    ]


def test_a_name_is_named_by_its_first_word_written_as_a_name() -> None:
    adobe = {"issuer": "Adobe Systems Incorporated", "form": "10-K"}
    assert names_issuer("Adobe's FY2015 operating margin?", adobe)
    assert not names_issuer("adobe bricks", adobe)
    assert not names_issuer("Best practices", {"issuer": "Best Buy Co., Inc.", "form": "10-K"})
