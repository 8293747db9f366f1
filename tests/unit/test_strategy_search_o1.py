"""Search-o1: the reason → search → notes loop with scripted models and a scripted passage search,
and the offline pseudo-relevance-feedback rounds (no embeddings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field, SecretStr

from graph.strategies.search_o1 import (
    MAX_ROUNDS,
    NOTES_PROMPT,
    SEARCH_TOP,
    Searches,
    feedback_search,
    feedback_words,
    model_search,
    tagged,
)
from store.chunks import Chunk
from tests.llm_stub import LLMStub, RecordedRequest
from tests.unit.test_strategy_dense import DOC_A, DOC_B, FakeSearch, hits, make_request
from tools.passages import Method, ScoredChunk


class Router(BaseChatModel):
    """Replies ``notes`` to reason-in-documents calls and ``reason(turn)`` to the reasoning
    model, where ``turn`` counts reasoning calls from 1; keeps every prompt."""

    reason: Callable[[int], str]
    notes: str = "Cats were studied (Lovelace et al., 2020, aaaa1111aaaa1111, p.1-2)."
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if messages[0].content == NOTES_PROMPT:
            reply = self.notes
        else:
            reply = self.reason(len(self.reasoning_calls()))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])

    def reasoning_calls(self) -> list[list[BaseMessage]]:
        return [m for m in self.seen if m[0].content != NOTES_PROMPT]

    @property
    def _llm_type(self) -> str:
        return "router"


def run_model(reason: Callable[[int], str]) -> tuple[Any, Any, Router, FakeSearch]:
    model = Router(reason=reason)
    request = make_request(model, "What was studied?")
    search = FakeSearch(hits(8))
    return (
        model_search(request, model, Searches(request, search, [DOC_A, DOC_B])),
        request,
        model,
        search,
    )


def test_the_loop_stops_at_the_models_answer() -> None:
    script = {1: "I should look. <search>cats data</search>", 2: "<answer>Cats.</answer>"}
    outcome, request, model, search = run_model(lambda turn: script[turn])
    assert (outcome.answer, outcome.status) == ("Cats.", "answered")
    assert search.calls == [("cats data", [DOC_A, DOC_B], SEARCH_TOP, "hybrid")]
    (step,) = request.recorder.steps
    assert (step["layer"], step["tool"], step["args"]["round"]) == (0, "search_passages", 1)
    assert sum(len(p) for p in step["disclosed"].values()) == 2 * SEARCH_TOP
    notes_prompt = model.seen[1][-1].content
    assert "Search: cats data" in notes_prompt and "(Lovelace et al., 2020," in notes_prompt
    last = model.seen[-1][-1].content
    assert isinstance(last, str) and last.startswith("<notes>") and "Cats were studied" in last
    assert request.recorder.usage.model_calls == 3


def test_the_round_limit_forces_a_final_answer() -> None:
    def reason(turn: int) -> str:
        return "<answer>Forced.</answer>" if turn > MAX_ROUNDS else f"<search>query {turn}</search>"

    outcome, request, model, search = run_model(reason)
    assert outcome.answer == "Forced."
    assert len(search.calls) == MAX_ROUNDS
    assert [s["args"]["query"] for s in request.recorder.steps] == [
        f"query {n}" for n in range(1, MAX_ROUNDS + 1)
    ]
    calls = model.reasoning_calls()
    assert len(calls) == MAX_ROUNDS + 1
    assert "budget is spent" in str(calls[-1][-1].content)
    assert len(model.seen) == 2 * MAX_ROUNDS + 1


def test_malformed_replies_count_as_rounds_and_are_recorded_as_failures() -> None:
    def reason(turn: int) -> str:
        return "Let me think about it without any tags." if turn <= MAX_ROUNDS else "Plain end."

    outcome, request, model, search = run_model(reason)
    assert not search.calls
    steps = request.recorder.steps
    assert len(steps) == MAX_ROUNDS and not any(s["ok"] for s in steps)
    assert "neither <search>" in str(steps[0]["error"])
    assert not request.recorder.pages_read
    assert outcome.answer == "Plain end."
    assert "<search>one query</search>" in str(model.seen[1][-1].content)


def test_tags_are_parsed_leniently() -> None:
    assert tagged("x <SEARCH> cat data </SEARCH> y", "search") == "cat data"
    assert tagged("reasoning <search>unclosed query", "search") == "unclosed query"
    assert tagged("<search>  </search>", "search") is None
    assert tagged("no tags here", "answer") is None
    assert tagged("<search>a</search><search>b</search>", "search") == "a"


def test_system_prompt_explains_the_protocol() -> None:
    _, _, model, _ = run_model(lambda turn: "<answer>Done.</answer>")
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    assert "<search>" in str(system.content) and "<answer>" in str(system.content)


def test_the_loop_runs_against_an_openai_compatible_endpoint() -> None:
    def responder(messages: list[dict[str, Any]]) -> str:
        if messages[0]["content"] == NOTES_PROMPT:
            return "Cats were studied (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."
        if len(messages) == 2:
            return "First I search. <search>what was studied</search>"
        return "<answer>Cats (Lovelace et al., 2020, aaaa1111aaaa1111, p.1).</answer>"

    with LLMStub(responder) as stub:
        model = ChatOpenAI(
            model="stub", base_url=stub.base_url, api_key=SecretStr("test"), max_retries=0
        )
        request = make_request(model, "What was studied?")
        outcome = model_search(
            request, model, Searches(request, FakeSearch(hits(8)), [DOC_A, DOC_B])
        )
    assert outcome.answer == "Cats (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."
    assert [s["tool"] for s in request.recorder.steps] == ["search_passages"]
    assert request.recorder.usage.model_calls == 3
    notes_calls: list[RecordedRequest] = stub.requests_with_system(NOTES_PROMPT)
    assert len(notes_calls) == 1


# -- offline ----------------------------------------------------------------------------------
def text_chunk(doc_id: str, ordinal: int, text: str) -> ScoredChunk:
    return ScoredChunk(Chunk(doc_id, ordinal, ((ordinal + 1, text),), tokens=20), 1.0, None, None)


class WordSearch:
    """Returns the passages containing the query's last word (or the first two for the plain
    question), so each feedback query finds what its new words point at."""

    def __init__(self, passages: list[ScoredChunk], question: str) -> None:
        self.passages = passages
        self.question = question
        self.queries: list[str] = []

    def search(
        self, query: str, doc_ids: list[str], limit: int, method: Method = "hybrid"
    ) -> list[ScoredChunk]:
        self.queries.append(query)
        if query == self.question:
            return self.passages[:2]
        last = query.split()[-1]
        return [p for p in self.passages if last in p.chunk.text.split()][:limit]


def test_offline_rounds_search_the_question_then_feedback_words_until_nothing_new() -> None:
    question = "Which cameras photographed the cats?"
    passages = [
        text_chunk(DOC_A, 0, "cats cats lenses lenses lenses tripods"),
        text_chunk(DOC_A, 1, "cats photographed outdoors"),
        text_chunk(DOC_B, 2, "tripods were aluminium lenses"),
        text_chunk(DOC_B, 3, "unrelated text"),
    ]
    search = WordSearch(passages, question)
    request = make_request(None, question)
    found = feedback_search(request, Searches(request, search, [DOC_A, DOC_B]))
    assert search.queries[0] == question
    assert search.queries[1] == f"{question} lenses tripods"
    assert [p.segments[0][0] for p in found] == [1, 2, 3]
    steps = request.recorder.steps
    assert [s["details"]["new_passages"] for s in steps] == [2, 1, 0]
    assert all(s["layer"] == 0 and s["tool"] == "search_passages" for s in steps)


def test_offline_rounds_stop_after_the_round_limit() -> None:
    class Endless:
        def __init__(self) -> None:
            self.calls = 0

        def search(
            self, query: str, doc_ids: list[str], limit: int, method: Method = "hybrid"
        ) -> list[ScoredChunk]:
            self.calls += 1
            return [
                text_chunk(DOC_A, 10 * self.calls + i, f"word{self.calls}x{i} alpha{i}")
                for i in range(2)
            ]

    search = Endless()
    found = feedback_search(request := make_request(None), Searches(request, search, [DOC_A]))
    assert search.calls == MAX_ROUNDS
    assert len(found) == 2 * MAX_ROUNDS


def test_feedback_words_are_new_frequent_content_words() -> None:
    text = "The network network network uses dropout dropout and layers 2019 2019 2019."
    assert feedback_words(text, {"layers"}, 3) == ["network", "dropout", "uses"]
