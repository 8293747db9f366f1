"""Ingestion that must not lose or leak anything: a PDF whose file name is not valid UTF-8 (Linux
names are bytes) is ingested with its source kept exactly, and a batch killed with -9 leaves no
worker running and no staging folder after the next batch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graph.cli.library import demo_corpus
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs
from store.library import Library
from tests.conftest import ROOT, SHARED_DATA

pytestmark = pytest.mark.integration


def test_a_latin1_file_name_is_ingested_and_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    name = os.fsdecode(b"caf\xe9.pdf")
    shutil.copy(sorted(demo_corpus().glob("*.pdf"))[0], folder / name)
    library = tmp_path / "library"
    report = ingest_paths([folder], IngestContext(library=str(library)), progress=False)
    close_catalogs()
    assert [o.status for o in report.outcomes] == ["ingested"], report.outcomes
    records = Library(library).documents()
    assert len(records) == 1 and records[0]["source"] == str(folder / name)


def _children(pid: int) -> set[int]:
    """Live child processes of ``pid`` (from /proc)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found |= {int(child) for child in task.read_text().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_die_with_a_killed_batch_and_the_next_batch_cleans_up(tmp_path: Path) -> None:
    pdfs = [
        SHARED_DATA / "pdfs" / name for name in ("map-reduce.pdf", "dyer12.pdf", "earthmover.pdf")
    ]
    library = tmp_path / "library"
    command = [sys.executable, "-m", "graph.cli", "--library", str(library), "ingest"]
    batch = subprocess.Popen(
        [*command, *map(str, pdfs), "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        workers = {c for c in _children(batch.pid) if "spawn" in _cmdline(c)}
        time.sleep(0.2)
    assert len(workers) >= 2, "the batch never started its workers"
    batch.kill()
    batch.wait(timeout=10)
    # A running worker is killed by the kernel with its parent; one still starting up (the
    # imports take seconds on a loaded machine) exits as soon as its initializer runs.
    gone_by = time.monotonic() + 60
    while [w for w in workers if _alive(w)] and time.monotonic() < gone_by:
        time.sleep(0.2)
    assert not [w for w in workers if _alive(w)]
    finished = subprocess.run([*command, str(pdfs[0])], cwd=ROOT, capture_output=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    staging = library / "staging"
    assert not staging.exists() or not any(staging.iterdir())


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
