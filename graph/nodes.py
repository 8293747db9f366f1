"""Nodes of the query agent: prepare → model turn → layer 0/1/2 tools → (nudge) → … → finish.

Every node returns a ``Command`` naming where the run goes next, so the graph's edges are the
routing table Studio draws. Budgets are counters in state; calls over budget are answered with
error ToolMessages rather than run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from graph import prompts
from graph.citations import citation_list, enforce, unread_pages
from graph.context import AgentContext
from graph.extractive import extractive_answer
from graph.inputs import InvalidInput, checked_request
from graph.models import agent_model, configured_model
from graph.recorder import Recorder
from graph.registry import strategy_spec
from graph.state import AgentState, RunStatus, status_text
from graph.strategies.base import StrategyRequest, runner
from graph.tool_engine import ToolEngine
from graph.turns import AUTO, Turn, TurnRules, deepest_layer, run_calls, take_turn
from store.catalog import open_catalog
from store.search_engine import SearchFilters, engine_for
from store.types import DocumentMetadata
from tools.formatting import author_label
from tools.schemas import TOOL_LAYERS, TOOL_SCHEMAS, openai_tool_spec
from tools.toolbox import SearchScope, Toolbox

LayerNode = Literal["layer0", "layer1", "layer2"]
LAYER_NODES: tuple[LayerNode, LayerNode, LayerNode] = ("layer0", "layer1", "layer2")
NO_ANSWER = (
    "No answer: the run ended ({reason}) before the model produced one. "
    "Try a more specific question or a larger budget."
)


def _toolbox(context: AgentContext, state: AgentState) -> Toolbox:
    scope = SearchScope.from_input(state.get("doc_ids"), state.get("filters"))
    catalog = open_catalog(Path(context.library))
    return Toolbox(
        catalog,
        gates_on=context.gates_on,
        page_cap=context.page_cap,
        scope=scope,
        disabled=strategy_spec(context.strategy).disabled_tools,
    )


def allowed_tools(context: AgentContext) -> list[str]:
    """The tools the model is offered under the run's strategy."""
    disabled = strategy_spec(context.strategy).disabled_tools
    return [name for name in TOOL_LAYERS if name not in disabled]


def prepare(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Command[Literal["model_turn", "tool_loop", "strategy", "finish"]]:
    """Check the input, then open the conversation: system prompt with corpus statistics, then
    the question; then the agent loop, a strategy's tool loop, or the ``strategy`` node for
    strategies that run their own retrieval. Input that cannot be run ends the run at once."""
    context = runtime.context
    try:
        request = checked_request(dict(state))
    except InvalidInput as exc:
        refused = {"status": "invalid", "status_detail": str(exc), "strategy": context.strategy}
        return Command(goto="finish", update=refused)
    question, doc_ids, filters = request.question, request.doc_ids, request.filters.scope()
    content = question
    if doc_ids:
        content += "\n\nAnswer from these documents only (doc_ids): " + ", ".join(doc_ids)
    if filters:
        limits = ", ".join(f"{k}={v}" for k, v in sorted(filters.items()))
        content += f"\n\nDocument search is limited to: {limits}."
    opening = [] if state.get("messages") else [SystemMessage(_system_prompt(context))]
    recorder = Recorder(steps=list(state.get("trajectory") or []))
    kwargs: dict[str, Any] = {"doc_ids": doc_ids}
    if context.strategy == "no-vector":
        trees = _all_trees(context, state, recorder)
        content += "\n\n" + trees.text
        kwargs["trees"] = trees.artifact["trees"]
    # A question on an existing thread continues its conversation and trajectory; the budget
    # counters start afresh for every question.
    update: dict[str, Any] = {
        "question": question,
        "doc_ids": doc_ids,
        "filters": filters,
        "messages": [*opening, HumanMessage(content, additional_kwargs=kwargs)],
        "layer": 1 if context.strategy == "no-vector" else 0,
        "model_turns": 0,
        "tool_calls": 0,
        "trajectory": recorder.steps,
        "pages_read": dict(state.get("pages_read") or {}),
        "citation_retries": 0,
        "citations": [],
        "answer": "",
        "status": "running",
        "strategy": context.strategy,
        "usage": {},
        "loop_messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)],
        "tool_runs": {},
        "passages": [],
        "tool_choice": AUTO,
    }
    return Command(goto=_first_node(context, doc_ids), update=update)


def _first_node(
    context: AgentContext, doc_ids: list[str]
) -> Literal["model_turn", "tool_loop", "strategy"]:
    """The agent loop; a strategy's tool loop when it declares one, a model is configured and
    the run's documents suit the loop; else the strategy's runner."""
    if context.uses_agent_loop:
        return "model_turn"
    spec = strategy_spec(context.strategy)
    suits = not spec.loop_for_one_document or len(doc_ids) == 1
    if spec.tool_loop and suits and configured_model(context) is not None:
        return "tool_loop"
    return "strategy"


@dataclass
class _Trees:
    text: str
    artifact: dict[str, Any]


def _all_trees(context: AgentContext, state: AgentState, recorder: Recorder) -> _Trees:
    """The ``no-vector`` ablation: with no document search, the model starts from the trees
    of every document in scope, all in its first message, each shown by a
    ``get_document_tree`` call through the tool engine (its own budget: one per document)."""
    toolbox = _toolbox(context, state)
    doc_ids = toolbox.scope.documents(toolbox.catalog)
    engine = ToolEngine(toolbox.tools(), len(doc_ids), recorder, layer=1)
    results = [engine.call("get_document_tree", {"doc_id": d}) for d in doc_ids]
    text = "Section trees of every document in the library:\n\n" + "\n\n".join(
        r.text for r in results
    )
    artifact = {"trees": [r.artifact for r in results if r.ok]}
    return _Trees(text, artifact)


def _system_prompt(context: AgentContext) -> str:
    """The system prompt with statistics from the search engine's in-memory document table
    (no per-document file reads on every question)."""
    documents = engine_for(open_catalog(Path(context.library))).documents(SearchFilters())
    return prompts.system_prompt(
        documents, context.max_tool_calls, context.page_cap, context.strategy
    )


ModelFactory = Callable[[AgentContext], BaseChatModel]
TurnTarget = Literal["layer0", "layer1", "layer2", "model_turn", "finish"]
ModelTurn = Callable[[AgentState, Runtime[AgentContext]], Command[TurnTarget]]


def make_model_turn(model_factory: ModelFactory = agent_model) -> ModelTurn:
    """The model-turn node for a given way of obtaining the chat model (tests script one)."""

    def model_turn(state: AgentState, runtime: Runtime[AgentContext]) -> Command[TurnTarget]:
        """One model turn (``graph.turns``); its tool calls go to the node of the deepest
        layer they touch."""
        context = runtime.context
        specs = [openai_tool_spec(TOOL_SCHEMAS[name]) for name in allowed_tools(context)]
        recorder = Recorder.from_state(state)
        turn = take_turn(
            model_factory(context),
            specs,
            state["messages"],
            recorder,
            rules=TurnRules(context.max_model_turns, _first_tool(state, context)),
            choice=state.get("tool_choice") or AUTO,
            turns_taken=state.get("model_turns", 0),
            calls_made=state.get("tool_calls", 0),
        )
        return _after_turn(state, turn, recorder, context.max_model_turns)

    return model_turn


def _after_turn(
    state: AgentState, turn: Turn, recorder: Recorder, max_turns: int
) -> Command[TurnTarget]:
    """Where the agent goes after a turn: the layer of its calls, the insisted turn, or
    ``finish`` (an answer, a failure, or the turn budget spent)."""
    if turn.capped:
        spent = {"status": "budget", "status_detail": f"{max_turns} model turns spent"}
        return Command(goto="finish", update=spent)
    update: dict[str, Any] = {
        "messages": turn.messages,
        "model_turns": state.get("model_turns", 0) + 1,
        "usage": recorder.usage.as_dict(),  # a failed turn's tokens were spent all the same
        "tool_choice": turn.next_choice,
    }
    if turn.failure:
        return Command(
            goto="finish", update={**update, "status": "failed", "status_detail": turn.failure}
        )
    if turn.insist:
        return Command(goto="model_turn", update=update)
    if not turn.calls:
        return Command(goto="finish", update=update)
    layer = deepest_layer(turn.reply, TOOL_LAYERS, state.get("layer", 0))
    return Command(goto=LAYER_NODES[layer], update=update)


def _first_tool(state: AgentState, context: AgentContext) -> str | None:
    """The tool the agent insists on (``graph.turns``): the first allowed tool of the layer
    it is at (``search_documents``; ``get_document_tree`` when the strategy starts at the
    trees)."""
    layer = state.get("layer", 0)
    return next((name for name in allowed_tools(context) if TOOL_LAYERS[name] == layer), None)


def _run_tools(
    state: AgentState, runtime: Runtime[AgentContext], layer: int
) -> Command[Literal["nudge", "model_turn"]]:
    """Run every call of the last AI message through the tool engine, in order."""
    context = runtime.context
    toolbox = _toolbox(context, state)
    recorder = Recorder.from_state(state)
    engine = ToolEngine(
        toolbox.tools(),
        context.max_tool_calls,
        recorder,
        used=state.get("tool_calls", 0),
        layer=layer,
        switched_off=toolbox.disabled,
    )
    update = {
        "messages": run_calls(engine, state["messages"][-1]),
        **recorder.state_update(),
        "tool_calls": engine.used,
        "layer": layer,
    }
    goto: Literal["nudge", "model_turn"] = (
        "nudge" if engine.used >= context.nudge_after else "model_turn"
    )
    return Command(goto=goto, update=update)


def layer0(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Command[Literal["nudge", "model_turn"]]:
    """Layer 0: find documents (search_documents, get_paper_metadata)."""
    return _run_tools(state, runtime, 0)


def layer1(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Command[Literal["nudge", "model_turn"]]:
    """Layer 1: read section trees (get_document_tree, search_within_paper)."""
    return _run_tools(state, runtime, 1)


def layer2(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Command[Literal["nudge", "model_turn"]]:
    """Layer 2: read pages and figures (get_page_content, list_images, get_page_image)."""
    return _run_tools(state, runtime, 2)


def nudge(state: AgentState, runtime: Runtime[AgentContext]) -> Command[Literal["model_turn"]]:
    """From the nudge threshold on, ask the model to synthesise now."""
    note = prompts.NUDGE.format(
        used=state.get("tool_calls", 0), budget=runtime.context.max_tool_calls
    )
    return Command(goto="model_turn", update={"messages": [HumanMessage(note, name="budget")]})


def strategy_request(state: AgentState, runtime: Runtime[AgentContext]) -> StrategyRequest:
    """The request a strategy gets for this run (its recorder continues the trajectory)."""
    context = runtime.context
    toolbox = _toolbox(context, state)
    return StrategyRequest(
        question=state.get("question", "").strip(),
        scope=toolbox.scope,
        context=context,
        catalog=toolbox.catalog,
        model=configured_model(context),
        recorder=Recorder.from_state(state),
    )


def run_strategy(state: AgentState, runtime: Runtime[AgentContext]) -> Command[Literal["finish"]]:
    """A strategy with its own retrieval (see ``graph.strategies``): run it, keep its steps."""
    request = strategy_request(state, runtime)
    recorder = request.recorder
    outcome = runner(runtime.context.strategy)(request)
    new_steps = len(recorder.steps) - len(state.get("trajectory") or [])
    return Command(
        goto="finish",
        update={
            "messages": [AIMessage(outcome.answer)] if outcome.answer else [],
            **recorder.state_update(),
            "tool_calls": new_steps,
            "model_turns": recorder.usage.model_calls,
            "status": outcome.status,
            "status_detail": outcome.detail,
        },
    )


def finish(
    state: AgentState, runtime: Runtime[AgentContext]
) -> Command[Literal["model_turn", "__end__"]]:
    """Final answer with enforced citations; one chance to fix citations of unread pages."""
    context = runtime.context
    answer = _latest_text(state)
    pages_read = state.get("pages_read", {})
    bad = unread_pages(answer, pages_read)
    retries = state.get("citation_retries", 0)
    if (
        bad
        and context.uses_agent_loop
        and retries < 1
        and state.get("model_turns", 0) < context.max_model_turns
        and _is_final(state)
    ):
        note = prompts.BAD_CITATIONS.format(pages=", ".join(bad[:10]))
        return Command(
            goto="model_turn",
            update={
                "messages": [HumanMessage(note, name="citation_check")],
                "citation_retries": retries + 1,
            },
        )
    status, detail = state.get("status", "running"), state.get("status_detail", "")
    if status == "invalid":
        refusal = f"Not run: {detail}."
        return Command(goto="__end__", update={"answer": refusal, "citations": []})
    if not answer and status in ("running", "budget"):
        answer, status, detail = _answer_from_pages_read(state, context, status, detail)
    if not answer:
        if status in ("running", "answered"):
            status, detail = "failed", "no assistant text"
        reason = status_text(status, detail)
        return Command(
            goto="__end__",
            update={
                "answer": NO_ANSWER.format(reason=reason),
                "citations": [],
                "status": status,
                "status_detail": detail,
            },
        )
    answer, removed = enforce(answer, pages_read)
    if removed:
        answer += (
            f"\n\n[{removed} citation(s) removed: they pointed at pages this run did not read.]"
        )
    library = open_catalog(Path(context.library)).library
    texts, ocr_pages = _pages_read(library, pages_read)
    return Command(
        goto="__end__",
        update={
            "answer": answer,
            "citations": citation_list(answer, texts, ocr_pages),
            "status": "answered" if status == "running" else status,
            "status_detail": detail,
        },
    )


def _answer_from_pages_read(
    state: AgentState, context: AgentContext, status: RunStatus, detail: str
) -> tuple[str, RunStatus, str]:
    """When the model gave no text but this question's calls read pages, the offline reader
    answers from them (status ``fallback``, or ``budget`` when a budget ended the run)."""
    calls = state.get("tool_calls", 0)
    steps = (state.get("trajectory") or [])[-calls:] if calls else []
    read = [(s["doc_id"], p) for s in steps if s["ok"] and s["doc_id"] for p in s["pages"]]
    read += [
        (d, p) for s in steps if s["ok"] for d, ps in s.get("disclosed", {}).items() for p in ps
    ]
    if not read:
        return "", status, detail
    library = open_catalog(Path(context.library)).library
    pages = [(d, p, library.pages(d)[p - 1]) for d, p in dict.fromkeys(read) if library.has(d)]
    labels = {d: _label(library.metadata(d)) for d, _, _ in pages}
    answer = extractive_answer(state.get("question", ""), pages, labels)
    why = "the model gave no answer; written from the pages read"
    if status == "budget":
        return answer, status, f"{detail}; {why}"
    return answer, "fallback", why


def _label(metadata: DocumentMetadata) -> str:
    return author_label(list(metadata["authors"] or []), metadata["year"])


def _is_final(state: AgentState) -> bool:
    """The run is ending because the model answered (not because a budget ran out)."""
    return state.get("status", "running") == "running"


def _latest_text(state: AgentState) -> str:
    """The latest non-empty assistant text."""
    for message in reversed(state.get("messages", [])):
        if isinstance(message, AIMessage):
            text = message.text if isinstance(message.text, str) else str(message.content)
            if text.strip():
                return text.strip()
    return ""


def _pages_read(
    library: Any, pages_read: dict[str, list[int]]
) -> tuple[dict[tuple[str, int], str], frozenset[tuple[str, int]]]:
    """The text of every page the run read, and which of them OCR read."""
    texts: dict[tuple[str, int], str] = {}
    ocr: set[tuple[str, int]] = set()
    for doc_id, pages in pages_read.items():
        if not library.has(doc_id):
            continue
        records = library.page_records(doc_id)
        for page in pages:
            texts[(doc_id, page)] = records[page - 1]["text"]
            if records[page - 1].get("ocr"):
                ocr.add((doc_id, page))
    return texts, frozenset(ocr)
