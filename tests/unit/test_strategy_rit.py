"""RIT-RAG: sub-forest induction, node-aligned content, budgets and the tool loop, over a fake
chunk source (real node-aligned chunking of small in-memory pages, scripted search scores) and
scripted tool-calling chat models."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field, SecretStr

from graph.context import AgentContext
from graph.strategies import rit
from graph.strategies.base import StrategyRequest
from graph.strategies.rit import NodeHit, induce_forest, navigate
from store.chunks import Chunk, node_chunks
from store.types import TreeNode
from tests.llm_stub import LLMStub, ToolCalls
from tests.trees import node as tree_node
from tools.passages import ScoredChunk
from tools.toolbox import SearchScope

DOC_A, DOC_B = "aaaa1111aaaa1111", "bbbb2222bbbb2222"


def node(node_id: str, title: str, start: int, end: int, *children: TreeNode) -> TreeNode:
    return tree_node(node_id, title, start, end, f"About {title.lower()}.", *children)


TREES: dict[str, list[TreeNode]] = {
    DOC_A: [
        node("0000", "1 Introduction", 1, 1),
        node(
            "0001",
            "2 Method",
            2,
            4,
            node("0002", "2.1 Data", 3, 3),
            node("0003", "2.2 Model", 4, 4),
        ),
        node("0004", "References", 5, 5),
        node("0005", "3 Results", 6, 7, node("0006", "3.1 Main table", 6, 7)),
    ],
    DOC_B: [node("0000", "Overview", 1, 2, node("0001", "Details", 2, 2))],
}
PAGES: dict[str, list[str]] = {
    DOC_A: [
        "Cats are studied here. This introduction motivates the study of cats.",
        "The method section begins with an overview of the whole pipeline.",
        "The data are two thousand photographs of cats collected in 2019.",
        "The model is a small convolutional network with four layers. "
        "It was trained for ten epochs with a learning rate of 0.01. "
        "Dropout of 0.5 was applied after every layer of the network.",
        "Smith, J. Cats and dogs. Journal of Pets, 2001.",
        "Accuracy reached ninety percent on the held-out photographs.",
        "Table 1 lists the accuracy of every model variant that was tried.",
    ],
    DOC_B: [
        "An overview of dogs and their owners in three cities.",
        "Details of the survey of dog owners and their answers.",
    ],
}
LABELS = {DOC_A: (["Ada Lovelace", "Charles Babbage"], 2020), DOC_B: (["Grace Hopper"], 2019)}
CHUNKS = {doc: node_chunks(doc, PAGES[doc], TREES[doc], size=16) for doc in TREES}


def chunks_of(doc_id: str, node_id: str) -> list[Chunk]:
    return [c for c in CHUNKS[doc_id] if c.node_id == node_id]


class FakeLibrary:
    def metadata(self, doc_id: str) -> dict[str, Any]:
        authors, year = LABELS[doc_id]
        return {"authors": authors, "year": year, "title": f"Paper {doc_id[:4]}"}


class FakeSource:
    """Chunks and trees of the two documents; every search returns the same scripted hits."""

    def __init__(self, hits: Sequence[tuple[str, str, float]] = (), doc_ids: Sequence[str] = ()):
        self.doc_ids = list(doc_ids or TREES)
        self.hits = [
            ScoredChunk(chunk, score, None, None)
            for doc, node_id, score in hits
            for chunk in chunks_of(doc, node_id)[:1]
        ]
        self.queries: list[str] = []

    def search(self, query: str, limit: int) -> list[ScoredChunk]:
        self.queries.append(query)
        return self.hits[:limit]

    def chunks(self, doc_id: str) -> list[Chunk]:
        return CHUNKS[doc_id]

    def tree(self, doc_id: str) -> list[TreeNode]:
        return TREES[doc_id]


HITS = [(DOC_A, "0003", 0.9), (DOC_B, "0001", 0.8), (DOC_A, "0000", 0.5), (DOC_A, "0004", 0.4)]


class ToolScript(BaseChatModel):
    """A tool-calling chat model that replies from a script and keeps what it was sent."""

    replies: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolScript:  # type: ignore[override]
        self.bound.extend(tools)
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.replies[len(self.seen) - 1])])

    @property
    def _llm_type(self) -> str:
        return "tool-script"


def turn(*calls: tuple[str, Any], text: str = "") -> AIMessage:
    return AIMessage(
        content=text,
        tool_calls=[
            {"name": name, "args": args, "id": f"c{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ],
    )


def make_request(model: BaseChatModel | None = None, question: str = "How was the model trained?"):
    catalog = SimpleNamespace(library=FakeLibrary())
    context = AgentContext(library="unused", strategy="rit")
    return StrategyRequest(question, SearchScope(), context, catalog, model)  # type: ignore[arg-type]


def tool_messages(model: ToolScript) -> list[ToolMessage]:
    return [m for m in model.seen[-1] if isinstance(m, ToolMessage)]


# -- the induced sub-forest -------------------------------------------------------------------
def outline(forest: list[rit.InducedTree]) -> list[tuple[str, str, float, bool]]:
    return [
        (n.doc_id, n.node["node_id"], n.score, n.readable)
        for tree in forest
        for root in tree.roots
        for n in root.walk()
    ]


def test_forest_orders_documents_and_siblings_by_best_score_and_adds_ancestors() -> None:
    hits = [
        NodeHit(DOC_A, "0000", 0.5),
        NodeHit(DOC_B, "0001", 0.7),
        NodeHit(DOC_A, "0003", 0.6),
        NodeHit(DOC_A, "0003", 0.9),  # a node scores as its best chunk
        NodeHit(DOC_A, "0002", 0.2),
    ]
    forest = induce_forest(hits, TREES)
    assert [t.doc_id for t in forest] == [DOC_A, DOC_B]
    assert [t.score for t in forest] == [0.9, 0.7]
    assert outline(forest) == [
        (DOC_A, "0001", 0.9, False),  # ancestor: scored by its best descendant, not readable
        (DOC_A, "0003", 0.9, True),
        (DOC_A, "0002", 0.2, True),
        (DOC_A, "0000", 0.5, True),
        (DOC_B, "0000", 0.7, False),
        (DOC_B, "0001", 0.7, True),
    ]


def test_forest_keeps_only_the_n_best_nodes() -> None:
    hits = [NodeHit(DOC_A, "0002", 0.2), NodeHit(DOC_B, "0001", 0.7), NodeHit(DOC_A, "0004", 0.6)]
    forest = induce_forest(hits, TREES, n=2)
    assert [(d, n) for d, n, _, readable in outline(forest) if readable] == [
        (DOC_B, "0001"),
        (DOC_A, "0004"),
    ]
    assert DOC_A in {t.doc_id for t in forest}


def test_a_hit_parent_is_readable_and_takes_the_best_of_itself_and_its_children() -> None:
    hits = [NodeHit(DOC_A, "0001", 0.3), NodeHit(DOC_A, "0002", 0.8)]
    (tree,) = induce_forest(hits, TREES)
    (parent,) = tree.roots
    assert (parent.node["node_id"], parent.score, parent.readable) == ("0001", 0.8, True)


def test_hits_outside_the_tree_are_dropped() -> None:
    assert induce_forest([NodeHit(DOC_A, "9999", 1.0)], TREES) == []


# -- the tools ----------------------------------------------------------------------------------
def test_toc_lists_ids_pages_scores_and_readability() -> None:
    request = make_request()
    reply = rit.RitTools(request, FakeSource(HITS)).toc("model training")
    lines = reply.text.splitlines()
    assert lines[0].startswith(f"[1] document {DOC_A}") and "(Lovelace et al., 2020)" in lines[0]
    assert f"{DOC_A}:0001 | 2 Method | p.2-4 | score 0.9000 | is_readable: false" in reply.text
    assert f"{DOC_A}:0003 | 2.2 Model | p.4 | score 0.9000 | is_readable: true" in reply.text
    assert reply.disclosed == ()


def test_content_is_the_nodes_own_text_with_page_labels() -> None:
    request = make_request()
    tools = rit.RitTools(request, FakeSource())
    reply = tools.content([f"{DOC_A}:0001", f"{DOC_A}:0003"])
    assert reply.error is None
    method, model = reply.text.split("\n\n")
    assert "cite as (Lovelace et al., 2020, aaaa1111aaaa1111, p.N)" in method
    assert "[p.2]\nThe method section begins" in method
    assert "photographs" not in method  # a parent's content excludes its subsections' text
    assert len(chunks_of(DOC_A, "0003")) > 1  # one node, several chunks, read as one page
    assert model.count("[p.4]") == 1 and "four layers" in model and "every layer" in model
    assert reply.disclosed == ((DOC_A, 2), (DOC_A, 4))


def test_content_explains_bad_ids_and_reads_the_good_ones() -> None:
    tools = rit.RitTools(make_request(), FakeSource(doc_ids=[DOC_A]))
    reply = tools.content(["0003", f"{DOC_A}:0005", f"{DOC_A}:0042", f"{DOC_B}:0001", DOC_A + ":0"])
    assert reply.error is not None  # nothing readable
    assert "write it as doc_id:node_id" in reply.error
    assert "no text of its own" in reply.error
    assert "no such section" in reply.error
    assert f"unknown document {DOC_B!r}" in reply.error
    mixed = tools.content([f"{DOC_A}:0002", f"{DOC_A}:0042"])
    assert mixed.error is None and "Note: " in mixed.text and "two thousand" in mixed.text


def test_content_is_cut_at_the_token_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rit, "READ_TOKENS", 20)
    reply = rit.RitTools(make_request(), FakeSource()).content(
        [f"{DOC_A}:0003", f"{DOC_A}:0002", f"{DOC_A}:0000"]
    )
    assert "(cut here at the token cap)" in reply.text
    assert f"Not returned (the 20-token cap of one call was reached): {DOC_A}:0002" in reply.text
    assert reply.disclosed == ((DOC_A, 4),)


# -- runs ---------------------------------------------------------------------------------------
def test_offline_run_reads_the_best_readable_nodes_and_answers_extractively() -> None:
    request = make_request(question="How many epochs was the network trained?")
    outcome = navigate(request, FakeSource(HITS))
    steps = request.recorder.steps
    assert [(s["tool"], s["layer"], s["ok"]) for s in steps] == [
        ("get_toc_structure", 1, True),
        ("get_content", 2, True),
    ]
    # best three readable nodes, the reference list skipped
    assert steps[1]["args"] == {"node_ids": [f"{DOC_A}:0003", f"{DOC_B}:0001", f"{DOC_A}:0000"]}
    assert "ten epochs" in outcome.answer
    assert f"(Lovelace et al., 2020, {DOC_A}, p.4)" in outcome.answer
    assert request.recorder.pages_read == {DOC_A: [4, 1], DOC_B: [2]}


def test_model_run_returns_the_final_text_and_records_layers() -> None:
    answer = f"Ten epochs (Lovelace et al., 2020, {DOC_A}, p.4)."
    model = ToolScript(
        replies=[
            turn(("get_toc_structure", {"query": "training epochs"})),
            turn(("get_content", {"node_ids": f"{DOC_A}:0003"})),  # one id as a bare string
            AIMessage(content=answer),
        ]
    )
    request = make_request(model)
    source = FakeSource(HITS)
    outcome = navigate(request, source)
    assert (outcome.answer, outcome.status) == (answer, "answered")
    offered = [t["function"]["name"] for t in model.bound]  # the tools are bound every turn
    assert offered == ["get_toc_structure", "get_content"] * (len(offered) // 2) and offered
    assert source.queries == ["training epochs"]
    assert [(s["layer"], s["ok"]) for s in request.recorder.steps] == [(1, True), (2, True)]
    assert request.recorder.pages_read == {DOC_A: [4]}
    assert "(Author et al., Year, doc_id, p.N)" in str(model.seen[0][0].content)
    assert request.recorder.usage.model_calls == 3


def test_the_fourth_search_and_the_eleventh_call_are_refused_and_recorded() -> None:
    search = ("get_toc_structure", {"query": "cats"})
    read = ("get_content", {"node_ids": [f"{DOC_A}:0002"]})
    model = ToolScript(
        replies=[
            turn(search, search, search, search),
            turn(*[read] * 7),
            AIMessage(content="Two thousand photographs."),
        ]
    )
    request = make_request(model)
    source = FakeSource(HITS)
    outcome = navigate(request, source)
    steps = request.recorder.steps
    assert outcome.answer == "Two thousand photographs."
    assert len(steps) == 11 and len(source.queries) == 3
    assert [s["ok"] for s in steps] == [True] * 3 + [False] + [True] * 6 + [False]
    assert "at most 3 times" in str(steps[3]["error"]) and steps[3]["layer"] == 1
    assert "tool-call budget (10) is spent" in str(steps[10]["error"])
    refused = tool_messages(model)[-1]
    assert refused.status == "error" and str(refused.content).startswith(
        "Error: the tool-call budget"
    )


def test_malformed_unknown_and_invalid_calls_get_instructive_errors() -> None:
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "get_content",
                "args": '{"node_ids": [',
                "id": "bad",
                "error": "unterminated JSON",
                "type": "invalid_tool_call",
            }
        ],
    )
    model = ToolScript(
        replies=[
            broken,
            turn(("read_everything", {}), ("get_toc_structure", {"q": "x"})),
            AIMessage(content="I could not find it."),
        ]
    )
    request = make_request(model)
    outcome = navigate(request, FakeSource(HITS))
    assert outcome.answer == "I could not find it."
    errors = [str(s["error"]) for s in request.recorder.steps]
    assert "could not read the call to 'get_content': unterminated JSON" in errors[0]
    assert "unknown tool 'read_everything'" in errors[1]
    assert "get_toc_structure, get_content" in errors[1]
    assert "bad arguments for get_toc_structure" in errors[2] and "query" in errors[2]
    assert request.recorder.steps[0]["args"] == {"raw": '{"node_ids": ['}
    assert all(m.status == "error" for m in tool_messages(model))


def test_a_model_that_never_stops_calling_tools_gets_an_answer_from_what_it_read() -> None:
    read = ("get_content", {"node_ids": [f"{DOC_A}:0002"]})
    final = f"Photographs of cats (Lovelace et al., 2020, {DOC_A}, p.3)."
    model = ToolScript(replies=[turn(read)] * (rit.MAX_CALLS + 2) + [AIMessage(content=final)])
    request = make_request(model)
    outcome = navigate(request, FakeSource(HITS))
    assert outcome.answer == final
    assert outcome.status == "budget"
    assert outcome.detail.startswith("tool calls continued past")
    assert len(request.recorder.steps) == rit.MAX_CALLS + 2
    assert "two thousand photographs" in str(model.seen[-1][-1].content)  # the answer prompt


def test_runs_with_an_openai_compatible_tool_calling_endpoint() -> None:
    def responder(messages: list[dict[str, Any]]) -> str | ToolCalls:
        tools_answered = sum(1 for m in messages if m.get("role") == "tool")
        if tools_answered == 0:
            return ToolCalls([("get_toc_structure", '{"query": "epochs"}'), ("get_content", "{")])
        if tools_answered == 2:
            return ToolCalls([("get_content", f'{{"node_ids": ["{DOC_A}:0003"]}}')])
        return f"Ten epochs (Lovelace et al., 2020, {DOC_A}, p.4)."

    with LLMStub(responder) as stub:
        model = ChatOpenAI(
            model="stub", base_url=stub.base_url, api_key=SecretStr("test"), max_retries=0
        )
        request = make_request(model)
        outcome = navigate(request, FakeSource(HITS))
    assert outcome.answer.startswith("Ten epochs")
    assert [(s["tool"], s["ok"]) for s in request.recorder.steps] == [
        ("get_toc_structure", True),
        ("get_content", False),
        ("get_content", True),
    ]
    sent_tools = stub.requests[0].body["tools"]
    assert {t["function"]["name"] for t in sent_tools} == {"get_toc_structure", "get_content"}
