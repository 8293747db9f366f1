"""Who may write a library, and when a writer lets readers into the index folder.

*Writers.* Publishing, removing and reconciling change two stores, the library folder and the
index, in steps that are safe only one writer at a time (a second writer's ``reconcile`` would
undo a document the first is half way through publishing). So every writer holds
``LIBRARY/.write.lock`` (an advisory ``fcntl.flock``) for its whole command, taken before it
opens the index for writing. The file names the holder (pid and command), so whoever waits can
say for whom. The lock belongs to the process: the same process takes it again at no cost (a
batch's index node inside the batch, served ingestions in two threads), and the kernel drops it
when the process ends, ``kill -9`` included, so it is never left stale.

*The index.* A Qdrant Edge shard may be open in one process only, and a second process that
merely tries to open a held shard breaks the holder's later flushes. So no process opens the
library's shards without first holding ``LIBRARY/.index.lock`` (exclusive ``flock``; the file
names the holder): that lock, not Qdrant's, decides who owns the index. A process that wants the
index while another owns it holds ``LIBRARY/.index-waiting.lock`` shared while it waits; the
owner sees that between two index operations, closes its shards and lets go
(``store.edge.EdgeClient``), and opens them again, waiting its own turn, on its next operation.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

LOG = logging.getLogger(__name__)
WRITE_LOCK = ".write.lock"
INDEX_LOCK = ".index.lock"
SERVE_LOCK = ".serve.lock"
"""Held by the library's server for its life: one server per library (its run data, thread
list and queue are per server)."""
WAITING_LOCK = ".index-waiting.lock"
POLL_S = 0.2
"""How often a waiting process tries again."""


class LibraryBusyError(RuntimeError):
    """Another process holds what this one needs (the library's write lock, or the local index
    folder) longer than this one waits; the message says who and what to do."""


class IndexLockedError(LibraryBusyError):
    """Another process owns the library's embedded index longer than this one waits."""


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
    command: str


_HELD: dict[Path, _Held] = {}
_HELD_LOCK = threading.Lock()
_NAME: list[str] = []
"""How this process names itself to others (``name_process``)."""


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


def holder(root: Path, lock: str = WRITE_LOCK) -> Holder | None:
    """Who holds a lock (the write lock by default) of the library at ``root``; None when it is
    free, or named by a process that is gone (its lock went with it)."""
    try:
        record = json.loads((root / lock).read_text(encoding="utf-8"))
        found = Holder(int(record["pid"]), str(record["command"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if process_alive(found.pid) else None


def describe_holder(root: Path, lock: str = WRITE_LOCK) -> str:
    """The holder for a message: "`vectree ingest` (pid 1234)", else "another process"."""
    return str(holder(root, lock) or "another process")


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
        fd = try_flock(root / WRITE_LOCK, command)
        if fd is None:
            return False
        _HELD[root] = _Held(fd, 1, command)
        return True


def hold_for_life(path: Path, command: str) -> str | None:
    """Take the lock on ``path`` for the rest of this process and of the program it ``exec``s
    into (the descriptor is inherited, and the kernel lets go when that program ends); None
    once held, else who holds it, for a message."""
    fd = try_flock(path, command)
    if fd is None:
        return describe_holder(path.parent, path.name)
    os.set_inheritable(fd, True)
    return None


def write_depth(root: Path) -> int:
    """How many nested ``write_lock`` blocks of this process hold the library at ``root``."""
    with _HELD_LOCK:
        held = _HELD.get(root.resolve())
        return held.depth if held else 0


def try_flock(path: Path, command: str) -> int | None:
    """Take the exclusive lock on ``path`` without waiting and record who holds it there (on a
    full disk the record is left out: waiters then name "another process", and read commands
    still run); the descriptor (close it to let go), or None when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": command}).encode(), 0)
    except OSError as exc:  # a full disk: the lock holds all the same, unnamed to waiters
        LOG.debug("could not name the holder of %s: %s", path, exc)
    return fd


def unflock(fd: int) -> None:
    """Let go of a lock taken by ``try_flock`` (the record is cleared first)."""
    os.ftruncate(fd, 0)
    os.close(fd)  # closing the descriptor releases the flock


def _release(root: Path) -> None:
    with _HELD_LOCK:
        held = _HELD[root]
        held.depth -= 1
        if held.depth:
            return
        del _HELD[root]
        unflock(held.fd)


def name_process(name: str) -> None:
    """Name this process for others that wait for it ("vectree ask"), instead of its argv."""
    _NAME[:] = [name]


def this_command() -> str:
    """How this process is named to others waiting for it: the command of a write lock it
    holds, else its name (``name_process``), else its command line, shortened."""
    with _HELD_LOCK:
        writing = [held.command for held in _HELD.values()]
    if writing or _NAME:
        return (writing or _NAME)[0]
    words = [Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]
    text = " ".join(words)
    return text if len(text) <= 80 else text[:77] + "…"


@contextmanager
def waiting_for_index(root: Path) -> Iterator[None]:
    """Mark this process as waiting for the library's index for the block (a shared lock, so
    any number of processes wait together; the kernel drops it if the process dies)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / WAITING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def index_wanted(root: Path) -> bool:
    """Whether some process waits for the library's index (the owner asks between operations)."""
    try:
        fd = os.open(root / WAITING_LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def own_index(root: Path, wait_s: float) -> int:
    """Become the owner of the library's index: the descriptor of ``LIBRARY/.index.lock``.

    While another process owns it, this one marks itself waiting (so the owner lets go after
    its current operation), says once whom it waits for, and after ``wait_s`` seconds raises
    IndexLockedError naming the owner. A process that sees others already waiting gives them
    the first turn (one poll), so two processes that both keep working take turns instead of
    one of them starving.
    """
    path = root / INDEX_LOCK
    if index_wanted(root):
        time.sleep(2 * POLL_S)
    fd = try_flock(path, this_command())
    if fd is not None:
        return fd
    deadline = time.monotonic() + wait_s
    with waiting_for_index(root):
        LOG.warning(
            "waiting for %s, which holds the index of %s…", describe_holder(root, INDEX_LOCK), root
        )
        while (fd := try_flock(path, this_command())) is None:
            if time.monotonic() >= deadline:
                raise IndexLockedError(
                    f"the index of {root} is held by {describe_holder(root, INDEX_LOCK)} "
                    f"(waited {wait_s:.0f} s); try again when it finishes, or run a Qdrant "
                    "server (QDRANT_URL)"
                )
            time.sleep(POLL_S)
    return fd
