"""A run's input and context are checked once: one clear line for what cannot run, and on the
server the library, endpoint and model are the operator's, not the caller's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.agent import compile_agent
from graph.context import AgentContext, ServedAgentContext
from graph.inputs import InvalidInput, checked_request
from tests.unit.test_agent_graph import (
    DOC,
    ScriptedChatModel,
    library,  # noqa: F401  (fixture)
)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"question": ""}, "question: the question is empty"),
        ({"question": " \n\t "}, "question: the question is empty"),
        ({"question": "why? " * 40_000}, "question: the question is longer than 4000 characters"),
        ({}, "question: Field required"),
        ({"question": "q", "doc_ids": DOC}, "doc_ids: doc_ids must be a list of document ids"),
        ({"question": "q", "doc_ids": [1, 2]}, "doc_ids: 1 is not a document id"),
        ({"question": "q", "doc_ids": ["../../x"]}, "'../../x' is not a document id"),
        ({"question": "q", "doc_ids": ["/tmp/x"]}, "'/tmp/x' is not a document id"),
        ({"question": "q", "filters": {"year": "abc"}}, "filters.year: Input should be a valid"),
        ({"question": "q", "filters": {"year": [2020]}}, "filters.year: Input should be a valid"),
        ({"question": "q", "filters": {"venue": "x"}}, "filters.venue: is not a known field"),
        ({"question": "q", "filters": "2020"}, "filters: Input should be a valid dictionary"),
    ],
)
def test_input_that_cannot_run_is_refused_in_one_line(
    values: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        checked_request(values)
    message = str(refused.value)
    assert message.startswith("invalid input: ") and expected in message
    assert "\n" not in message and "Traceback" not in message


def test_good_input_is_normalised_and_a_year_becomes_a_range() -> None:
    request = checked_request(
        {"question": "  What failed?  ", "doc_ids": [DOC], "filters": {"year": 2021}}
    )
    assert (request.question, request.doc_ids) == ("What failed?", [DOC])
    assert request.filters.scope() == {"year_min": 2021, "year_max": 2021}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("max_tool_calls", -1, "context.max_tool_calls: must be from 1 to 100, got -1"),
        ("max_model_turns", 10_000, "context.max_model_turns: must be from 1 to 100"),
        ("page_cap", "ten", "context.page_cap: must be a whole number, got 'ten'"),
        ("top_k", True, "context.top_k: must be a whole number"),
        ("temperature", "hot", "context.temperature: must be a number"),
        ("gates", "yes", "context.gates: must be true or false"),
    ],
)
def test_a_context_outside_its_caps_is_refused_in_one_line(
    field: str, value: Any, expected: str
) -> None:
    with pytest.raises(ValueError, match="^" + expected.replace("(", r"\(")):
        AgentContext(**{field: value})


def test_a_refused_question_ends_the_run_before_any_model_or_tool_call(
    library: Path,  # noqa: F811
) -> None:
    model = ScriptedChatModel(script=[], seen=[])
    graph = compile_agent(model_factory=lambda _context: model)
    final = graph.invoke(
        {"question": "   ", "doc_ids": ["../../etc"]},
        context=AgentContext(library=str(library)),
    )
    assert final["status"] == "invalid"
    assert (
        final["answer"]
        == "Not run: invalid input: question: the question is empty (and 1 more problem(s))."
    )
    assert model.seen == [] and not final.get("trajectory")


def test_the_server_keeps_its_own_library_and_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VECTREE_HOME", str(tmp_path / "served"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VECTREE_MODEL", "house-model")
    monkeypatch.setenv("VECTREE_SERVER_MODELS", "small-model, big-model")
    context = ServedAgentContext(
        library="/elsewhere/library", base_url="http://attacker.example/v1", model="big-model"
    )
    assert context.library == str((tmp_path / "served").resolve())
    assert context.base_url == "http://127.0.0.1:9/v1"
    assert context.model == "big-model"
    assert ServedAgentContext(model="").model == ""  # the offline reader is always allowed
    with pytest.raises(
        ValueError,
        match="'gpt-x' is not offered by this server; choose one of: "
        "house-model, small-model, big-model",
    ):
        ServedAgentContext(model="gpt-x")


def test_a_server_without_a_model_offers_none(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VECTREE_MODEL", "VECTREE_SERVER_MODELS", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="none \\(this server runs offline\\)"):
        ServedAgentContext(model="gpt-x")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ask", "   "], "invalid input: question: the question is empty"),
        (["ask", "why? " * 1000], "the question is longer than 4000 characters"),
        (["ask", "What failed?", "--doc", "../../x"], "'../../x' is not a document id"),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line_or_one_json_error(
    library: Path,  # noqa: F811
    argv: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graph.cli import main

    assert main(["--library", str(library), *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0]
    assert main(["--library", str(library), *argv, "--json"]) == 1
    out = capsys.readouterr().out
    assert expected in json.loads(out)["error"]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("../../other/docs/" + DOC, "is not a document id"),
        ("/other/library/docs/" + DOC, "is not a document id"),
        ("0", "'0' is too short to name a document"),
        ("01234", "too short"),
        ("fedcba98", "no single document starts with 'fedcba98'"),
    ],
)
def test_remove_and_tree_name_documents_only_by_id_or_a_long_prefix(
    library: Path,  # noqa: F811
    target: str,
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graph.cli import main

    for command in ("remove", "tree"):
        assert main(["--library", str(library), command, target]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and expected in err and "\n" not in err
    assert (library / "docs" / DOC / "document.json").is_file()  # nothing was removed
    assert main(["--library", str(library), "tree", DOC[:6], "--json"]) == 0


def test_the_cli_names_a_refused_setting_in_one_line(
    library: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graph.cli import main

    monkeypatch.setenv("VECTREE_COLLECTION", "../../elsewhere")
    assert main(["--library", str(library), "search", "parsing"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: VECTREE_COLLECTION") and "\n" not in err
    assert not (library.parent / "elsewhere").exists()
