"""Which financial statement a question asks for, which pages print it, and the page order
that reads them first."""

from __future__ import annotations

import numpy as np
import pytest

from tools.pages import page_score
from tools.statements import asked_statements, statement_pages


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("how much total current assets did Nike have, per the balance sheet?", {"balance"}),
        ("what is the FY2016 COGS? use the statement of income", {"income"}),
        ("the income statement and the statement of financial position", {"balance", "income"}),
        ("What is the FY2018 capital expenditure amount for 3M?", {"cash"}),
        ("Which brought in the most: operating, investing or financing activities?", {"cash"}),
        ("What is the year end FY2019 total amount of inventories?", {"balance"}),
        ("Are gross margins historically consistent?", {"income"}),
        ("Does the new CEO have previous CEO experience?", set()),
    ],
)
def test_the_statements_a_question_asks_for(question: str, kinds: set[str]) -> None:
    assert asked_statements(question) == kinds


PAGES = [
    "**Table of Contents**\n**ITEM 8. FINANCIAL STATEMENTS**\n**INCOME STATEMENTS**\nRevenue 91",
    "**Table of Contents**\n**Consolidated Balance Sheets**\n_$ in millions_\nInventories 5,409",
    "NIKE, Inc.\nConsolidated Statements of Cash Flows (continued)\nPurchases of property 1,119",
    "REPORT OF INDEPENDENT AUDITORS\nWe have audited the accompanying consolidated balance sheets "
    "of the Company and the related statements of cash flows.",
    "Index to Financial Statements\nConsolidated Statements of Income 52\nConsolidated Balance "
    "Sheets 54\nConsolidated Statements of Cash Flows 55",
    "Note 5 Inventories\nInventories are stated at the lower of cost and net realizable value.",
]


def test_a_page_prints_a_statement_when_a_first_line_is_its_title() -> None:
    assert statement_pages({"income"}, PAGES) == {1}
    assert statement_pages({"balance"}, PAGES) == {2}  # not the auditor's report, not a note
    assert statement_pages({"cash"}, PAGES) == {3}  # "(continued)", the company before it
    assert statement_pages(set(), PAGES) == set()


def test_statement_pages_are_read_first_in_their_own_order() -> None:
    bm25, dense, section = np.array([5.0, 1.0, 0.5]), np.array([0.9, 0.2, 0.1]), np.zeros(3)
    plain = page_score(bm25, dense, section)
    lifted = page_score(bm25, dense, section, statement=np.array([False, True, True]))
    assert list(np.argsort(-plain)) == [0, 1, 2]
    assert list(np.argsort(-lifted)) == [1, 2, 0]
    assert lifted[0] == plain[0]
    same = page_score(bm25, dense, section, statement=np.zeros(3, dtype=bool))
    assert np.array_equal(same, plain)
