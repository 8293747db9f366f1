"""Verified tree search: the checks, confidence, retries with an error report, the lexical
fallback, the leaf-first reading plan and the corpus-mode document choice, with scripted
models over an in-memory library."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graph.context import AgentContext
from graph.strategies import verified_tree
from graph.strategies.base import StrategyRequest
from graph.strategies.pageindex import DocumentTree
from graph.strategies.verified_tree import (
    CONFIDENCE_MIN,
    check_node,
    lexical_ranking,
    reading_plan,
    verify,
)
from tests.trees import node
from tools.toolbox import SearchScope

QUESTION = "What failure rate did the widget tests show?"
ANSWER = "About 2 percent a year (Ng et al., 2020, v1, p.4)."


TREE = [
    node("0000", "Abstract", 1, 1, "Widget reliability study."),
    node(
        "0001",
        "2 Methods",
        2,
        3,
        "How the widget failure tests were run.",
        node("0002", "2.1 Sensors", 2, 2, "Sensors log each failure."),
        node("0003", "2.2 Logging", 3, 9, "Failure logging."),  # ends past the last page
    ),
    node("0004", "3 Results", 4, 5, "The failure rate per widget."),
    node("0005", "Acknowledgements", 6, 6, "Thanks for the widget failure rate data."),
    node("0006", "4 Outlook", 6, 6, "Future plans."),
]
PAGES = [f"Page {n} text about widgets and their failures in the tests." for n in range(1, 7)]


class MemoryLibrary:
    """The part of ``store.library.Library`` a strategy reads, from dicts."""

    def __init__(self, docs: dict[str, tuple[Any, list[str]]]) -> None:
        self.docs = docs

    def has(self, doc_id: str) -> bool:
        return doc_id in self.docs

    def record(self, doc_id: str) -> dict[str, Any]:
        return {"doc_id": doc_id, "title": f"Widget report {doc_id}", "pages": 6}

    def tree(self, doc_id: str) -> Any:
        return self.docs[doc_id][0]

    def pages(self, doc_id: str) -> list[str]:
        return self.docs[doc_id][1]

    def metadata(self, doc_id: str) -> dict[str, Any]:
        return {"authors": ["Al Ng", "Bea Ode"], "year": 2020}


class ProposalModel(BaseChatModel):
    """Scripted turns in order, then ``ANSWER``; keeps every prompt and the tools offered."""

    replies: list[AIMessage]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "proposals"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ProposalModel:  # type: ignore[override]
        self.bound = list(tools)
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        turn = len(self.calls) - 1
        reply = self.replies[turn] if turn < len(self.replies) else AIMessage(ANSWER)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}])


def propose(*node_ids: str) -> AIMessage:
    return call("propose_nodes", node_ids=list(node_ids))


def read(node_id: str) -> AIMessage:
    return call("read_node", node_id=node_id)


def model(*replies: AIMessage) -> ProposalModel:
    return ProposalModel(replies=list(replies))


def request_for(model: Any, *doc_ids: str, page_cap: int = 10) -> StrategyRequest:
    docs = {"v1": (TREE, PAGES), "v2": ([node("0000", "1 Intro", 1, 1, "Widget.")], ["x"])}
    context = AgentContext(library="unused", strategy="verified-tree")
    context.page_cap = page_cap
    catalog = SimpleNamespace(library=MemoryLibrary(docs))
    return StrategyRequest(QUESTION, SearchScope(doc_ids=doc_ids), context, catalog, model)  # type: ignore[arg-type]


def tree() -> DocumentTree:
    return DocumentTree.build("v1", "Widget report", "Ng et al., 2020", TREE, PAGES)


def steps(request: StrategyRequest) -> list[tuple[int, str, bool]]:
    return [(s["layer"], s["tool"], s["ok"]) for s in request.recorder.steps]


# -- the checks ----------------------------------------------------------------------------------
def test_each_check_names_its_failure() -> None:
    words = {"failure", "rate", "widget", "tests"}
    assert check_node(tree(), "0004", words) is None
    assert check_node(tree(), "4", words) is None  # unpadded ids are understood
    assert check_node(tree(), "0099", words) == "no node with this id exists in the tree"
    assert check_node(tree(), "0003", words) == (
        "its page range 3-9 is not within the document's pages 1-6"
    )
    assert check_node(tree(), "0006", words) == (
        "its title and summary share no content word with the question"
    )
    backwards = DocumentTree.build("v", "t", "l", [node("0000", "Failure", 5, 4, "")], PAGES)
    assert "page range 5-4" in (check_node(backwards, "0000", words) or "")


def test_confidence_is_the_passing_fraction() -> None:
    verification = verify(tree(), ["0004", "0002", "0099", "0006"], QUESTION)
    assert verification.confidence == 0.5
    assert verification.passed == ("0004", "0002")
    assert set(verification.failures) == {"0099", "0006"}
    assert verify(tree(), [], QUESTION).confidence == 0.0


def test_lexical_fallback_ranks_by_shared_content_words() -> None:
    ranked = lexical_ranking(tree(), QUESTION)
    # 3 shared words each (document order breaks the tie), then the 1-word matches; the
    # acknowledgements and a node sharing nothing are left out
    assert ranked == [("0001", 3), ("0004", 3), ("0000", 1), ("0002", 1), ("0003", 1)]
    assert lexical_ranking(tree(), QUESTION, limit=2) == [("0001", 3), ("0004", 3)]


def test_reading_plan_is_leaf_first_deduplicated_and_capped() -> None:
    assert reading_plan(tree(), ["0001", "0004", "0002"], page_cap=3) == [
        ("0004", [4, 5]),
        ("0002", [2]),
    ]
    assert reading_plan(tree(), ["0001", "0002"], page_cap=10) == [("0002", [2]), ("0001", [3])]
    assert reading_plan(tree(), ["0003"], page_cap=10) == [("0003", [3, 4, 5, 6])]


# -- the rounds ----------------------------------------------------------------------------------
def test_half_passing_is_enough_no_retry() -> None:
    chat = model(propose("0004", "0002", "0099", "0006"), read("0004"), read("2"))
    request = request_for(chat, "v1")
    outcome = verified_tree.run(request)

    assert steps(request) == [
        (1, "document_tree", True),
        (1, "propose_nodes", True),
        (2, "read_node", True),
        (2, "read_node", True),
    ]
    assert request.recorder.steps[1]["args"] == {"node_ids": ["0004", "0002", "0099", "0006"]}
    proposal = request.recorder.steps[1]["details"]
    assert proposal["confidence"] == 0.5
    assert proposal["passed"] == ["0004", "0002"]
    assert set(proposal["failures"]) == {"0099", "0006"}
    assert request.recorder.pages_read == {"v1": [4, 5, 2]}
    assert "Passed: 0004 3 Results (pages [4, 5]); 0002" in str(chat.calls[1][-1].content)
    assert [spec["function"]["name"] for spec in chat.bound] == ["propose_nodes", "read_node"]
    assert outcome.answer == ANSWER
    # a loop step rebuilds the search from what was recorded
    again = request_for(None, "v1")
    again.recorder.steps = list(request.recorder.steps)
    rebuilt = verified_tree.document_search(again, "v1")
    assert (rebuilt.rounds, rebuilt.chosen, rebuilt.read_pages) == (1, ["0004", "0002"], {2, 4, 5})


def test_low_confidence_retries_with_a_report_naming_each_failure() -> None:
    chat = model(propose("0004", "0099", "0003", "0006"), propose("0004"), read("0004"))
    request = request_for(chat, "v1")
    verified_tree.run(request)

    rounds = [s for s in request.recorder.steps if s["tool"] == "propose_nodes"]
    assert [(s["details"]["confidence"], s["ok"]) for s in rounds] == [(0.25, False), (1.0, True)]
    assert str(rounds[0]["error"]).startswith(f"confidence 0.25 is below {CONFIDENCE_MIN}")
    report = str(chat.calls[1][-1].content)
    assert "1 of 4 proposed ids passed" in report
    assert "- 0099: no node with this id exists" in report
    assert "- 0003: its page range 3-9 is not within" in report
    assert "- 0006: its title and summary share no content word" in report
    assert request.recorder.pages_read == {"v1": [4, 5]}


def test_three_failed_rounds_fall_back_to_lexical_overlap() -> None:
    chat = model(
        call("propose_nodes", ids="0004"),
        propose("0099"),
        propose("0004", "0006", "0099"),
        propose("0006"),
        propose("0004"),
        read("0006"),
        read("0004"),
        read("0000"),
        read("0002"),
    )
    request = request_for(chat, "v1", page_cap=4)
    outcome = verified_tree.run(request)

    assert steps(request) == [
        (1, "document_tree", True),
        (1, "propose_nodes", False),
        (1, "propose_nodes", False),
        (1, "propose_nodes", False),
        (1, "propose_nodes", False),
        (1, "propose_nodes", False),
        (2, "read_node", False),
        (2, "read_node", True),
        (2, "read_node", True),
        (2, "read_node", True),
    ]
    malformed, _, _, last, fourth, off_plan = request.recorder.steps[1:7]
    # arguments that cannot be read cost a call but not a round
    assert "node_ids: Field required" in str(malformed["error"]) and "details" not in malformed
    assert last["details"]["fallback"] == ["0001", "0004", "0000", "0002", "0003"]
    assert "lexical fallback chose" in str(last["error"]) and "0004 3 Results" in str(last["error"])
    assert "at most 3 rounds" in str(fourth["error"])
    assert "read only the sections that passed the checks (0004, 0000, 0002)" in str(
        off_plan["error"]
    )
    assert [s["pages"] for s in request.recorder.steps[7:]] == [[4, 5], [1], [2]]
    assert outcome.answer == ANSWER


def test_an_empty_proposal_is_a_failed_round() -> None:
    chat = model(propose(), propose("0004"))
    request = request_for(chat, "v1")
    verified_tree.run(request)
    assert "You proposed no node ids" in str(chat.calls[1][-1].content)


def test_a_failing_endpoint_ends_the_run_clearly() -> None:
    class Broken(ProposalModel):
        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            raise ConnectionError("endpoint down")

    outcome = verified_tree.run(request_for(Broken(replies=[]), "v1"))
    assert outcome.status == "failed"
    assert outcome.detail == "the model call failed: ConnectionError: endpoint down"


# -- offline and corpus mode ---------------------------------------------------------------------
def test_offline_uses_the_fallback_and_says_so() -> None:
    request = request_for(None, "v1")
    outcome = verified_tree.run(request)

    assert steps(request)[0] == (1, "lexical_fallback", True)
    assert request.recorder.steps[0]["args"]["reason"] == "offline: node proposals need an LLM"
    assert outcome.answer.startswith("Node proposals need an LLM")
    assert "0001 2 Methods; 0004 3 Results" in outcome.answer
    assert "(Ng et al., 2020, v1, p." in outcome.answer
    assert outcome.status == "answered"


class FakeHit:
    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id

    def as_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": "Widget report",
            "authors": ["Ng"],
            "year": 2020,
            "total_pages": 6,
            "description": "Widgets.",
            "matching_sections": [],
        }


def fake_document_search(found: list[str], seen: list[dict[str, Any]]) -> type:
    class FakeDocumentSearch:
        def __init__(self, catalog: Any, gates: Any = None) -> None:
            pass

        def search(self, query: str, **kwargs: Any) -> list[FakeHit]:
            seen.append({"query": query, **kwargs})
            return [FakeHit(d) for d in found]

    return FakeDocumentSearch


def test_corpus_mode_searches_the_structural_search_s_best_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tools.toolbox

    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(tools.toolbox, "DocumentSearch", fake_document_search(["v1"], seen))
    request = request_for(None, "v2", "v1")
    verified_tree.run(request)

    ((asked,),) = [[(s["query"], s["limit"], s["doc_ids"], s["gates"])] for s in seen]
    assert asked == (QUESTION, 1, ("v2", "v1"), True)
    assert steps(request)[:2] == [(0, "search_documents", True), (1, "lexical_fallback", True)]
    assert set(request.recorder.pages_read) == {"v1"}


def test_corpus_mode_without_a_match_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    import tools.toolbox

    monkeypatch.setattr(tools.toolbox, "DocumentSearch", fake_document_search([], []))
    outcome = verified_tree.run(request_for(None, "v2", "v1"))
    assert (outcome.status, outcome.detail) == (
        "failed",
        "no document in scope matches the question",
    )
