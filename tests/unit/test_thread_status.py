"""How a recorded run stands (graph.trajectory.checkpoints.run_status): a run that raised is
recorded as failed, with the reason, before the CLI says so in one line; a run left with
pending nodes lists as running while its process lives and as interrupted once it is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graph import nodes
from graph.agent import compile_agent
from graph.api import RunFailedError, ask
from graph.cli import main
from graph.context import AgentContext
from graph.trajectory.checkpoints import (
    OWNER_PID,
    list_threads,
    sqlite_checkpointer,
    thread_values,
)
from store.library import Library

QUESTION = "Which corpus is largest?"


def _failing_prompt(error: BaseException) -> Any:
    def prompt(context: AgentContext) -> str:
        raise error

    return prompt


def _statuses(library: Path) -> dict[str, str]:
    return {t["thread_id"]: t["status"] for t in list_threads(sqlite_checkpointer(library))}


def test_a_run_that_raises_is_recorded_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nodes, "_system_prompt", _failing_prompt(RuntimeError("disk on fire")))
    with pytest.raises(RunFailedError) as raised:
        ask(tmp_path, QUESTION, [], "t-failed", AgentContext(library=str(tmp_path)))
    assert str(raised.value) == "the run failed (thread t-failed): RuntimeError: disk on fire"
    assert _statuses(tmp_path) == {"t-failed": "failed"}
    values = thread_values(sqlite_checkpointer(tmp_path), "t-failed") or {}
    assert values["status_detail"] == "RuntimeError: disk on fire"


def test_the_cli_reports_a_failed_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(nodes, "_system_prompt", _failing_prompt(OSError("no space left")))
    Library(tmp_path).ensure()
    code = main(["--library", str(tmp_path), "ask", QUESTION, "--thread", "t-cli"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err == ["thread t-cli", "error: the run failed (thread t-cli): OSError: no space left"]
    assert main(["--library", str(tmp_path), "threads"]) == 0
    assert "failed" in capsys.readouterr().out


def _unfinished_run(library: Path, thread_id: str, owner: int) -> None:
    """A run stopped mid-graph (prepare raises), recorded under ``owner`` as its process."""
    agent = compile_agent(sqlite_checkpointer(library))
    config: Any = {"configurable": {"thread_id": thread_id}, "metadata": {OWNER_PID: owner}}
    with pytest.raises(RuntimeError):
        for _ in agent.stream(
            {"question": QUESTION}, config, context=AgentContext(library=str(library))
        ):
            pass
    assert agent.get_state(config).next == ("prepare",)


def test_a_pending_run_is_running_while_its_process_lives_and_interrupted_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nodes, "_system_prompt", _failing_prompt(RuntimeError("stop here")))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _unfinished_run(tmp_path, "t-live", owner=os.getpid())
    _unfinished_run(tmp_path, "t-gone", owner=gone.pid)
    assert _statuses(tmp_path) == {"t-live": "running", "t-gone": "interrupted"}
    assert (thread_values(sqlite_checkpointer(tmp_path), "t-gone") or {})["status"] == (
        "interrupted"
    )
