"""Every model call carries a cap on its reply, and a reply cut at it is a typed outcome."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from store.chat import (
    CUT_REPAIRS,
    MIN_REPLY_TOKENS,
    REPLY_CAPS,
    TOKENIZER_MARGIN,
    ModelReplyError,
    ReplyCutError,
    Usage,
    ask_json,
    invoke,
    json_value,
    reply_cap,
)
from store.embeddings import count_tokens

CUT = "cut"  # a script entry: the reply runs on to its cap


class Capped(BaseChatModel):
    """Replies from a script; ``CUT`` writes to the request's cap and stops there (finish
    reason ``length``). Keeps every request's messages and its reply cap."""

    replies: list[str]
    caps: list[int] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    max_tokens: int | None = None
    context_tokens: int | None = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        cap = kwargs["max_completion_tokens"]
        self.caps.append(cap)
        self.calls.append(list(messages))
        reply = self.replies[len(self.calls) - 1]
        if reply == CUT:
            text, meta = " ".join(["more"] * cap), {"finish_reason": "length"}
        else:
            text, meta = reply, {"finish_reason": "stop"}
        message = AIMessage(content=text, response_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "capped"


PROMPT = [SystemMessage("You answer."), HumanMessage("What is MapReduce?")]


@pytest.mark.parametrize("purpose", sorted(REPLY_CAPS))
def test_each_kind_of_call_carries_its_own_cap(purpose: str) -> None:
    model = Capped(replies=["fine"])
    invoke(model, PROMPT, purpose=purpose)  # type: ignore[arg-type]
    assert model.caps == [REPLY_CAPS[purpose]]


def test_a_tool_call_gets_less_room_than_an_answer_and_structure_the_most() -> None:
    assert REPLY_CAPS["tool_call"] < REPLY_CAPS["answer"] < REPLY_CAPS["structure"]


def test_the_users_setting_overrides_every_cap() -> None:
    model = Capped(replies=["fine"], max_tokens=400)
    invoke(model, PROMPT, purpose="structure")
    assert model.caps == [400]


def test_the_cap_never_exceeds_what_the_window_leaves_after_the_prompt() -> None:
    long_prompt = [HumanMessage("word " * 600)]
    window = 1200
    prompt = sum(count_tokens(str(m.content)) for m in long_prompt) / TOKENIZER_MARGIN
    model = Capped(replies=["fine"], context_tokens=window)
    assert reply_cap(model, long_prompt, "structure") == window - int(prompt)
    tiny = Capped(replies=["fine"], context_tokens=100)
    assert reply_cap(tiny, long_prompt, "answer") == MIN_REPLY_TOKENS


def test_a_cut_reply_is_asked_once_more_with_a_note_and_the_second_reply_is_used() -> None:
    model = Capped(replies=[CUT, "short answer"])
    usage = Usage()
    reply = invoke(model, PROMPT, usage, purpose="tool_call")
    assert reply.content == "short answer"
    assert usage.model_calls == 2
    retry = model.calls[1]
    assert retry[: len(PROMPT)] == PROMPT
    assert f"cut off at {REPLY_CAPS['tool_call']} tokens" in str(retry[-1].content)


def test_a_reply_cut_twice_ends_the_call_with_a_typed_error_saying_the_cap() -> None:
    model = Capped(replies=[CUT] * (CUT_REPAIRS + 1))
    usage = Usage()
    with pytest.raises(ReplyCutError) as caught:
        invoke(model, PROMPT, usage, purpose="answer")
    assert caught.value.cap == REPLY_CAPS["answer"]
    assert f"the model's reply was cut at {REPLY_CAPS['answer']} tokens" in caught.value.reason
    assert usage.model_calls == CUT_REPAIRS + 1
    assert usage.completion_tokens >= REPLY_CAPS["answer"]  # what was spent is still counted


def test_a_json_call_cut_twice_is_a_reply_error_the_callers_already_handle() -> None:
    model = Capped(replies=[CUT, CUT])
    with pytest.raises(ModelReplyError, match="cut at 1024 tokens"):
        ask_json(model, "sys", "user", json_value)
    assert len(model.calls) == 2  # no JSON repair round on top of a cut one
