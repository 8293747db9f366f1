"""The served API against callers it must not trust: API keys, per-caller threads, browser
origins, run contexts that name another library or endpoint, and ingestion outside the inbox —
all through langgraph-sdk against a real `vectree serve`."""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from graph.cli import main
from graph.cli.library import demo_corpus
from store.catalog import close_catalogs
from tests.integration.test_server import QUESTION, start_server, stop_server

pytestmark = pytest.mark.integration

ALICE, BOB = "alice-key-0123456789", "bob-key-9876543210"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The demo library served with two API keys and an operator allow-list of one model."""
    root = tmp_path_factory.mktemp("secured") / "library"
    assert main(["--library", str(root), "ingest", str(demo_corpus()), "--json"]) == 0
    close_catalogs()
    env = {"VECTREE_SERVER_KEYS": f"{ALICE}, {BOB}", "VECTREE_SERVER_MODELS": "small-model"}
    process, url = start_server(root, env)
    try:
        yield root, url
    finally:
        stop_server(process)


def _status(call: Any) -> int:
    """The HTTP status a refused SDK call got."""
    with pytest.raises(httpx.HTTPStatusError) as refused:
        call()
    return int(refused.value.response.status_code)


def test_no_key_or_a_wrong_key_is_refused(served: tuple[Path, str]) -> None:
    _, url = served
    assert _status(lambda: get_sync_client(url=url).threads.create()) == 401
    assert _status(lambda: get_sync_client(url=url, api_key="guess").threads.search()) == 401
    assert get_sync_client(url=url, api_key=ALICE).threads.create()["thread_id"]


def test_one_callers_threads_and_trajectories_are_invisible_to_another(
    served: tuple[Path, str],
) -> None:
    _, url = served
    alice, bob = get_sync_client(url=url, api_key=ALICE), get_sync_client(url=url, api_key=BOB)
    thread = alice.threads.create()["thread_id"]
    result = alice.runs.wait(thread, "agent", input={"question": QUESTION})
    assert isinstance(result, dict) and result["status"] == "answered" and result["trajectory"]
    assert _status(lambda: bob.threads.get(thread)) == 404
    assert _status(lambda: bob.threads.get_state(thread)) == 404
    assert _status(lambda: bob.threads.get_history(thread)) == 404
    assert thread not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    assert thread in {t["thread_id"] for t in alice.threads.search(limit=100)}


def test_a_run_context_cannot_choose_the_library_the_endpoint_or_an_unlisted_model(
    served: tuple[Path, str], tmp_path: Path
) -> None:
    _, url = served
    alice = get_sync_client(url=url, api_key=ALICE)
    elsewhere = {"library": str(tmp_path / "other"), "base_url": "http://127.0.0.1:9/v1"}
    result = alice.runs.wait(
        alice.threads.create()["thread_id"],
        "agent",
        input={"question": QUESTION},
        context=elsewhere,
    )
    assert isinstance(result, dict) and result["status"] == "answered"  # the server's library
    assert "81.1M" in result["answer"] and not (tmp_path / "other").exists()
    thread = alice.threads.create()["thread_id"]
    run = alice.runs.create(
        thread, "agent", input={"question": QUESTION}, context={"model": "gpt-elsewhere"}
    )
    alice.runs.join(thread, run["run_id"])
    ended = alice.runs.get(thread, run["run_id"])
    assert ended["status"] == "error"
    refused = alice.runs.wait(
        alice.threads.create()["thread_id"], "agent", input={"question": "  ", "doc_ids": "x"}
    )
    assert isinstance(refused, dict) and refused["status"] == "invalid"
    assert refused["status_detail"].startswith("invalid input: ")


def test_browsers_from_other_origins_are_not_admitted(served: tuple[Path, str]) -> None:
    _, url = served

    def preflight(origin: str) -> dict[str, str]:
        request = urllib.request.Request(
            f"{url}/threads/search",
            method="OPTIONS",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Private-Network": "true",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as refused:
            return {k.lower(): v for k, v in refused.headers.items()}

    evil = preflight("http://evil.example")
    assert "access-control-allow-origin" not in evil
    assert "access-control-allow-private-network" not in evil
    studio = preflight("https://smith.langchain.com")
    assert studio.get("access-control-allow-origin") == "https://smith.langchain.com"


def test_the_ingest_graph_reads_only_the_inbox_and_writes_only_plain_ids(
    served: tuple[Path, str],
) -> None:
    root, url = served
    alice = get_sync_client(url=url, api_key=ALICE)

    def ingest(**fields: str) -> dict[str, Any]:
        result = alice.runs.wait(alice.threads.create()["thread_id"], "ingest", input=fields)
        assert isinstance(result, dict)
        return result

    outside = ingest(
        source=str(demo_corpus() / sorted(p.name for p in demo_corpus().glob("*.pdf"))[0])
    )
    assert outside["status"] == "failed" and "outside the inbox" in outside["error"]
    assert ingest(source="../../etc/passwd")["status"] == "failed"
    pdf = sorted(demo_corpus().glob("*.pdf"))[0]
    inbox = root / "inbox"
    shutil.copy(pdf, inbox / "paper.pdf")
    escaped = ingest(source="paper.pdf", doc_id="../../escaped")
    assert escaped["status"] == "failed" and "is not a document id" in escaped["error"]
    assert not (root.parent / "escaped").exists() and not Path("/tmp/escaped").exists()
    accepted = ingest(source="paper.pdf")
    assert accepted["status"] in ("ingested", "present")
