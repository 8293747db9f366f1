"""The MCP server's own logic: content conversion, document resource URIs, the key check in
front of the HTTP endpoint, the tool list and the ``ask`` tool's refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.shared.exceptions import McpError

from graph.cli import main
from graph.mcp_server import (
    KeyedEndpoint,
    LibraryTools,
    document_resources,
    mcp_content,
    parse_document_uri,
)
from graph.recorder import Recorder
from graph.tool_engine import ToolEngine
from store.catalog import open_catalog
from store.library import DocumentRecord
from tools.toolbox import Toolbox

PNG = "iVBORw0KGgo="


def test_text_stays_text_and_a_data_url_image_becomes_image_content() -> None:
    assert mcp_content("Error: no.") == [types.TextContent(type="text", text="Error: no.")]
    parts = [
        {"type": "text", "text": "Image p0003-01.png from d, page 3."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    assert mcp_content(parts) == [
        types.TextContent(type="text", text="Image p0003-01.png from d, page 3."),
        types.ImageContent(type="image", data=PNG, mimeType="image/png"),
    ]
    with pytest.raises(ValueError, match="data URL"):
        mcp_content([{"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}])


def test_document_uris_name_a_view_the_tools_answer() -> None:
    doc = "45838cd985f182bb"
    assert parse_document_uri(f"vectree://documents/{doc}/tree") == (doc, "get_document_tree")
    assert parse_document_uri(f"vectree://documents/{doc}/metadata") == (
        doc,
        "get_paper_metadata",
    )
    for wrong in (f"vectree://documents/{doc}/pages", f"file:///{doc}", "vectree://documents/"):
        with pytest.raises(McpError, match=r"vectree://documents/DOC_ID/tree or"):
            parse_document_uri(wrong)


def test_each_document_is_listed_as_its_tree() -> None:
    record: DocumentRecord = {
        "doc_id": "45838cd985f182bb",
        "title": "A Statistical Semantic Parser",
        "pages": 8,
        "nodes": 9,
        "verification_rate": 1.0,
        "source": "/pdfs/mooney05.pdf",
        "structure": "headings",
        "parser": "pymupdf4llm",
        "ingested_at": "2025-01-01T00:00:00",
    }
    [resource] = document_resources([record])
    assert str(resource.uri) == "vectree://documents/45838cd985f182bb/tree"
    assert (resource.name, resource.title) == (record["doc_id"], record["title"])
    assert resource.description == "Section tree of A Statistical Semantic Parser (8 pages)"


def _request(headers: list[tuple[bytes, bytes]]) -> tuple[list[str], list[dict[str, Any]]]:
    """What the endpoint did with one request: whether the session saw it, what was sent."""
    reached: list[str] = []
    sent: list[dict[str, Any]] = []

    async def session(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    anyio.run(KeyedEndpoint(session), scope, receive, send)
    return reached, sent


def test_the_http_endpoint_takes_the_servers_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _request([])[0] == ["/mcp"]  # no keys configured: open, as `vectree serve` is
    monkeypatch.setenv("VECTREE_SERVER_KEYS", "k1,k2")
    for headers in ([], [(b"x-api-key", b"k3")]):
        reached, sent = _request(headers)
        assert not reached and sent[0]["status"] == 401
        assert sent[1]["body"] == b'{"detail":"missing or wrong x-api-key header"}'
    assert _request([(b"x-api-key", b"k2")])[0] == ["/mcp"]


def test_tools_are_the_agents_and_ask_only_when_asked_for(library_dir: Path) -> None:
    agent = ToolEngine(Toolbox(open_catalog(library_dir)).tools(), 1, Recorder()).specs()
    listed = LibraryTools(library_dir).specs()
    assert [(t.name, t.description, t.inputSchema) for t in listed] == [
        (s["function"]["name"], s["function"]["description"], s["function"]["parameters"])
        for s in agent
    ]
    with_ask = LibraryTools(library_dir, with_ask=True).specs()
    assert [t.name for t in with_ask] == [*(t.name for t in listed), "ask"]
    assert with_ask[-1].inputSchema["required"] == ["question"]


def test_ask_refuses_what_the_agent_would_not_run(library_dir: Path) -> None:
    tools = LibraryTools(library_dir, with_ask=True)
    extra = tools.call("ask", {"question": "Why?", "colour": "red"})
    assert not extra.ok and extra.text.startswith("Error: bad arguments for ask: colour:")
    empty = tools.call("ask", {"question": "   "})
    assert not empty.ok and "the question is empty" in empty.text


def test_mcp_refuses_a_folder_that_is_not_a_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(tmp_path / "none"), "mcp"]) == 1
    assert "does not exist" in capsys.readouterr().err
