"""Search-o1-style iterative search over flat passages (the ``dense`` chunk store, hybrid).

With a model: the model reasons step by step and searches by calling ``search_passages`` with
one query; each search takes the top 5 passages, and a separate reason-in-documents call
condenses them into short cited notes, which are what the search returns to the reasoning
model (the passages' pages become citable). It ends by answering without a tool call. It runs as
the checkpointed tool loop (``graph.strategies.tool_loop``), one step per turn: at most 10
searches, then the loop's extra turns and, failing an answer, one answer call over every
passage the searches returned.

Offline (no model) a deterministic version runs: pseudo-relevance feedback. Round 1 searches
the question; every later round searches the question plus the 5 most frequent content words
(not yet in any query) of the best passage not yet used for feedback. It stops when a round
brings no new passage, or after 10 rounds, and the extractive reader answers from every passage
found. It explores the neighbourhood of the question's best passages, not a plan: it is a
mechanical stand-in for the model's reasoning, labelled as such in the status.

Every search is a ``search_passages`` call through the tool engine: a layer-0 step disclosing
the pages of the passages it returned, with the chunks it returned and how many were new.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from graph.strategies.base import (
    StrategyOutcome,
    StrategyRequest,
    answer_from_passages,
    passage_header,
    passages_result,
)
from graph.strategies.dense import PassageSearcher, as_passage
from graph.strategies.tool_loop import CITE_RULE, ToolLoop, run_tool_loop
from store.chat import ModelCallError
from store.text import content_words
from tools.formatting import CITATION_FORMAT
from tools.passages import PassageSearch, ScoredChunk
from tools.results import Passage, Tool, ToolResult
from tools.schemas import ToolArgs

MAX_ROUNDS = 10
SEARCH_TOP = 5
FEEDBACK_WORDS = 5
OFFLINE_DETAIL = "offline: pseudo-relevance-feedback search, extractive answer"
REASON_PROMPT = f"""You answer a question about documents you can only see through a search
engine over their passages. Think step by step. To search, call search_passages with one
query; it returns notes on what the best passages say, each with its citation. You have at most
{MAX_ROUNDS} searches. When the notes suffice, reply with the final answer and no tool call.
{CITE_RULE}"""
NOTES_PROMPT = f"""Read the search results for the question and write short notes with only the
facts that help answer it, each followed by the citation of its passage header exactly as shown:
{CITATION_FORMAT}. If nothing helps, write: nothing relevant."""


@dataclass
class Found:
    """Passages found so far, first-seen order, keyed by (doc_id, chunk ordinal)."""

    hits: dict[tuple[str, int], ScoredChunk] = field(default_factory=dict)

    def add(self, hits: list[ScoredChunk]) -> list[ScoredChunk]:
        """Keep the hits not seen before and return them."""
        new = [h for h in hits if (h.chunk.doc_id, h.chunk.ordinal) not in self.hits]
        for hit in new:
            self.hits[(hit.chunk.doc_id, hit.chunk.ordinal)] = hit
        return new

    def passages(self) -> list[Passage]:
        return [as_passage(h) for h in self.hits.values()]


class search_passages(ToolArgs):
    """Search the passages of the run's documents (words and meaning) for one query; returns
    short notes on what the best passages say, each with its citation (layer 0)."""

    layer = 0

    query: str = Field(min_length=1, max_length=500, description="One search query.")


def chunk_key(hit: ScoredChunk) -> str:
    return f"{hit.chunk.doc_id}#{hit.chunk.ordinal}"


@dataclass
class Searches:
    """The strategy's one tool, ``search_passages``, run through the tool engine. With
    ``notes`` (a model reasons over the results) a search returns the reason-in-documents notes;
    passages returned by the run's earlier searches (recorded with their steps) are not new."""

    request: StrategyRequest
    searcher: PassageSearcher
    doc_ids: list[str]
    notes: bool = False
    found: Found = field(default_factory=Found)
    seen: set[str] = field(default_factory=set)
    last: list[ScoredChunk] = field(default_factory=list)
    new: list[ScoredChunk] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.notes:  # a loop step: the searches of the steps before it are replayed
            for step in self.request.recorder.steps:
                if step["tool"] == "search_passages":
                    self.seen.update(step.get("details", {}).get("chunks", []))
        self.engine = self.request.engine([self.tool()], MAX_ROUNDS)

    def tool(self) -> Tool:
        return Tool(search_passages, self._run)

    def search(self, query: str) -> bool:
        """One search; False when the engine refused it (``last`` and ``new`` are then empty)."""
        self.last, self.new = [], []
        return self.engine.call("search_passages", {"query": query}).ok

    def _run(self, query: str) -> ToolResult:
        self.last = self.searcher.search(query, self.doc_ids, SEARCH_TOP, method="hybrid")
        self.found.add(self.last)
        self.new = [hit for hit in self.last if chunk_key(hit) not in self.seen]
        self.seen.update(chunk_key(hit) for hit in self.last)
        result = passages_result(
            [as_passage(h) for h in self.last],
            limit=SEARCH_TOP,
            new_passages=len(self.new),
            chunks=[chunk_key(hit) for hit in self.last],
        )
        if self.notes:
            result.content = reason_in_documents(self.request, query, self.last)
        return result


# -- offline: pseudo-relevance feedback -----------------------------------------------------------
def feedback_words(text: str, exclude: set[str], count: int = FEEDBACK_WORDS) -> list[str]:
    """The passage's most frequent content words not in ``exclude`` (ties: first seen)."""
    words = Counter(w for w in content_words(text) if w not in exclude and not w.isdigit())
    return [w for w, _ in words.most_common(count)]


def feedback_search(request: StrategyRequest, searches: Searches) -> list[Passage]:
    """The offline rounds (see the module docstring); every passage found, first seen first."""
    found = searches.found
    used: set[tuple[str, int]] = set()
    asked = set(content_words(request.question))
    query = request.question
    for round_no in range(1, MAX_ROUNDS + 1):
        searches.search(query)
        source = next((k for k in found.hits if k not in used), None)
        if not searches.new or source is None or round_no == MAX_ROUNDS:
            break
        used.add(source)
        words = feedback_words(found.hits[source].chunk.text, asked)
        if not words:
            break
        asked.update(words)
        query = f"{request.question} {' '.join(words)}"
    return found.passages()


# -- with a model ---------------------------------------------------------------------------------
def reason_in_documents(request: StrategyRequest, query: str, hits: list[ScoredChunk]) -> str:
    """Condense one search's passages into notes for the reasoning model (one model call).

    When the notes cannot be had (the endpoint failed, or the reply was cut at its cap twice),
    the reasoning model gets the passages themselves, with a line saying why: the search still
    counts, and nothing is read from a cut reply.
    """
    if not hits:
        return "The search returned no passages."
    blocks = "\n\n".join(
        f"{passage_header(request, p)}\n{p.text.strip()}" for p in map(as_passage, hits)
    )
    messages: list[BaseMessage] = [
        SystemMessage(NOTES_PROMPT),
        HumanMessage(f"Question: {request.question}\nSearch: {query}\n\nResults:\n\n{blocks}"),
    ]
    try:
        notes = request.recorder.ask(request.model, messages)  # type: ignore[arg-type]
    except ModelCallError as exc:
        return f"No notes could be written ({exc.reason}); the passages found:\n\n{blocks}"
    return str(notes.text).strip()


def declared_loop(request: StrategyRequest) -> ToolLoop:
    """The reasoning model's loop over the run's documents (the ``dense`` chunk store)."""
    searcher = PassageSearch(request.catalog, "dense")
    return search_loop(request, searcher, request.scoped_doc_ids())


def search_loop(
    request: StrategyRequest, searcher: PassageSearcher, doc_ids: list[str]
) -> ToolLoop:
    """The reasoning model's loop: one search tool whose results are notes."""
    searches = Searches(request, searcher, doc_ids, notes=True)
    return ToolLoop([searches.tool()], MAX_ROUNDS, REASON_PROMPT)


def run(request: StrategyRequest) -> StrategyOutcome:
    """Search-o1 with a model (its tool loop); the pseudo-relevance-feedback search offline."""
    if request.model is not None:
        return run_tool_loop(request, declared_loop)
    searches = Searches(request, PassageSearch(request.catalog, "dense"), request.scoped_doc_ids())
    outcome = answer_from_passages(request, feedback_search(request, searches))
    return StrategyOutcome(outcome.answer, "answered", OFFLINE_DETAIL)
