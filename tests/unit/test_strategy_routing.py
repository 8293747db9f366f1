"""Strategy selection in the agent graph: the ablations inside the tool loop, and the
``strategy`` node that runs every other strategy (scripted models, a one-document library)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from graph import nodes
from graph.agent import compile_agent
from graph.context import AgentContext
from graph.registry import STRATEGIES, STRATEGY_NAMES
from graph.strategies.base import StrategyOutcome, StrategyRequest, needs_llm
from tests.unit.test_agent_graph import DOC, ScriptedChatModel, call, library, run, tools_msg

__all__ = ["library"]  # the fixture, shared with the agent-graph tests


def test_every_strategy_is_either_a_loop_ablation_or_has_a_runner() -> None:
    loop = {s for s in STRATEGY_NAMES if AgentContext(library="x", strategy=s).uses_agent_loop}
    assert loop == {"vectree", "no-tree", "no-vector", "no-gates"}
    assert set(STRATEGY_NAMES) - loop == {s for s, spec in STRATEGIES.items() if spec.runner}
    with pytest.raises(ValueError, match="is not a strategy; choose one of"):
        AgentContext(library="x", strategy="magic")


def test_no_tree_offers_no_tree_tools_and_refuses_them(library: Path) -> None:
    script = [tools_msg(call("get_document_tree", {"doc_id": DOC}, "c1"))]
    final, _, model = run(library, script, strategy="no-tree")
    step = final["trajectory"][0]
    assert not step["ok"]
    assert "is off in this run" in step["error"]
    assert "get_page_content" in step["error"]  # names what is available instead
    assert "no section-tree tools" in str(model.seen[0][0].content)


def test_no_vector_starts_from_every_tree_and_refuses_search(library: Path) -> None:
    model = ScriptedChatModel(
        script=[tools_msg(call("search_documents", {"query": "widgets"}, "c1"))], seen=[]
    )
    graph = compile_agent(model_factory=lambda _ctx: model)
    final = graph.invoke(
        {"question": "What was the widget failure rate?", "doc_ids": [DOC]},
        context=AgentContext(library=str(library), strategy="no-vector"),
    )
    first, second = final["trajectory"][:2]
    assert (first["tool"], first["layer"]) == ("get_document_tree", 1)
    assert first["args"] == {"doc_id": DOC} and first["doc_id"] == DOC
    assert first["payload_tokens"] > 0
    question = next(m for m in model.seen[0] if isinstance(m, HumanMessage))
    assert "2 Results" in str(question.content)  # the tree is in the first message
    assert not second["ok"]
    assert "search_documents" in second["error"]


def test_no_gates_switches_the_gates_off() -> None:
    assert AgentContext(library="x").gates_on
    assert not AgentContext(library="x", strategy="no-gates").gates_on


def fake_strategy(request: StrategyRequest) -> StrategyOutcome:
    """Reads page 3 through a passage search and cites it, plus a page it never read."""
    request.recorder.record(
        0, "retrieve_passages", {"query": request.question}, "passage text", disclosed=[(DOC, 3)]
    )
    request.recorder.record(2, "read", {"doc_id": DOC}, error="no such node")
    return StrategyOutcome(
        f"The failure rate was 3.5 percent (Lovelace et al., 2021, {DOC}, p.3). "
        f"Widgets are reliable (Lovelace et al., 2021, {DOC}, p.4)."
    )


def test_other_strategies_run_in_the_strategy_node_and_citations_are_enforced(
    library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nodes, "runner", lambda strategy: fake_strategy)
    monkeypatch.setattr(nodes, "configured_model", lambda context: None)
    model = ScriptedChatModel(script=[AIMessage("must not be called")], seen=[])
    graph = compile_agent(model_factory=lambda _ctx: model)
    visited: list[str] = []
    final: dict[str, Any] = {}
    for mode, payload in graph.stream(
        {"question": "What was the widget failure rate?"},
        context=AgentContext(library=str(library), strategy="dense"),
        stream_mode=["updates", "values"],
    ):
        if mode == "updates":
            visited.extend(payload)
        else:
            final = payload
    assert visited == ["prepare", "strategy", "finish"]
    assert not model.seen  # no agent-loop model turn, not even a citation retry
    assert [s["seq"] for s in final["trajectory"]] == [1, 2]
    assert final["trajectory"][0]["pages"] == [3]
    assert final["trajectory"][1]["error"] == "no such node"
    assert f"{DOC}, p.3)" in final["answer"]
    assert f"{DOC}, p.4)" not in final["answer"]
    assert "1 citation(s) removed" in final["answer"]
    assert [(c["doc_id"], c["page"]) for c in final["citations"]] == [(DOC, 3)]
    assert final["status"] == "answered"
    assert final["strategy"] == "dense"


def test_a_strategy_that_needs_an_llm_says_so(
    library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        nodes, "runner", lambda strategy: lambda request: needs_llm(strategy, "it plans.")
    )
    monkeypatch.setattr(nodes, "configured_model", lambda context: None)
    graph = compile_agent()
    final = graph.invoke(
        {"question": "Anything?"}, context=AgentContext(library=str(library), strategy="search-o1")
    )
    assert final["status"] == "needs_llm" and final["status_detail"]
    assert "Strategy 'search-o1' needs an LLM: it plans." in final["answer"]
    assert "VECTREE_" in final["answer"]  # says how to configure one


def test_model_tokens_are_counted_for_the_run(library: Path) -> None:
    final, _, _ = run(library, [], final_text="Nothing to add.")
    usage = final["usage"]
    assert usage["model_calls"] == 2  # the answer without a tool call is asked again, forced
    assert usage["prompt_tokens"] > 100  # system prompt + question, twice
    assert usage["completion_tokens"] == 8  # "Nothing to add." in MiniLM word pieces, twice
    assert usage["estimated"]  # the scripted model reports no usage
