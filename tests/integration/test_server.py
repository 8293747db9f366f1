"""The agent served by the real LangGraph dev server (`vectree serve`), driven through
langgraph-sdk: runs.wait and runs.stream, full history paging, a server restart that keeps the
trajectory, the CLI working on the same library meanwhile, and a stop by PID."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from evals.bench_serve import stop as stop_server
from graph.cli import main
from graph.cli.library import demo_corpus
from graph.cli.serve import free_port
from graph.trajectory.remote import full_history, server_trace
from store.catalog import close_catalogs
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

QUESTION = "How many academic papers does the S2ORC corpus contain?"
STARTUP_SECONDS = 150


def start_server(
    library: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`vectree serve` on a free port (with ``env`` added to the environment); returns the
    process (the server itself) and its URL."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graph.cli",
            "--library",
            str(library),
            "serve",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return process, url
        except OSError:
            time.sleep(0.5)
    stop_server(process)
    log = (library / "server" / "server.log").read_text()[-3000:]
    pytest.fail(f"server did not start on {url}:\n{log}")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("served") / "library"
    assert main(["--library", str(root), "ingest", str(demo_corpus()), "--json"]) == 0
    close_catalogs()
    yield root


def test_served_agent_runs_streams_persists_and_coexists_with_the_cli(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    process, url = start_server(library)
    try:
        client = get_sync_client(url=url)
        thread = client.threads.create()
        result = client.runs.wait(thread["thread_id"], "agent", input={"question": QUESTION})
        assert isinstance(result, dict) and "81.1M" in result["answer"]
        assert result["citations"] and result["trajectory"]
        narrow = {
            "answer",
            "citations",
            "trajectory",
            "strategy",
            "status",
            "status_detail",
            "usage",
        }
        assert set(result) <= narrow  # the output schema: no messages, no internal counters
        assert result["strategy"] == "vectree" and result["status"] == "answered"

        # Any strategy is chosen per run through the context schema.
        dense = client.runs.wait(
            client.threads.create()["thread_id"],
            "agent",
            input={"question": QUESTION},
            context={"strategy": "dense"},
        )
        assert isinstance(dense, dict) and dense["strategy"] == "dense"
        assert [s["tool"] for s in dense["trajectory"]] == ["retrieve_passages"]
        assert dense["citations"]

        streamed = client.threads.create()
        nodes = [
            node
            for part in client.runs.stream(
                streamed["thread_id"], "agent", input={"question": QUESTION}, stream_mode="updates"
            )
            if part.event == "updates" and isinstance(part.data, dict)
            for node in part.data
        ]
        assert nodes[:3] == ["prepare", "model_turn", "layer0"]
        assert "layer1" in nodes and "layer2" in nodes and nodes[-1] == "finish"

        history = full_history(url, thread["thread_id"])
        assert len(history) > 10  # more than the SDK's default page
        before = server_trace(url, thread["thread_id"])
        tools = [s["tool"] for s in before["steps"]]
        assert tools[0] == "search_documents" and tools[-1] == "get_page_content"
        assert {"get_document_tree", "search_within_paper"} <= set(tools)
        assert before["question"] == QUESTION
        assert before["adherence"]["followed_order"] is True

        # `vectree trace --server` pages through the same history.
        assert (
            main(
                ["--library", str(library), "trace", thread["thread_id"], "--server", url, "--json"]
            )
            == 0
        )
        remote = json.loads(capsys.readouterr().out)
        assert remote["steps"] == before["steps"] and remote["checkpoints"] == len(history)

        # A second server on the same library is refused in one line naming the first.
        second = subprocess.run(
            [sys.executable, "-m", "graph.cli", "--library", str(library), "serve"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1 and second.stderr.count("\n") == 1
        assert second.stderr.startswith(f"error: {library} is already served by `vectree serve")
        assert f"(pid {process.pid})" in second.stderr

        # The CLI answers on the same library while the server is up.
        assert main(["--library", str(library), "ask", QUESTION, "--json"]) == 0
        assert "81.1M" in json.loads(capsys.readouterr().out)["answer"]
        close_catalogs()
    finally:
        stop_server(process)
    assert process.returncode is not None

    process, url = start_server(library)
    try:
        after = server_trace(url, thread["thread_id"])
        assert after["steps"] == before["steps"] and after["answer"] == before["answer"]
    finally:
        stop_server(process)

    # The server's checkpoints live in the library's SQLite file: the local trace reads them.
    assert main(["--library", str(library), "trace", thread["thread_id"], "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert local["steps"] == before["steps"]
