"""Endpoint faults, injected by the local OpenAI-compatible stub (tests/llm_stub.py) and met by
the real langchain-openai client that ``store.chat`` builds: 5xx and 429 (with Retry-After) are
retried with backoff, 400/401/404 are not, timeouts, dropped connections and a refused port are
retried, an endless reply and a server that never answers end at the call's deadline. Each is
checked through the chat model alone and through a whole agent run (status ``failed`` with one
line as ``status_detail``; ``vectree ask`` exits 1 with that line, tracebacks only with -v),
counting the attempts the stub saw and timing the call against the deadline. A malformed
tool-call reply goes back to the model as an instructive error. Small numbers keep it fast."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from graph.agent import compile_agent
from graph.api import ask
from graph.cli import main
from graph.context import AgentContext
from graph.trajectory.checkpoints import sqlite_checkpointer
from store.chat import chat_model
from store.endpoint import EndpointFailed, failure_line
from store.library import Library
from store.settings import LLMSettings
from tests.llm_stub import HUNG_UP, Fault, LLMStub, ToolCalls, message_text

pytestmark = pytest.mark.integration

# The policy under test, set through the environment as a user would set it.
POLICY_ENV = {
    "VECTREE_LLM_TIMEOUT": "0.5",
    "VECTREE_LLM_CONNECT_TIMEOUT": "0.5",
    "VECTREE_LLM_ATTEMPTS": "4",
    "VECTREE_LLM_BACKOFF": "0.05",
    "VECTREE_LLM_BACKOFF_MAX": "0.2",
    "VECTREE_LLM_RETRY_AFTER_MAX": "0.3",
    "VECTREE_LLM_DEADLINE": "2",
}
DEADLINE_S = 2.0
SLACK_S = 0.3  # a call cut at its deadline ends within a stub tick and a socket close of it
AGENT_SLACK_S = 1.0  # plus the run around the call (graph, checkpointer, prompt), warmed up
QUESTION = "What does the library say about expository writing?"
ANSWER = "Nothing in this library is about expository writing."
ALWAYS = 10  # more faults than attempts: the stub fails every request the client makes
NO_TIME_LEFT = "the 2.0 s deadline leaves no time for a retry"


@dataclass(frozen=True)
class Case:
    """One injected fault and what the user must see: the attempts (the stub's request count;
    for a refused port, what the line says) and the one line, as a regular expression."""

    faults: tuple[Fault, ...]
    attempts: int
    line: str
    env: dict[str, str] = field(default_factory=dict)  # the policy's numbers this case changes
    min_s: float = 0.0  # the call must have waited at least this long (Retry-After honoured)
    refused_port: bool = False  # point the client at a port nothing listens on


def failed_after(attempts: int, failure: str, note: str = "") -> str:
    """The line of a call the transport gave up on (``failure`` is a regular expression)."""
    plural = "" if attempts == 1 else "s"
    tail = rf" \({re.escape(note)}\)" if note else ""
    return (
        rf"the model endpoint failed after {attempts} attempt{plural} in [\d.]+ s: {failure}{tail}"
    )


def refused(status: str) -> str:
    """The line of a request the server refused (never retried)."""
    code = status.split()[0]
    return (
        rf"the model endpoint refused the request \(not retried\): {status}: injected fault: {code}"
    )


FAILURES = {
    "503-always": Case((Fault.http(503),) * ALWAYS, 4, failed_after(4, "503 Service Unavailable")),
    "500-always": Case(
        (Fault.http(500),) * ALWAYS, 4, failed_after(4, "500 Internal Server Error")
    ),
    "429-retry-after-capped": Case(
        (Fault.http(429, {"Retry-After": "100"}),) * ALWAYS,
        4,
        failed_after(4, "429 Too Many Requests"),
        min_s=3 * 0.3,  # three waits of the 0.3 s cap, not of the 100 s asked for
    ),
    "429-retry-after-past-deadline": Case(
        (Fault.http(429, {"Retry-After": "5"}),) * ALWAYS,
        1,
        failed_after(1, "429 Too Many Requests", NO_TIME_LEFT),
        env={"VECTREE_LLM_RETRY_AFTER_MAX": "60"},
    ),
    "400": Case((Fault.http(400),), 1, refused("400 Bad Request")),
    "401": Case((Fault.http(401),), 1, refused("401 Unauthorized")),
    "404": Case((Fault.http(404),), 1, refused("404 Not Found")),
    "timeout": Case((Fault.slow(5),) * ALWAYS, 4, failed_after(4, "ReadTimeout: timed out")),
    "never-answers": Case(
        (Fault.slow(30),),
        1,
        failed_after(1, "ReadTimeout: timed out", NO_TIME_LEFT),
        env={"VECTREE_LLM_TIMEOUT": "60"},  # only the deadline can end it
        min_s=DEADLINE_S,
    ),
    "connection-closed": Case(
        (Fault.drop(),) * ALWAYS,
        4,
        failed_after(4, r"RemoteProtocolError: Server disconnected without sending a response\."),
    ),
    "connection-refused": Case(
        (), 4, failed_after(4, r"ConnectError: \[Errno 111\] .*"), refused_port=True
    ),
    "endless-reply": Case(
        (Fault.endless(),) * ALWAYS,
        1,
        failed_after(1, "the reply was still coming at the 2.0 s deadline"),
        min_s=DEADLINE_S,
    ),
    "not-a-completion": Case(
        (Fault.garbage("<html>502 Bad Gateway</html>"),),
        1,
        r"the model call failed: JSONDecodeError: Expecting value: .*",
    ),
}
# Faults a retry gets past: (faults, attempts, least time the call must have taken).
RECOVERIES = {
    "503-then-ok": ((Fault.http(503),) * 2, 3, 0.0),
    "429-retry-after-honoured": ((Fault.http(429, {"Retry-After": "0.25"}),), 2, 0.25),
    "connection-closed-then-ok": ((Fault.drop(),), 2, 0.0),
    "slow-but-in-time": ((Fault.slow(0.2),), 1, 0.2),
}


@pytest.fixture(autouse=True)
def policy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    for name, value in POLICY_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One agent run before the timed ones, so they time the model call, not first imports."""
    library = tmp_path_factory.mktemp("warm") / "library"
    with (
        pytest.MonkeyPatch.context() as env,
        LLMStub(lambda m: "", faults=[Fault.http(401)]) as stub,
    ):
        env.setenv("OPENAI_API_KEY", "test")
        context = AgentContext(library=str(library), model="stub-model", base_url=stub.base_url)
        ask(library, QUESTION, [], "warm", context)


@contextmanager
def endpoint(case: Case, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, LLMStub]]:
    """The case's stub and the URL the client is to use (a closed port when refused)."""
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    with LLMStub(lambda messages: ANSWER, faults=case.faults) as stub:
        yield (closed_port_url() if case.refused_port else stub.base_url), stub
    assert not stub.errors, stub.errors


def closed_port_url() -> str:
    """An endpoint URL on 127.0.0.1 whose port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def stub_model(url: str) -> Any:
    model = chat_model(
        LLMSettings.from_env().model_copy(update={"model": "stub-model", "base_url": url})
    )
    assert model is not None
    return model


def attempts_of(case: Case, stub: LLMStub, line: str) -> int:
    """The attempts the stub saw; for a refused port (no stub reached), what the line says."""
    if case.refused_port:
        return int(re.search(r"after (\d+) attempt", line).group(1))  # type: ignore[union-attr]
    return len(stub.requests)


def timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


# -- the policy's numbers ------------------------------------------------------------------------
def test_policy_comes_from_the_environment() -> None:
    settings = LLMSettings.from_env()
    assert (settings.timeout_s, settings.connect_timeout_s, settings.attempts) == (0.5, 0.5, 4)
    assert (settings.backoff_s, settings.backoff_max_s) == (0.05, 0.2)
    assert (settings.retry_after_max_s, settings.deadline_s) == (0.3, DEADLINE_S)


# -- through the chat model ----------------------------------------------------------------------
@pytest.mark.parametrize("case", FAILURES.values(), ids=FAILURES.keys())
def test_chat_model_fault_ends_with_one_line(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    with endpoint(case, monkeypatch) as (url, stub):
        model = stub_model(url)
        started = time.monotonic()
        with pytest.raises(Exception) as raised:
            model.invoke([HumanMessage(QUESTION)])
        elapsed = time.monotonic() - started
    line = failure_line(raised.value)
    assert re.fullmatch(case.line, line), line
    assert attempts_of(case, stub, line) == case.attempts
    assert case.min_s <= elapsed <= DEADLINE_S + SLACK_S, elapsed


@pytest.mark.parametrize(
    ("faults", "attempts", "min_s"), RECOVERIES.values(), ids=RECOVERIES.keys()
)
def test_chat_model_retries_past_a_transient_fault(
    faults: tuple[Fault, ...], attempts: int, min_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(faults, attempts, "")
    with endpoint(case, monkeypatch) as (url, stub):
        reply, elapsed = timed(lambda: stub_model(url).invoke([HumanMessage(QUESTION)]))
    assert reply.content == ANSWER
    assert len(stub.requests) == attempts
    assert min_s <= elapsed < DEADLINE_S, elapsed


def test_endless_stream_ends_at_the_deadline_and_hangs_up(monkeypatch: pytest.MonkeyPatch) -> None:
    case = FAILURES["endless-reply"]
    with endpoint(case, monkeypatch) as (url, stub):
        chunks: list[str] = []
        started = time.monotonic()
        with pytest.raises(EndpointFailed) as raised:
            for chunk in stub_model(url).stream([HumanMessage(QUESTION)]):
                chunks.append(str(chunk.content))
        elapsed = time.monotonic() - started
        assert stub.endless_endings.get(timeout=2) == HUNG_UP  # the client closed the stream
    assert re.fullmatch(case.line, str(raised.value)), raised.value
    assert "more" in "".join(chunks)  # it was streaming until the deadline cut it
    assert len(stub.requests) == 1
    assert DEADLINE_S <= elapsed <= DEADLINE_S + SLACK_S, elapsed


# -- through an agent run ----------------------------------------------------------------------
@pytest.mark.parametrize("case", FAILURES.values(), ids=FAILURES.keys())
def test_agent_run_fault_fails_with_one_line(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: None
) -> None:
    library = tmp_path / "library"
    with endpoint(case, monkeypatch) as (url, stub):
        context = AgentContext(library=str(library), model="stub-model", base_url=url)
        values, elapsed = timed(lambda: ask(library, QUESTION, [], "fault", context))
    assert values["status"] == "failed"
    assert re.fullmatch(case.line, values["status_detail"]), values["status_detail"]
    assert values["status_detail"] in values["answer"]
    assert values["model_turns"] == 1
    assert attempts_of(case, stub, values["status_detail"]) == case.attempts
    assert case.min_s <= elapsed <= DEADLINE_S + AGENT_SLACK_S, elapsed


def test_streamed_agent_run_ends_an_endless_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: None
) -> None:
    """Streaming the run's messages (as Studio does) makes the model stream its reply too."""
    library = tmp_path / "library"
    case = FAILURES["endless-reply"]
    with endpoint(case, monkeypatch) as (url, stub):
        context = AgentContext(library=str(library), model="stub-model", base_url=url)
        agent = compile_agent(sqlite_checkpointer(library))
        config: Any = {"configurable": {"thread_id": "streamed"}}
        inputs = {"question": QUESTION, "doc_ids": []}

        def run() -> list[Any]:
            return list(agent.stream(inputs, config, context=context, stream_mode="messages"))

        messages, elapsed = timed(run)
        assert stub.endless_endings.get(timeout=2) == HUNG_UP
    values = agent.get_state(config).values
    assert stub.requests[0].body.get("stream") is True
    assert any("more" in str(message.content) for message, _ in messages)
    assert values["status"] == "failed"
    assert re.fullmatch(case.line, values["status_detail"]), values["status_detail"]
    assert DEADLINE_S <= elapsed <= DEADLINE_S + AGENT_SLACK_S, elapsed


def test_agent_run_recovers_from_a_transient_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: None
) -> None:
    library = tmp_path / "library"
    case = Case((Fault.http(503), Fault.drop()), 3, "")
    with endpoint(case, monkeypatch) as (url, stub):
        context = AgentContext(library=str(library), model="stub-model", base_url=url)
        values = ask(library, QUESTION, [], "recovers", context)
    assert (values["status"], values["answer"]) == ("answered", ANSWER)
    # two failed attempts, the answer, then the turn asked again with a tool required (the
    # stub answers without one again)
    assert len(stub.requests) == 4
    assert stub.requests[-1].body.get("tool_choice") == {
        "type": "function",
        "function": {"name": "search_documents"},
    }


def test_malformed_tool_calls_go_back_to_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arguments that are not JSON and a tool that does not exist are answered, not raised (the
    engine answers well-formed calls first, then the unreadable ones)."""

    def responder(messages: list[dict[str, Any]]) -> str | ToolCalls:
        if not any(m["role"] == "tool" for m in messages):
            return ToolCalls([("get_document_tree", '{"doc_id": '), ("summon_oracle", "{}")])
        return ANSWER

    library = tmp_path / "library"
    with LLMStub(responder) as stub:
        context = AgentContext(library=str(library), model="stub-model", base_url=stub.base_url)
        values = ask(library, QUESTION, [], "malformed", context)
    assert not stub.errors, stub.errors
    assert (values["status"], values["answer"]) == ("answered", ANSWER)
    replies = [message_text(m) for m in stub.requests[1].messages if m["role"] == "tool"]
    assert len(replies) == 2
    assert "unknown tool 'summon_oracle'" in replies[0]
    assert "could not read the call" in replies[1] and "\n" not in replies[1]
    assert [(s["tool"], s["ok"]) for s in values["trajectory"]] == [
        ("summon_oracle", False),
        ("get_document_tree", False),
    ]


# -- through the CLI -----------------------------------------------------------------------------
def test_cli_ask_exits_1_with_the_line_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], warm: None
) -> None:
    library = str(Library(tmp_path / "library").ensure().root)  # `ask` reads an existing one
    case = FAILURES["503-always"]
    monkeypatch.setenv("VECTREE_MODEL", "stub-model")

    def vectree_ask(*options: str) -> int:
        with endpoint(case, monkeypatch) as (url, stub):
            monkeypatch.setenv("VECTREE_BASE_URL", url)
            code = main(["--library", library, "ask", QUESTION, *options])
        assert len(stub.requests) == case.attempts
        return code

    assert vectree_ask("--json") == 1
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "failed"
    assert re.fullmatch(case.line, result["status_detail"]), result["status_detail"]

    assert vectree_ask() == 1
    out, err = capsys.readouterr()
    assert re.search(case.line, out)
    warnings = [line for line in err.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and re.search(case.line, warnings[0]), err
    assert "Traceback" not in err

    assert vectree_ask("--verbose") == 1
    assert "Traceback" in capsys.readouterr().err  # the traceback is there at debug level
