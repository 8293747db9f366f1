"""Opening an index shard in a child process first, to learn whether it can be read at all.

A damaged shard does not always raise: a garbled id mapping makes the engine ask for a
hundred gigabytes and abort the whole process (SIGABRT, a Rust backtrace), which no ``except``
catches. So a shard this process has not seen closed cleanly (``store.edge`` keeps a stamp of
its files after each clean close) is opened, read through and closed by a child first
(``python -m store.shard_probe SHARD``, about 0.1 s for a small library); the parent opens it
only if the child could. ``vectree check`` probes every shard this way.

The child is started while the parent owns the index and has the shard closed, so it never
opens a shard another process holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from store.faults import one_line
from store.library import read_json

META_FILE = "vectree-collection.json"
"""Written last when a collection is created, so a folder without it is a creation cut short."""
PROBE_TIMEOUT_S = 600.0
"""A child reading a shard for longer than this is taken for a shard it cannot read."""
SCROLL_PAGE = 1024


def shard_config(meta: dict[str, Any], threads: int) -> edge.EdgeConfig:
    """A shard's configuration as created (``META_FILE``), with a search thread bound."""
    return edge.EdgeConfig(
        vectors={
            vector: edge.EdgeVectorParams(size=int(size), distance=edge.Distance.Cosine)
            for vector, size in meta["dense"].items()
        },
        sparse_vectors={
            vector: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)
            for vector in meta["sparse"]
        },
        max_search_threads=threads,
    )


def read_through(shard_folder: Path) -> int:
    """Open a shard, read every point with its payload and vectors, close it; the number of
    points. Raises whatever the engine raises."""
    config = shard_config(read_json(shard_folder / META_FILE), 1)
    shard = edge.EdgeShard.load(str(shard_folder), config)
    try:
        points, offset = 0, None
        while True:
            request = edge.ScrollRequest(
                offset=offset, limit=SCROLL_PAGE, filter=None, with_payload=True, with_vector=True
            )
            records, offset = shard.scroll(request)
            points += len(records)
            if offset is None:
                return points
    finally:
        shard.close()


def probe(shard_folder: Path, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why a shard cannot be read, in one line, or None when a child process read it
    through."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "store.shard_probe", str(shard_folder)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            cwd=Path(__file__).resolve().parent.parent,
        )
    except subprocess.TimeoutExpired:
        return f"reading it took more than {timeout_s:.0f} s"
    if done.returncode == 0:
        return None
    return _child_problem(done.returncode, done.stderr)


def _child_problem(code: int, stderr: str) -> str:
    """The child's last error line (the exception) or, when it died of a signal, its first
    line (a Rust abort prints its cause first, then a backtrace)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if code > 0:
        last = lines[-1] if lines else f"exit status {code}"
        return one_line(last.removeprefix("Exception: "))
    cause = lines[0] if lines else "no message"
    return f"the engine aborted (signal {-code}): {cause}"


def main(argv: list[str]) -> int:
    """``python -m store.shard_probe SHARD``: exit 0 once the shard was read through."""
    try:
        read_through(Path(argv[0]))
    except Exception as exc:  # the engine raises plain Exception; report it as one line
        print(f"{type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
