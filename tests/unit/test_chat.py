"""The one module every model call goes through, driven by scripted fake chat models."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from store.chat import (
    JSON_REPAIRS,
    ModelCallError,
    ModelReplyError,
    Usage,
    ask_json,
    ask_text,
    invoke,
    json_object,
    json_value,
    message_text,
)


class Scripted(BaseChatModel):
    """Replies from a script in order (an exception is raised); keeps every request."""

    replies: list[Any]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    usage: dict[str, int] | None = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        reply = self.replies[len(self.calls) - 1]
        if isinstance(reply, Exception):
            raise reply
        message = AIMessage(content=reply, usage_metadata=self.usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "scripted"


def test_ask_json_reads_plain_and_fenced_json() -> None:
    fake = Scripted(replies=['{"a": [1, 2]}', '```json\n[{"title": "Intro"}]\n```'])
    assert ask_json(fake, "sys", "user", json_value) == {"a": [1, 2]}
    system, user = fake.calls[0]
    assert isinstance(system, SystemMessage) and system.content == "sys"
    assert isinstance(user, HumanMessage) and user.content == "user"
    assert ask_json(fake, "s", "u", json_value) == [{"title": "Intro"}]


def test_an_unreadable_reply_gets_one_repair_round_with_the_reason() -> None:
    fake = Scripted(replies=["not json at all", '<think>{"no": 1}</think> {"ok": true}'])
    assert ask_json(fake, "s", "u", json_object) == {"ok": True}
    retry = fake.calls[1]
    assert len(retry) == 4
    assert isinstance(retry[2], AIMessage) and retry[2].content == "not json at all"
    assert "holds no JSON object" in str(retry[3].content)


def test_a_reply_unreadable_after_the_repair_is_one_logged_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = Scripted(replies=["nope", "still nope", '{"too": "late"}'])
    usage = Usage()
    expected = pytest.raises(ModelReplyError, match=f"in {JSON_REPAIRS + 1} attempts")
    with caplog.at_level(logging.WARNING, "store.chat"), expected as caught:
        ask_json(fake, "s", "u", json_value, usage)
    assert isinstance(caught.value, ModelCallError)
    assert len(fake.calls) == JSON_REPAIRS + 1 == usage.model_calls
    assert [r.getMessage() for r in caplog.records] == [caught.value.reason]


def test_an_endpoint_failure_is_one_line_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    fake = Scripted(replies=[ConnectionError("endpoint down\nmore detail")])
    with caplog.at_level(logging.WARNING, "store.chat"), pytest.raises(ModelCallError) as caught:
        invoke(fake, [HumanMessage("hi")])
    assert caught.value.reason == "the model call failed: ConnectionError: endpoint down"
    assert [r.getMessage() for r in caplog.records] == [caught.value.reason]


def test_usage_counts_reported_tokens_else_estimates_them() -> None:
    usage = Usage()
    reported = Scripted(
        replies=["hello"], usage={"input_tokens": 11, "output_tokens": 3, "total_tokens": 14}
    )
    invoke(reported, [HumanMessage("hi")], usage)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (11, 3, False)
    invoke(Scripted(replies=["two words"]), [HumanMessage("a question")], usage)
    assert usage.model_calls == 2 and usage.estimated and usage.total_tokens > 14


def test_ask_text_strips_and_message_text_joins_parts() -> None:
    assert ask_text(Scripted(replies=["  hello there \n"]), "s", "u") == "hello there"
    parts = AIMessage(content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert message_text(parts) == "ab"


def test_json_value_finds_the_first_value_and_refuses_prose() -> None:
    assert json_value('Sure: [1, {"a": 2}] and {"b": 3}') == [1, {"a": 2}]
    with pytest.raises(ValueError, match="no JSON object or list"):
        json_value("no json here")
