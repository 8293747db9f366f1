"""The one tool engine (validation, budget, refusals, recording) and the tool loop it drives as
checkpointed graph steps inside the query agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from graph import agent, nodes
from graph.agent import build_agent_graph
from graph.context import AgentContext
from graph.recorder import Recorder
from graph.strategies.rit import RitTools, rit_loop
from graph.tool_engine import ToolEngine, unreadable_arguments
from tests.unit.test_agent_graph import library  # noqa: F401  (fixture)
from tests.unit.test_strategy_rit import DOC_A, HITS, FakeSource, ToolScript, make_request, turn
from tools.results import Passage, Tool, ToolResult
from tools.schemas import ToolArgs


class look(ToolArgs):
    """Look at a page."""

    layer = 2
    doc_id: str
    page: int = Field(ge=1)


class find(ToolArgs):
    """Find documents."""

    layer = 0
    query: str


def _look(doc_id: str, page: int) -> ToolResult:
    shown = Passage(doc_id, ((page, f"text of p.{page}"),))
    return ToolResult(f"p.{page}", doc_id=doc_id, pages=[page], passages=(shown,))


def _find(query: str) -> ToolResult:
    return ToolResult(query, artifact={"results": [{"doc_id": "d1"}, {"doc_id": "d2"}]})


def engine(max_calls: int = 10, **kwargs: Any) -> ToolEngine:
    tools = [Tool(look, _look), Tool(find, _find, limit=1)]
    return ToolEngine(tools, max_calls, Recorder(), **kwargs)


def test_a_call_that_works_is_recorded_with_its_layer_pages_and_passages() -> None:
    tools = engine()
    result = tools.call("look", {"doc_id": "d1", "page": 3})
    step = tools.recorder.steps[0]
    assert result.ok and (step["layer"], step["tool"], step["ok"]) == (2, "look", True)
    assert (step["doc_id"], step["pages"]) == ("d1", [3])
    assert tools.recorder.pages_read == {"d1": [3]}
    assert tools.shown == [Passage("d1", ((3, "text of p.3"),))]


def test_a_document_search_records_what_it_found() -> None:
    tools = engine()
    tools.call("find", {"query": "widgets"})
    assert tools.recorder.steps[0]["found"] == ["d1", "d2"]


@pytest.mark.parametrize(
    ("name", "args", "malformed", "expected"),
    [
        ("look", {"doc_id": "d1"}, "bad JSON", "could not read the call to 'look': bad JSON"),
        ("peek", {}, None, "unknown tool 'peek'. Available tools: look, find."),
        ("look", ["d1", 3], None, "arguments for look must be a JSON object, got list."),
        ("look", {"doc_id": "d1", "page": 0}, None, "bad arguments for look: page:"),
        ("look", {"doc_id": "d1", "page": 1, "x": 1}, None, "bad arguments for look: x:"),
    ],
)
def test_misuse_is_answered_counted_and_recorded_not_run(
    name: str, args: Any, malformed: str | None, expected: str
) -> None:
    tools = engine()
    result = tools.call(name, args, malformed)
    assert not result.ok and result.text.startswith(f"Error: {expected}")
    assert tools.used == 1 and tools.recorder.steps[0]["error"] == result.error
    assert tools.recorder.pages_read == {} and tools.shown == []


def test_a_switched_off_tool_is_named_as_off_not_unknown() -> None:
    tools = engine(switched_off={"search_documents"})
    assert "tool 'search_documents' is off in this run" in tools.call("search_documents", {}).text


def test_per_tool_limits_and_the_budget_refuse_calls_and_count_them() -> None:
    tools = engine(max_calls=3)
    assert tools.call("find", {"query": "a"}).ok
    assert "find may be called at most 1 times" in tools.call("find", {"query": "b"}).text
    assert tools.call("look", {"doc_id": "d1", "page": 1}).ok
    assert "tool-call budget (3) is spent" in tools.call("look", {"doc_id": "d1", "page": 2}).text
    assert [s["ok"] for s in tools.recorder.steps] == [True, False, True, False]
    assert tools.used == 4 and dict(tools.runs) == {"find": 1, "look": 1}


def test_an_engine_resumes_from_its_counters() -> None:
    tools = engine(max_calls=3, used=3, runs={"find": 1})
    assert "budget (3) is spent" in tools.call("look", {"doc_id": "d1", "page": 1}).text


def test_a_model_call_is_answered_as_a_tool_message() -> None:
    tools = engine()
    good = tools.answer({"name": "look", "args": {"doc_id": "d1", "page": 2}, "id": "c1"})
    bad = tools.answer({"name": "look", "args": "{", "id": None, "type": "invalid_tool_call"})
    assert (good.status, good.tool_call_id, good.content) == ("success", "c1", "p.2")
    assert bad.status == "error" and bad.tool_call_id == "missing-2"


def test_a_strategy_tool_loop_runs_as_checkpointed_steps_of_the_agent_graph(
    library: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = f"Ten epochs (Lovelace et al., 2020, {DOC_A}, p.4)."
    model = ToolScript(
        replies=[
            turn(("get_toc_structure", {"query": "training epochs"})),
            turn(("get_content", {"node_ids": [f"{DOC_A}:0003"]})),
            AIMessage(content=answer),
        ]
    )
    source = FakeSource(HITS)

    def request(state: Any, runtime: Any) -> Any:
        made = make_request(model)
        made.context = runtime.context
        return made

    monkeypatch.setattr(nodes, "configured_model", lambda _context: model)
    monkeypatch.setattr(nodes, "strategy_request", request)
    monkeypatch.setattr(agent, "strategy_loop", lambda req: rit_loop(RitTools(req, source)))
    saver = InMemorySaver()
    graph = build_agent_graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t1"}}
    final = graph.invoke(
        {"question": "How was the model trained?"},
        config,  # type: ignore[arg-type]
        context=AgentContext(library=str(library), strategy="rit"),
    )
    assert final["answer"] == answer and final["status"] == "answered"
    assert [(s["seq"], s["tool"], s["layer"]) for s in final["trajectory"]] == [
        (1, "get_toc_structure", 1),
        (2, "get_content", 2),
    ]
    assert final["usage"]["model_calls"] == 3
    loop_checkpoints = [
        c.checkpoint["channel_values"]
        for c in saver.list(None)
        if c.config["configurable"]["checkpoint_ns"].startswith("tool_loop:")
    ]
    # Input, start, then one checkpoint per step: turn, tools, turn, tools, turn.
    assert len(loop_checkpoints) == 7
    calls_after_each_step = sorted(v.get("tool_calls", 0) for v in loop_checkpoints)
    assert calls_after_each_step[-4:] == [1, 1, 2, 2]


def test_an_unreadable_call_is_explained_in_one_line() -> None:
    """langchain's parser message spans lines (raw arguments, a troubleshooting link)."""
    raw = (
        'Function get_document_tree arguments:\n\n{"doc_id": \n\nare not valid JSON. Received '
        "JSONDecodeError Expecting value: line 1 column 12 (char 11)\nFor troubleshooting, visit: "
        "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
    )
    assert unreadable_arguments(raw) == (
        "its arguments are not valid JSON (Expecting value: line 1 column 12 (char 11))"
    )
    assert unreadable_arguments(None) == "its arguments are not valid JSON"
    assert unreadable_arguments("bad\nJSON") == "bad JSON"
