"""The served API against callers it must not trust: API keys, per-caller threads, browser
origins (Studio's private-network preflight), run contexts that name another library or
endpoint, ingestion outside the inbox, malformed or oversized supplied documents, and keys the
operator has not let ingest — all through langgraph-sdk against a real `vectree serve`."""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pymupdf
import pytest
from langgraph_sdk import get_sync_client

from graph.cli import main
from graph.cli.library import demo_corpus
from store.catalog import close_catalogs
from tests.integration.test_server import QUESTION, start_server, stop_server

pytestmark = pytest.mark.integration

ALICE, BOB = "alice-key-0123456789", "bob-key-9876543210"
MAX_PAGE_CHARS, MAX_PAGES, MAX_BYTES = 20_000, 16, 3_000_000


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The demo library served with two API keys and an operator allow-list of one model."""
    root = tmp_path_factory.mktemp("secured") / "library"
    assert main(["--library", str(root), "ingest", str(demo_corpus()), "--json"]) == 0
    close_catalogs()
    env = {
        "VECTREE_SERVER_KEYS": f"{ALICE}, {BOB}",
        "VECTREE_SERVER_MODELS": "small-model",
        "VECTREE_SERVER_INGEST_KEYS": ALICE,
        "VECTREE_INGEST_MAX_PAGE_CHARS": str(MAX_PAGE_CHARS),
        "VECTREE_INGEST_MAX_PAGES": str(MAX_PAGES),
        "VECTREE_INGEST_MAX_BYTES": str(MAX_BYTES),
    }
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
    for page in ("/info", "/metrics", "/docs", "/openapi.json"):
        assert httpx.get(f"{url}{page}").status_code == 401, page
        assert httpx.get(f"{url}{page}", headers={"x-api-key": "guess"}).status_code == 401
        assert httpx.get(f"{url}{page}", headers={"x-api-key": ALICE}).status_code == 200, page
    assert httpx.get(f"{url}/ok").status_code == 200  # health checks need no key
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
    assert _status(lambda: bob.threads.create(thread_id=thread)) == 404
    assert _status(lambda: bob.threads.copy(thread)) == 404
    assert _status(lambda: alice.threads.create(thread_id=thread)) == 409  # her own: it exists
    alice.threads.copy(thread)


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


STUDIO = "https://smith.langchain.com"


def preflight(url: str, origin: str, private_network: bool) -> tuple[int, dict[str, str]]:
    """The status and headers of a CORS preflight as Chromium sends it before a page of
    ``origin`` may POST to the server (with the private-network question when the page is
    public and the server on 127.0.0.1)."""
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-api-key",
    }
    if private_network:
        headers["Access-Control-Request-Private-Network"] = "true"
    request = urllib.request.Request(f"{url}/threads/search", method="OPTIONS", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as refused:
        return refused.code, {k.lower(): v for k, v in refused.headers.items()}


def test_browsers_from_other_origins_are_not_admitted(served: tuple[Path, str]) -> None:
    _, url = served
    for private_network in (True, False):
        _, evil = preflight(url, "http://evil.example", private_network)
        assert "access-control-allow-origin" not in evil
        assert "access-control-allow-private-network" not in evil


def test_studio_is_granted_its_private_network_preflight(served: tuple[Path, str]) -> None:
    _, url = served
    status, studio = preflight(url, STUDIO, private_network=True)
    assert status == 200
    assert studio.get("access-control-allow-origin") == STUDIO
    assert studio.get("access-control-allow-private-network") == "true"
    status, plain = preflight(url, STUDIO, private_network=False)
    assert status == 200 and plain.get("access-control-allow-origin") == STUDIO
    assert "access-control-allow-private-network" not in plain


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


def test_supplied_documents_are_checked_field_by_field_and_bounded(
    served: tuple[Path, str],
) -> None:
    root, url = served
    alice = get_sync_client(url=url, api_key=ALICE)
    before = sorted(p.name for p in (root / "docs").iterdir())

    def ingest(**fields: Any) -> dict[str, Any]:
        result = alice.runs.wait(None, "ingest", input=fields)
        assert isinstance(result, dict)
        return result

    page = "A page about supplied documents and their validation. " * 4
    refused = {
        "pages as a string": {"supplied": {"title": "t", "pages": "abc"}},
        "pages as an object": {"supplied": {"title": "t", "pages": {"a": 1}}},
        "an entry as a list": {"supplied": {"title": "t", "pages": [page], "entries": [[1, 2, 3]]}},
        "a number as source": {"source": 5},
        "a NUL in the name": {"source": "paper\x00.pdf"},
        "no title": {"supplied": {"title": None, "pages": [page]}},
        "a blank title": {"supplied": {"title": "  ", "pages": [page]}},
        "a page too long": {"supplied": {"title": "t", "pages": ["x" * (MAX_PAGE_CHARS + 1)]}},
        "too many pages": {"supplied": {"title": "t", "pages": [page] * (MAX_PAGES + 1)}},
        "an entry past the end": {
            "supplied": {
                "title": "t",
                "pages": [page],
                "entries": [{"level": 1, "title": "Intro", "start_page": 2}],
            }
        },
        "nothing at all": {},
    }
    for why, fields in refused.items():
        result = ingest(**fields)
        assert result["status"] == "invalid", why
        assert result["error"].startswith("invalid input: ") and "\n" not in result["error"], why
    assert sorted(p.name for p in (root / "docs").iterdir()) == before
    assert not list((root / "staging").iterdir())
    good = {
        "title": "A supplied note",
        "pages": [page, page],
        "entries": [{"level": 1, "title": "Intro", "start_page": 1}],
    }
    accepted = ingest(supplied=good)
    assert accepted["status"] == "ingested" and accepted["doc_id"]


def test_a_request_body_over_the_size_limit_is_refused_before_it_is_read(
    served: tuple[Path, str],
) -> None:
    """The server reads at most the supplied-document limit plus a margin for the other
    fields (``ServerSettings.server_limits``): a larger body costs it no memory."""
    root, url = served
    before = sorted(p.name for p in (root / "docs").iterdir())
    pages = ["x" * 1000] * 6000  # 6 MB: over 3 MB + the 1 MiB margin
    refused = httpx.post(
        f"{url}/runs/wait",
        headers={"x-api-key": ALICE},
        json={"assistant_id": "ingest", "input": {"supplied": {"title": "big", "pages": pages}}},
        timeout=60,
    )
    assert refused.status_code == 413 and "Request body too large" in refused.text
    assert sorted(p.name for p in (root / "docs").iterdir()) == before


def test_only_the_keys_the_operator_names_may_ingest(served: tuple[Path, str]) -> None:
    root, url = served
    bob = get_sync_client(url=url, api_key=BOB)
    shutil.copy(sorted(demo_corpus().glob("*.pdf"))[0], root / "inbox" / "bob.pdf")
    assert _status(lambda: bob.runs.wait(None, "ingest", input={"source": "bob.pdf"})) == 403
    thread = bob.threads.create()["thread_id"]
    assert _status(lambda: bob.runs.create(thread, "ingest", input={"source": "bob.pdf"})) == 403
    assert _status(lambda: bob.assistants.create(graph_id="ingest")) == 403
    hourly = "0 * * * *"
    assert _status(lambda: bob.crons.create("ingest", schedule=hourly, input={})) == 403
    assert _status(lambda: bob.crons.create_for_thread(thread, "ingest", schedule=hourly)) == 403
    assert bob.crons.search() == []
    answered = bob.runs.wait(None, "agent", input={"question": QUESTION})
    assert isinstance(answered, dict) and answered["status"] == "answered"


def test_an_inbox_pdf_over_the_page_limit_is_refused(served: tuple[Path, str]) -> None:
    root, url = served
    alice = get_sync_client(url=url, api_key=ALICE)
    longest = max(demo_corpus().glob("*.pdf"), key=lambda p: pymupdf.open(p).page_count)
    assert pymupdf.open(longest).page_count > MAX_PAGES
    shutil.copy(longest, root / "inbox" / "long.pdf")
    result = alice.runs.wait(None, "ingest", input={"source": "long.pdf"})
    assert isinstance(result, dict) and result["status"] == "invalid"
    assert f"more than the limit of {MAX_PAGES}" in result["error"]
