"""Several `vectree` processes on one library: readers answer while an ingest holds the index,
a second writer waits and then says who holds the library (exit 1, one line), a removal is
never left half done, and a run killed with -9 lists as interrupted.

The holding process is a helper the test controls (``tests.holders``), so each case is
deterministic; one test runs a real ingest and real readers and writers at the same time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.cli import main
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from tests.conftest import PDF_DIR, ROOT, SHARED_DATA, require_shared_data
from tests.holders import holding

pytestmark = pytest.mark.integration

SMALL = ["bohnet09.pdf", "mooney05.pdf"]
BATCH = [
    "bohnet09.pdf",
    "mooney05.pdf",
    "P07-1088.pdf",
    "dyer12.pdf",
    "agarwal11.pdf",
    "P14-1059.pdf",
    "bunescu-acl07.pdf",
    "map-reduce.pdf",
    "2020.acl-main.447.pdf",
    "2304.02623v1.pdf",
    "four-lectures.pdf",
]
FILINGS = ["MICROSOFT_2023_10K.pdf", "NIKE_2023_10K.pdf"]
"""Long filings added to the batch, so it still runs well after its first document is visible
(the papers alone take about twenty seconds)."""
QUESTION = "What does the semantic parser SCISSOR integrate?"
CLI_TIMEOUT_S = 180
INDEX_WAIT_S = 10


def vectree(
    library: Path, *args: str, wait: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in its own process (``wait``: its VECTREE_WRITE_WAIT)."""
    return subprocess.run(
        _command(library, *args),
        cwd=ROOT,
        env=_env(wait),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


def all_at_once(
    library: Path, commands: list[tuple[tuple[str, ...], float | None]]
) -> list[subprocess.CompletedProcess[str]]:
    """Run CLI commands (arguments, VECTREE_WRITE_WAIT) in parallel processes; their results."""
    running = [
        subprocess.Popen(
            _command(library, *args),
            cwd=ROOT,
            env=_env(wait),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args, wait in commands
    ]
    results = []
    for process in running:
        out, err = process.communicate(timeout=CLI_TIMEOUT_S)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return results


def _command(library: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "graph.cli", "--library", str(library), *args]


def _env(wait: float | None) -> dict[str, str]:
    extra = {} if wait is None else {"VECTREE_WRITE_WAIT": str(wait)}
    return {**os.environ, "PYTHONPATH": str(ROOT), "VECTREE_INDEX_WAIT": str(INDEX_WAIT_S), **extra}


def start(library: Path, log: Path, *args: str, wait: float | None = None) -> subprocess.Popen[str]:
    """Start the CLI in the background, its stderr written to ``log``."""
    with log.open("w") as err:
        return subprocess.Popen(
            _command(library, *args),
            cwd=ROOT,
            env=_env(wait),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )


def wait_for_text(log: Path, text: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        time.sleep(0.1)
    pytest.fail(f"{text!r} never appeared in {log}:\n{log.read_text()[-2000:]}")


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The error a failed command printed: one line, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def points(library: Path, doc_id: str) -> int:
    """The document's points in the index, committed or not."""
    try:
        return open_catalog(library).index.count(doc_id, committed_only=False)
    finally:
        close_catalogs()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()
    folder = tmp_path_factory.mktemp("contention")
    library = folder / "library"
    assert main(["--library", str(library), "ingest", *(str(PDF_DIR / n) for n in SMALL)]) == 0
    close_catalogs()
    return library


@pytest.fixture
def library(built: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the two-document library (tests remove documents)."""
    copy = tmp_path / "library"
    shutil.copytree(built, copy)
    yield copy
    close_catalogs()


def _doc_ids(library: Path) -> list[str]:
    return [r["doc_id"] for r in Library(library).documents()]


def test_readers_answer_while_a_batch_holds_the_index(library: Path) -> None:
    with holding(library, "batch") as holder:
        asked = vectree(library, "ask", QUESTION, "--json")
        searched = vectree(library, "search", "semantic parser", "--json")
        listed = vectree(library, "docs", "--json")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["status"] == "answered" and answer["citations"]
    # The batch let go of the index for the readers (holding it, it would have kept them out).
    assert holder.last_words == "lent"
    # A reader that finds the index still owned says whom it waits for (it may also find it
    # already lent: then nothing to say).
    waiting = f"waiting for `vectree ingest` (pid {holder.pid}), which holds the index of {library}"
    assert asked.stderr.strip() in ("", f"WARNING store.locks: {waiting}…"), asked.stderr
    assert searched.returncode == 0 and json.loads(searched.stdout)["results"], searched.stderr
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == len(SMALL)


def test_a_second_writer_waits_then_says_who_holds_the_library(library: Path) -> None:
    doc_id = _doc_ids(library)[0]
    before = points(library, doc_id)
    with holding(library, "write") as process:
        ingest = vectree(library, "ingest", str(PDF_DIR / "dyer12.pdf"), wait=1)
        removal = vectree(library, "remove", doc_id, wait=1)
        as_json = vectree(library, "remove", doc_id, "--json", wait=0)
    holder = f"`vectree ingest` (pid {process.pid})"
    for result in (ingest, removal):
        assert result.returncode == 1
        assert f"waiting for {holder}, which is writing to {library}" in result.stderr
        assert one_error_line(result) == (
            f"error: {library} is being written by {holder}; waited 1 s (VECTREE_WRITE_WAIT): "
            "try again when it finishes"
        )
    assert as_json.returncode == 1 and holder in json.loads(as_json.stdout)["error"]
    # Nothing was touched: the document is listed, searchable, not in the trash.
    assert doc_id in _doc_ids(library) and Library(library).trashed() == []
    assert points(library, doc_id) == before > 0
    assert len(_doc_ids(library)) == len(SMALL)


def test_remove_waits_for_the_writer_then_removes_completely(library: Path, tmp_path: Path) -> None:
    doc_id = _doc_ids(library)[0]
    log = tmp_path / "remove.err"
    with holding(library, "write"):
        removal = start(library, log, "remove", doc_id, "--json", wait=120)
        wait_for_text(log, "waiting for `vectree ingest`")
        assert removal.poll() is None  # waits while the library is held
    out, _ = removal.communicate(timeout=CLI_TIMEOUT_S)
    assert removal.returncode == 0, log.read_text()
    assert json.loads(out) == {"removed": doc_id}
    assert doc_id not in _doc_ids(library) and Library(library).trashed() == []
    assert points(library, doc_id) == 0


def test_removing_again_finishes_an_interrupted_removal(library: Path) -> None:
    doc_id = _doc_ids(library)[0]
    Library(library).hide(doc_id)  # a removal cut short: folder in the trash, points left
    assert points(library, doc_id) > 0
    removal = vectree(library, "remove", doc_id[:8])
    assert removal.returncode == 0, removal.stderr
    assert removal.stdout.strip() == f"removed {doc_id}"
    assert Library(library).trashed() == [] and points(library, doc_id) == 0
    again = vectree(library, "remove", doc_id)
    assert again.returncode == 1 and "no single document" in one_error_line(again)


def test_the_served_ingest_graph_respects_the_write_lock(
    library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ingest.context import ServedIngestContext
    from ingest.graph import graph as served_ingest

    monkeypatch.setenv("VECTREE_HOME", str(library))
    monkeypatch.setenv("VECTREE_WRITE_WAIT", "0.5")
    (library / "inbox").mkdir()
    shutil.copy(PDF_DIR / "dyer12.pdf", library / "inbox" / "dyer12.pdf")
    with holding(library, "write") as process:
        refused = served_ingest.invoke({"source": "dyer12.pdf"}, context=ServedIngestContext())
    assert refused["status"] == "failed"
    assert f"is being written by `vectree ingest` (pid {process.pid})" in refused["error"]
    assert len(_doc_ids(library)) == len(SMALL) and not any((library / "staging").iterdir())
    done = served_ingest.invoke({"source": "dyer12.pdf"}, context=ServedIngestContext())
    assert done["status"] == "ingested" and len(_doc_ids(library)) == len(SMALL) + 1


def _thread(library: Path, thread_id: str) -> dict[str, Any]:
    listed = vectree(library, "threads", "--json")
    assert listed.returncode == 0, listed.stderr
    return next(t for t in json.loads(listed.stdout) if t["thread_id"] == thread_id)


def test_an_ask_killed_mid_run_lists_as_interrupted(library: Path, tmp_path: Path) -> None:
    log = tmp_path / "ask.err"
    with holding(library, "owner"):  # the ask waits inside its run, so -9 lands mid-graph
        asking = start(library, log, "ask", QUESTION, "--thread", "killed")
        wait_for_text(log, "waiting for")
        os.killpg(asking.pid, signal.SIGKILL)
        asking.wait(timeout=30)
    assert _thread(library, "killed")["status"] == "interrupted"
    trace = vectree(library, "trace", "killed", "--json")
    assert trace.returncode == 0 and json.loads(trace.stdout)["status"] == "interrupted"


def test_an_ask_that_cannot_reach_the_index_fails_in_one_line_and_is_recorded(
    library: Path,
) -> None:
    with holding(library, "owner"):  # a process that never lets go of the index
        asked = vectree(library, "ask", QUESTION, "--thread", "blocked")
    assert asked.returncode == 1
    line = one_error_line(asked)
    assert line.startswith("error: the run failed (thread blocked): IndexLockedError: the index")
    assert "is held by `vectree serve` (pid" in line and "(waited 10 s)" in line
    assert _thread(library, "blocked")["status"] == "failed"
    trace = json.loads(vectree(library, "trace", "blocked", "--json").stdout)
    assert trace["status_detail"].startswith(f"IndexLockedError: the index of {library}")


def test_a_real_ingest_with_readers_and_writers_at_the_same_time(tmp_path: Path) -> None:
    require_shared_data()
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for name in BATCH:
        shutil.copy(PDF_DIR / name, folder / name)
    for name in FILINGS:
        shutil.copy(SHARED_DATA / "financebench" / "pdfs" / name, folder / name)
    library = tmp_path / "library"
    log = tmp_path / "ingest.err"
    # One worker: the batch then lasts long enough for everything below to happen meanwhile.
    ingest = start(library, log, "ingest", str(folder), "--workers", "1", "--json")
    try:
        docs = library / "docs"
        deadline = time.monotonic() + CLI_TIMEOUT_S
        while time.monotonic() < deadline and not (docs.is_dir() and any(docs.iterdir())):
            time.sleep(0.1)
        first = _doc_ids(library)[0]
        # All at once, so that together they take as long as the slowest while the batch runs.
        asked, searched, tree, second, removal = all_at_once(
            library,
            [
                (("ask", "What is this paper about?", "--doc", first, "--json"), None),
                (("search", "*", "--json"), None),
                (("tree", first, "--json"), None),
                (("ingest", str(PDF_DIR / "earthmover.pdf")), 1),
                (("remove", first), 1),
            ],
        )
        assert ingest.poll() is None, "the ingest must still run while the others ran"
    finally:
        out, _ = ingest.communicate(timeout=600)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["status"] == "answered"
    assert searched.returncode == 0 and first in searched.stdout, searched.stderr
    assert tree.returncode == 0 and json.loads(tree.stdout)["doc_id"] == first
    for writer in (second, removal):
        assert writer.returncode == 1
        assert "is being written by `vectree ingest`" in one_error_line(writer)
    assert ingest.returncode == 0, log.read_text()[-3000:]
    assert json.loads(out)["ingested"] == len(BATCH) + len(FILINGS)
    records = Library(library).documents()
    assert len(records) == len(BATCH) + len(FILINGS) and Library(library).trashed() == []
    try:
        index = open_catalog(library).index
        expected = sum(1 + len(Library(library).tree(r["doc_id"])) for r in records)
        assert index.count() == expected == index.count(committed_only=False)
    finally:
        close_catalogs()
