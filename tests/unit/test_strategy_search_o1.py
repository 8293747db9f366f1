"""Search-o1: the reason → search → notes tool loop with scripted models and a scripted
passage search, and the offline pseudo-relevance-feedback rounds (no embeddings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field, SecretStr

from graph.strategies.base import ANSWER_PROMPT, StrategyOutcome
from graph.strategies.search_o1 import (
    MAX_ROUNDS,
    NOTES_PROMPT,
    REASON_PROMPT,
    SEARCH_TOP,
    Searches,
    feedback_search,
    feedback_words,
    search_loop,
)
from graph.strategies.tool_loop import EXTRA_TURNS, run_tool_loop
from store.chunks import Chunk
from tests.llm_stub import LLMStub, RecordedRequest, ToolCalls
from tests.unit.test_strategy_dense import DOC_A, DOC_B, FakeSearch, hits, make_request
from tools.passages import Method, ScoredChunk


class Router(BaseChatModel):
    """Replies ``notes`` to reason-in-documents calls, ``final`` to an answer call over
    passages, and ``reason(turn)`` to the reasoning model, where ``turn`` counts reasoning
    calls from 1 (a query to search, or the answer text); keeps every prompt."""

    reason: Callable[[int], str | AIMessage]
    notes: str = "Cats were studied (Lovelace et al., 2020, aaaa1111aaaa1111, p.1-2)."
    final: str = "Forced."
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Router:  # type: ignore[override]
        self.bound = list(tools)
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if messages[0].content == NOTES_PROMPT:
            reply: str | AIMessage = self.notes
        elif messages[0].content == ANSWER_PROMPT:
            reply = self.final
        else:
            reply = self.reason(len(self.reasoning_calls()))
        message = reply if isinstance(reply, AIMessage) else AIMessage(reply)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def reasoning_calls(self) -> list[list[BaseMessage]]:
        return [m for m in self.seen if m[0].content == REASON_PROMPT]

    @property
    def _llm_type(self) -> str:
        return "router"


def search_for(query: str) -> AIMessage:
    call = {"name": "search_passages", "args": {"query": query}, "id": "s1", "type": "tool_call"}
    return AIMessage("", tool_calls=[call])


def run_model(
    reason: Callable[[int], str | AIMessage],
) -> tuple[StrategyOutcome, Any, Router, FakeSearch]:
    model = Router(reason=reason)
    request = make_request(model, "What was studied?")
    search = FakeSearch(hits(8))
    outcome = run_tool_loop(request, lambda step: search_loop(step, search, [DOC_A, DOC_B]))
    return outcome, request, model, search


def test_the_loop_stops_at_the_models_answer() -> None:
    script = {1: search_for("cats data"), 2: AIMessage("Cats.")}
    outcome, request, model, search = run_model(lambda turn: script[turn])
    assert (outcome.answer, outcome.status) == ("Cats.", "answered")
    assert search.calls == [("cats data", [DOC_A, DOC_B], SEARCH_TOP, "hybrid")]
    (step,) = request.recorder.steps
    assert (step["layer"], step["tool"], step["args"]) == (
        0,
        "search_passages",
        {"query": "cats data"},
    )
    assert sum(len(p) for p in step["disclosed"].values()) == 2 * SEARCH_TOP
    assert step["details"]["new_passages"] == SEARCH_TOP
    notes_prompt = model.seen[1][-1].content
    assert "Search: cats data" in notes_prompt and "(Lovelace et al., 2020," in notes_prompt
    last = model.seen[-1][-1]
    assert isinstance(last, ToolMessage) and "Cats were studied" in str(last.content)
    assert request.recorder.usage.model_calls == 3


def test_the_search_budget_ends_in_an_answer_over_what_was_found() -> None:
    outcome, request, model, search = run_model(lambda turn: search_for(f"query {turn}"))
    assert (outcome.answer, outcome.status) == ("Forced.", "budget")
    assert len(search.calls) == MAX_ROUNDS
    steps = request.recorder.steps
    assert [s["args"]["query"] for s in steps[:MAX_ROUNDS]] == [
        f"query {n}" for n in range(1, MAX_ROUNDS + 1)
    ]
    assert [s["ok"] for s in steps[MAX_ROUNDS:]] == [False] * EXTRA_TURNS  # refused
    assert "budget (10) is spent" in str(steps[-1]["error"])
    assert model.seen[-1][0].content == ANSWER_PROMPT


def test_a_bad_search_is_refused_with_the_reason_and_counted() -> None:
    script = {1: search_for(""), 2: search_for("cats"), 3: AIMessage("Cats.")}
    outcome, request, _, search = run_model(lambda turn: script[turn])
    assert [s["ok"] for s in request.recorder.steps] == [False, True]
    assert "query: String should have at least 1 character" in str(
        request.recorder.steps[0]["error"]
    )
    assert search.calls == [("cats", [DOC_A, DOC_B], SEARCH_TOP, "hybrid")]
    assert outcome.answer == "Cats."


def test_system_prompt_and_tools_explain_the_protocol() -> None:
    _, _, model, _ = run_model(lambda turn: AIMessage("Done."))
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage) and "search_passages" in str(system.content)
    assert [spec["function"]["name"] for spec in model.bound] == ["search_passages"]


def test_the_loop_runs_against_an_openai_compatible_endpoint() -> None:
    def responder(messages: list[dict[str, Any]]) -> str | ToolCalls:
        if messages[0]["content"] == NOTES_PROMPT:
            return "Cats were studied (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."
        if len(messages) == 2:
            return ToolCalls([("search_passages", '{"query": "what was studied"}')])
        return "Cats (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."

    with LLMStub(responder) as stub:
        model = ChatOpenAI(
            model="stub", base_url=stub.base_url, api_key=SecretStr("test"), max_retries=0
        )
        request = make_request(model, "What was studied?")
        search = FakeSearch(hits(8))
        outcome = run_tool_loop(request, lambda step: search_loop(step, search, [DOC_A, DOC_B]))
    assert outcome.answer == "Cats (Lovelace et al., 2020, aaaa1111aaaa1111, p.1)."
    assert [s["tool"] for s in request.recorder.steps] == ["search_passages"]
    assert request.recorder.usage.model_calls == 3
    assert request.recorder.usage.prompt_tokens > 0 and not request.recorder.usage.estimated
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


def test_notes_cut_at_their_cap_give_the_model_the_passages_instead() -> None:
    """A notes reply cut twice is not read: the search's passages go to the reasoning model,
    with the reason, and the run goes on to its answer."""
    cut = AIMessage("notes " * 50, response_metadata={"finish_reason": "length"})
    model = Router(reason=lambda turn: search_for("cats data") if turn == 1 else AIMessage("Cats."))
    model.notes = cut  # type: ignore[assignment]
    request = make_request(model, "What was studied?")
    search = FakeSearch(hits(8))
    outcome = run_tool_loop(request, lambda step: search_loop(step, search, [DOC_A, DOC_B]))
    assert (outcome.answer, outcome.status) == ("Cats.", "answered")
    result = next(m for m in model.seen[-1] if isinstance(m, ToolMessage))
    assert "No notes could be written (the model's reply was cut at" in str(result.content)
    assert "Search: cats data" not in str(result.content)  # the passages, not the prompt
