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

Each turn is taken by ``graph.turns``, as the query agent's are: tool choice, insisting once
on the loop's first tool, call order and the turn cap (the call budget and
:data:`EXTRA_TURNS`). If the model still calls tools once the cap is reached, or answers with
nothing, one answer call over the passages the tools showed ends the run.
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

from graph.recorder import Recorder
from graph.registry import declared
from graph.state import RunStatus, Step
from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.tool_engine import ToolEngine
from graph.turns import AUTO, TurnRules, deepest_layer, run_calls, take_turn
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
        self.request.recorder.restore(state)
        self.loop = make_loop(self.request)
        self.engine = self.loop.engine(
            self.request.recorder,
            state.get("tool_calls", 0),
            dict(state.get("tool_runs") or {}),
            [_passage(item) for item in state.get("passages") or []],
        )

    def progress(self) -> dict[str, Any]:
        """What this step changed, as state updates."""
        recorder = self.request.recorder
        return {
            **recorder.state_update(),
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
        """One model turn over the loop's conversation with the strategy's tools bound
        (``graph.turns``: tool choice, insisting on the loop's first tool, the turn cap)."""
        step = _Step(state, runtime, make_request, make_loop)
        opening = [] if state.get("loop_messages") else _opening(step)
        conversation = [*(state.get("loop_messages") or []), *opening]
        cap = step.loop.max_calls + EXTRA_TURNS
        turn = take_turn(
            step.request.model,  # type: ignore[arg-type]
            step.engine.specs(),
            conversation,
            step.request.recorder,
            rules=TurnRules(cap, step.loop.tools[0].name if step.loop.tools else None),
            choice=state.get("tool_choice") or AUTO,
            turns_taken=sum(isinstance(m, AIMessage) for m in conversation),
            calls_made=step.engine.used,
        )
        if turn.capped:
            return step.fallback("budget", f"tool calls continued past {step.loop.max_calls}")
        if turn.failure:
            return step.end(StrategyOutcome("", "failed", turn.failure))
        if turn.calls or turn.insist:
            update = {
                **step.progress(),
                "loop_messages": [*opening, *turn.messages],
                "tool_choice": turn.next_choice,
            }
            return Command(goto="tools" if turn.calls else "turn", update=update)
        if turn.text:
            return step.end(StrategyOutcome(turn.text))
        return step.fallback("fallback", "empty answer")

    def tools(state: LoopState, runtime: Runtime[Any]) -> Command[Literal["turn"]]:
        """Run the calls of the model's last turn through the tool engine."""
        step = _Step(state, runtime, make_request, make_loop)
        reply = state["loop_messages"][-1]
        layers = {name: tool.layer for name, tool in step.engine.tools.items()}
        step.engine.layer = deepest_layer(reply, layers, 0)
        answers = run_calls(step.engine, reply)
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
    final = graph.invoke({"question": request.question, **recorder.state_update()})
    recorder.restore(final)
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
