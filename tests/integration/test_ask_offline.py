"""`vectree ask` offline on the bundled demo corpus: cited answers whose quoted sentences are on
the cited pages, and the trajectory read back with `vectree trace` and `vectree threads`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.citations import find_citations
from graph.cli import main
from graph.cli.library import demo_corpus
from ingest.summarise import clean_text
from store.catalog import close_catalogs
from store.library import Library

pytestmark = pytest.mark.integration

QUESTIONS = [
    "How many academic papers does the S2ORC corpus contain?",
    "What do the LongEval guidelines recommend for human evaluation of faithfulness?",
]


@pytest.fixture(scope="module")
def demo_library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    library = tmp_path_factory.mktemp("demo") / "library"
    assert main(["--library", str(library), "ingest", str(demo_corpus()), "--json"]) == 0
    yield library
    close_catalogs()


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", clean_text(text).lower()))


@pytest.mark.parametrize("question", QUESTIONS)
def test_offline_answers_cite_pages_that_contain_the_cited_text(
    capsys: pytest.CaptureFixture[str], demo_library: Path, question: str
) -> None:
    code, result = cli_json(capsys, "--library", str(demo_library), "ask", question)
    assert code == 0
    assert set(result) >= {"answer", "citations", "thread_id", "tool_calls", "model_turns"}
    assert result["answer"].startswith("Extractive answer (offline reader")
    library = Library(demo_library)
    claims = [line[2:] for line in result["answer"].splitlines() if line.startswith("- ")]
    assert claims, result["answer"]
    for claim in claims:
        (cited,) = find_citations(claim)
        sentence = claim[: cited.start].strip()
        page_text = library.pages(cited.doc_id)[cited.pages[0] - 1]
        assert _normal(sentence) in _normal(page_text), (sentence, cited)
    assert {(c["doc_id"], c["page"]) for c in result["citations"]} == {
        (c.doc_id, c.pages[0]) for claim in claims for c in find_citations(claim)
    }


def test_s2orc_answer_holds_the_number(
    capsys: pytest.CaptureFixture[str], demo_library: Path
) -> None:
    _, result = cli_json(capsys, "--library", str(demo_library), "ask", QUESTIONS[0])
    assert "81.1M" in result["answer"]


def test_trace_and_threads_read_the_run_back(
    capsys: pytest.CaptureFixture[str], demo_library: Path
) -> None:
    lib = str(demo_library)
    code, asked = cli_json(capsys, "--library", lib, "ask", QUESTIONS[0], "--thread", "t-offline")
    assert code == 0 and asked["thread_id"] == "t-offline"
    close_catalogs()
    code, trace = cli_json(capsys, "--library", lib, "trace", "t-offline")
    assert code == 0
    assert set(trace) >= {"thread_id", "question", "steps"}
    assert trace["question"] == QUESTIONS[0]
    steps = trace["steps"]
    assert [s["seq"] for s in steps] == list(range(1, len(steps) + 1))
    layers = [s["layer"] for s in steps]
    assert layers == sorted(layers) and layers[0] == 0 and layers[-1] == 2  # find → tree → read
    assert "search_within_paper" in {s["tool"] for s in steps}
    assert all(
        set(s) >= {"seq", "layer", "tool", "args", "ok", "payload_tokens", "pages"} for s in steps
    )
    assert len(steps) == asked["tool_calls"]
    read = {(s["doc_id"], p) for s in steps for p in s["pages"]}
    assert {(c["doc_id"], c["page"]) for c in asked["citations"]} <= read
    code, threads = cli_json(capsys, "--library", lib, "threads")
    assert code == 0
    record = next(t for t in threads if t["thread_id"] == "t-offline")
    assert record["question"] == QUESTIONS[0] and record["steps"] == len(steps)
    assert main(["--library", lib, "trace", "no-such-thread"]) == 1


def test_doc_restriction_skips_search(
    capsys: pytest.CaptureFixture[str], demo_library: Path
) -> None:
    library = Library(demo_library)
    longeval = next(r["doc_id"] for r in library.documents() if "EVAL" in r["title"].upper())
    code, result = cli_json(
        capsys,
        "--library",
        str(demo_library),
        "ask",
        QUESTIONS[1],
        "--doc",
        longeval[:8],
        "--thread",
        "t-doc",
    )
    assert code == 0
    _, trace = cli_json(capsys, "--library", str(demo_library), "trace", "t-doc")
    assert "search_documents" not in {s["tool"] for s in trace["steps"]}
    assert {c["doc_id"] for c in result["citations"]} == {longeval}


def test_search_command_json(capsys: pytest.CaptureFixture[str], demo_library: Path) -> None:
    code, result = cli_json(
        capsys,
        "--library",
        str(demo_library),
        "search",
        "Semantic Scholar open research corpus",
        "--limit",
        "2",
    )
    assert code == 0
    first = result["results"][0]
    assert set(first) == {"doc_id", "title", "score", "filing", "matching_sections"}
    assert first["filing"] == ""  # a paper is no filing
    assert first["title"].startswith("S2ORC")
    code, browse = cli_json(capsys, "--library", str(demo_library), "search", "*")
    assert len(browse["results"]) == 2
    code, none = cli_json(
        capsys, "--library", str(demo_library), "search", "*", "--year-min", "2030"
    )
    assert none["results"] == []


def test_input_filters_limit_the_documents_searched(demo_library: Path) -> None:
    from graph.agent import compile_agent
    from graph.context import AgentContext

    graph = compile_agent()
    context = AgentContext(library=str(demo_library))
    library = Library(demo_library)
    state = graph.invoke({"question": QUESTIONS[1], "filters": {"year_min": 2021}}, context=context)
    searched = [s for s in state["trajectory"] if s["tool"] == "search_documents"]
    assert searched and searched[0]["ok"]
    cited = {c["doc_id"] for c in state["citations"]}
    assert cited and all(library.metadata(d)["year"] >= 2021 for d in cited)
    # The S2ORC paper (2020) is outside the filter, whatever the question asks.
    state = graph.invoke({"question": QUESTIONS[0], "filters": {"year_min": 2021}}, context=context)
    found = [d for s in state["trajectory"] for d in s.get("found") or []]
    assert all(library.metadata(d)["year"] >= 2021 for d in found)
    assert "81.1M" not in state["answer"]
