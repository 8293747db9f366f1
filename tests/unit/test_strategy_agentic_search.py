"""Agentic Search: flat chunk search and reads under RIT-RAG's budget, over the same fake chunk
source and scripted tool-calling models as the RIT-RAG tests."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from graph.strategies import agentic_search
from graph.strategies.agentic_search import ChunkTools, search_and_read
from tests.unit.test_strategy_rit import (
    DOC_A,
    DOC_B,
    HITS,
    FakeSource,
    ToolScript,
    chunks_of,
    make_request,
    tool_messages,
    turn,
)

MODEL_CHUNK = chunks_of(DOC_A, "0003")[0].ordinal


def test_search_returns_passages_with_ids_pages_and_titles_and_discloses_their_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(agentic_search, "SNIPPET_TOKENS", 6)
    reply = ChunkTools(make_request(), FakeSource(HITS)).search("training")
    blocks = reply.text.split("\n\n")
    assert len(blocks) == 4
    assert blocks[0].startswith(f"[1] {DOC_A}#{MODEL_CHUNK} | section: 2.2 Model | cite as (")
    assert "[p.4]\nThe model is a small" in blocks[0] and blocks[0].endswith(" …")
    assert "four layers" not in blocks[0]  # cut to the snippet size
    assert reply.disclosed == ((DOC_A, 4), (DOC_B, 2), (DOC_A, 1), (DOC_A, 5))


def test_read_returns_whole_chunks_and_explains_bad_ids() -> None:
    tools = ChunkTools(make_request(), FakeSource(doc_ids=[DOC_A]))
    reply = tools.read([f"{DOC_A}#{MODEL_CHUNK}", f"{DOC_A}#999", f"{DOC_B}#0", "0003"])
    assert reply.error is None
    assert "[p.4]\nThe model is a small convolutional network with four layers" in reply.text
    assert "no such passage" in reply.text
    assert f"unknown document {DOC_B!r}" in reply.text
    assert "write it as doc_id#n" in reply.text
    assert reply.disclosed == ((DOC_A, 4),)
    assert tools.read(["nonsense"]).error is not None


def test_offline_run_searches_once_reads_the_top_chunks_and_answers() -> None:
    request = make_request(question="How many epochs was the network trained?")
    outcome = search_and_read(request, FakeSource(HITS))
    steps = request.recorder.steps
    assert [(s["tool"], s["layer"], s["ok"]) for s in steps] == [
        ("search_chunks", 0, True),
        ("read_chunks", 2, True),
    ]
    assert steps[1]["args"]["chunk_ids"] == [f"{DOC_A}#{MODEL_CHUNK}", f"{DOC_B}#1", f"{DOC_A}#0"]
    assert "convolutional network with four layers" in outcome.answer  # the top chunk's text
    assert f"(Lovelace et al., 2020, {DOC_A}, p.4)" in outcome.answer


def test_the_fourth_search_and_the_eleventh_call_are_refused_and_recorded() -> None:
    search = ("search_chunks", {"query": "cats"})
    read = ("read_chunks", {"chunk_ids": f"{DOC_B}#0"})
    model = ToolScript(
        replies=[
            turn(search, search, search),
            turn(search, *[read] * 7),
            AIMessage(content="Dogs and their owners."),
        ]
    )
    request = make_request(model)
    source = FakeSource(HITS)
    outcome = search_and_read(request, source)
    steps = request.recorder.steps
    assert outcome.answer == "Dogs and their owners."
    offered = [t["function"]["name"] for t in model.bound]  # the tools are bound every turn
    assert offered == ["search_chunks", "read_chunks"] * (len(offered) // 2) and offered
    assert len(steps) == 11 and len(source.queries) == 3
    assert [s["ok"] for s in steps] == [True] * 3 + [False] + [True] * 6 + [False]
    assert "at most 3 times" in str(steps[3]["error"]) and steps[3]["layer"] == 0
    assert "tool-call budget (10) is spent" in str(steps[10]["error"])
    assert [s["layer"] for s in steps[4:]] == [2] * 7
    assert tool_messages(model)[-1].status == "error"
