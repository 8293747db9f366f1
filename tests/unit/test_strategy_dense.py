"""Dense RAG and dense + rerank over a scripted passage search and a scripted answer model (no
embeddings): what is retrieved, what is disclosed, what the answer call sees."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graph.context import AgentContext
from graph.strategies.base import StrategyRequest
from graph.strategies.dense import (
    NO_CROSS_ENCODER,
    RERANK_POOL,
    TOP_K,
    dense_rag,
    term_coverage,
    token_windows,
)
from store.chunks import Chunk
from store.embeddings import count_tokens
from tools.passages import Method, ScoredChunk
from tools.toolbox import SearchScope

DOC_A, DOC_B = "aaaa1111aaaa1111", "bbbb2222bbbb2222"
LABELS = {DOC_A: (["Ada Lovelace", "Charles Babbage"], 2020), DOC_B: (["Grace Hopper"], 2019)}


class FakeLibrary:
    def metadata(self, doc_id: str) -> dict[str, Any]:
        authors, year = LABELS[doc_id]
        return {"authors": authors, "year": year}


class Script(BaseChatModel):
    """A chat model that replies from a list (or a function of the prompt) and keeps prompts."""

    replies: list[str] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.replies[len(self.seen) - 1]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])

    @property
    def _llm_type(self) -> str:
        return "script"


def chunk(doc_id: str, ordinal: int, *pages: int) -> Chunk:
    """A passage over the given pages whose text names its position."""
    segments = tuple((p, f"Passage {ordinal} of {doc_id[:4]} on page {p}.") for p in pages)
    return Chunk(doc_id, ordinal, segments, tokens=8 * len(pages))


class FakeSearch:
    """Returns the scripted hits (best first) and remembers every call."""

    def __init__(self, hits: Sequence[ScoredChunk]) -> None:
        self.hits = list(hits)
        self.calls: list[tuple[str, list[str], int, str]] = []

    def search(
        self, query: str, doc_ids: list[str], limit: int, method: Method = "hybrid"
    ) -> list[ScoredChunk]:
        self.calls.append((query, doc_ids, limit, method))
        return self.hits[:limit]


def hits(count: int) -> list[ScoredChunk]:
    """``count`` hits alternating between the two documents, each on two pages."""
    out = []
    for i in range(count):
        doc = DOC_A if i % 2 == 0 else DOC_B
        out.append(ScoredChunk(chunk(doc, i, 2 * i + 1, 2 * i + 2), 1.0 - i / 100, None, None))
    return out


def make_request(model: BaseChatModel | None, question: str = "What is studied?") -> Any:
    catalog = SimpleNamespace(library=FakeLibrary())
    context = AgentContext(library="unused", strategy="dense")
    return StrategyRequest(question, SearchScope(), context, catalog, model)  # type: ignore[arg-type]


class ReverseReranker:
    """Scores the later candidates higher, so reranking visibly reverses the order."""

    name = "reverse-test"

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.seen.append((query, list(texts)))
        return [float(i) for i in range(len(texts))]


def test_dense_answers_from_exactly_ten_passages_and_discloses_their_pages() -> None:
    model = Script(replies=["Cats (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."])
    request = make_request(model)
    search = FakeSearch(hits(25))
    outcome = dense_rag(request, search, [DOC_A, DOC_B])
    assert outcome.status == "answered"
    assert outcome.answer.startswith("Cats")
    assert search.calls == [("What is studied?", [DOC_A, DOC_B], TOP_K, "dense")]
    (step,) = request.recorder.steps
    assert (step["layer"], step["tool"], step["ok"]) == (0, "retrieve_passages", True)
    assert step["disclosed"] == {
        DOC_A: [p for i in range(0, 10, 2) for p in (2 * i + 1, 2 * i + 2)],
        DOC_B: [p for i in range(1, 10, 2) for p in (2 * i + 1, 2 * i + 2)],
    }
    prompt = model.seen[0][-1].content
    assert isinstance(prompt, str)
    assert prompt.count("\n[") == TOP_K and "[10]" in prompt and "[11]" not in prompt
    assert "(Lovelace et al., 2020, aaaa1111aaaa1111, p.1-2)" in prompt
    assert request.recorder.pages_read[DOC_A][:2] == [1, 2]


def test_rerank_takes_thirty_candidates_and_keeps_the_ten_best_by_reranker_score() -> None:
    model = Script(replies=["An answer."])
    request = make_request(model)
    search = FakeSearch(hits(40))
    reranker = ReverseReranker()
    outcome = dense_rag(request, search, [DOC_A, DOC_B], reranker)
    assert search.calls[0][2] == RERANK_POOL
    assert len(reranker.seen[0][1]) == RERANK_POOL
    prompt = model.seen[0][-1].content
    assert isinstance(prompt, str)
    # the best ten by the reranker are candidates 29..20, in that order
    order = [int(part.split("Passage ")[1].split()[0]) for part in prompt.split("\n[")[1:]]
    assert order == list(range(29, 19, -1))
    (step,) = request.recorder.steps
    assert step["details"]["reranker"] == "reverse-test"
    assert step["details"]["candidates"] == RERANK_POOL
    assert outcome.status == "answered"
    assert "reverse-test" in outcome.detail and NO_CROSS_ENCODER in outcome.detail
    assert outcome.status.startswith("answered")
    assert sorted(p for pages in step["disclosed"].values() for p in pages) == list(range(41, 61))


def test_a_failed_answer_call_keeps_its_failure_status() -> None:
    class Broken(Script):
        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            raise RuntimeError("endpoint down")

    outcome = dense_rag(make_request(Broken()), FakeSearch(hits(3)), [DOC_A], ReverseReranker())
    assert outcome.status == "failed" and "endpoint down" in outcome.detail


def test_token_windows_cover_the_text_in_pieces_of_at_most_the_window() -> None:
    text = " ".join(f"word{i}" for i in range(300))
    windows = token_windows(text, 50)
    assert len(windows) > 1
    assert " ".join(windows).split() == text.split()
    assert all(count_tokens(w) <= 50 for w in windows)


def test_term_coverage_weights_rare_question_words_higher() -> None:
    texts = ["convolutional network depth", "network training", "network results"]
    coverage = term_coverage("convolutional network", texts)
    assert coverage[0] == 1.0
    assert coverage[1] == coverage[2] < 0.5
