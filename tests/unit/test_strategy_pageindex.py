"""PageIndex-style tree search: cross-references, reply validation, budgets, DocScore, the
concurrent corpus mode and the offline walker, on a small library written to disk."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graph.context import AgentContext
from graph.strategies import pageindex
from graph.strategies.base import ANSWER_PROMPT, StrategyRequest
from graph.strategies.pageindex import (
    MAX_READS,
    MAX_STEPS,
    MERGED_NOTE,
    DocumentTree,
    doc_scores,
    find_references,
    offered_references,
    resolve_reference,
    title_label,
)
from graph.strategies.tool_loop import EXTRA_TURNS
from store.catalog import Catalog, close_catalogs, open_catalog
from store.library import Library, write_json
from tests.trees import node
from tools.toolbox import SearchScope

LOAN = "d1"
OTHER = "d2"
FINAL = "The loan pays SOFR plus 2.25 percent (Smith et al., 2021, d1, p.6)."


LOAN_TREE = [
    node("0000", "Abstract", 1, 1, "We report the company's results and its debt."),
    node(
        "0001",
        "2 Financial statements",
        2,
        5,
        "Balance sheet and notes.",
        node("0002", "2.1 Debt", 2, 3, "The term loan and its maturity."),
        node("0003", "2.2 Leases", 4, 5, "Office leases and their terms."),
    ),
    node("0004", "Appendix G Interest rates", 6, 8, "Schedule of the term loan's interest rate."),
    node("0005", "References", 9, 9, "Cited works."),
]
LOAN_PAGES = [
    "# Abstract\nWe report results and debt.",
    "# 2 Financial statements\n## 2.1 Debt\nThe company holds a term loan due 2030.",
    "The rate of the term loan is set by a schedule, see Appendix G and Table 4.",
    "## 2.2 Leases\nThe offices are leased.",
    "Lease terms run ten years.",
    "# Appendix G Interest rates\nThe term loan bears interest at SOFR plus 2.25 percent.",
    "Table 4: Rate schedule by year.\nThe margin steps down after 2027.",
    "The schedule ends in 2030.",
    "# References\n[1] A cited work.",
]
OTHER_TREE = [node("0000", "1 Overview", 1, 2, "Company overview and loans.")]
OTHER_PAGES = ["# 1 Overview\nThe firm has no term loan.", "It leases its offices."]


# -- a small library on disk and a scripted model ------------------------------------------------
def write_document(root: Path, doc_id: str, tree: Any, pages: list[str]) -> None:
    folder = root / "docs" / doc_id
    folder.mkdir(parents=True)
    write_json(folder / "document.json", {"doc_id": doc_id, "title": f"Report {doc_id}"})
    write_json(folder / "tree.json", tree)
    metadata = {
        "title": f"Report {doc_id}",
        "authors": ["Ann Smith", "Bo Lee"],
        "year": 2021,
        "venue": None,
        "description": "",
    }
    write_json(folder / "metadata.json", metadata)
    lines = [json.dumps({"page": n, "text": text}) for n, text in enumerate(pages, 1)]
    (folder / "pages.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    library = Library(tmp_path / "library").ensure()
    write_document(library.root, LOAN, LOAN_TREE, LOAN_PAGES)
    write_document(library.root, OTHER, OTHER_TREE, OTHER_PAGES)
    return Catalog(library=library, index=None)  # type: ignore[arg-type]  # no search needed


def request_for(
    catalog: Catalog,
    model: BaseChatModel | None,
    *doc_ids: str,
    page_cap: int = 10,
    question: str = "What interest rate does the term loan pay?",
) -> StrategyRequest:
    context = AgentContext(library=str(catalog.library.root), strategy="pageindex")
    context.page_cap = page_cap
    return StrategyRequest(
        question,
        SearchScope(doc_ids=doc_ids),
        context,
        catalog,
        model,
    )


class ScriptedNavigator(BaseChatModel):
    """Replies per document and turn (so concurrent searches stay deterministic): a tool call
    or the answer text; the final answer call gets ``final``. Keeps every prompt it saw and
    the tools it was offered."""

    script: dict[str, list[AIMessage]]
    final: str = FINAL
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-navigator"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedNavigator:  # type: ignore[override]
        self.bound = list(tools)
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        if messages[0].content == ANSWER_PROMPT:
            reply = AIMessage(self.final)
        else:
            doc_id = next(d for d in self.script if f"({d})" in str(messages[1].content))
            turn = sum(isinstance(m, AIMessage) for m in messages)
            replies = self.script[doc_id]
            reply = replies[turn] if turn < len(replies) else act("back")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def act(action: str, **args: Any) -> AIMessage:
    """A turn that calls one of the search's tools."""
    call = {"name": f"pageindex_{action}", "args": args, "id": "c1", "type": "tool_call"}
    return AIMessage("", tool_calls=[call])


def answer(text: str) -> AIMessage:
    return AIMessage(text)


def loan_tree() -> DocumentTree:
    return DocumentTree.build(LOAN, "Report d1", "Smith et al., 2021", LOAN_TREE, LOAN_PAGES)


def tools(request: StrategyRequest) -> list[tuple[int, str, bool]]:
    return [(s["layer"], s["tool"], s["ok"]) for s in request.recorder.steps]


# -- cross-references ----------------------------------------------------------------------------
def test_title_labels() -> None:
    assert title_label("3.2 Training") == "3.2"
    assert title_label("3.2. Training") == "3.2"
    assert title_label("B.1 Reading source documents") == "B.1"
    assert title_label("Appendix G: Interest rates") == "G"
    assert title_label("IV. RESULTS") == "IV"
    assert title_label("A Word Frequency") == "A"
    assert title_label("Abstract") is None
    assert title_label("Introduction") is None


def test_find_references_normalises_kinds_in_order() -> None:
    text = (
        "As shown in Table 4 in Appendix B, and in Sec. 3.2 (see also Section 3.2), §2 and "
        "Figs. 5 apply; see appendix for details and Sections 4 and 5."
    )
    assert find_references(text) == [
        "Table 4",
        "Appendix B",
        "Section 3.2",
        "Section 2",
        "Figure 5",
        "Section 4",
    ]


def test_resolve_reference_by_numbering_caption_and_fallback() -> None:
    tree = DocumentTree.build(
        "x",
        "t",
        "l",
        [
            node("0000", "A Study of Loans", 1, 1, ""),
            node("0001", "3 Method", 2, 3, "", node("0002", "3.2 Training", 3, 3, "")),
            node("0003", "Appendix B Proofs", 4, 4, ""),
            node("0004", "A Extra tables", 5, 5, ""),
        ],
        ["p1", "p2", "**Table 4:** losses", "p4", "p5"],
    )
    assert resolve_reference(tree, "Section 3.2") == "0002"
    assert resolve_reference(tree, "Section 3.2.1") == "0002"  # nearest numbered ancestor
    assert resolve_reference(tree, "Section 3") == "0001"
    assert resolve_reference(tree, "Appendix B") == "0003"
    assert resolve_reference(tree, "Appendix A") == "0004"  # the last "A", not the article
    assert resolve_reference(tree, "Table 4") == "0002"  # deepest node holding the caption
    assert resolve_reference(tree, "Section 9") is None
    assert resolve_reference(tree, "Figure 1") is None


def test_offered_references_skip_sections_already_read() -> None:
    tree = loan_tree()
    text = LOAN_PAGES[2] + " Section 2.1 has more."
    assert offered_references(tree, text, read_pages={2, 3}) == {
        "Appendix G": "0004",
        "Table 4": "0004",
    }


# -- DocScore ------------------------------------------------------------------------------------
def test_doc_scores_by_hand() -> None:
    hits = [("a", 0.9), ("b", 0.8), ("a", 0.7), ("c", 0.5), ("a", 0.6)]
    scores = dict(doc_scores(hits))
    assert scores["a"] == pytest.approx((0.9 + 0.7 + 0.6) / 2.0)  # n = 3: √4
    assert scores["b"] == pytest.approx(0.8 / math.sqrt(2))
    assert scores["c"] == pytest.approx(0.5 / math.sqrt(2))
    assert [d for d, _ in doc_scores(hits)] == ["a", "b", "c"]


def test_doc_scores_agreement_beats_one_strong_hit_and_ties_keep_hit_order() -> None:
    ranked = doc_scores([("x", 0.9), ("y", 0.5), ("y", 0.5), ("y", 0.5)])
    assert ranked[0] == ("y", pytest.approx(1.5 / 2.0))
    assert ranked[1] == ("x", pytest.approx(0.9 / math.sqrt(2)))
    assert [d for d, _ in doc_scores([("p", 0.4), ("q", 0.4)])] == ["p", "q"]


# -- one document with a model -------------------------------------------------------------------
def walk_and_answer() -> ScriptedNavigator:
    """Open, read, follow the cross-reference, read it, answer."""
    return ScriptedNavigator(
        script={
            LOAN: [
                act("open", node_id="0001"),
                act("read", node_id="0002"),
                act("jump", ref="Appendix G"),
                act("read", node_id="0004"),
                answer(FINAL),
            ]
        }
    )


def test_model_walks_reads_follows_a_cross_reference_and_answers(catalog: Catalog) -> None:
    model = walk_and_answer()
    request = request_for(catalog, model, LOAN)
    outcome = pageindex.run(request)

    assert outcome.answer == FINAL and outcome.status == "answered"
    assert tools(request) == [
        (1, "pageindex_outline", True),
        (1, "pageindex_open", True),
        (2, "pageindex_read", True),
        (1, "pageindex_jump", True),
        (2, "pageindex_read", True),
    ]
    offered = [spec["function"]["name"] for spec in model.bound]
    assert offered == ["pageindex_open", "pageindex_read", "pageindex_back", "pageindex_jump"]
    reads = [s for s in request.recorder.steps if s["tool"] == "pageindex_read"]
    assert [s["pages"] for s in reads] == [[2, 3], [6, 7, 8]]
    assert request.recorder.pages_read == {LOAN: [2, 3, 6, 7, 8]}
    after_read = str(model.seen[2][-1].content)
    assert "Referenced: Appendix G → [0004] Appendix G Interest rates (p.6-8)" in after_read
    assert "(Smith et al., 2021, d1, p.3)" in after_read  # page headers carry the citation
    assert request.recorder.usage.model_calls == 5  # the model's answer needs no extra call


def test_bad_calls_cost_a_step_and_say_what_was_wrong(catalog: Catalog) -> None:
    replies = [
        act("read"),
        act("read", node_id="0099"),
        act("read", node_id="0002"),
        act("open", node_id="0000"),
        act("fly"),
        act("back"),
        act("jump", ref="Appendix Z"),
        act("open", node_id="1"),
        act("read", node_id="0002"),
        act("read", node_id="0002"),
        answer(FINAL),
    ]
    model = ScriptedNavigator(script={LOAN: replies})
    request = request_for(catalog, model, LOAN)
    outcome = pageindex.run(request)

    errors = [(s["tool"], s["error"]) for s in request.recorder.steps if not s["ok"]]
    assert [tool for tool, _ in errors] == [
        "pageindex_read",
        "pageindex_read",
        "pageindex_read",
        "pageindex_open",
        "pageindex_fly",
        "pageindex_back",
        "pageindex_jump",
        "pageindex_read",
    ]
    messages = [error or "" for _, error in errors]
    assert "node_id: Field required" in messages[0]
    assert "no node '0099'" in messages[1]
    assert "not shown from here; open its parent 0001" in messages[2]
    assert "0000 has no subsections; read it instead" in messages[3]
    assert "unknown tool 'pageindex_fly'" in messages[4]
    assert "top level already" in messages[5]
    assert "matches 'Appendix Z'" in messages[6]
    assert "0002 was read already" in messages[7]
    # an unpadded id is understood, and every error reaches the model's next prompt
    assert ("pageindex_open", True) in [(s["tool"], s["ok"]) for s in request.recorder.steps]
    assert "no node '0099'" in str(model.seen[2][-1].content)
    assert "Budget: 4 of 12 steps" in str(model.seen[9][-1].content)  # failed calls count
    assert outcome.answer == FINAL


def test_step_limit_forces_an_answer_from_what_was_read(catalog: Catalog) -> None:
    replies = [act("read", node_id="0000")] + [act("back")] * 20
    model = ScriptedNavigator(script={LOAN: replies})
    request = request_for(catalog, model, LOAN)
    outcome = pageindex.run(request)

    actions = [s for s in request.recorder.steps if s["tool"] != "pageindex_outline"]
    assert len(actions) == MAX_STEPS + EXTRA_TURNS  # the extra turns are refused
    assert all(not s["ok"] for s in actions[MAX_STEPS:])
    assert model.seen[-1][0].content == ANSWER_PROMPT  # one answer call over what was read
    assert "(Smith et al., 2021, d1, p.1)" in str(model.seen[-1][1].content)
    assert outcome.answer == FINAL


def test_read_limit_ends_the_search_and_long_sections_are_cut(catalog: Catalog) -> None:
    replies = [
        act("read", node_id="0000"),
        act("read", node_id="0004"),
        act("open", node_id="0001"),
        act("read", node_id="0002"),
        act("read", node_id="0003"),
        act("read", node_id="0005"),
        answer(FINAL),
    ]
    model = ScriptedNavigator(script={LOAN: replies})
    request = request_for(catalog, model, LOAN, page_cap=2)
    pageindex.run(request)

    reads = [s for s in request.recorder.steps if s["tool"] == "pageindex_read"]
    assert [s["ok"] for s in reads] == [True] * MAX_READS + [False]
    assert "at most 4 times" in str(reads[-1]["error"])
    assert reads[1]["pages"] == [6, 7]
    assert "cut to its first 2 of 3 pages" in str(model.seen[2][-1].content)


def test_no_read_and_a_failing_endpoint_fail_clearly(catalog: Catalog) -> None:
    class Broken(ScriptedNavigator):
        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            raise ConnectionError("endpoint down")

    request = request_for(catalog, Broken(script={}), LOAN)
    outcome = pageindex.run(request)
    assert outcome.answer == ""
    assert outcome.status == "failed"
    assert outcome.detail == "the model call failed: ConnectionError: endpoint down"


# -- corpus mode ---------------------------------------------------------------------------------
class FakeChunk:
    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id


class FakeHit:
    def __init__(self, doc_id: str, score: float) -> None:
        self.chunk = FakeChunk(doc_id)
        self.score = score


def fake_passage_search(hits: list[tuple[str, float]]) -> Callable[..., Any]:
    class FakePassageSearch:
        def __init__(self, catalog: Any, scheme: str) -> None:
            assert scheme == "dense"

        def search(self, query: str, doc_ids: list[str], limit: int, method: str) -> list[Any]:
            assert method == "dense"
            return [FakeHit(d, s) for d, s in hits if d in doc_ids][:limit]

    return FakePassageSearch


def test_corpus_mode_selects_by_docscore_and_merges_searches_in_rank_order(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tools.passages

    hits = [(LOAN, 0.5), (OTHER, 0.9), (LOAN, 0.5), (LOAN, 0.5)]  # d1: 1.5/2 > d2: 0.9/√2
    monkeypatch.setattr(tools.passages, "PassageSearch", fake_passage_search(hits))
    model = ScriptedNavigator(
        script={
            LOAN: [act("jump", ref="Appendix G"), act("read", node_id="0004"), answer("a1")],
            OTHER: [act("read", node_id="0000"), answer("a2")],
        }
    )
    request = request_for(catalog, model, LOAN, OTHER)
    outcome = pageindex.run(request)

    steps = request.recorder.steps
    assert [s["seq"] for s in steps] == list(range(1, len(steps) + 1))
    assert (steps[0]["layer"], steps[0]["tool"]) == (0, "docscore_select")
    assert list(steps[0]["details"]["selected"]) == [LOAN, OTHER]
    assert [s["doc_id"] for s in steps[1:]] == [LOAN] * 3 + [OTHER] * 2
    assert request.recorder.pages_read == {LOAN: [6, 7, 8], OTHER: [1, 2]}
    assert request.recorder.usage.model_calls == 3 + 2 + 1
    assert MERGED_NOTE in str(model.seen[0][1].content)
    assert outcome.answer == FINAL  # one merged answer, not a per-document one
    merged = str(model.seen[-1][1].content)
    assert "d1, p.6-8" in merged and "d2, p.1-2" in merged


# -- offline -------------------------------------------------------------------------------------
def test_offline_walker_descends_reads_follows_a_reference_and_answers(catalog: Catalog) -> None:
    question = "When is the term loan due, and what is its maturity?"
    request = request_for(catalog, None, LOAN, question=question)
    outcome = pageindex.run(request)

    assert tools(request) == [
        (1, "pageindex_outline", True),
        (1, "pageindex_open", True),
        (2, "pageindex_read", True),
        (1, "pageindex_jump", True),
        (2, "pageindex_read", True),
        (1, "pageindex_answer", True),
    ]
    assert request.recorder.steps[1]["args"]["node_id"] == "0001"
    assert request.recorder.steps[3]["args"]["ref"] == "Appendix G"
    assert request.recorder.pages_read == {LOAN: [2, 3, 6, 7, 8]}
    assert outcome.answer.startswith("Extractive answer")
    assert "(Smith et al., 2021, d1, p." in outcome.answer


def test_single_document_search_starts_with_the_outline_prompt(catalog: Catalog) -> None:
    model = ScriptedNavigator(script={LOAN: [act("read", node_id="0000"), answer(FINAL)]})
    pageindex.run(request_for(catalog, model, LOAN))
    first = model.seen[0]
    assert isinstance(first[1], HumanMessage)
    view = str(first[1].content)
    assert "[0001] 2 Financial statements (p.2-5, 2 subsections)" in view
    assert "[0002]" not in view  # collapsed until opened
    assert MERGED_NOTE not in view
    assert f"{MAX_STEPS} of {MAX_STEPS} steps and {MAX_READS} of {MAX_READS} reads" in view


def test_a_model_s_search_runs_as_checkpointed_turns_of_the_agent_graph(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from graph import nodes
    from graph.agent import build_agent_graph

    model = walk_and_answer()
    monkeypatch.setattr(nodes, "configured_model", lambda _context: model)
    indexed = open_catalog(catalog.library.root)  # the agent graph refuses an index without them
    for doc_id in (LOAN, OTHER):
        indexed.reindex(doc_id)
    request.addfinalizer(close_catalogs)
    saver = InMemorySaver()
    graph = build_agent_graph().compile(checkpointer=saver)
    final = graph.invoke(
        {"question": "What interest rate does the term loan pay?", "doc_ids": [LOAN]},
        {"configurable": {"thread_id": "t1"}},
        context=AgentContext(library=str(catalog.library.root), strategy="pageindex"),
    )
    assert final["status"] == "answered" and final["answer"].startswith(FINAL)
    assert [s["tool"] for s in final["trajectory"]] == [
        "pageindex_outline",
        "pageindex_open",
        "pageindex_read",
        "pageindex_jump",
        "pageindex_read",
    ]
    assert [s["pages"] for s in final["trajectory"] if s["tool"] == "pageindex_read"] == [
        [2, 3],
        [6, 7, 8],
    ]
    loop = [
        c.checkpoint["channel_values"]
        for c in saver.list(None)
        if c.config["configurable"]["checkpoint_ns"].startswith("tool_loop:")
    ]
    # input, start, then one checkpoint per step: four (turn, tools) pairs and the answer
    assert len(loop) == 2 + 4 * 2 + 1
    assert sorted(v.get("tool_calls", 0) for v in loop)[-2:] == [4, 4]
    # every step rebuilt the search from the trajectory: the view after the second read shows
    # both reads and the cursor the jump left
    last_view = str(model.seen[-1][-1].content)
    assert "Read so far: [0002] 2.1 Debt (p.2-3); [0004] Appendix G" in last_view
    assert "you are at [0004]" in last_view
