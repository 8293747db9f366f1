"""Agentic Search: the chunk-level agent that RIT-RAG is compared with.

The same chunk store (node-aligned, at most 512 tokens), retriever and budget as ``rit`` (10 tool
calls, at most 3 searches), but flat: ``search_chunks(query)`` returns the best 8 chunks as
passages (id, document, pages, section title and the first couple of hundred tokens of text,
so a search already discloses pages: layer 0) and ``read_chunks(chunk_ids)`` returns whole
chunks (layer 2). The model never sees the document trees, only what the searches return.

Offline (no model) the policy is fixed: one search with the question, one read of the best
three chunks outside reference lists, then the extractive reader over the chunks read.
"""

from __future__ import annotations

from pydantic import Field

from graph.strategies.base import StrategyOutcome, StrategyRequest, extractive_answer
from graph.strategies.rit import (
    MAX_CALLS,
    MAX_SEARCHES,
    ChunkSource,
    SourceTools,
    StoreChunks,
    cite_hint,
    fit_segments,
    page_text,
    read_capped,
)
from graph.strategies.tool_loop import CITE_RULE, IdList, ToolLoop, run_tool_loop
from store.chunks import Chunk
from store.text import SKIP_SECTIONS
from tools.results import Passage, Tool, ToolResult
from tools.schemas import ToolArgs

SEARCH_HITS = 8
SNIPPET_TOKENS = 200
OFFLINE_READS = 3

SYSTEM_PROMPT = f"""You answer questions from a library of documents with two tools.
search_chunks(query) returns the best-matching passages with the start of their text;
read_chunks(chunk_ids) returns passages whole, page by page. Read the passages that look
useful (several per call); if they do not answer the question, search again with different
words. You have {MAX_CALLS} tool calls in all, at most {MAX_SEARCHES} of them search_chunks.
{CITE_RULE}"""


class search_chunks(ToolArgs):
    """Search the documents' passages: the best 8, each with its id, document, pages,
    section title and the start of its text."""

    layer = 0

    query: str = Field(min_length=1, description="What you are looking for, in a few words.")


class read_chunks(ToolArgs):
    """The whole text of passages, page by page (about 6,000 tokens per call at most)."""

    layer = 2

    chunk_ids: IdList = Field(
        min_length=1,
        description="Passage ids exactly as search_chunks shows them (doc_id#n), several at once.",
    )


def chunk_ref(chunk: Chunk) -> str:
    return f"{chunk.doc_id}#{chunk.ordinal}"


class ChunkTools(SourceTools):
    """The two flat tools over a chunk source."""

    def tools(self) -> list[Tool]:
        return [
            Tool(search_chunks, self.search, limit=MAX_SEARCHES),
            Tool(read_chunks, self.read),
        ]

    def search(self, query: str) -> ToolResult:
        hits = [hit.chunk for hit in self.source.search(query, SEARCH_HITS)]
        if not hits:
            return ToolResult("No passages matched this query in the documents. Try other words.")
        blocks, passages = [], []
        for rank, chunk in enumerate(hits, start=1):
            kept, _ = fit_segments(chunk.segments, SNIPPET_TOKENS)
            more = " …" if kept != chunk.segments else ""
            blocks.append(
                f"[{rank}] {chunk_ref(chunk)} | section: {chunk.title or 'none'} | "
                f"{cite_hint(self.request, chunk.doc_id)}\n{page_text(kept)}{more}"
            )
            passages.append(Passage(chunk.doc_id, kept))
        disclosed = tuple(pair for passage in passages for pair in passage.disclosed)
        return ToolResult(
            "\n\n".join(blocks), disclosed=disclosed, passages=tuple(passages), artifact=hits
        )

    def read(self, chunk_ids: list[str]) -> ToolResult:
        items, errors = [], []
        for ref in dict.fromkeys(r.strip() for r in chunk_ids):
            found = self._chunk(ref)
            if isinstance(found, str):
                errors.append(found)
                continue
            header = f"## {ref} {found.title or ''} ({cite_hint(self.request, found.doc_id)})"
            items.append((ref, found.doc_id, header, found.segments))
        return read_capped(items).reply(errors)

    def _chunk(self, ref: str) -> Chunk | str:
        """The chunk an id names, or the error to show."""
        doc_id, _, ordinal = ref.rpartition("#")
        if not doc_id or not ordinal.isdigit():
            return (
                f"{ref!r} is not a passage id; write it as doc_id#n, exactly as search_chunks "
                "shows it."
            )
        if doc_id not in self.source.doc_ids:
            return f"{ref!r}: unknown document {doc_id!r}; use ids from search_chunks."
        found = [c for c in self.source.chunks(doc_id) if c.ordinal == int(ordinal)]
        return found[0] if found else f"{ref!r}: no such passage; use ids from search_chunks."


def run(request: StrategyRequest) -> StrategyOutcome:
    """Agentic Search over the run's documents."""
    return search_and_read(request, StoreChunks(request.catalog, request.scoped_doc_ids()))


def declared_loop(request: StrategyRequest) -> ToolLoop:
    """The tools, budget and prompt of Agentic Search over the run's documents."""
    return chunk_loop(request, StoreChunks(request.catalog, request.scoped_doc_ids()))


def chunk_loop(request: StrategyRequest, source: ChunkSource) -> ToolLoop:
    """The declared loop over the given tools (a test gives a scripted chunk source)."""
    return ToolLoop(ChunkTools(request, source).tools(), MAX_CALLS, SYSTEM_PROMPT)


def search_and_read(request: StrategyRequest, source: ChunkSource) -> StrategyOutcome:
    """The model's searches and reads, or the fixed offline ones, over ``source``."""
    loop = chunk_loop(request, source)
    if request.model is not None:
        return run_tool_loop(request, loop)
    engine = loop.engine(request.recorder)
    found = engine.call("search_chunks", {"query": request.question})
    picks = [
        chunk_ref(chunk)
        for chunk in found.artifact or []
        if not SKIP_SECTIONS.match(chunk.title or "")
    ][:OFFLINE_READS]
    if not picks:
        return StrategyOutcome(extractive_answer(request, []))
    read = engine.call("read_chunks", {"chunk_ids": picks})
    return StrategyOutcome(extractive_answer(request, read.passages))
