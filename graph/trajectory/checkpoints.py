"""The SQLite checkpointer of ``graph.api.ask`` (and so of the CLI), and reading recorded
threads back from it.

Every step of every run is checkpointed in ``LIBRARY/checkpoints.sqlite``, so a trajectory can
be read after the fact, by thread id, from a new process. A run that never finished (nodes
still pending in its latest checkpoint) reads as ``running`` while its process lives and as
``interrupted`` once it is gone (killed, crashed).
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from graph.trajectory.adherence import layer_adherence
from store.faults import SPACE_MARGIN, NoSpace, free_bytes, writable
from store.library import CHECKPOINT_FILE, DamagedFile
from store.locks import process_alive

LOG = logging.getLogger(__name__)
OWNER_PID = "owner_pid"
"""Run metadata set by ``graph.api.ask``: the pid of the process running the run."""
INTERRUPTED = "interrupted"


def sqlite_checkpointer(library_root: Path) -> SqliteSaver:
    """A checkpointer on the library's SQLite file (created on first use).

    A file SQLite cannot read fails here, before any run starts, as a :class:`DamagedFile`
    naming it (``vectree check --repair`` moves it aside); a full disk says so instead
    (``NoSpace``). A library on a read-only filesystem records its runs in memory only, with a
    warning: its questions are answered, but their threads are not kept.
    """
    path = library_root / CHECKPOINT_FILE
    if library_root.is_dir() and not writable(library_root):
        LOG.warning("%s is read-only: its threads are read, new runs are not kept", library_root)
        copy = sqlite3.connect(":memory:", check_same_thread=False)
        if path.is_file() and sqlite_readable(path):
            with closing(sqlite3.connect(read_only_uri(path), uri=True)) as recorded:
                recorded.backup(copy)
        return _set_up(SqliteSaver(copy), path)
    library_root.mkdir(parents=True, exist_ok=True)
    return _set_up(SqliteSaver(sqlite3.connect(path, check_same_thread=False)), path)


def _set_up(saver: SqliteSaver, path: Path) -> SqliteSaver:
    """Create the checkpoint tables if needed; a failure is told as the disk's or the file's."""
    try:
        saver.setup()
    except sqlite3.DatabaseError as exc:
        saver.conn.close()
        if "disk is full" in str(exc):
            free = free_bytes(path.parent)
            raise NoSpace(path.parent, SPACE_MARGIN, free, "its checkpoints") from None
        raise DamagedFile(path, str(exc)) from None
    return saver


def sqlite_readable(path: Path) -> bool:
    """Whether SQLite can open the file read-only and find its tables."""
    try:
        with closing(sqlite3.connect(read_only_uri(path), uri=True)) as db:
            db.execute("SELECT name FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError:
        return False
    return True


def read_only_uri(path: Path) -> str:
    """A URI opening the file without writing anything (not even a journal: the filesystem
    may be read-only)."""
    return f"{path.resolve().as_uri()}?mode=ro&immutable=1"


def _agent(saver: SqliteSaver) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent graph on ``saver``: it knows which nodes a checkpoint leaves pending."""
    from graph.agent import compile_agent  # the agent loads every strategy: only when needed

    return compile_agent(saver)


def run_status(agent: CompiledStateGraph[Any, Any, Any, Any], item: CheckpointTuple) -> str:
    """How the run of a thread's latest checkpoint stands: its recorded status once no node is
    pending; else ``interrupted`` when the process that ran it is gone, ``running`` while it
    lives or when no owner was recorded (a server's run)."""
    status = str(item.checkpoint.get("channel_values", {}).get("status") or "")
    if not agent.get_state(item.config).next:
        return status
    owner = dict(item.metadata or {}).get(OWNER_PID)
    if isinstance(owner, int) and not process_alive(owner):
        return INTERRUPTED
    return "running"


def thread_values(saver: SqliteSaver, thread_id: str) -> dict[str, Any] | None:
    """The latest state values recorded for a thread, with ``status`` as ``run_status`` tells
    it, or None when there is no such thread."""
    checkpoint = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if checkpoint is None:
        return None
    values = dict(checkpoint.checkpoint.get("channel_values", {}))
    return values | {"status": run_status(_agent(saver), checkpoint)}


def list_threads(saver: SqliteSaver) -> list[dict[str, Any]]:
    """Each recorded thread with its question, last update time, number of tool calls and
    status (``run_status``)."""
    latest: dict[str, CheckpointTuple] = {}
    for item in saver.list(None):
        configurable = item.config["configurable"]
        if not configurable.get("checkpoint_ns"):  # a subgraph's checkpoints are not the run's
            latest.setdefault(configurable["thread_id"], item)  # newest checkpoint first
    agent = _agent(saver)
    threads = []
    for thread_id, item in latest.items():
        values = item.checkpoint.get("channel_values", {})
        threads.append(
            {
                "thread_id": thread_id,
                "question": values.get("question", ""),
                "time": item.checkpoint.get("ts", ""),
                "steps": len(values.get("trajectory", []) or []),
                "status": run_status(agent, item),
            }
        )
    return sorted(threads, key=lambda t: t["time"], reverse=True)


def trace_record(thread_id: str, values: dict[str, Any]) -> dict[str, Any]:
    """The trajectory of a thread in the `vectree trace --json` shape."""
    steps = [
        {
            key: step.get(key)
            for key in ("seq", "layer", "tool", "args", "ok", "payload_tokens", "pages")
        }
        | {"doc_id": step.get("doc_id"), "error": step.get("error")}
        | {key: step[key] for key in ("disclosed", "found") if step.get(key)}
        for step in values.get("trajectory", []) or []
    ]
    return {
        "thread_id": thread_id,
        "question": values.get("question", ""),
        "answer": values.get("answer", ""),
        "citations": values.get("citations", []),
        "status": values.get("status", ""),
        "status_detail": values.get("status_detail", ""),
        "strategy": values.get("strategy", "vectree"),
        "usage": values.get("usage", {}),
        "model_turns": values.get("model_turns", 0),
        "steps": steps,
        "adherence": layer_adherence(steps).as_dict(),
    }
