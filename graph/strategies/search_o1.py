"""Search-o1-style iterative search over flat passages (the ``dense`` chunk store, hybrid).

With a model: the model reasons step by step and asks for a search by writing
``<search>query</search>``; each search returns the top 5 passages; a separate
reason-in-documents call condenses them into short cited notes, which go back to the reasoning
model; it ends by writing ``<answer>…</answer>``. Every model reply is a round, at most 10: a
reply with neither tag is recorded as a failed step, counts as a round and gets a reminder of
the format. When the rounds are used up the model is asked once more for its final answer.

Offline (no model) a deterministic version runs: pseudo-relevance feedback. Round 1 searches
the question; every later round searches the question plus the 5 most frequent content words
(not yet in any query) of the best passage not yet used for feedback. It stops when a round
brings no new passage, or after 10 rounds, and the extractive reader answers from every passage
found. It explores the neighbourhood of the question's best passages, not a plan: it is a
mechanical stand-in for the model's reasoning, labelled as such in the status.

Every search is a layer-0 step disclosing the pages of the passages it returned.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from graph.strategies.base import (
    StrategyOutcome,
    StrategyRequest,
    answer_from_passages,
    passage_header,
    passages_result,
)
from graph.strategies.dense import PassageSearcher, as_passage
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
engine over their passages. Think step by step. To search, write one query as
<search>your query</search> and stop; you will get notes from the results inside <notes>.
You have at most {MAX_ROUNDS} turns. When the notes suffice, write the final answer as
<answer>…</answer>, citing each claim exactly as the notes cite it:
{CITATION_FORMAT}."""
NOTES_PROMPT = f"""Read the search results for the question and write short notes with only the
facts that help answer it, each followed by the citation of its passage header exactly as shown:
{CITATION_FORMAT}. If nothing helps, write: nothing relevant."""
FORMAT_REMINDER = (
    "Write either <search>one query</search> or, if you can answer, <answer>…</answer>."
)
FINAL_PROMPT = "The search budget is spent. Write your final answer now inside <answer>…</answer>."


def tagged(text: str, tag: str) -> str | None:
    """The stripped content of the first ``<tag>…</tag>`` (an unclosed tag runs to the end)."""
    match = re.search(rf"<{tag}>(.*?)(?:</{tag}>|$)", text, re.IGNORECASE | re.DOTALL)
    if match is None:
        return None
    return match.group(1).strip() or None


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
    """The passages of the run's documents that best match a query, hybrid search (layer 0)."""

    layer = 0

    query: str = Field(min_length=1, description="What to search for.")
    round: int = Field(ge=1, le=MAX_ROUNDS, description="The reasoning round asking.")


@dataclass
class Searches:
    """The strategy's one tool, ``search_passages``, run through the tool engine: every round's
    search (or its unreadable request) is budgeted, refused or run, and recorded there."""

    request: StrategyRequest
    searcher: PassageSearcher
    doc_ids: list[str]
    found: Found = field(default_factory=Found)
    last: list[ScoredChunk] = field(default_factory=list)
    new: list[ScoredChunk] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.engine = self.request.engine([Tool(search_passages, self._run)], MAX_ROUNDS)

    def _run(self, query: str, round: int) -> ToolResult:
        self.last = self.searcher.search(query, self.doc_ids, SEARCH_TOP, method="hybrid")
        self.new = self.found.add(self.last)
        passages = [as_passage(h) for h in self.last]
        return passages_result(passages, limit=SEARCH_TOP, new_passages=len(self.new))

    def search(self, query: str, round_no: int) -> bool:
        """One search; False when the engine refused it (``last`` and ``new`` are then empty)."""
        self.last, self.new = [], []
        return self.engine.call("search_passages", {"query": query, "round": round_no}).ok

    def unreadable(self, round_no: int, reply: str) -> None:
        """A round whose reply asked for no search and gave no answer, recorded as refused."""
        why = "the reply had neither <search>…</search> nor <answer>…</answer>"
        self.engine.call("search_passages", {"round": round_no, "reply": reply[:300]}, why)


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
        searches.search(query, round_no)
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
def reason_in_documents(
    request: StrategyRequest, model: BaseChatModel, query: str, hits: list[ScoredChunk]
) -> str:
    """Condense one search's passages into notes for the reasoning model (one model call)."""
    if not hits:
        return "The search returned no passages."
    blocks = "\n\n".join(
        f"{passage_header(request, p)}\n{p.text.strip()}" for p in map(as_passage, hits)
    )
    messages: list[BaseMessage] = [
        SystemMessage(NOTES_PROMPT),
        HumanMessage(f"Question: {request.question}\nSearch: {query}\n\nResults:\n\n{blocks}"),
    ]
    return str(request.recorder.ask(model, messages).text).strip()


def model_search(
    request: StrategyRequest, model: BaseChatModel, searches: Searches
) -> StrategyOutcome:
    """Reason → search → notes rounds until an answer or MAX_ROUNDS, then a forced answer."""
    messages: list[BaseMessage] = [
        SystemMessage(REASON_PROMPT),
        HumanMessage(f"Question: {request.question}"),
    ]
    for round_no in range(1, MAX_ROUNDS + 1):
        reply = str(request.recorder.ask(model, messages).text)
        messages.append(AIMessage(reply))
        answer = tagged(reply, "answer")
        if answer:
            return StrategyOutcome(answer)
        query = tagged(reply, "search")
        if query is None:
            searches.unreadable(round_no, reply)
            messages.append(HumanMessage(FORMAT_REMINDER))
            continue
        searches.search(query, round_no)
        notes = reason_in_documents(request, model, query, searches.last)
        messages.append(HumanMessage(f"<notes>\n{notes}\n</notes>"))
    final = str(request.recorder.ask(model, [*messages, HumanMessage(FINAL_PROMPT)]).text)
    answer = tagged(final, "answer") or re.sub(r"</?\w+>", "", final).strip()
    if not answer:
        return StrategyOutcome("", "failed", "no final answer")
    return StrategyOutcome(answer)


def run(request: StrategyRequest) -> StrategyOutcome:
    """Search-o1 with a model; the pseudo-relevance-feedback search offline."""
    searches = Searches(request, PassageSearch(request.catalog, "dense"), request.scoped_doc_ids())
    if request.model is None:
        outcome = answer_from_passages(request, feedback_search(request, searches))
        return StrategyOutcome(outcome.answer, "answered", OFFLINE_DETAIL)
    try:
        return model_search(request, request.model, searches)
    except ModelCallError as exc:
        return StrategyOutcome(answer="", status="failed", detail=exc.reason)
