"""Who may write a library, and when a writer lets readers into the index folder.

*Writers.* Publishing, removing and reconciling change two stores, the library folder and the
index, in steps that are safe only one writer at a time (a second writer's ``reconcile`` would
undo a document the first is half way through publishing). So every writer holds
``LIBRARY/.write.lock`` (an advisory ``fcntl.flock``) for its whole command, taken before it
opens the index for writing. The file names the holder (pid and command), so whoever waits can
say for whom. The lock belongs to the process: the same process takes it again at no cost (a
batch's index node inside the batch, served ingestions in two threads), and the kernel drops it
when the process ends, ``kill -9`` included, so it is never left stale.

*Readers.* Qdrant local mode admits one client per folder. A reader waiting for the index
folder holds ``LIBRARY/.readers.lock`` shared while it waits; a writer that keeps the folder open
between writes (an ingest batch) sees that and lets go between two writes
(``StructuralIndex.lending_to_readers``), so the reader loads its snapshot and answers.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

LOG = logging.getLogger(__name__)
WRITE_LOCK = ".write.lock"
READERS_LOCK = ".readers.lock"
POLL_S = 0.2
"""How often a waiting process tries again."""


class LibraryBusyError(RuntimeError):
    """Another process holds what this one needs (the library's write lock, or the local index
    folder) longer than this one waits; the message says who and what to do."""


@dataclass(frozen=True)
class Holder:
    """The live process holding a library's write lock, as the lock file names it."""

    pid: int
    command: str

    def __str__(self) -> str:
        return f"`{self.command}` (pid {self.pid})"


@dataclass
class _Held:
    fd: int
    depth: int


_HELD: dict[Path, _Held] = {}
_HELD_LOCK = threading.Lock()


def process_alive(pid: int) -> bool:
    """Whether a process with this pid runs (a pid recorded by a writer or a run whose process
    may have been killed)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holder(root: Path) -> Holder | None:
    """Who holds the write lock of the library at ``root``; None when it is free, or named by
    a process that is gone (its lock went with it)."""
    try:
        record = json.loads((root / WRITE_LOCK).read_text(encoding="utf-8"))
        found = Holder(int(record["pid"]), str(record["command"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if process_alive(found.pid) else None


def describe_holder(root: Path) -> str:
    """The holder for a message: "`vectree ingest` (pid 1234)", else "another process"."""
    return str(holder(root) or "another process")


@contextmanager
def write_lock(root: Path, command: str, wait_s: float) -> Iterator[None]:
    """Hold the write lock of the library at ``root`` for the block, recorded as ``command``.

    While another process holds it, wait up to ``wait_s`` seconds (saying so once, as a
    warning), then raise LibraryBusyError naming the holder: nothing has been touched by then.
    """
    root = root.resolve()
    _acquire(root, command, wait_s)
    try:
        yield
    finally:
        _release(root)


def _acquire(root: Path, command: str, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    told = False
    while not _try_acquire(root, command):
        if time.monotonic() >= deadline:
            raise LibraryBusyError(
                f"{root} is being written by {describe_holder(root)}; waited {wait_s:.0f} s "
                "(VECTREE_WRITE_WAIT): try again when it finishes"
            )
        if not told:
            LOG.warning(
                "waiting for %s, which is writing to %s (up to %.0f s)…",
                describe_holder(root),
                root,
                wait_s,
            )
            told = True
        time.sleep(POLL_S)


def _try_acquire(root: Path, command: str) -> bool:
    """Take the lock if this process holds it already or nobody does, without waiting."""
    with _HELD_LOCK:
        held = _HELD.get(root)
        if held is not None:
            held.depth += 1
            return True
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / WRITE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": command}).encode(), 0)
        _HELD[root] = _Held(fd, 1)
        return True


def _release(root: Path) -> None:
    with _HELD_LOCK:
        held = _HELD[root]
        held.depth -= 1
        if held.depth:
            return
        del _HELD[root]
        os.ftruncate(held.fd, 0)
        os.close(held.fd)  # closing the descriptor releases the flock


@contextmanager
def waiting_reader(root: Path) -> Iterator[None]:
    """Mark this process as waiting for the library's index folder for the block (a shared
    lock, so any number of readers wait together; the kernel drops it if the process dies)."""
    fd = os.open(root / READERS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def readers_waiting(root: Path) -> bool:
    """Whether some process (this one included) waits for the library's index folder."""
    try:
        fd = os.open(root / READERS_LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
