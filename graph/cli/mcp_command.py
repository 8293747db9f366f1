"""`vectree mcp`: the library's tools for MCP clients, over stdio or streamable HTTP
(``graph.mcp_server``)."""

from __future__ import annotations

import argparse

from graph.cli.common import library_of
from graph.cli.serve import announce_access, free_port
from graph.console import EXIT_OK
from store.settings import ServerSettings

TRANSPORTS = ("stdio", "http")


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client closes stdio, or until interrupted (HTTP). The MCP SDK is
    imported here, so the other commands do not load it."""
    from graph.mcp_server import LOCAL_HOST, endpoint_url, ready_tools, serve_http, serve_stdio

    tools = ready_tools(library_of(args).root, with_ask=args.ask)
    if args.transport == "stdio":
        serve_stdio(tools)
        return EXIT_OK
    port = args.port or free_port(LOCAL_HOST)
    print(f"MCP server for library {tools.root}\n  endpoint: {endpoint_url(port)}", flush=True)
    announce_access(ServerSettings.from_env())
    serve_http(tools, port)
    return EXIT_OK
