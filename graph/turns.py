"""One model turn with tools bound: the rules every model↔tool loop of the product shares.

The query agent's layered loop (``graph.nodes``) and the strategies' tool loop
(``graph.strategies.tool_loop``) each ask for their turns here and run the calls that come back
here, so the four rules below have one place and one test file (``tests/unit/test_turns.py``):

- **Tool choice.** Every turn binds the tools with ``tool_choice`` ``auto`` unless the previous
  turn insisted on a tool, which the next turn then names; a model that cannot bind tools ends
  its run with a clear reason instead of a traceback.
- **Insisting once.** A model that has made no tool call yet in this question and replies
  without one (an empty reply, or an answer from nothing it read) is asked once more, its unread
  reply dropped, with ``tool_choice`` naming the loop's first tool. A model is never forced to
  call a tool once it has called one.
- **Call order.** A reply's calls run in the order the model issued them, well-formed calls
  first, then malformed ones (answered with an instructive error by the tool engine).
- **Turn cap.** A loop makes at most its cap of model turns; a turn asked for past it is not
  made, and the loop ends with the budget status. The calls of the last allowed turn still run,
  so what they read is there for the answer written without the model.

State stays JSON: a turn is rebuilt from the conversation, the turns taken, the calls made and
the ``tool_choice`` a loop keeps in its state; the recorder carries the trajectory, pages and
usage between state and turn (:meth:`graph.recorder.Recorder.from_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable

from graph.prompts import USE_TOOLS
from graph.recorder import Recorder
from graph.tool_engine import ToolEngine
from store.chat import ModelCallError, turn_purpose

AUTO = "auto"
CANNOT_CALL_TOOLS = "the model cannot call tools"


@dataclass(frozen=True)
class TurnRules:
    """A loop's limits for one turn: its cap of model turns and the tool it insists on."""

    max_turns: int
    first_tool: str | None


@dataclass(frozen=True)
class Turn:
    """What one turn came to: calls to run, a tool to insist on, a final reply, the cap
    reached (no call made) or a failure (``failure`` says why)."""

    reply: AIMessage | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    insist: str | None = None
    capped: bool = False
    failure: str = ""

    @property
    def messages(self) -> list[AnyMessage]:
        """What joins the loop's conversation: the note insisting on a tool (the reply is
        dropped unread), else the reply under a fresh id (a model that repeats an id must not
        overwrite an earlier turn)."""
        if self.insist:
            return [HumanMessage(USE_TOOLS.format(tool=self.insist), name="tool_policy")]
        if self.reply is None:
            return []
        return [self.reply.model_copy(update={"id": None})]

    @property
    def next_choice(self) -> str:
        """The ``tool_choice`` of the loop's next turn."""
        return self.insist or AUTO

    @property
    def text(self) -> str:
        """The reply's text, stripped (empty when there is none)."""
        return self.reply.text.strip() if self.reply is not None else ""


def take_turn(
    model: BaseChatModel,
    specs: Sequence[dict[str, Any]],
    conversation: Sequence[BaseMessage],
    recorder: Recorder,
    *,
    rules: TurnRules,
    choice: str,
    turns_taken: int,
    calls_made: int,
) -> Turn:
    """One model turn over ``conversation`` with ``specs`` bound, its tokens counted on the
    recorder; ``turns_taken`` and ``calls_made`` are the loop's counts before this turn."""
    if turns_taken >= rules.max_turns:
        return Turn(capped=True)
    try:
        bound = _bind(model, specs, choice)
    except NotImplementedError:
        return Turn(failure=CANNOT_CALL_TOOLS)
    try:
        reply = recorder.ask(bound, conversation, turn_purpose(choice))
    except ModelCallError as exc:
        return Turn(failure=exc.reason)
    calls = requested_calls(reply)
    another_turn = turns_taken + 1 < rules.max_turns
    if not calls and choice == AUTO and not calls_made and rules.first_tool and another_turn:
        return Turn(reply, insist=rules.first_tool)
    return Turn(reply, calls)


def _bind(model: BaseChatModel, specs: Sequence[dict[str, Any]], choice: str) -> Runnable[Any, Any]:
    """The model with the tools bound; ``auto`` leaves ``tool_choice`` out of the request."""
    if choice == AUTO:
        return model.bind_tools(specs)
    return model.bind_tools(specs, tool_choice=choice)


def requested_calls(message: Any) -> list[dict[str, Any]]:
    """Well-formed and malformed tool calls, in the order the model issued them."""
    if not isinstance(message, AIMessage):
        return []
    return [*message.tool_calls, *message.invalid_tool_calls]  # type: ignore[list-item]


def deepest_layer(message: Any, layers: Mapping[str, int], default: int) -> int:
    """The deepest layer the calls of ``message`` touch (a tool's layer from ``layers``; an
    unknown tool counts as ``default``, as does a message without calls): the layer the calls
    run in."""
    return max(
        (layers.get(str(call.get("name")), default) for call in requested_calls(message)),
        default=default,
    )


def run_calls(engine: ToolEngine, message: Any) -> list[ToolMessage]:
    """Every call of ``message`` run through the tool engine and answered, in order."""
    return [engine.answer(call) for call in requested_calls(message)]
