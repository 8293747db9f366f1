"""`vectree mcp` through the MCP SDK's own client, over stdio and streamable HTTP, on a real
library: the agent's tools with their schemas, the same text byte for byte (and the CLI's for a
search), refusals as instructive tool errors, documents as resources, the API keys of
`vectree serve`, and the whole agent as the opt-in ``ask`` tool with its run recorded."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import AnyUrl

from graph.cli import main
from graph.recorder import Recorder
from graph.tool_engine import ToolEngine
from graph.trajectory.checkpoints import sqlite_checkpointer, thread_values
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from tests.conftest import PDF_DIR, require_shared_data
from tools.toolbox import Toolbox

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PDFS = ("mooney05.pdf", "0908.0054.pdf")
QUERY = "semantic parser that integrates syntax"
QUESTION = "What does SCISSOR integrate when it parses sentences?"
KEY = "mcp-test-key"
AGENT_TOOLS = 7
Part = tuple[str, str]
Call = tuple[str, Any]


@dataclass(frozen=True)
class Expected:
    """What the agent's own tools answer in this process, call by call."""

    specs: list[tuple[str, str, dict[str, Any]]]
    walk: list[tuple[Call, list[Part]]]
    refusals: list[tuple[Call, str]]

    def text(self, tool: str) -> str:
        """The text the walk's call of ``tool`` answered."""
        return next(dict(parts)["text"] for (name, _), parts in self.walk if name == tool)


def doc_of(library: Path, pdf: str) -> str:
    return next(r["doc_id"] for r in Library(library).documents() if r["source"].endswith(pdf))


def walk_calls(library: Path) -> list[Call]:
    """Search → tree → pages (and the other tools) as a client's model would call them."""
    parser, figures = doc_of(library, PDFS[0]), doc_of(library, PDFS[1])
    image = Library(library).images(figures)[0]["name"]
    return [
        ("search_documents", {"query": QUERY}),
        ("get_document_tree", {"doc_id": parser}),
        ("search_within_paper", {"doc_id": parser, "query": "semantic parsing"}),
        ("get_page_content", {"doc_id": parser, "pages": [1, 2]}),
        ("get_paper_metadata", {"doc_id": parser[:10]}),
        ("list_images", {"doc_id": figures}),
        ("get_page_image", {"doc_id": figures, "image": image}),
    ]


def bad_calls(library: Path) -> list[Call]:
    parser = doc_of(library, PDFS[0])
    return [
        ("get_page_content", {"doc_id": parser, "pages": [99]}),
        ("get_page_content", {"doc_id": parser, "pages": "two"}),
        ("get_page_content", {"doc_id": parser, "pages": list(range(1, 13))}),
        ("search_documents", {"query": "parsing", "limit": 50}),
        ("search_documents", {"query": "parsing", "colour": "red"}),
        ("get_document_tree", {"doc_id": "0123456789abcdef"}),
        ("get_document_tree", {"doc_id": "../etc"}),
        ("get_page_image", {"doc_id": parser, "image": "nothing.png"}),
        ("read_pdf", {"path": "/etc/passwd"}),
    ]


def engine_parts(content: str | list[dict[str, Any]]) -> list[Part]:
    """A tool result's content as (kind, text or data URL) pairs."""
    if isinstance(content, str):
        return [("text", content)]
    return [
        ("image", part["image_url"]["url"])
        if part["type"] == "image_url"
        else ("text", part["text"])
        for part in content
    ]


def client_parts(result: types.CallToolResult) -> list[Part]:
    parts: list[Part] = []
    for block in result.content:
        if isinstance(block, types.ImageContent):
            parts.append(("image", f"data:{block.mimeType};base64,{block.data}"))
        else:
            assert isinstance(block, types.TextContent)
            parts.append(("text", block.text))
    return parts


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_shared_data()
    root = tmp_path_factory.mktemp("mcp") / "library"
    pdfs = [str(PDF_DIR / name) for name in PDFS]
    assert main(["--library", str(root), "ingest", *pdfs, "--workers", "1", "--json"]) == 0
    yield root
    close_catalogs()


@pytest.fixture(scope="module")
def expected(library: Path) -> Expected:
    """The agent's tools answering every call of the tests, before any server opens the index."""
    engine = ToolEngine(Toolbox(open_catalog(library)).tools(), 1000, Recorder())
    specs = [
        (s["function"]["name"], s["function"]["description"], s["function"]["parameters"])
        for s in engine.specs()
    ]
    walk = [(call, engine_parts(engine.call(*call).content)) for call in walk_calls(library)]
    refusals = [(call, engine.call(*call).text) for call in bad_calls(library)]
    close_catalogs()
    assert all(text.startswith("Error: ") for _, text in refusals)
    return Expected(specs, walk, refusals)


async def check_session(
    session: ClientSession, expected: Expected, library: Path, extra: tuple[str, ...] = ()
) -> None:
    """Tools, the walk, the refusals and the resources, as one client sees them; ``extra``
    names the tools the server offers besides the agent's (an unknown tool's refusal lists
    them too)."""
    await session.initialize()
    listed = (await session.list_tools()).tools
    seen = [(t.name, t.description, t.inputSchema) for t in listed[:AGENT_TOOLS]]
    assert seen == expected.specs
    for (name, args), parts in expected.walk:
        result = await session.call_tool(name, args)
        assert not result.isError, (name, result.content)
        assert client_parts(result) == parts, name
    assert any(kind == "image" for kind, _ in client_parts(result))
    offered = "".join(f", {name}" for name in extra)
    for (name, args), text in expected.refusals:
        text = text.replace("get_page_image.", f"get_page_image{offered}.")
        refused = await session.call_tool(name, args)
        assert refused.isError and client_parts(refused) == [("text", text)], (name, args)
    await check_resources(session, library, expected)


async def check_resources(session: ClientSession, library: Path, expected: Expected) -> None:
    """Every document is listed as its tree; its tree and metadata read as the tools' text."""
    resources = (await session.list_resources()).resources
    records = Library(library).documents()
    assert [r.name for r in resources] == [r["doc_id"] for r in records]
    assert [r.title for r in resources] == [r["title"] for r in records]
    templates = (await session.list_resource_templates()).resourceTemplates
    assert {t.uriTemplate for t in templates} == {
        "vectree://documents/{doc_id}/tree",
        "vectree://documents/{doc_id}/metadata",
    }
    parser = doc_of(library, PDFS[0])
    for view, tool in (("tree", "get_document_tree"), ("metadata", "get_paper_metadata")):
        read = await session.read_resource(AnyUrl(f"vectree://documents/{parser}/{view}"))
        texts = [c.text for c in read.contents if isinstance(c, types.TextResourceContents)]
        assert texts == [expected.text(tool)], view


def test_search_tool_text_is_the_clis(
    library: Path, expected: Expected, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["--library", str(library), "search", QUERY, "--limit", "5"]) == 0
    assert capsys.readouterr().out == expected.text("search_documents") + "\n"


def test_stdio_client_gets_the_agents_tools_text_refusals_and_resources(
    library: Path, expected: Expected
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graph.cli", "--library", str(library), "mcp"],
        cwd=str(ROOT),
    )

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await check_session(session, expected, library)

    anyio.run(run)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def http_url(library: Path, expected: Expected) -> Iterator[str]:
    """`vectree mcp --transport http --ask` with one API key, once it accepts connections."""
    port = free_port()
    command = [sys.executable, "-m", "graph.cli", "--library", str(library), "mcp"]
    process = subprocess.Popen(
        [*command, "--transport", "http", "--port", str(port), "--ask"],
        cwd=ROOT,
        env={**os.environ, "VECTREE_SERVER_KEYS": KEY},
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        assert process.poll() is None, "vectree mcp --transport http exited"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_http_refuses_requests_without_a_configured_key(http_url: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    for key in (None, "wrong-key"):
        sent = {**headers, "x-api-key": key} if key else headers
        answer = httpx.post(http_url, json=initialize, headers=sent)
        assert answer.status_code == 401, key
        assert answer.json() == {"detail": "missing or wrong x-api-key header"}


def test_http_client_with_a_key_gets_the_same_and_can_ask(
    http_url: str, library: Path, expected: Expected
) -> None:
    async def run() -> types.CallToolResult:
        client = create_mcp_http_client(headers={"x-api-key": KEY})
        async with (
            client,
            streamable_http_client(http_url, http_client=client) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await check_session(session, expected, library, extra=("ask",))
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools[AGENT_TOOLS:]] == ["ask"]
            refused = await session.call_tool("ask", {"question": "?", "colour": "red"})
            assert refused.isError and "colour" in client_parts(refused)[0][1]
            return await session.call_tool("ask", {"question": QUESTION})

    answered = anyio.run(run)
    assert not answered.isError, answered.content
    text = client_parts(answered)[0][1]
    assert "Citations:" in text
    thread_id = text.rsplit("vectree trace ", 1)[1].rstrip(")")
    recorded = thread_values(sqlite_checkpointer(library), thread_id)
    assert recorded is not None and recorded["status"] == "answered"
    assert [step["tool"] for step in recorded["trajectory"]][:1] == ["search_documents"]
