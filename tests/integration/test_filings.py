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
from tools.search import DocumentSearch, FilingFilter

pytestmark = pytest.mark.integration

FILINGS = SHARED_DATA / "financebench" / "pdfs"
QUESTIONS = SHARED_DATA / "financebench" / "financebench-dev.jsonl"
FOOT_LOCKER = "Foot Locker, Inc."
# Read off each cover page by hand: issuer, ticker (printed only on covers since 2019), form,
# end of the period covered (an 8-K: its date of report), fiscal year and quarter as the filing
# names them.
BY_HAND: dict[str, tuple[str, str | None, str, str, int, int | None]] = {
    "BESTBUY_2017_10K": ("BEST BUY CO., INC.", None, "10-K", "2017-01-28", 2017, None),
    "BESTBUY_2019_10K": ("BEST BUY CO., INC.", None, "10-K", "2019-02-02", 2019, None),
    "BESTBUY_2023_10K": ("BEST BUY CO., INC.", "BBY", "10-K", "2023-01-28", 2023, None),
    "BESTBUY_2024Q2_10Q": ("BEST BUY CO., INC.", "BBY", "10-Q", "2023-07-29", 2024, 2),
    "FOOTLOCKER_2022_8K_dated-2022-05-20": (FOOT_LOCKER, "FL", "8-K", "2022-05-20", 2022, None),
    "FOOTLOCKER_2022_8K_dated_2022-08-19": (FOOT_LOCKER, "FL", "8-K", "2022-08-19", 2022, None),
    "MICROSOFT_2016_10K": ("MICROSOFT CORPORATION", None, "10-K", "2016-06-30", 2016, None),
    "MICROSOFT_2023_10K": ("MICROSOFT CORPORATION", "MSFT", "10-K", "2023-06-30", 2023, None),
    "NETFLIX_2015_10K": ("Netflix, Inc.", None, "10-K", "2015-12-31", 2015, None),
    "NETFLIX_2017_10K": ("Netflix, Inc.", None, "10-K", "2017-12-31", 2017, None),
    "NIKE_2018_10K": ("NIKE, Inc.", None, "10-K", "2018-05-31", 2018, None),
    "NIKE_2019_10K": ("NIKE, Inc.", "NKE", "10-K", "2019-05-31", 2019, None),
    "NIKE_2021_10K": ("NIKE, Inc.", "NKE", "10-K", "2021-05-31", 2021, None),
    "NIKE_2023_10K": ("NIKE, Inc.", "NKE", "10-K", "2023-05-31", 2023, None),
}
FIELDS = ("issuer", "ticker", "form", "period_end", "fiscal_year", "fiscal_quarter")


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()
    library = tmp_path_factory.mktemp("filings") / "library"
    assert main(["--library", str(library), "ingest", str(FILINGS), "--json"]) == 0
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


def test_docs_shows_each_filings_form_and_period(
    filings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(filings), "docs", "--json"]) == 0
    records: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    shown = {Path(r["source"]).stem: r["filing"] for r in records}
    assert shown["BESTBUY_2024Q2_10Q"]["fiscal_quarter"] == 2
    assert main(["--library", str(filings), "docs"]) == 0
    assert "10-Q Q2 FY2024" in capsys.readouterr().out


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
    quarterly = search.search("*", filing=FilingFilter(form="10-Q"))
    assert [h.doc_id for h in quarterly] == [ids["BESTBUY_2024Q2_10Q"]]
    nike = {h.doc_id for h in search.search("*", limit=20, filing=FilingFilter(issuer="Nike"))}
    assert nike == {doc for name, doc in ids.items() if name.startswith("NIKE")}
    close_catalogs()
