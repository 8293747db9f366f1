"""The rules every model↔tool loop shares (``graph.turns``): tool choice, insisting once on a
first tool, call order and the turn cap — the agent's layers and the strategies' tool loop both
take their turns there."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graph.recorder import Recorder
from graph.turns import CANNOT_CALL_TOOLS, TurnRules, deepest_layer, run_calls, take_turn
from tests.unit.test_tool_engine import engine

SPECS = [{"type": "function", "function": {"name": "find", "parameters": {}}}]
RULES = TurnRules(max_turns=5, first_tool="find")


class OneReply(BaseChatModel):
    """Answers every turn with one reply; keeps the ``tool_choice`` of every binding."""

    reply: AIMessage | None = None
    choices: list[str] = Field(default_factory=list)
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "one-reply"

    def bind_tools(self, tools: Any, **kwargs: Any) -> OneReply:  # type: ignore[override]
        self.choices.append(str(kwargs.get("tool_choice", "auto")))
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.calls += 1
        if self.reply is None:
            raise ConnectionError("the endpoint refused the request")
        return ChatResult(generations=[ChatGeneration(message=self.reply)])


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def turn(model: BaseChatModel, **kwargs: Any) -> Any:
    counts = {"rules": RULES, "choice": "auto", "turns_taken": 0, "calls_made": 0, **kwargs}
    return take_turn(model, SPECS, [HumanMessage("q?")], Recorder(), **counts)


def test_auto_leaves_tool_choice_out_and_a_named_choice_is_sent() -> None:
    model = OneReply(reply=AIMessage("", tool_calls=[call("find", "a", query="x")]))
    turn(model)
    turn(model, choice="find", calls_made=1)
    assert model.choices == ["auto", "find"]


def test_a_first_reply_without_a_call_is_dropped_and_the_first_tool_insisted_on() -> None:
    model = OneReply(reply=AIMessage("An answer from nothing read.", id="r1"))
    result = turn(model)
    assert result.insist == "find" and result.next_choice == "find" and not result.calls
    [note] = result.messages
    assert isinstance(note, HumanMessage) and note.name == "tool_policy"
    assert "call find now" in str(note.content)


def test_insisting_happens_once_and_never_after_a_call() -> None:
    model = OneReply(reply=AIMessage("Final answer."))
    assert turn(model, choice="find").insist is None  # the insisted turn itself
    assert turn(model, calls_made=2).insist is None  # it has read something
    assert turn(model, rules=TurnRules(5, None)).insist is None  # nothing to insist on
    assert turn(model, turns_taken=4).insist is None  # no turn left to take the note
    assert turn(model, calls_made=2).text == "Final answer."


def test_calls_come_in_the_order_issued_well_formed_first() -> None:
    bad = {"name": "find", "args": "{oops", "id": "b", "error": "bad JSON", "type": "x"}
    reply = AIMessage("", tool_calls=[call("find", "a", query="x")], invalid_tool_calls=[bad])
    result = turn(OneReply(reply=reply))
    assert [c["id"] for c in result.calls] == ["a", "b"]
    [kept] = result.messages
    assert isinstance(kept, AIMessage) and kept.id is None and len(kept.tool_calls) == 1


def test_the_cap_ends_the_loop_without_calling_the_model() -> None:
    model = OneReply(reply=AIMessage("late"))
    result = turn(model, turns_taken=5)
    assert result.capped and model.calls == 0 and result.messages == []
    last = turn(model, turns_taken=4, calls_made=1)
    assert not last.capped and model.calls == 1  # the last allowed turn is taken


def test_a_model_that_cannot_bind_tools_or_fails_ends_with_a_reason() -> None:
    class NoTools(OneReply):
        def bind_tools(self, tools: Any, **kwargs: Any) -> OneReply:  # type: ignore[override]
            raise NotImplementedError

    assert turn(NoTools(reply=AIMessage("x"))).failure == CANNOT_CALL_TOOLS
    failed = turn(OneReply(reply=None))
    assert "refused the request" in failed.failure and failed.messages == []


def test_run_calls_answers_every_call_in_order_through_the_engine() -> None:
    bad = {"name": "look", "args": "{", "id": "m", "error": "bad JSON", "type": "x"}
    reply = AIMessage(
        "",
        tool_calls=[call("look", "a", doc_id="d1", page=2), call("find", "b", query="q")],
        invalid_tool_calls=[bad],
    )
    tools = engine()
    answers = run_calls(tools, reply)
    assert [m.tool_call_id for m in answers] == ["a", "b", "m"]
    assert [m.status for m in answers] == ["success", "success", "error"]
    assert [s["tool"] for s in tools.recorder.steps] == ["look", "find", "look"]


def test_calls_run_in_the_deepest_layer_they_touch() -> None:
    layers = {"find": 0, "look": 2}
    reply = AIMessage("", tool_calls=[call("find", "a"), call("look", "b"), call("odd", "c")])
    assert deepest_layer(reply, layers, 1) == 2
    assert deepest_layer(AIMessage("", tool_calls=[call("odd", "c")]), layers, 1) == 1
    assert deepest_layer(AIMessage("no calls"), layers, 0) == 0
