"""The 14 development filings, ingested: each knows its issuer, form and fiscal period (checked
by hand against its cover page), and a question naming a year reaches that year's filing
first among the same company's filings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.cli import main
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from tests.conftest import SHARED_DATA, require_shared_data
from tools.filings import FilingFilter
from tools.search import DocumentSearch

pytestmark = pytest.mark.integration

FILINGS = SHARED_DATA / "financebench" / "pdfs"
QUESTIONS = SHARED_DATA / "financebench" / "financebench-dev.jsonl"
FOOT_LOCKER = "Foot Locker, Inc."
BEST_BUY = "Best Buy Co., Inc."
MICROSOFT = "Microsoft Corporation"
INTEL = "Intel Corporation"
# Read off each cover page by hand: issuer (as the filing writes its name in running text),
# ticker (printed only on covers since 2019), form, end of the period covered (an 8-K: its date
# of report, as neither of these furnishes results), fiscal year and quarter as the company
# names them. The four after the FinanceBench filings are outlined/ documents and a release.
BY_HAND: dict[str, tuple[str, str | None, str, str, int, int | None]] = {
    "BESTBUY_2017_10K": (BEST_BUY, None, "10-K", "2017-01-28", 2017, None),
    "BESTBUY_2019_10K": (BEST_BUY, None, "10-K", "2019-02-02", 2019, None),
    "BESTBUY_2023_10K": (BEST_BUY, "BBY", "10-K", "2023-01-28", 2023, None),
    "BESTBUY_2024Q2_10Q": (BEST_BUY, "BBY", "10-Q", "2023-07-29", 2024, 2),
    "FOOTLOCKER_2022_8K_dated-2022-05-20": (FOOT_LOCKER, "FL", "8-K", "2022-05-20", 2022, None),
    "FOOTLOCKER_2022_8K_dated_2022-08-19": (FOOT_LOCKER, "FL", "8-K", "2022-08-19", 2022, None),
    "MICROSOFT_2016_10K": (MICROSOFT, None, "10-K", "2016-06-30", 2016, None),
    "MICROSOFT_2023_10K": (MICROSOFT, "MSFT", "10-K", "2023-06-30", 2023, None),
    "NETFLIX_2015_10K": ("Netflix, Inc.", None, "10-K", "2015-12-31", 2015, None),
    "NETFLIX_2017_10K": ("Netflix, Inc.", None, "10-K", "2017-12-31", 2017, None),
    "NIKE_2018_10K": ("NIKE, Inc.", None, "10-K", "2018-05-31", 2018, None),
    "NIKE_2019_10K": ("NIKE, Inc.", "NKE", "10-K", "2019-05-31", 2019, None),
    "NIKE_2021_10K": ("NIKE, Inc.", "NKE", "10-K", "2021-05-31", 2021, None),
    "NIKE_2023_10K": ("NIKE, Inc.", "NKE", "10-K", "2023-05-31", 2023, None),
    "financebench_apple_2022_10k": ("Apple Inc.", "AAPL", "10-K", "2022-09-24", 2022, None),
    "financebench_intel_2020_10k": (INTEL, "INTC", "10-K", "2020-12-26", 2020, None),
    "docugami_intc_2023q1_10q": (INTEL, "INTC", "10-Q", "2023-04-01", 2023, 1),
    "q1-fy25-earnings": (
        "The Walt Disney Company",
        None,
        "earnings release",
        "2024-12-28",
        2025,
        1,
    ),
}
FIELDS = ("issuer", "ticker", "form", "period_end", "fiscal_year", "fiscal_quarter")
OTHER_FILINGS = (
    SHARED_DATA / "outlined" / "pdfs" / "financebench_apple_2022_10k.pdf",
    SHARED_DATA / "outlined" / "pdfs" / "financebench_intel_2020_10k.pdf",
    SHARED_DATA / "outlined" / "pdfs" / "docugami_intc_2023q1_10q.pdf",
    SHARED_DATA / "pdfs" / "q1-fy25-earnings.pdf",
)


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()
    library = tmp_path_factory.mktemp("filings") / "library"
    paths = [str(FILINGS), *map(str, OTHER_FILINGS)]
    assert main(["--library", str(library), "ingest", *paths, "--json"]) == 0
    close_catalogs()
    return library


def doc_ids(library: Path) -> dict[str, str]:
    """Document id by file name (without ``.pdf``)."""
    return {Path(r["source"]).stem: r["doc_id"] for r in Library(library).documents()}


def test_every_filing_knows_its_issuer_form_and_period(filings: Path) -> None:
    library = Library(filings)
    facts: dict[str, dict[str, Any]] = {
        name: dict(library.metadata(doc_id)["filing"]) for name, doc_id in doc_ids(filings).items()
    }
    found = {name: tuple(fact[f] for f in FIELDS) for name, fact in facts.items()}
    assert found == BY_HAND


def test_a_filing_is_titled_by_its_facts_and_keeps_its_printed_first_line(filings: Path) -> None:
    library = Library(filings)
    meta = {name: library.metadata(doc_id) for name, doc_id in doc_ids(filings).items()}
    assert meta["NIKE_2023_10K"]["title"] == "NIKE, Inc. — 10-K, fiscal 2023"
    assert meta["BESTBUY_2024Q2_10Q"]["title"] == "Best Buy Co., Inc. — 10-Q, Q2 fiscal 2024"
    assert meta["FOOTLOCKER_2022_8K_dated-2022-05-20"]["title"] == (
        "Foot Locker, Inc. — 8-K, May 20, 2022"
    )
    assert meta["q1-fy25-earnings"]["title"] == (
        "The Walt Disney Company — earnings release, Q1 fiscal 2025"
    )
    assert "FORM 10-K" in meta["BESTBUY_2017_10K"]["printed_title"]


def test_docs_shows_each_filings_form_and_period(
    filings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(filings), "docs", "--json"]) == 0
    records: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    shown = {Path(r["source"]).stem: r["filing"] for r in records}
    assert shown["BESTBUY_2024Q2_10Q"]["fiscal_quarter"] == 2
    assert main(["--library", str(filings), "docs"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert all(column in table[0] for column in ("issuer", "form", "period", "title"))
    row = next(line for line in table if line.startswith(doc_ids(filings)["BESTBUY_2024Q2_10Q"]))
    assert [cell for cell in row.split("  ") if cell.strip()][5:8] == [
        BEST_BUY,
        "10-Q",
        "Q2 fiscal 2024",
    ]


def test_a_question_naming_a_year_reaches_that_years_filing_first(filings: Path) -> None:
    """Every development question that names a period: its filing comes before the same
    company's filings of other periods."""
    ids = doc_ids(filings)
    search = DocumentSearch(open_catalog(filings))
    issuer_of = {doc: name.split("_")[0] for name, doc in ids.items()}
    checked = 0
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        if not any(mark in question["question"] for mark in ("FY", "fiscal")):
            continue
        gold = ids[question["doc_name"]]
        ranked = [h.doc_id for h in search.search(question["question"], limit=10)]
        same_issuer = [d for d in ranked if issuer_of[d] == issuer_of[gold]]
        assert same_issuer and same_issuer[0] == gold, question["question"]
        checked += 1
    assert checked >= 12
    close_catalogs()


def test_search_keeps_only_the_filings_a_filter_names(filings: Path) -> None:
    ids = doc_ids(filings)
    search = DocumentSearch(open_catalog(filings))
    year = search.search("inventories", filing=FilingFilter(issuer="best buy", fiscal_year=2019))
    assert [h.doc_id for h in year] == [ids["BESTBUY_2019_10K"]]
    assert year[0].filing == "10-K FY2019"
    assert year[0].title == "Best Buy Co., Inc. — 10-K, fiscal 2019"
    quarterly = search.search("*", filing=FilingFilter(form="10-Q"))
    assert {h.doc_id for h in quarterly} == {
        ids["BESTBUY_2024Q2_10Q"],
        ids["docugami_intc_2023q1_10q"],
    }
    nike = {h.doc_id for h in search.search("*", limit=20, filing=FilingFilter(issuer="Nike"))}
    assert nike == {doc for name, doc in ids.items() if name.startswith("NIKE")}
    close_catalogs()


def test_a_question_naming_no_period_reaches_the_latest_annual_report_first(
    filings: Path,
) -> None:
    ids = doc_ids(filings)
    search = DocumentSearch(open_catalog(filings))
    question = "Are Best Buy's gross margins historically consistent?"
    ranked = [h.doc_id for h in search.search(question, limit=10)]
    best_buy = [d for d in ranked if d in {ids[n] for n in ids if n.startswith("BESTBUY")}]
    assert best_buy[0] == ids["BESTBUY_2023_10K"]
    close_catalogs()
