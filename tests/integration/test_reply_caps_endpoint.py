"""A model that never ends its reply, behind the local OpenAI-compatible stub and met by the real
client: every request carries its reply cap, each reply stops there with the finish reason
``length``, and ``ask``, an LLM strategy and LLM structure extraction each reach their typed
ending after the one shorter-reply round, having spent the caps' tokens, never a deadline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.api import ask
from graph.cli import main
from graph.context import AgentContext
from graph.trajectory.checkpoints import sqlite_checkpointer, thread_values
from ingest import prompts
from ingest.context import IngestContext
from ingest.graph import build_ingest_graph
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs
from store.chat import CUT_REPAIRS, REPLY_CAPS
from store.library import Library
from tests.conftest import PDF_DIR, require_shared_data
from tests.llm_stub import LLMStub, RunsOn, message_text

pytestmark = pytest.mark.integration

QUESTION = "How does MapReduce handle the failure of a worker machine?"
CUT_LINE = re.compile(
    r"the model's reply was cut at (\d+) tokens \(twice: asked once to reply shorter\)"
)
PAPER = "0908.0054.pdf"  # four pages: quick to ingest


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")


@pytest.fixture
def runs_on() -> Iterator[LLMStub]:
    with LLMStub(lambda messages: RunsOn()) as stub:
        yield stub
    assert not stub.errors, stub.errors


@pytest.fixture(scope="module")
def paper_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()
    root = tmp_path_factory.mktemp("caps") / "library"
    context = IngestContext(library=str(root))
    report = ingest_paths([PDF_DIR / PAPER], context, workers=1, progress=False)
    assert not report.failed
    close_catalogs()
    return root


def caps_sent(stub: LLMStub) -> list[int]:
    """The reply cap of every request the stub received (the client sends ``max_tokens``)."""
    return [int(request.body["max_tokens"]) for request in stub.requests]


def assert_cut_ending(values: dict[str, object], stub: LLMStub) -> None:
    """A typed failure naming the last cap, the caps' tokens counted."""
    caps = caps_sent(stub)
    assert values["status"] == "failed", values["status"]
    cut = CUT_LINE.fullmatch(str(values["status_detail"]))
    assert cut is not None, values["status_detail"]
    assert int(cut.group(1)) == caps[-1]
    usage = values["usage"]
    assert isinstance(usage, dict)
    assert usage["completion_tokens"] == sum(caps) and not usage["estimated"]


def test_ask_ends_with_the_cut_status_after_one_shorter_round(
    tmp_path: Path, runs_on: LLMStub
) -> None:
    library = tmp_path / "library"
    context = AgentContext(library=str(library), model="stub-model", base_url=runs_on.base_url)
    values = ask(library, QUESTION, [], "cut", context)
    caps = caps_sent(runs_on)
    assert len(caps) == CUT_REPAIRS + 1
    assert all(cap in REPLY_CAPS.values() for cap in caps)
    assert_cut_ending(values, runs_on)
    retry = runs_on.requests[-1].messages
    assert "cut off at" in message_text(retry[-1])
    recorded = thread_values(sqlite_checkpointer(library), "cut")
    assert recorded is not None and recorded["status_detail"] == values["status_detail"]


def test_the_cli_says_the_cut_in_one_line_and_exits_1(
    tmp_path: Path,
    runs_on: LLMStub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    library = str(Library(tmp_path / "library").ensure().root)
    monkeypatch.setenv("VECTREE_MODEL", "stub-model")
    monkeypatch.setenv("VECTREE_BASE_URL", runs_on.base_url)
    assert main(["--library", library, "ask", QUESTION, "--json"]) == 1
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert CUT_LINE.fullmatch(result["status_detail"]), result["status_detail"]
    assert "Traceback" not in err


def test_an_llm_strategy_reaches_its_typed_ending(paper_library: Path, runs_on: LLMStub) -> None:
    context = AgentContext(
        library=str(paper_library),
        strategy="pageindex",
        model="stub-model",
        base_url=runs_on.base_url,
    )
    values = ask(paper_library, QUESTION, [], "cut-pageindex", context)
    assert runs_on.requests and all("max_tokens" in r.body for r in runs_on.requests)
    assert_cut_ending(values, runs_on)
    close_catalogs()


def test_structure_extraction_cut_at_its_cap_falls_back_to_the_offline_tree(
    tmp_path: Path, runs_on: LLMStub
) -> None:
    require_shared_data()
    library = tmp_path / "library"
    context = IngestContext(
        library=str(library), structure="llm", model="stub-model", base_url=runs_on.base_url
    )
    result = dict(build_ingest_graph().invoke({"source": str(PDF_DIR / PAPER)}, context=context))
    assert result["status"] == "ingested", result.get("error")
    structure = [
        r for r in runs_on.requests if message_text(r.messages[0]) == prompts.STRUCTURE_SYSTEM
    ]
    assert len(structure) == CUT_REPAIRS + 1
    assert {int(r.body["max_tokens"]) for r in structure} == {REPLY_CAPS["structure"]}
    record = Library(library).record(result["doc_id"])
    assert record["structure"] == "headings" and record["nodes"] >= 2
    close_catalogs()
