"""The tool loop of the strategies whose model calls their own tools (``rit``,
``agentic-search``, ``pageindex``, ``verified-tree``, ``search-o1``).

A looping strategy declares a :class:`ToolLoop`: its tools (argument schemas the model reads,
each with its layer and an optional per-tool limit), its total call budget and its system
prompt. The loop is a small graph, ``turn`` → ``tools`` → ``turn`` … → end, so every model turn
and every batch of tool calls is a checkpointed step Studio shows: inside the query agent it is
the ``tool_loop`` node (a subgraph), and :func:`run_tool_loop` runs the same graph for a caller
holding a request. Its state is JSON and messages only (the loop's own conversation, the calls
used and run per tool, the passages shown); the tools and the model are rebuilt at each step
from the run's context, and calls go through the one tool engine (``graph.tool_engine``).

A model that has called no tool yet and replies without one is asked once more with
``tool_choice`` naming the loop's first tool (the agent's rule, ``graph.nodes``). If the model
still calls tools once the budget and the extra turns are spent, or answers with nothing, one
answer call over the passages the tools showed ends the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
)
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BeforeValidator

from graph.prompts import USE_TOOLS
from graph.recorder import Recorder
from graph.registry import declared
from graph.state import RunStatus, Step
from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.tool_engine import ToolEngine
from store.chat import ModelCallError, Usage, turn_purpose
from tools.formatting import CITATION_FORMAT
from tools.results import Passage, Tool

EXTRA_TURNS = 2
"""Model turns allowed beyond the call budget, to answer after the budget is spent."""
CITE_RULE = (
    "Answer only from text the tools returned. After each claim cite the page it comes from "
    f"exactly as {CITATION_FORMAT}, using the citation label shown with the text. "
    "If what you read does not answer the question, say so."
)


def _as_list(value: Any) -> Any:
    """Models often send one id as a bare string where a list is expected."""
    return [value] if isinstance(value, str) else value


IdList = Annotated[list[str], BeforeValidator(_as_list)]
"""A list of ids that also accepts a single id."""


@dataclass(frozen=True)
class ToolLoop:
    """What a looping strategy brings: its tools, the total call budget, its system prompt."""

    tools: Sequence[Tool]
    max_calls: int
    system_prompt: str
    first_message: str = ""
    """The opening user message (default: the question)."""

    def engine(
        self,
        recorder: Recorder,
        used: int = 0,
        runs: dict[str, int] | None = None,
        shown: Sequence[Passage] = (),
    ) -> ToolEngine:
        """The tool engine over these tools, resumed at ``used`` calls, ``runs`` per tool and
        the passages ``shown`` so far."""
        return ToolEngine(self.tools, self.max_calls, recorder, used=used, runs=runs, shown=shown)


class LoopState(TypedDict, total=False):
    """The loop's checkpointed state (keys shared with the query agent's state)."""

    question: str
    doc_ids: list[str]
    filters: dict[str, Any]
    messages: Annotated[list[AnyMessage], add_messages]
    loop_messages: Annotated[list[AnyMessage], add_messages]
    trajectory: list[Step]
    pages_read: dict[str, list[int]]
    tool_calls: int
    tool_runs: dict[str, int]
    passages: list[dict[str, Any]]
    model_turns: int
    usage: dict[str, Any]
    status: RunStatus
    status_detail: str
    tool_choice: str


RequestFactory = Callable[[Any, Runtime[Any]], StrategyRequest]
"""Builds the run's request from the state (the agent's, or the loop's own) and run context."""
LoopFactory = Callable[[StrategyRequest], ToolLoop]


class _Step:
    """One step's view of the loop: the request and engine rebuilt from the state."""

    def __init__(
        self,
        state: LoopState,
        runtime: Runtime[Any],
        make_request: RequestFactory,
        make_loop: LoopFactory,
    ) -> None:
        self.state = state
        self.request = make_request(state, runtime)
        recorder = self.request.recorder
        recorder.steps = list(state.get("trajectory") or [])
        recorder.pages_read = {d: list(p) for d, p in (state.get("pages_read") or {}).items()}
        recorder.usage = Usage(**(state.get("usage") or {}))
        self.loop = make_loop(self.request)
        self.engine = self.loop.engine(
            recorder,
            state.get("tool_calls", 0),
            dict(state.get("tool_runs") or {}),
            [_passage(item) for item in state.get("passages") or []],
        )

    def progress(self) -> dict[str, Any]:
        """What this step changed, as state updates."""
        recorder = self.request.recorder
        return {
            "trajectory": recorder.steps,
            "pages_read": recorder.pages_read,
            "usage": recorder.usage.as_dict(),
            "model_turns": recorder.usage.model_calls,
            "tool_calls": self.engine.used,
            "tool_runs": dict(self.engine.runs),
            "passages": [_passage_json(p) for p in self.engine.shown],
        }

    def end(self, outcome: StrategyOutcome) -> Command[Any]:
        """End the loop with the strategy's outcome (the answer joins the run's messages)."""
        update = self.progress()
        update["messages"] = [AIMessage(outcome.answer)] if outcome.answer else []
        update["status"] = outcome.status
        update["status_detail"] = outcome.detail
        return Command(goto="__end__", update=update)

    def fallback(self, status: RunStatus, why: str) -> Command[Any]:
        """An answer written from what the tools showed when the model gave none."""
        outcome = answer_from_passages(self.request, self.engine.shown)
        if outcome.status != "failed":
            outcome = StrategyOutcome(
                outcome.answer, status, f"{why}; answered from the passages read"
            )
        return self.end(outcome)


def strategy_loop(request: StrategyRequest) -> ToolLoop:
    """The tool loop the run's strategy declares."""
    factory: LoopFactory = declared(request.context.strategy, "tool_loop")
    return factory(request)


def loop_graph(
    make_request: RequestFactory, make_loop: LoopFactory
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The loop as a graph; ``make_request`` and ``make_loop`` rebuild the run's request and
    its declared loop at every step."""

    def turn(
        state: LoopState, runtime: Runtime[Any]
    ) -> Command[Literal["turn", "tools", "__end__"]]:
        """One model turn over the loop's conversation, with the strategy's tools bound (and
        ``tool_choice`` naming the first of them when the model must call one: see
        ``graph.nodes._insisted_tool``, the same rule)."""
        step = _Step(state, runtime, make_request, make_loop)
        opening = [] if state.get("loop_messages") else _opening(step)
        conversation = [*(state.get("loop_messages") or []), *opening]
        turns = sum(isinstance(m, AIMessage) for m in conversation)
        if turns >= step.loop.max_calls + EXTRA_TURNS:
            return step.fallback("budget", f"tool calls continued past {step.loop.max_calls}")
        choice = state.get("tool_choice") or "auto"
        specs = step.engine.specs()
        model = step.request.model
        try:
            bound = (
                model.bind_tools(specs)  # type: ignore[union-attr]
                if choice == "auto"
                else model.bind_tools(specs, tool_choice=choice)  # type: ignore[union-attr]
            )
        except NotImplementedError:
            return step.end(StrategyOutcome("", "failed", "the model cannot call tools"))
        try:
            reply = step.request.recorder.ask(bound, conversation, turn_purpose(choice))
        except ModelCallError as exc:
            return step.end(StrategyOutcome("", "failed", exc.reason))
        if reply.tool_calls or reply.invalid_tool_calls:
            # A fresh id: the conversation keeps every turn even if a model repeats an id.
            kept = reply.model_copy(update={"id": None})
            update = {**step.progress(), "loop_messages": [*opening, kept], "tool_choice": "auto"}
            return Command(goto="tools", update=update)
        if choice == "auto" and step.engine.used == 0 and step.loop.tools:
            first = step.loop.tools[0].name
            note = HumanMessage(USE_TOOLS.format(tool=first), name="tool_policy")
            update = {**step.progress(), "loop_messages": [*opening, note], "tool_choice": first}
            return Command(goto="turn", update=update)
        text = reply.text.strip()
        if text:
            return step.end(StrategyOutcome(text))
        return step.fallback("fallback", "empty answer")

    def tools(state: LoopState, runtime: Runtime[Any]) -> Command[Literal["turn"]]:
        """Run the calls of the model's last turn through the tool engine."""
        step = _Step(state, runtime, make_request, make_loop)
        reply = state["loop_messages"][-1]
        calls = [*getattr(reply, "tool_calls", []), *getattr(reply, "invalid_tool_calls", [])]
        known = [
            step.engine.tools[c["name"]].layer for c in calls if c["name"] in step.engine.tools
        ]
        step.engine.layer = max(known, default=0)
        answers = [step.engine.answer(call) for call in calls]
        return Command(goto="turn", update={**step.progress(), "loop_messages": answers})

    builder = StateGraph(LoopState)
    builder.add_node("turn", turn)
    builder.add_node("tools", tools)
    builder.add_edge(START, "turn")
    return builder.compile(name="tool_loop")


def _opening(step: _Step) -> list[AnyMessage]:
    first = step.loop.first_message or f"Question: {step.request.question}"
    return [SystemMessage(step.loop.system_prompt), HumanMessage(first)]


def run_tool_loop(request: StrategyRequest, loop: ToolLoop | LoopFactory) -> StrategyOutcome:
    """Run the loop graph for ``request`` (whose model calls the tools) and fold its steps,
    pages and usage into the request's recorder; ``loop`` is the declared loop, or a factory
    that rebuilds it from each step's request (a loop whose tools keep state to replay)."""
    recorder = request.recorder
    make_loop: LoopFactory = loop if callable(loop) else (lambda _request: loop)
    graph = loop_graph(lambda _state, _runtime: fresh_request(request), make_loop)
    final = graph.invoke(
        {
            "question": request.question,
            "trajectory": list(recorder.steps),
            "pages_read": dict(recorder.pages_read),
            "usage": recorder.usage.as_dict(),
        }
    )
    recorder.steps = list(final.get("trajectory") or [])
    recorder.pages_read = dict(final.get("pages_read") or {})
    recorder.usage = Usage(**(final.get("usage") or {}))
    answers = [m for m in final.get("messages") or [] if isinstance(m, AIMessage)]
    status: RunStatus = final.get("status", "failed")
    return StrategyOutcome(
        answers[-1].text if answers else "",
        status,
        final.get("status_detail", ""),
    )


def fresh_request(request: StrategyRequest) -> StrategyRequest:
    """The request with a recorder of its own for one step (the state holds what it records)."""
    return StrategyRequest(
        question=request.question,
        scope=request.scope,
        context=request.context,
        catalog=request.catalog,
        model=request.model,
    )


def _passage(item: dict[str, Any]) -> Passage:
    return Passage(str(item["doc_id"]), tuple((int(p), str(t)) for p, t in item["segments"]))


def _passage_json(passage: Passage) -> dict[str, Any]:
    return {"doc_id": passage.doc_id, "segments": [[p, t] for p, t in passage.segments]}
