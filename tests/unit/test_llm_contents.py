"""The LLM contents reader, driven by a scripted fake chat model (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from ingest import prompts
from ingest.llm import LLMOutputError
from ingest.structure.contents import ContentsEntry
from ingest.structure.contents_llm import llm_contents_reader
from ingest.structure.numbering import parse_numbering
from store.chat import JSON_REPAIRS, ModelReplyError

RUN = {
    2: "## Table of Contents\n\nItem 1. Business 1\n\nItem 1A. Risk Factors 4",
    3: "Part II\n\nItem 7. Management's Discussion 12\n\nNotes F-3",
}


class RecordingModel(FakeListChatModel):
    """FakeListChatModel that also keeps the messages of every call."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.calls.append(list(messages))
        return super()._call(messages, *args, **kwargs)


def model(*replies: str) -> RecordingModel:
    return RecordingModel(responses=list(replies))


def as_tuples(entries: list[ContentsEntry]) -> list[tuple[str, str | None, int, int]]:
    return [(e.title, e.printed, e.level, e.list_page) for e in entries]


def test_reader_sends_tagged_contents_pages_with_the_contents_prompt() -> None:
    fake = model("[]")
    assert llm_contents_reader(fake)(RUN) == []
    assert len(fake.calls) == 1
    system, user = fake.calls[0]
    assert isinstance(system, SystemMessage) and system.content == prompts.CONTENTS_SYSTEM
    assert isinstance(user, HumanMessage)
    assert user.content == f"<page 2>\n{RUN[2]}\n</page 2>\n<page 3>\n{RUN[3]}\n</page 3>"


def test_reader_turns_the_reply_into_contents_entries() -> None:
    reply = [
        {"level": 1, "title": "Part I", "printed_page": None, "contents_page": 2},
        {"level": 2, "title": "Item 1. Business", "printed_page": "1", "contents_page": 2},
        {"level": 2, "title": "Item 1A. Risk Factors", "printed_page": 4, "contents_page": 2},
        {"level": "1", "title": "Part II", "printed_page": None, "contents_page": 3},
        {
            "level": 2,
            "title": "Item 7.  Management's\nDiscussion",
            "printed_page": "12",
            "contents_page": 3,
        },
        {
            "level": 3,
            "title": "Notes to Financial Statements",
            "printed_page": "F-3",
            "contents_page": 3,
        },
        {"level": 1, "title": "Glossary", "printed_page": "iv", "contents_page": 3},
    ]
    entries = llm_contents_reader(model(json.dumps(reply)))(RUN)

    assert all(isinstance(e, ContentsEntry) for e in entries)
    assert as_tuples(entries) == [
        ("Part I", None, 1, 2),
        ("Item 1. Business", "1", 2, 2),
        ("Item 1A. Risk Factors", "4", 2, 2),
        ("Part II", None, 1, 3),
        ("Item 7. Management's Discussion", "12", 2, 3),
        ("Notes to Financial Statements", "F-3", 3, 3),
        ("Glossary", "iv", 1, 3),
    ]
    assert all(e.x == 0.0 for e in entries)
    assert [e.numbering for e in entries] == [parse_numbering(e.title) for e in entries]
    assert entries[1].numbering is not None and entries[1].numbering.scheme == "item"


def test_reader_skips_bad_items_and_coerces_the_rest() -> None:
    reply = {
        "entries": [
            "Item 1. Business ..... 1",  # not an object
            {"level": 1, "printed_page": "3", "contents_page": 2},  # no title
            {"level": 1, "title": "   ", "printed_page": "3", "contents_page": 2},  # blank title
            {"level": 0, "title": "Overview", "printed_page": "  ", "contents_page": 99},
            {"level": "deep", "title": "Risk Factors . . . . . .", "printed_page": 4.0},
            {"level": -3, "title": "Properties", "printed_page": True, "contents_page": "3"},
            {"title": "Legal Proceedings", "printed_page": "7", "contents_page": "two"},
        ]
    }
    entries = llm_contents_reader(model("```json\n" + json.dumps(reply) + "\n```"))(RUN)
    assert as_tuples(entries) == [
        ("Overview", None, 1, 2),  # level ≥ 1; page not in the run → the run's first page
        ("Risk Factors", "4", 1, 2),  # leaders dropped, 4.0 → "4", missing page → first page
        ("Properties", None, 1, 3),
        ("Legal Proceedings", "7", 1, 2),
    ]


def test_reader_rejects_a_reply_that_is_not_a_list() -> None:
    fake = model('{"title": "Item 1. Business", "printed_page": "1"}')
    with pytest.raises(LLMOutputError, match="contents reply was not a JSON list"):
        llm_contents_reader(fake)(RUN)


def test_reader_gives_up_on_unparsable_replies_after_retries() -> None:
    fake = model(*["The contents are: Item 1, Item 1A ..."] * (JSON_REPAIRS + 1))
    with pytest.raises(ModelReplyError, match=f"in {JSON_REPAIRS + 1} attempts"):
        llm_contents_reader(fake)(RUN)
    assert len(fake.calls) == JSON_REPAIRS + 1


def test_reader_retries_malformed_json_then_reads_the_list() -> None:
    good = json.dumps([{"level": 1, "title": "Item 1. Business", "printed_page": "1"}])
    fake = model("[{'title': 'Item 1. Business'", good)
    entries = llm_contents_reader(fake)(RUN)
    assert as_tuples(entries) == [("Item 1. Business", "1", 1, 2)]
    assert len(fake.calls) == 2


def test_reader_of_an_empty_run_asks_nothing() -> None:
    fake = model()
    assert llm_contents_reader(fake)({}) == []
    assert fake.calls == []
