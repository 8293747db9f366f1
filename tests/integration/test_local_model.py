"""A real language model on every LLM path: SmolLM2-135M-Instruct behind llama-cpp-python's own
OpenAI-compatible server, started by ``vectree local-model``'s code on a free 127.0.0.1 port and
stopped by its PID. The client is the product's (langchain-openai through ``store.chat``).

A 135M model is a poor model and a fair adversary: it answers without calling the tools
offered, calls them with empty or out-of-range arguments, invents ids and figures. So these
tests assert what must hold for any model — a typed status, an answer or a clear failure, a
complete trajectory read back from the checkpointer, citations only to pages read, token usage
as the server reported it — never the model's wording. Replies are capped at a few dozen tokens
to keep the runs short.

Skipped, with the reason, only where the ``local`` extra or the weights are not installed;
``.ci/run`` installs both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.judges import Judge, JudgeFailure, JudgeResult
from graph.api import ask
from graph.citations import find_citations
from graph.cli.local_model import (
    INSTALL_HINT,
    LocalModel,
    bundled_weights,
    server_available,
    start_local_model,
    stop_local_model,
)
from graph.context import AgentContext
from graph.registry import STRATEGIES
from graph.trajectory.checkpoints import sqlite_checkpointer, thread_values
from ingest.context import IngestContext
from ingest.graph import build_ingest_graph
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs
from store.chat import chat_model
from store.library import Library
from store.settings import LLMSettings
from tests.conftest import PDF_DIR, require_shared_data

pytestmark = pytest.mark.integration

STATUSES = {"answered", "budget", "fallback", "failed", "needs_llm", "invalid"}
QUESTIONS = (
    "How many academic papers does the S2ORC corpus contain?",
    "Which venues do the papers in S2ORC come from?",
    "What does the paper propose?",
)
README_QUESTION = "How does MapReduce handle the failure of a worker machine?"
REPLY_TOKENS = "48"
PROMPT_WINDOW = "4096"  # of the server's 8,192: prompts are cut to it, so two cores keep up
MODEL_STRATEGIES = sorted(
    name for name, spec in STRATEGIES.items() if spec.runner and name not in ("no-gates",)
)


@pytest.fixture(scope="module")
def local_model() -> Iterator[LocalModel]:
    if not server_available() or bundled_weights() is None:
        pytest.skip(f"no local model: {INSTALL_HINT}")
    model = start_local_model()
    yield model
    stop_local_model(model)


def offline_library(root: Path, *sources: Path) -> Path:
    """A library ingested offline (the suite clears the endpoint variables for every test)."""
    report = ingest_paths(
        list(sources), IngestContext(library=str(root)), workers=1, progress=False
    )
    assert not report.failed
    close_catalogs()
    return root


@pytest.fixture(scope="module")
def demo_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two demo papers (35 pages)."""
    demo = Path(__file__).resolve().parents[2] / "ingest" / "demo_corpus"
    return offline_library(tmp_path_factory.mktemp("local-model") / "library", demo)


@pytest.fixture(scope="module")
def short_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One four-page paper, so that RAPTOR's summaries and every strategy stay quick."""
    require_shared_data()
    root = tmp_path_factory.mktemp("local-model-short") / "library"
    return offline_library(root, PDF_DIR / "0908.0054.pdf")


@pytest.fixture
def endpoint(
    local_model: LocalModel, demo_library: Path, monkeypatch: pytest.MonkeyPatch
) -> LLMSettings:
    """Every model call of a test goes to the local server, replies capped (set after the
    suite's own fixture clears the endpoint variables)."""
    for name, value in local_model.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VECTREE_LLM_MAX_TOKENS", REPLY_TOKENS)
    monkeypatch.setenv("VECTREE_LLM_CONTEXT_TOKENS", PROMPT_WINDOW)
    return LLMSettings.from_env()


def check_run(values: dict[str, Any], library: Path) -> None:
    """What holds for any model: a typed status, an answer or a clear failure, a trajectory of
    well-formed steps, citations only to pages read, usage from the server's replies."""
    assert values["status"] in STATUSES, values["status"]
    assert values["answer"].strip(), "every run ends with an answer or a clear failure line"
    if values["status"] == "failed":
        assert values["status_detail"]
    for seq, step in enumerate(values.get("trajectory") or [], start=1):
        assert step["seq"] == seq and step["layer"] in (0, 1, 2) and step["tool"]
        assert step["ok"] or step["error"]
    read = {
        (doc, page) for doc, pages in (values.get("pages_read") or {}).items() for page in pages
    }
    for cited in find_citations(values["answer"]):
        assert {(cited.doc_id, page) for page in cited.pages} <= read
    usage = values.get("usage") or {}
    if usage.get("model_calls"):
        assert not usage["estimated"] and usage["prompt_tokens"] > 0


def test_the_agent_answers_three_questions_and_its_trajectories_read_back(
    endpoint: LLMSettings, demo_library: Path
) -> None:
    context = AgentContext(library=str(demo_library), max_tool_calls=6, max_model_turns=6)
    for number, question in enumerate(QUESTIONS):
        thread = f"local-{number}"
        values = ask(demo_library, question, [], thread, context)
        check_run(values, demo_library)
        assert values["usage"]["model_calls"] >= 1
        recorded = thread_values(sqlite_checkpointer(demo_library), thread)
        assert recorded is not None
        assert recorded["trajectory"] == values.get("trajectory", [])
        assert recorded["status"] == values["status"]
    close_catalogs()


@pytest.mark.parametrize("strategy", MODEL_STRATEGIES)
def test_each_strategy_runs_once_with_the_real_model(
    endpoint: LLMSettings, short_library: Path, strategy: str
) -> None:
    doc_id = Library(short_library).documents()[0]["doc_id"]
    context = AgentContext(library=str(short_library), strategy=strategy, max_tool_calls=6)
    values = ask(short_library, "What is the main result?", [doc_id], f"local-{strategy}", context)
    check_run(values, short_library)
    assert values["strategy"] == strategy
    if "reply was cut" not in values["status_detail"]:  # a cut first turn calls no tool
        assert values["trajectory"], "every strategy acts through at least one recorded tool call"
    recorded = thread_values(sqlite_checkpointer(short_library), f"local-{strategy}")
    assert recorded is not None and recorded["trajectory"] == values.get("trajectory", [])
    close_catalogs()


def test_the_answer_judge_grades_five_answers(endpoint: LLMSettings) -> None:
    client = chat_model(endpoint)
    assert client is not None
    judge = Judge(client)
    answers = ("about 81 million", "8.1 million papers", "none", "81.1M academic papers", "")
    for answer in answers:
        result = judge.qasper_correctness(QUESTIONS[0], ["81.1 million papers"], answer)
        assert isinstance(result, JudgeResult | JudgeFailure)
        assert result.usage.model_calls >= 1 and not result.usage.estimated
        if isinstance(result, JudgeResult):
            assert result.value in ("correct", "partial", "incorrect")
        else:
            assert result.reason


def test_ingestion_with_llm_structure_and_summaries_of_two_pdfs(
    endpoint: LLMSettings, tmp_path: Path
) -> None:
    """LLM structure asked for explicitly: the document is ingested, from the model's entries or,
    when its reply is no JSON list or is cut at its cap (a 135M model rarely writes the list
    asked for), from the headings found offline. The default chain: structure from the page,
    LLM summaries and metadata, the document ingested."""
    require_shared_data()
    library = tmp_path / "library"
    graph = build_ingest_graph()
    for name, structure in (("0908.0054.pdf", "llm"), ("bohnet09.pdf", "auto")):
        context = IngestContext(library=str(library), structure=structure)
        result = dict(graph.invoke({"source": str(PDF_DIR / name)}, context=context))
        assert result["status"] == "ingested", result.get("error")  # a bad reply: offline tree
        record = Library(library).record(result["doc_id"])
        assert record["pages"] > 0 and record["nodes"] >= 1
    close_catalogs()


@pytest.fixture(scope="module")
def readme_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two PDFs of the README's local walk-through."""
    require_shared_data()
    root = tmp_path_factory.mktemp("local-model-readme") / "library"
    return offline_library(root, PDF_DIR / "map-reduce.pdf", PDF_DIR / "dyer12.pdf")


@pytest.mark.parametrize("strategy", ["vectree", "pageindex"])
def test_the_printed_settings_alone_end_the_readme_question(
    local_model: LocalModel,
    readme_library: Path,
    monkeypatch: pytest.MonkeyPatch,
    strategy: str,
) -> None:
    """Only what ``vectree local-model`` prints: every reply is capped by default, so the run
    ends with a typed status, its tokens counted and its trajectory recorded (the time it
    takes is a benchmark figure in the README, not asserted here)."""
    for name, value in local_model.environment().items():
        monkeypatch.setenv(name, value)
    context = AgentContext(library=str(readme_library), strategy=strategy)
    thread = f"readme-{strategy}"
    values = ask(readme_library, README_QUESTION, [], thread, context)
    check_run(values, readme_library)
    assert values["usage"]["model_calls"] >= 1
    assert values["usage"]["completion_tokens"] > 0 and not values["usage"]["estimated"]
    recorded = thread_values(sqlite_checkpointer(readme_library), thread)
    assert recorded is not None and recorded["status"] == values["status"]
    assert recorded["trajectory"] == values.get("trajectory", [])
    close_catalogs()
