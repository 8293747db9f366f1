"""The optional LLM stages, driven by scripted fake chat models (no network)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import Field

from ingest import prompts
from ingest.llm import (
    LLMOutputError,
    llm_entries,
    llm_metadata,
    llm_repairer,
    llm_summaries,
    page_groups,
)
from store.chat import chat_model
from store.embeddings import count_tokens
from store.settings import LLMSettings
from store.types import SectionEntry


class RecordingModel(FakeListChatModel):
    """FakeListChatModel that also keeps the messages of every call."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.calls.append(list(messages))
        return super()._call(messages, *args, **kwargs)


class EchoSummaryModel(FakeListChatModel):
    """Answers from the request itself, so concurrent calls stay deterministic."""

    responses: list[str] = Field(default_factory=lambda: [""])

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        first_line = str(messages[-1].content).splitlines()[0]
        return f"  summary of {first_line.removeprefix('Section: ')}  "


def model(*replies: str) -> RecordingModel:
    return RecordingModel(responses=list(replies))


def filler(tokens: int) -> str:
    return " ".join(["word"] * tokens)


def test_chat_model_is_none_without_a_configured_model() -> None:
    assert chat_model(LLMSettings()) is None


def test_chat_model_builds_openai_client_offline() -> None:
    client = chat_model(LLMSettings(model="m1", base_url="http://127.0.0.1:9/v1"))
    assert client is not None
    assert isinstance(client, ChatOpenAI)  # langchain-openai's client (ChatEndpoint)
    assert client.model_name == "m1"  # type: ignore[attr-defined]


def test_page_groups_respect_bound_with_one_page_overlap() -> None:
    pages = [filler(5_000)] * 10
    groups = page_groups(pages)
    assert groups == [[1, 2, 3, 4], [4, 5, 6, 7], [7, 8, 9, 10]]
    for group in groups:
        assert sum(count_tokens(pages[p - 1]) for p in group) <= 20_000
    for before, after in itertools.pairwise(groups):
        assert after[0] == before[-1]


def test_page_groups_small_bound() -> None:
    pages = [filler(100)] * 5
    assert page_groups(pages, max_tokens=200) == [[1, 2], [2, 3], [3, 4], [4, 5]]
    assert page_groups(pages, max_tokens=10_000) == [[1, 2, 3, 4, 5]]
    assert page_groups([]) == []


def test_page_groups_never_exceed_bound_for_overlap() -> None:
    pages = [filler(15_000)] * 3
    assert page_groups(pages) == [[1], [2], [3]]
    # A single page above the bound stands alone; it is not repeated in the next group.
    assert page_groups([filler(25_000), filler(10)]) == [[1], [2]]


def test_llm_entries_validates_dedupes_and_levels() -> None:
    reply = [
        {"index": "1", "title": "Introduction", "start_page": 1},
        {"index": "2.1", "title": "Data", "start_page": 2},
        {"index": "3.", "title": "Results", "start_page": "3"},
        {"title": "No Index", "start_page": 3},
        {"index": "2.1", "title": "DATA", "start_page": 2},  # duplicate (case-insensitive)
        {"index": "4", "title": "", "start_page": 3},  # no title
        {"index": "5", "title": "Beyond", "start_page": 9},  # out of range
        {"index": "6", "title": "Zero", "start_page": 0},
        {"index": "7", "title": "Bad page", "start_page": "three"},
        {"index": "8", "title": "Null page", "start_page": None},
        "not an object",
        {"index": "1.2.3", "title": "  Deep  ", "start_page": 4},
    ]
    fake = model(json.dumps(reply))
    pages = ["p1", "p2", "p3", "p4"]
    entries = llm_entries(fake, pages)
    assert entries == [
        {"level": 1, "title": "Introduction", "start_page": 1},
        {"level": 2, "title": "Data", "start_page": 2},
        {"level": 1, "title": "Results", "start_page": 3},
        {"level": 1, "title": "No Index", "start_page": 3},
        {"level": 3, "title": "Deep", "start_page": 4},
    ]
    system, user = fake.calls[0]
    assert system.content == prompts.STRUCTURE_SYSTEM
    assert "<page 1>\np1\n</page 1>" in str(user.content)
    assert "<page 4>\np4\n</page 4>" in str(user.content)


def test_llm_entries_over_overlapping_groups_dedupes_the_shared_page() -> None:
    pages = [filler(8_000)] * 3  # groups [1, 2] and [2, 3]
    first = {"entries": [{"index": "1", "title": "Intro", "start_page": 1}]}
    first["entries"].append({"index": "2", "title": "Body", "start_page": 2})
    second = [{"index": "2", "title": "body", "start_page": 2}]
    second.append({"index": "3", "title": "End", "start_page": 3})
    fake = model(json.dumps(first), json.dumps(second))
    entries = llm_entries(fake, pages)
    assert [(e["title"], e["start_page"]) for e in entries] == [
        ("Intro", 1),
        ("Body", 2),
        ("End", 3),
    ]
    assert len(fake.calls) == 2
    assert "<page 2>" in str(fake.calls[1][1].content)
    assert "<page 1>" not in str(fake.calls[1][1].content)


def test_llm_entries_ignores_non_list_replies() -> None:
    assert llm_entries(model('{"answer": "none"}'), ["p1"]) == []
    assert llm_entries(model('"a JSON string"', '{"entries": "none"}'), ["p1"]) == []


def test_llm_repairer_maps_proposals_and_keeps_malformed_originals() -> None:
    pages = [f"page {n}" for n in range(1, 11)]
    failed = [
        SectionEntry(level=1, title="Resluts", start_page=5),
        SectionEntry(level=2, title="Ghost", start_page=9),
    ]
    reply = [{"title": "Results", "start_page": 6}, {"title": "Ghost", "start_page": 0}]
    fake = model(json.dumps(reply))
    proposals = llm_repairer(fake)(failed, pages)
    assert proposals == [{"level": 1, "title": "Results", "start_page": 6}, failed[1]]
    system, user = fake.calls[0]
    assert system.content == prompts.REPAIR_SYSTEM
    text = str(user.content)
    assert '- "Resluts" (claimed page 5)' in text
    assert '- "Ghost" (claimed page 9)' in text
    shown = [n for n in range(1, 11) if f"<page {n}>" in text]
    assert shown == [3, 4, 5, 6, 7, 8, 9, 10]


def test_llm_repairer_with_short_reply_returns_fewer_proposals() -> None:
    failed = [
        SectionEntry(level=1, title="A", start_page=1),
        SectionEntry(level=1, title="B", start_page=2),
    ]
    repair = llm_repairer(model('[{"title": "A", "start_page": 1}]'))
    assert repair(failed, ["A", "B"]) == [{"level": 1, "title": "A", "start_page": 1}]


def test_llm_summaries_in_input_order_under_concurrency() -> None:
    items = [(f"Section {n}", f"body {n}") for n in range(8)]
    out = llm_summaries(EchoSummaryModel(), items, concurrency=4)
    assert out == [f"summary of Section {n}" for n in range(8)]


def test_llm_summaries_sends_title_and_body() -> None:
    fake = model("A short summary.")
    assert llm_summaries(fake, [("Intro", "We study widgets.")], concurrency=0) == [
        "A short summary."
    ]
    system, user = fake.calls[0]
    assert system.content == prompts.SUMMARY_SYSTEM
    assert user.content == "Section: Intro\n\nWe study widgets."


def test_llm_metadata_returns_the_object_and_passes_hints() -> None:
    fake = model('```\n{"title": "T", "year": 2020}\n```')
    assert llm_metadata(fake, {"doi": "10.1/x"}, "First page text") == {"title": "T", "year": 2020}
    system, user = fake.calls[0]
    assert system.content == prompts.METADATA_SYSTEM
    assert str(user.content).startswith('Hints: {"doi": "10.1/x"}')
    assert str(user.content).endswith("First page text")


def test_llm_metadata_rejects_non_object() -> None:
    with pytest.raises(LLMOutputError, match="not a JSON object"):
        llm_metadata(model('["T"]'), {}, "text")


def test_the_request_payload_suits_servers_other_than_openai() -> None:
    client = chat_model(LLMSettings(model="m1", base_url="http://127.0.0.1:9/v1", max_tokens=64))
    assert client is not None
    call = {"name": "search_documents", "args": {"query": "x"}, "id": "c1", "type": "tool_call"}
    history = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[call]),
        ToolMessage("result", tool_call_id="c1"),
    ]
    payload = client._get_request_payload(history)  # type: ignore[attr-defined]
    assistant = payload["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"] == ""  # not null
    assert payload["max_tokens"] == 64 and "max_completion_tokens" not in payload
