"""A small tool-calling loop for the strategies whose model drives its own retrieval tools.

A strategy declares its tools (an argument schema whose class name and docstring the model
reads, the layer it records, a function that runs it, an optional per-tool call limit) and a
total call budget. :class:`ToolSession` validates, limits, runs and records every call, so an
offline policy and a model go through the same checks and leave the same trajectory;
:func:`run_tool_loop` lets a tool-calling chat model use the session until it answers.

Every call counts against the budget, including the ones that are refused: over a budget,
malformed (arguments that are not JSON), naming an unknown tool, or with invalid arguments.
A refused call is not run; the model gets an error tool message saying how to do better, and
the trajectory records the call with its error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BeforeValidator, ValidationError

from graph.citations import CITATION_FORMAT
from graph.models import ModelCallError
from graph.state import RunStatus
from graph.strategies.base import (
    Passage,
    StrategyOutcome,
    StrategyRequest,
    answer_from_passages,
)
from tools.schemas import ToolArgs

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
class ToolReply:
    """What a tool returns: the text the model reads, the pages it discloses, the passages it
    showed (for an answer written without the model), and any structured result an offline
    policy wants to read."""

    text: str
    disclosed: tuple[tuple[str, int], ...] = ()
    passages: tuple[Passage, ...] = ()
    artifact: Any = None
    error: str | None = None

    @classmethod
    def failure(cls, message: str) -> ToolReply:
        return cls(text=f"Error: {message}", error=message)


@dataclass(frozen=True)
class Tool:
    """One tool: ``schema``'s class name is the tool name, its docstring and field
    descriptions are what the model reads; ``run`` gets the validated arguments as keywords."""

    schema: type[ToolArgs]
    layer: int
    run: Callable[..., ToolReply]
    limit: int | None = None

    @property
    def name(self) -> str:
        return self.schema.__name__


class ToolSession:
    """Budgets, validation, execution and recording of tool calls."""

    def __init__(self, request: StrategyRequest, tools: Sequence[Tool], max_calls: int) -> None:
        self.request = request
        self.tools = {tool.name: tool for tool in tools}
        self.max_calls = max_calls
        self.used = 0
        self.runs: Counter[str] = Counter()
        self.passages: list[Passage] = []
        self.layer = 0

    def specs(self) -> list[dict[str, Any]]:
        """The tools in OpenAI function-calling form."""
        return [convert_to_openai_tool(tool.schema) for tool in self.tools.values()]

    def call(self, name: str, args: Any, malformed: str | None = None) -> ToolReply:
        """Run one call (or refuse it) and record it; ``malformed`` says why the model's call
        could not be read at all."""
        self.used += 1
        tool = self.tools.get(name)
        reply = self._refusal(tool, name, args, malformed) or self._run(cast(Tool, tool), args)
        if tool is not None:
            self.layer = tool.layer
        self.passages.extend(reply.passages if reply.error is None else ())
        self.request.recorder.record(
            self.layer,
            name,
            args if isinstance(args, dict) else {"raw": str(args)},
            reply.text,
            error=reply.error,
            disclosed=reply.disclosed,
        )
        return reply

    def answer(self, call: Mapping[str, Any]) -> ToolMessage:
        """A model's tool call (well formed or not) answered as a tool message."""
        malformed = None
        if call.get("type") == "invalid_tool_call":
            malformed = str(call.get("error") or "the arguments were not valid JSON")
        name = str(call.get("name") or "")
        reply = self.call(name, call.get("args"), malformed)
        return ToolMessage(
            content=reply.text,
            tool_call_id=str(call.get("id") or f"call-{self.used}"),
            name=name or "unknown",
            status="error" if reply.error else "success",
        )

    def _refusal(
        self, tool: Tool | None, name: str, args: Any, malformed: str | None
    ) -> ToolReply | None:
        """The error for a call that must not run, or ``None``."""
        if self.used > self.max_calls:
            return ToolReply.failure(
                f"the budget of {self.max_calls} tool calls is spent; this call was not run. "
                "Answer now from the text you have read."
            )
        if malformed is not None:
            return ToolReply.failure(
                f"could not read the call to {name!r}: {malformed}. "
                "Send the arguments as one JSON object matching the tool's schema."
            )
        if tool is None:
            return ToolReply.failure(
                f"unknown tool {name!r}. Available tools: {', '.join(self.tools)}."
            )
        if tool.limit is not None and self.runs[tool.name] >= tool.limit:
            return ToolReply.failure(
                f"{tool.name} may be called at most {tool.limit} times and that limit is "
                "reached; this call was not run. Use the other tools, or answer."
            )
        if not isinstance(args, dict):
            return ToolReply.failure(f"arguments for {name} must be a JSON object.")
        return None

    def _run(self, tool: Tool, args: dict[str, Any]) -> ToolReply:
        try:
            parsed = tool.schema.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
                for error in exc.errors()[:4]
            )
            return ToolReply.failure(f"bad arguments for {tool.name}: {problems}")
        self.runs[tool.name] += 1
        return tool.run(**parsed.model_dump())


def run_tool_loop(
    request: StrategyRequest, session: ToolSession, system_prompt: str
) -> StrategyOutcome:
    """Let the request's model call the session's tools until it answers in plain text.

    If the model still calls tools once the budget is spent (and the extra turns are used),
    or answers with nothing, one answer call over the passages the tools showed ends the run.
    """
    model = cast(BaseChatModel, request.model)
    try:
        bound = model.bind_tools(session.specs())
    except NotImplementedError:
        return StrategyOutcome("", status="failed", detail="the model cannot call tools")
    messages: list[BaseMessage] = [
        SystemMessage(system_prompt),
        HumanMessage(f"Question: {request.question}"),
    ]
    for _ in range(session.max_calls + EXTRA_TURNS):
        try:
            reply = request.recorder.ask(bound, messages)
        except ModelCallError as exc:
            return StrategyOutcome("", status="failed", detail=exc.reason)
        messages.append(reply)
        calls = [*reply.tool_calls, *reply.invalid_tool_calls]
        if not calls:
            text = reply.text.strip()
            if text:
                return StrategyOutcome(text)
            return _fallback(request, session, "fallback", "empty answer")
        messages.extend(session.answer(call) for call in calls)
    why = f"tool calls continued past {session.max_calls}"
    return _fallback(request, session, "budget", why)


def _fallback(
    request: StrategyRequest, session: ToolSession, status: RunStatus, why: str
) -> StrategyOutcome:
    """An answer written from what the tools showed when the model gave none."""
    outcome = answer_from_passages(request, session.passages)
    if outcome.status == "failed":
        return outcome
    return StrategyOutcome(outcome.answer, status, f"{why}; answered from the passages read")
