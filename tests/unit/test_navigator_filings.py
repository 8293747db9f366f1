"""The offline navigator opens the filing a question's period names, not the same company's
filings of other periods beside it."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from graph.navigator import NavigatorChatModel


def hit(doc_id: str, issuer: str = "") -> dict[str, Any]:
    return {"doc_id": doc_id, "issuer": issuer}


def opened(question: str, hits: list[dict[str, Any]]) -> list[str]:
    """The trees the navigator asks for after a search that returned ``hits``."""
    messages = [
        HumanMessage(question),
        AIMessage("", tool_calls=[{"name": "search_documents", "args": {}, "id": "1"}]),
        ToolMessage(
            "results", tool_call_id="1", name="search_documents", artifact={"results": hits}
        ),
    ]
    reply = NavigatorChatModel().invoke(messages)
    assert isinstance(reply, AIMessage)
    return [call["args"]["doc_id"] for call in reply.tool_calls]


def test_a_named_period_opens_only_that_filing_of_its_issuer() -> None:
    hits = [hit("nke-2023", "NIKE, Inc."), hit("nke-2021", "NIKE Inc"), hit("paper")]
    assert opened("Nike's cash flow in FY2023?", hits) == ["nke-2023"]


def test_other_issuers_and_questions_without_a_period_open_as_before() -> None:
    hits = [hit("nke-2023", "NIKE, Inc."), hit("bby-2023", "Best Buy Co., Inc.")]
    assert opened("Nike or Best Buy: more cash in FY2023?", hits) == ["nke-2023", "bby-2023"]
    same = [hit("nke-2023", "NIKE, Inc."), hit("nke-2021", "NIKE, Inc.")]
    assert opened("What does Nike sell?", same) == ["nke-2023", "nke-2021"]
    papers = [hit("a"), hit("b"), hit("c")]
    assert opened("Results in 2019?", papers) == ["a", "b"]
