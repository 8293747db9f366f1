"""The one tool engine: every tool call of every run goes through :meth:`ToolEngine.call`.

The agent loop (``graph.nodes``, the seven tools of ``tools.toolbox``), the strategies whose
model calls their own tools (``graph.strategies.tool_loop``) and the offline policies that call
those tools directly all share it, so a model and a fixed policy meet the same checks and leave
the same trajectory. In order, a call is

1. counted against the run's budget (refused calls count too, so a model cannot loop on errors);
2. refused with an instructive message when the budget is spent, the model's arguments could not
   be read as JSON, the tool is unknown or switched off, its per-tool limit is reached, or the
   arguments are not a JSON object or do not match the tool's schema;
3. otherwise run with the validated arguments;
4. recorded as a :class:`~graph.state.Step` (refusals too, with their error), its pages made
   citable, at its tool's layer (a call naming no known tool at the engine's ``layer``: the
   deepest layer of the calls the model made with it).

An engine holds no state that is not also in the graph state it is built from (calls used, runs
per tool, passages shown, the recorder's steps), so a node can rebuild it at every step from a
checkpoint.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import ToolMessage
from pydantic import ValidationError

from graph.recorder import Recorder
from tools.results import Passage, Tool, ToolResult, failure
from tools.schemas import openai_tool_spec

BUDGET_SPENT = (
    "the tool-call budget ({budget}) is spent; this call was not run. Answer now from the text "
    "you have read."
)


class ToolEngine:
    """Validates, budgets, runs, answers misuse and records the calls of one run."""

    def __init__(
        self,
        tools: Sequence[Tool],
        max_calls: int,
        recorder: Recorder,
        *,
        used: int = 0,
        runs: Mapping[str, int] | None = None,
        layer: int = 0,
        switched_off: Iterable[str] = (),
        shown: Iterable[Passage] = (),
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.max_calls = max_calls
        self.recorder = recorder
        self.used = used
        self.runs: Counter[str] = Counter(runs or {})
        self.layer = layer
        self.switched_off = frozenset(switched_off)
        self.shown = list(shown)
        """Passages the calls that worked showed, for an answer written without the model."""

    def specs(self) -> list[dict[str, Any]]:
        """The tools in OpenAI function-calling form, for ``model.bind_tools``."""
        return [openai_tool_spec(tool.schema) for tool in self.tools.values()]

    def call(self, name: str, args: Any, malformed: str | None = None) -> ToolResult:
        """Run one call (or refuse it) and record it; ``malformed`` says why the model's call
        could not be read at all."""
        self.used += 1
        tool = self.tools.get(name)
        result = self._refusal(tool, name, args, malformed) or self._run(cast(Tool, tool), args)
        if result.ok:
            self.shown.extend(result.passages)
        hits = result.artifact.get("results") if isinstance(result.artifact, dict) else None
        self.recorder.record(
            self.layer if tool is None else tool.layer,
            name or "unknown",
            args if isinstance(args, dict) else {"raw": str(args)},
            result.text,
            error=result.error,
            disclosed=result.pages_read(),
            doc_id=result.doc_id,
            found=[str(hit["doc_id"]) for hit in hits] if result.ok and hits else None,
            details=result.details,
        )
        return result

    def answer(self, call: Mapping[str, Any]) -> ToolMessage:
        """A model's tool call (well formed or not) run and answered as a tool message."""
        malformed = None
        if call.get("type") == "invalid_tool_call" or call.get("error"):
            malformed = (
                f"{unreadable_arguments(call.get('error'))}. Send the arguments as one JSON "
                "object matching the tool's schema"
            )
        name = str(call.get("name") or "")
        result = self.call(name, call.get("args"), malformed)
        return ToolMessage(
            content=cast(Any, result.content),
            tool_call_id=str(call.get("id") or f"missing-{self.used}"),
            name=name or "unknown",
            artifact=result.artifact,
            status="success" if result.ok else "error",
        )

    def _refusal(
        self, tool: Tool | None, name: str, args: Any, malformed: str | None
    ) -> ToolResult | None:
        """The error for a call that must not run, or ``None``."""
        if self.used > self.max_calls:
            return failure(BUDGET_SPENT.format(budget=self.max_calls))
        if malformed is not None:
            return failure(f"could not read the call to {name!r}: {malformed}.")
        if tool is None:
            what = (
                f"tool {name!r} is off in this run"
                if name in self.switched_off
                else (f"unknown tool {name!r}")
            )
            return failure(f"{what}. Available tools: {', '.join(self.tools)}.")
        if tool.limit is not None and self.runs[tool.name] >= tool.limit:
            return failure(
                f"{tool.name} may be called at most {tool.limit} times and that limit is "
                "reached; this call was not run. Use the other tools, or answer."
            )
        if not isinstance(args, dict):
            return failure(
                f"arguments for {name} must be a JSON object, got {type(args).__name__}."
            )
        return None

    def _run(self, tool: Tool, args: dict[str, Any]) -> ToolResult:
        try:
            parsed = tool.schema.model_validate(args)
        except ValidationError as exc:
            return failure(f"bad arguments for {tool.name}: {validation_summary(exc)}")
        self.runs[tool.name] += 1
        return tool.run(**parsed.model_dump())


def validation_summary(exc: ValidationError) -> str:
    """One clause per problem (at most four): which argument and what is wrong."""
    problems = []
    for error in exc.errors()[:4]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


_JSON_PROBLEM = re.compile(r"Received JSONDecodeError (?P<problem>.+?)(?: For troubleshooting.*)?$")


def unreadable_arguments(error: object) -> str:
    """Why a model's call could not be read, in one line: the parser's message spans several
    lines (the raw arguments, a troubleshooting link), which the model needs none of and a
    terminal shows as a wall of text per call."""
    text = " ".join(str(error or "").split())
    found = _JSON_PROBLEM.search(text)
    if found:
        return f"its arguments are not valid JSON ({found.group('problem')})"
    return text or "its arguments are not valid JSON"
