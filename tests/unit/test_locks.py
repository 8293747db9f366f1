"""The library's write lock and the readers' mark (store.locks): re-entrant within a process,
exclusive between processes, naming its holder, bounded waits, and gone with a killed holder."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from store.locks import (
    Holder,
    IndexLockedError,
    LibraryBusyError,
    holder,
    index_wanted,
    own_index,
    process_alive,
    unflock,
    waiting_for_index,
    write_lock,
)
from tests.holders import holding


def test_the_lock_is_re_entrant_in_a_process_and_names_its_holder(tmp_path: Path) -> None:
    with write_lock(tmp_path, "vectree ingest", wait_s=0):
        assert holder(tmp_path) == Holder(os.getpid(), "vectree ingest")
        with write_lock(tmp_path, "ingest graph", wait_s=0):  # the same process: no wait
            assert holder(tmp_path) == Holder(os.getpid(), "vectree ingest")
        assert holder(tmp_path) is not None  # still held by the outer block
    assert holder(tmp_path) is None


def test_threads_of_one_process_share_the_lock(tmp_path: Path) -> None:
    entered = threading.Event()
    leave = threading.Event()

    def other_thread() -> None:
        with write_lock(tmp_path, "ingest graph", wait_s=0):
            entered.set()
            leave.wait(5)

    with write_lock(tmp_path, "vectree ingest", wait_s=0):
        thread = threading.Thread(target=other_thread)
        thread.start()
        assert entered.wait(5)
        leave.set()
        thread.join(5)
    assert holder(tmp_path) is None


def test_another_process_waits_then_fails_naming_the_holder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with holding(tmp_path, "write") as process:
        pid = process.pid
        assert holder(tmp_path) == Holder(pid, "vectree ingest")
        started = time.monotonic()
        with (
            caplog.at_level(logging.WARNING, logger="store.locks"),
            pytest.raises(LibraryBusyError) as raised,
            write_lock(tmp_path, "vectree remove", wait_s=0.6),
        ):
            pass
        assert 0.5 < time.monotonic() - started < 5
    message = str(raised.value)
    assert f"`vectree ingest` (pid {pid})" in message and "\n" not in message
    assert [r.getMessage() for r in caplog.records] == [
        f"waiting for `vectree ingest` (pid {pid}), which is writing to {tmp_path.resolve()} "
        "(up to 1 s)…"
    ]


def test_a_waiting_writer_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    with holding(tmp_path, "write"):
        got: list[float] = []

        def wait_for_it() -> None:
            with write_lock(tmp_path, "vectree remove", wait_s=30):
                got.append(time.monotonic())

        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        time.sleep(0.5)
        assert not got  # still waiting while the helper holds it
        released = time.monotonic()
    waiter.join(30)
    assert got and got[0] >= released


def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path) -> None:
    with holding(tmp_path, "write") as process:
        pid = process.pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while process_alive(pid) and time.monotonic() < deadline:
            os.waitpid(pid, os.WNOHANG)
            time.sleep(0.05)
        assert holder(tmp_path) is None  # the file still names it, but it is gone
        with write_lock(tmp_path, "vectree ingest", wait_s=0):
            assert holder(tmp_path) == Holder(os.getpid(), "vectree ingest")


def test_processes_mark_that_they_wait_for_the_index(tmp_path: Path) -> None:
    assert not index_wanted(tmp_path)  # no mark file yet
    with waiting_for_index(tmp_path), waiting_for_index(tmp_path):  # any number wait together
        assert index_wanted(tmp_path)
    assert not index_wanted(tmp_path)


def test_the_index_has_one_owner_and_a_waiter_names_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with holding(tmp_path, "owner") as process:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING), pytest.raises(IndexLockedError) as raised:
            own_index(tmp_path, wait_s=0.5)
        assert time.monotonic() - started >= 0.5
        assert f"held by `vectree serve` (pid {process.pid})" in str(raised.value)
        assert f"waiting for `vectree serve` (pid {process.pid})" in caplog.text
    fd = own_index(tmp_path, wait_s=0)  # the owner is gone: the lock is free at once
    assert holder(tmp_path, ".index.lock") == Holder(
        os.getpid(), holder(tmp_path, ".index.lock").command
    )
    unflock(fd)
    assert holder(tmp_path, ".index.lock") is None


def test_process_alive_tells_live_from_finished_processes() -> None:
    assert process_alive(os.getpid())
    assert not process_alive(0) and not process_alive(-1)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not process_alive(child.pid)
