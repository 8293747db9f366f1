"""RIT-RAG: the model navigates retrieval-induced sub-trees of the document trees.

A search does not show the model passages. ``get_toc_structure(query)`` retrieves the best
k′ = 200 node-aligned chunks (hybrid: cosine and BM25 fused by RRF) of the run's documents,
scores every tree node by its best chunk, keeps the n = 50 best nodes plus their ancestors and
shows that sub-forest: one outline per document, best first, each line with the node's id,
title, pages, score and whether it can be read (the retrieved nodes can; ancestors are there to
place them). ``get_content(node_ids)`` then returns the text of chosen nodes, which is exactly
the text of their chunks, since no chunk spans two nodes. The budget is 10 tool calls, at most 3
of them searches; outlines are layer 1, content is layer 2.

Offline (no model) the policy is fixed: one ``get_toc_structure`` with the question, one
``get_content`` of the best readable nodes (at most three, within the page cap, skipping
reference lists), then the extractive reader over what was read.

The chunk access (``ChunkSource``) and the page-labelled chunk text are shared with
``agentic-search``, the chunk-level agent RIT-RAG is compared with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from pydantic import Field

from graph.strategies.base import StrategyOutcome, StrategyRequest, extractive_answer
from graph.strategies.tool_loop import CITE_RULE, IdList, ToolLoop, run_tool_loop
from store.catalog import Catalog
from store.chunks import Chunk
from store.embeddings import count_tokens, truncate_to_tokens
from store.text import SKIP_SECTIONS
from store.types import TreeNode, walk
from tools.formatting import format_citation, page_label, words
from tools.passages import PassageSearch, ScoredChunk
from tools.results import Passage, Tool, ToolResult, failure
from tools.schemas import ToolArgs

SCHEME = "rit"
MAX_CALLS = 10
MAX_SEARCHES = 3
TOC_CHUNKS = 200  # k′: chunks retrieved per outline
TOC_NODES = 50  # n: best-scoring nodes kept per outline
READ_TOKENS = 6000  # most text tokens one content call returns
SUMMARY_WORDS = 12
OFFLINE_NODES = 3

Segments = tuple[tuple[int, str], ...]


# -- chunk access ---------------------------------------------------------------------------
class ChunkSource(Protocol):
    """The chunks and trees of the run's documents (a chunk store, or a test's fake)."""

    @property
    def doc_ids(self) -> Sequence[str]: ...

    def search(self, query: str, limit: int) -> list[ScoredChunk]: ...

    def chunks(self, doc_id: str) -> list[Chunk]: ...

    def tree(self, doc_id: str) -> list[TreeNode]: ...


class StoreChunks:
    """The ``rit`` chunk store of a catalog, limited to the run's documents."""

    def __init__(self, catalog: Catalog, doc_ids: Sequence[str]) -> None:
        self.catalog = catalog
        self.doc_ids = doc_ids
        self.passages = PassageSearch(catalog, SCHEME)

    def search(self, query: str, limit: int) -> list[ScoredChunk]:
        return self.passages.search(query, list(self.doc_ids), limit)

    def chunks(self, doc_id: str) -> list[Chunk]:
        return self._by_doc.get(doc_id, [])

    def tree(self, doc_id: str) -> list[TreeNode]:
        return self.catalog.library.tree(doc_id)

    @cached_property
    def _by_doc(self) -> dict[str, list[Chunk]]:
        """Every chunk of the run's documents, by document, in reading order."""
        self.passages.prepare(list(self.doc_ids))
        grouped: dict[str, list[Chunk]] = {}
        for chunk in self.passages.store.snapshot().chunks:
            grouped.setdefault(chunk.doc_id, []).append(chunk)
        return grouped


def merged_segments(chunks: Iterable[Chunk]) -> Segments:
    """The per-page text of consecutive chunks, a page split between two chunks made whole
    (chunk borders drop the whitespace between them, so the parts are joined by a space)."""
    merged: list[tuple[int, str]] = []
    for chunk in chunks:
        for page, text in chunk.segments:
            if merged and merged[-1][0] == page:
                merged[-1] = (page, f"{merged[-1][1]} {text}")
            else:
                merged.append((page, text))
    return tuple(merged)


def fit_segments(segments: Segments, budget: int) -> tuple[Segments, int]:
    """The leading text of ``segments`` within ``budget`` tokens (the last page cut at a word
    boundary) and the tokens it takes."""
    kept: list[tuple[int, str]] = []
    used = 0
    for page, text in segments:
        tokens = count_tokens(text)
        if used + tokens > budget:
            rest = truncate_to_tokens(text, budget - used)
            if rest.strip():
                kept.append((page, rest))
                used += count_tokens(rest)
            break
        kept.append((page, text))
        used += tokens
    return tuple(kept), used


def page_text(segments: Segments) -> str:
    """Text labelled page by page, so the model can cite each page."""
    return "\n".join(f"[p.{page}]\n{text}" for page, text in segments)


def cite_hint(request: StrategyRequest, doc_id: str) -> str:
    """The citation pattern shown with text, so the model cites in the required form."""
    return f"cite as {format_citation(request.label(doc_id), doc_id, 'N')}"


@dataclass
class Capped:
    """Text read in one call under a token cap: the passages and what did not fit."""

    passages: list[Passage] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def reply(self, errors: Sequence[str]) -> ToolResult:
        """The call's reply: the blocks read, then what was cut and which ids were wrong."""
        notes = list(errors)
        if self.left_out:
            notes.append(
                f"Not returned (the {READ_TOKENS}-token cap of one call was reached): "
                f"{', '.join(self.left_out)}. Ask for them in another call if needed."
            )
        if not self.passages:
            return failure(" ".join(notes) or "nothing to read.")
        text = "\n\n".join([*self.blocks, *(f"Note: {note}" for note in notes)])
        disclosed = tuple(pair for passage in self.passages for pair in passage.disclosed)
        return ToolResult(text, disclosed=disclosed, passages=tuple(self.passages))


def read_capped(items: Sequence[tuple[str, str, str, Segments]]) -> Capped:
    """Read (id, doc_id, header, segments) items in order until the token cap: an item that
    does not fit whole is cut, and the items after it are left out."""
    capped = Capped()
    left = READ_TOKENS
    for ref, doc_id, header, segments in items:
        if left <= 0:
            capped.left_out.append(ref)
            continue
        kept, used = fit_segments(segments, left)
        left = left - used if kept == segments else 0
        if not kept:
            capped.left_out.append(ref)
            continue
        cut = " (cut here at the token cap)" if kept != segments else ""
        capped.passages.append(Passage(doc_id, kept))
        capped.blocks.append(f"{header}\n{page_text(kept)}{cut}")
    return capped


# -- the induced sub-forest (pure) ------------------------------------------------------------
@dataclass(frozen=True)
class NodeHit:
    """A retrieved chunk's node and the chunk's score."""

    doc_id: str
    node_id: str
    score: float


@dataclass
class InducedNode:
    """A node of the induced sub-forest; ``score`` is the best of its own (when it was kept as a
    hit) and its descendants'."""

    doc_id: str
    node: TreeNode
    score: float
    readable: bool
    children: list[InducedNode]

    @property
    def ref(self) -> str:
        return f"{self.doc_id}:{self.node['node_id']}"

    def walk(self) -> list[InducedNode]:
        return [self, *(n for child in self.children for n in child.walk())]


@dataclass
class InducedTree:
    """One document's part of the sub-forest."""

    doc_id: str
    score: float
    roots: list[InducedNode]


def best_nodes(hits: Iterable[NodeHit], n: int) -> dict[tuple[str, str], float]:
    """The ``n`` best nodes, each scored by its best chunk (ties keep retrieval order)."""
    best: dict[tuple[str, str], float] = {}
    for hit in hits:
        key = (hit.doc_id, hit.node_id)
        best[key] = max(best.get(key, hit.score), hit.score)
    ranked = sorted(best, key=lambda key: -best[key])
    return {key: best[key] for key in ranked[:n]}


def induce_forest(
    hits: Iterable[NodeHit], trees: Mapping[str, list[TreeNode]], n: int = TOC_NODES
) -> list[InducedTree]:
    """The sub-forest induced by the ``n`` best nodes and their ancestors, best document
    first and, inside a document, best sibling first."""
    kept = best_nodes(hits, n)
    forest = []
    for doc_id in dict.fromkeys(doc for doc, _ in kept):
        scores = {node: score for (doc, node), score in kept.items() if doc == doc_id}
        roots = _induce(doc_id, trees.get(doc_id, []), scores)
        if roots:
            forest.append(InducedTree(doc_id, roots[0].score, roots))
    return sorted(forest, key=lambda tree: -tree.score)


def _induce(doc_id: str, nodes: list[TreeNode], scores: dict[str, float]) -> list[InducedNode]:
    induced = []
    for node in nodes:
        children = _induce(doc_id, node["nodes"], scores)
        own = scores.get(node["node_id"])
        if own is None and not children:
            continue
        best = max([own if own is not None else float("-inf"), *(c.score for c in children)])
        induced.append(InducedNode(doc_id, node, best, own is not None, children))
    return sorted(induced, key=lambda n: -n.score)


def render_forest(request: StrategyRequest, forest: list[InducedTree]) -> str:
    """The sub-forest as indented outlines, one line per node."""
    if not forest:
        return "No passages matched this query in the documents. Try other words."
    blocks = []
    for rank, tree in enumerate(forest, start=1):
        meta = request.catalog.library.metadata(tree.doc_id)
        head = (
            f"[{rank}] document {tree.doc_id}: {words(str(meta.get('title') or ''), 14)} "
            f"({request.label(tree.doc_id)})"
        )
        blocks.append("\n".join([head, *_node_lines(tree.roots, 1)]))
    return "\n\n".join(blocks)


def _node_lines(nodes: list[InducedNode], depth: int) -> list[str]:
    lines = []
    for item in nodes:
        node = item.node
        start, end = node["start_page"], node["end_page"]
        pages = page_label(start, end)
        summary = words(node["summary"], SUMMARY_WORDS) if node["summary"] else ""
        lines.append(
            f"{'  ' * depth}{item.ref} | {node['title']} | {pages} | score {item.score:.4f} | "
            f"is_readable: {str(item.readable).lower()}" + (f" | {summary}" if summary else "")
        )
        lines.extend(_node_lines(item.children, depth + 1))
    return lines


# -- the tools ------------------------------------------------------------------------------
class get_toc_structure(ToolArgs):
    """Search the documents and see where the matches are: per document, an outline of the
    best-matching sections and their parent sections, with id, title, pages, match score and
    is_readable. Only sections with is_readable: true can be opened with get_content."""

    layer = 1

    query: str = Field(min_length=1, description="What you are looking for, in a few words.")


class get_content(ToolArgs):
    """The text of readable sections, page by page (about 6,000 tokens per call at most)."""

    layer = 2

    node_ids: IdList = Field(
        min_length=1,
        description="Section ids exactly as get_toc_structure shows them (doc_id:node_id), "
        "several at once.",
    )


class SourceTools:
    """Tools of one run over a chunk source (RIT-RAG's and the flat chunk agent's)."""

    def __init__(self, request: StrategyRequest, source: ChunkSource) -> None:
        self.request = request
        self.source = source


class RitTools(SourceTools):
    """The two RIT-RAG tools over a chunk source."""

    def tools(self) -> list[Tool]:
        return [
            Tool(get_toc_structure, self.toc, limit=MAX_SEARCHES),
            Tool(get_content, self.content),
        ]

    def toc(self, query: str) -> ToolResult:
        hits = [
            NodeHit(hit.chunk.doc_id, hit.chunk.node_id, hit.score)
            for hit in self.source.search(query, TOC_CHUNKS)
            if hit.chunk.node_id is not None
        ]
        trees = {doc: self.source.tree(doc) for doc in dict.fromkeys(h.doc_id for h in hits)}
        forest = induce_forest(hits, trees)
        return ToolResult(render_forest(self.request, forest), artifact=forest)

    def content(self, node_ids: list[str]) -> ToolResult:
        items, errors = [], []
        for ref in dict.fromkeys(r.strip() for r in node_ids):
            found = self._node(ref)
            if isinstance(found, str):
                errors.append(found)
                continue
            doc_id, title, chunks = found
            header = f"## {ref} {title} ({cite_hint(self.request, doc_id)})"
            items.append((ref, doc_id, header, merged_segments(chunks)))
        return read_capped(items).reply(errors)

    def node_pages(self, ref: str) -> tuple[int, ...]:
        """The pages a node's own text is on (none for an unknown or unreadable node)."""
        found = self._node(ref)
        return () if isinstance(found, str) else merged_pages(found[2])

    def _node(self, ref: str) -> tuple[str, str, list[Chunk]] | str:
        """(doc_id, title, chunks) of a readable node, or the error to show."""
        doc_id, _, node_id = ref.rpartition(":")
        if not doc_id or not node_id:
            return (
                f"{ref!r} is not a section id; write it as doc_id:node_id, exactly as "
                "get_toc_structure shows it."
            )
        if doc_id not in self.source.doc_ids:
            return f"{ref!r}: unknown document {doc_id!r}; use ids from get_toc_structure."
        chunks = [c for c in self.source.chunks(doc_id) if c.node_id == node_id]
        if chunks:
            return doc_id, chunks[0].title or "", chunks
        if any(node["node_id"] == node_id for node in walk(self.source.tree(doc_id))):
            return (
                f"{ref!r} has no text of its own (is_readable: false): its pages belong to its "
                "subsections; read those instead."
            )
        return f"{ref!r}: no such section in {doc_id}; use ids from get_toc_structure."


def merged_pages(chunks: Iterable[Chunk]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(page for chunk in chunks for page in chunk.pages))


# -- the run --------------------------------------------------------------------------------
SYSTEM_PROMPT = f"""You answer questions from a library of documents with two tools.
get_toc_structure(query) searches the documents and shows where the matches are: an outline
per document of the best-matching sections (with their parent sections for context). Titles
and scores only point the way; they are not evidence. get_content(node_ids) returns the text
of sections marked is_readable: true; ask for several promising sections in one call. If the
text does not answer the question, read other sections from the outline or search again with
different words. You have {MAX_CALLS} tool calls in all, at most {MAX_SEARCHES} of them
get_toc_structure. {CITE_RULE}"""


def run(request: StrategyRequest) -> StrategyOutcome:
    """RIT-RAG over the run's documents."""
    return navigate(request, StoreChunks(request.catalog, request.scoped_doc_ids()))


def declared_loop(request: StrategyRequest) -> ToolLoop:
    """The tools, budget and prompt of RIT-RAG over the run's documents."""
    return rit_loop(RitTools(request, StoreChunks(request.catalog, request.scoped_doc_ids())))


def rit_loop(tools: RitTools) -> ToolLoop:
    """The declared loop over the given tools (a test gives a scripted chunk source)."""
    return ToolLoop(tools.tools(), MAX_CALLS, SYSTEM_PROMPT)


def navigate(request: StrategyRequest, source: ChunkSource) -> StrategyOutcome:
    """The model's navigation, or the fixed offline one, over ``source``."""
    tools = RitTools(request, source)
    loop = rit_loop(tools)
    if request.model is not None:
        return run_tool_loop(request, loop)
    engine = loop.engine(request.recorder)
    outline = engine.call("get_toc_structure", {"query": request.question})
    picks = offline_picks(outline.artifact or [], tools.node_pages, request.context.page_cap)
    if not picks:
        return StrategyOutcome(extractive_answer(request, []))
    read = engine.call("get_content", {"node_ids": picks})
    return StrategyOutcome(extractive_answer(request, read.passages))


def offline_picks(
    forest: list[InducedTree], pages_of: Callable[[str], tuple[int, ...]], page_cap: int
) -> list[str]:
    """The best readable nodes, reference lists skipped, at most ``OFFLINE_NODES`` of them and
    together within ``page_cap`` pages (the best one always)."""
    readable = [n for tree in forest for root in tree.roots for n in root.walk() if n.readable]
    readable.sort(key=lambda n: -n.score)
    picks: list[str] = []
    pages = 0
    for item in readable:
        if SKIP_SECTIONS.match(item.node["title"]):
            continue
        count = len(pages_of(item.ref))
        if picks and pages + count > page_cap:
            continue
        picks.append(item.ref)
        pages += count
        if len(picks) == OFFLINE_NODES:
            break
    return picks
