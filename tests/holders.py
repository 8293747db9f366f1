"""A helper process holding a library's locks, so contention tests are real (another process
holds them) yet deterministic (the test decides when it lets go).

Modes: ``write`` holds the write lock as `vectree ingest`; ``batch`` also owns the embedded
index between writes, lending it to waiting processes, as an ingest batch does between two
documents; ``owner`` takes the index lock as `vectree serve` and never lets go (a process busy
in one long operation).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

HOLDER = r"""
import sys
from pathlib import Path

root, mode = Path(sys.argv[1]), sys.argv[2]


def hold():
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin


if mode == "owner":
    from store.locks import INDEX_LOCK, try_flock

    assert try_flock(root / INDEX_LOCK, "vectree serve") is not None
    hold()
else:
    from store.catalog import open_catalog

    catalog = open_catalog(root)
    with catalog.writing("vectree ingest"):
        if mode == "batch":
            catalog.index.count()  # owns the index
            hold()
            # Whether a waiting process made the batch let go of the index meanwhile.
            owned = catalog.index.client._lock_fd is not None
            print("kept" if owned else "lent", flush=True)
        else:
            hold()
"""
START_TIMEOUT_S = 60


@dataclass
class HolderProcess:
    """The helper process: its pid, and once the block ends what it said on letting go."""

    pid: int
    last_words: str = ""


@contextmanager
def holding(root: Path, mode: str) -> Iterator[HolderProcess]:
    """Run the helper in ``mode`` on the library at ``root`` for the block."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), mode],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "VECTREE_WRITE_WAIT": "0"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        # The helper never waits (VECTREE_WRITE_WAIT=0): it prints "held" or exits at once.
        assert process.stdout.readline().strip() == "held", "the lock holder did not start"
        holder = HolderProcess(process.pid)
        yield holder
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    holder.last_words = process.stdout.read().strip()
