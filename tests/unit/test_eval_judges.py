"""LLM judges driven by scripted fake chat models (no network)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from evals.judges import (
    Judge,
    JudgeFailure,
    JudgeResult,
    MalformedReply,
    MosaicScores,
    answer_cosine,
    parse_json_object,
)
from store.chat import JSON_REPAIRS, chat_model
from store.settings import JudgeSettings
from tests.llm_stub import LLMStub


class ScriptedModel(BaseChatModel):
    """Replies from a script in order (an Exception is raised); keeps every request."""

    replies: list[Any]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    report_usage: bool = True

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        reply = self.replies[len(self.calls) - 1]
        if isinstance(reply, Exception):
            raise reply
        usage = {"input_tokens": 100, "output_tokens": 7, "total_tokens": 107}
        message = AIMessage(content=reply, usage_metadata=usage if self.report_usage else None)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "scripted"


def judge(*replies: Any, report_usage: bool = True) -> tuple[Judge, ScriptedModel]:
    model = ScriptedModel(replies=list(replies), report_usage=report_usage)
    return Judge(model), model


def value(result: JudgeResult[Any] | JudgeFailure) -> Any:
    assert isinstance(result, JudgeResult), result
    return result.value


# -- parsing and retries ----------------------------------------------------------------------


def test_good_json_is_parsed_and_usage_recorded() -> None:
    grader, model = judge('{"verdict": "correct", "reason": "same"}')
    result = grader.qasper_correctness("Q?", ["alpha", "Unanswerable"], "alpha")
    assert isinstance(result, JudgeResult)
    assert result.value == "correct"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (100, 7)
    assert result.usage.model_calls == 1
    prompt = str(model.calls[0][-1].content)
    assert "- alpha" in prompt and "- Unanswerable" in prompt


def test_code_fenced_json_with_extra_text_is_parsed() -> None:
    reply = 'Sure.\n```json\n{"verdict": "Partial"}\n```\nHope this helps {not json}.'
    grader, _ = judge(reply)
    assert value(grader.qasper_correctness("Q?", ["a"], "b")) == "partial"


def test_parse_json_object_skips_thinking_and_non_objects() -> None:
    assert parse_json_object('<think>{"verdict": 1}</think> [1] {"a": {"b": 2}}') == {"a": {"b": 2}}
    with pytest.raises(MalformedReply):
        parse_json_object("no object here [1, 2]")


def test_malformed_then_good_is_retried_with_the_reason() -> None:
    grader, model = judge('{"verdict": "maybe"}', '{"verdict": "incorrect"}')
    result = grader.financebench_correctness("Capex?", "$1,577 million", "$2 billion")
    assert value(result) == "incorrect"
    assert isinstance(result, JudgeResult) and result.usage.model_calls == 2
    assert result.usage.prompt_tokens == 200
    retry = model.calls[1]
    assert isinstance(retry[-1], HumanMessage)
    assert '"verdict" must be one of' in str(retry[-1].content)
    assert len(retry) == 4  # system, user, then the failed reply and its correction


def test_malformed_after_the_repair_round_is_a_failure_not_a_score() -> None:
    grader, model = judge("nope", '{"verdict": "unsure"}', '{"verdict": "correct"}')
    result = grader.qasper_correctness("Q?", ["a"], "b")
    assert isinstance(result, JudgeFailure)
    assert "2 attempts" in result.reason and "unsure" in result.reason
    assert result.usage.model_calls == JSON_REPAIRS + 1 == len(model.calls)


def test_an_endpoint_error_is_a_failure() -> None:
    grader, _ = judge(ConnectionError("refused"))
    result = grader.qasper_correctness("Q?", ["a"], "b")
    assert isinstance(result, JudgeFailure)
    assert "ConnectionError" in result.reason and result.usage.model_calls == 0


def test_usage_is_estimated_and_flagged_when_the_model_reports_none() -> None:
    grader, _ = judge('{"verdict": "correct"}', report_usage=False)
    result = grader.financebench_correctness("Q?", "1", "1")
    assert isinstance(result, JudgeResult)
    assert result.usage.estimated and result.usage.model_calls == 1
    assert result.usage.prompt_tokens > 0


def test_generic_fake_chat_model_works_as_a_judge() -> None:
    fake = GenericFakeChatModel(messages=iter([AIMessage(content='{"selected": "c"}')]))
    assert value(Judge(fake).litqa2_option("Q?", ["x", "y", "z"], "I pick z")) == 2


# -- LitQA2 option ----------------------------------------------------------------------------


def test_litqa2_option_reads_letters_and_none() -> None:
    grader, model = judge('{"selected": "(B)"}', '{"selected": "none"}', '{"selected": null}')
    options = ["10%", "20%", "30%"]
    assert value(grader.litqa2_option("Q?", options, "20%")) == 1
    assert value(grader.litqa2_option("Q?", options, "Insufficient information")) is None
    assert value(grader.litqa2_option("Q?", options, "?")) is None
    prompt = str(model.calls[0][-1].content)
    assert "A. 10%\nB. 20%\nC. 30%" in prompt


def test_litqa2_option_out_of_range_letter_is_retried() -> None:
    grader, _ = judge('{"selected": "E"}', '{"selected": "A"}')
    assert value(grader.litqa2_option("Q?", ["x", "y"], "x")) == 0
    grader, _ = judge('{"selected": "E"}', '{"choice": "A"}', '{"selected": "A"}')
    assert isinstance(grader.litqa2_option("Q?", ["x", "y"], "x"), JudgeFailure)


# -- MOSAIC statements ------------------------------------------------------------------------

SPLIT = '{"answer_statements": ["s1", "s2", "s3"], "reference_statements": ["r1", "r2"]}'
MATCH = '{"answer_supported": [true, true, false], "reference_covered": [true, false]}'
FAITHFUL = '{"supported": [true, false, false]}'


def test_mosaic_statements_scores_from_three_judgments() -> None:
    grader, model = judge(SPLIT, MATCH, FAITHFUL)
    scores = value(grader.mosaic_statements("Q?", "ref", "answer", ["page one", "page two"]))
    assert isinstance(scores, MosaicScores)
    # TP 2, FP 1, FN 1: precision 2/3, recall 2/3, F1 2/3; coverage 1/2; faithfulness 1/3
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx(2 / 3)
    assert scores.coverage == 0.5
    assert scores.faithfulness == pytest.approx(1 / 3)
    assert scores.answer_statements == ("s1", "s2", "s3")
    assert "page one\n\n---\n\npage two" in str(model.calls[2][-1].content)


def test_mosaic_without_evidence_read_is_unfaithful_without_asking() -> None:
    grader, model = judge(SPLIT, MATCH)
    scores = value(grader.mosaic_statements("Q?", "ref", "answer", []))
    assert scores.faithfulness == 0.0 and len(model.calls) == 2


def test_mosaic_answer_without_statements() -> None:
    grader, model = judge('{"answer_statements": [], "reference_statements": ["r1"]}')
    scores = value(grader.mosaic_statements("Q?", "ref", "I do not know.", ["text"]))
    assert (scores.precision, scores.recall, scores.f1, scores.coverage) == (None, 0.0, 0.0, 0.0)
    assert scores.faithfulness is None and len(model.calls) == 1


def test_mosaic_wrong_flag_count_is_retried() -> None:
    short = '{"answer_supported": [true], "reference_covered": [true, false]}'
    grader, _ = judge(SPLIT, short, MATCH, FAITHFUL)
    assert value(grader.mosaic_statements("Q?", "ref", "a", ["e"])).coverage == 0.5


def test_mosaic_failure_in_a_later_step_keeps_the_usage() -> None:
    grader, _ = judge(SPLIT, "x", "y", "z")
    result = grader.mosaic_statements("Q?", "ref", "a", ["e"])
    assert isinstance(result, JudgeFailure) and result.usage.model_calls == 3


# -- settings, similarity ---------------------------------------------------------------------


def test_judge_settings_fall_back_to_the_answering_model(monkeypatch: pytest.MonkeyPatch) -> None:
    judge_vars = ("VECTREE_JUDGE_MODEL", "VECTREE_JUDGE_BASE_URL", "VECTREE_JUDGE_API_KEY")
    for name in (*judge_vars, "VECTREE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VECTREE_MODEL", "agent-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert JudgeSettings.from_env() == JudgeSettings("agent-model", "http://127.0.0.1:9/v1", "k")
    monkeypatch.setenv("VECTREE_JUDGE_MODEL", "judge-model")
    monkeypatch.setenv("VECTREE_JUDGE_BASE_URL", "http://127.0.0.1:8/v1")
    settings = JudgeSettings.from_env()
    assert (settings.model, settings.base_url) == ("judge-model", "http://127.0.0.1:8/v1")
    client = chat_model(settings.llm_settings())
    assert client is not None and client.temperature == 0.0  # type: ignore[attr-defined]


def test_judge_settings_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VECTREE_JUDGE_MODEL", raising=False)
    settings = JudgeSettings.from_env()
    assert not settings.configured and chat_model(settings.llm_settings()) is None


def test_answer_cosine_with_an_injected_embedder() -> None:
    vectors = {"answer": [1.0, 0.0], "reference": [1.0, 1.0]}

    def embed(texts: list[str]) -> list[list[float]]:
        return [vectors[t] for t in texts]

    assert answer_cosine("answer", "reference", embed) == pytest.approx(2**-0.5)


def test_judge_through_the_openai_client_against_a_local_stub() -> None:
    with LLMStub(lambda messages: '```json\n{"verdict": "correct"}\n```') as stub:
        client = chat_model(JudgeSettings("stub-judge", stub.base_url, "test").llm_settings())
        assert client is not None
        result = Judge(client).financebench_correctness("Q?", "1", "1")
    assert isinstance(result, JudgeResult) and result.value == "correct"
    assert result.usage.prompt_tokens and result.usage.completion_tokens
    (request,) = stub.requests
    assert request.model == "stub-judge" and request.body.get("temperature") == 0.0
