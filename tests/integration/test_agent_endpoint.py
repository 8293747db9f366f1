"""The agent end to end through the real langchain-openai client against a local
OpenAI-compatible stub: scripted tool calls (one malformed, one to an unknown tool) over a real
ingested library, then the trajectory read back from the SQLite checkpointer after reopening."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.api import ask
from graph.context import AgentContext
from graph.trajectory.checkpoints import sqlite_checkpointer, thread_values, trace_record
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs
from store.library import Library
from tests.conftest import PDF_DIR, require_shared_data
from tests.llm_stub import LLMStub, ToolCalls, message_text

pytestmark = pytest.mark.integration


def _doc(library: Path, name: str) -> str:
    return next(r["doc_id"] for r in Library(library).documents() if r["source"].endswith(name))


def test_scripted_endpoint_run_is_recorded_and_read_back(
    library_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_shared_data()
    ingest_paths(
        [PDF_DIR / "2304.02623v1.pdf", PDF_DIR / "bohnet09.pdf"],
        IngestContext(library=str(library_dir)),
        progress=False,
    )
    doc = _doc(library_dir, "2304.02623v1.pdf")
    cite_read = f"(Shen et al., 2023, {doc}, p.2)"
    cite_unread = f"(Shen et al., 2023, {doc}, p.4)"

    def responder(messages: list[dict[str, Any]]) -> str | ToolCalls:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return ToolCalls(
                [("search_documents", json.dumps({"query": "AI support for expository writing"}))]
            )
        if turn == 1:
            assert doc in message_text(messages[-1])  # the search result reached the model
            return ToolCalls(
                [
                    ("get_document_tree", json.dumps({"doc_id": doc})),
                    ("summon_oracle", "{}"),
                    ("get_page_content", '{"doc_id": "' + doc + '", "pages": [1,'),
                ]
            )
        if turn == 2:
            return ToolCalls([("get_page_content", json.dumps({"doc_id": doc, "pages": [2]}))])
        if turn == 3:
            return f"Expository writing is evidence-based {cite_read} and iterative {cite_unread}."
        return f"Expository writing is evidence-based and knowledge-generating {cite_read}."

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with LLMStub(responder) as stub:
        context = AgentContext(library=str(library_dir), model="stub-model", base_url=stub.base_url)
        values = ask(
            library_dir,
            "What characterises expository writing?",
            [],
            "thread-e2e",
            context,
        )
    assert not stub.errors
    assert len(stub.requests) == 5
    first = stub.requests[0].body
    assert first["model"] == "stub-model"
    assert {t["function"]["name"] for t in first["tools"]} == {
        "search_documents",
        "get_paper_metadata",
        "get_document_tree",
        "search_within_paper",
        "get_page_content",
        "list_images",
        "get_page_image",
    }
    assert "Library: 2 documents" in stub.requests[0].system
    citation_note = message_text(stub.requests[4].messages[-1])
    assert f"{doc} p.4" in citation_note

    assert values["status"] == "answered"
    assert values["answer"].endswith(f"knowledge-generating {cite_read}.")
    assert [(c["doc_id"], c["page"]) for c in values["citations"]] == [(doc, 2)]
    close_catalogs()

    saver = sqlite_checkpointer(library_dir)  # a fresh connection: read back from disk
    record = trace_record("thread-e2e", thread_values(saver, "thread-e2e") or {})
    steps = [(s["seq"], s["layer"], s["tool"], s["ok"]) for s in record["steps"]]
    assert steps == [
        (1, 0, "search_documents", True),
        (2, 1, "get_document_tree", True),
        (3, 2, "summon_oracle", False),  # an unknown tool takes the layer of the node that ran it
        (4, 2, "get_page_content", False),
        (5, 2, "get_page_content", True),
    ]
    assert record["steps"][4]["pages"] == [2]
    assert "unknown tool 'summon_oracle'" in record["steps"][2]["error"]
    assert "could not read the call" in record["steps"][3]["error"]
    assert record["question"] == "What characterises expository writing?"
    assert record["model_turns"] == 5
