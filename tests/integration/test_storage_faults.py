"""What disks and damaged index files do to a real library, through real `vectree` processes:
an unreadable index is named in one line and rebuilt by `check --repair` (also after a kill
at any moment of the repair); a full disk is refused in one line, never SIGBUS; a read-only
library answers every read command and refuses writes; a `--library` that is a file, or a
mistyped one, is refused. Every document is still there afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graph.cli import main
from store.catalog import close_catalogs
from tests.conftest import PDF_DIR, ROOT, require_shared_data

pytestmark = pytest.mark.integration

PAPERS = ("0908.0054.pdf", "2304.02623v1.pdf")
QUERY = "designing AI support for expository writing"
MIB = 1 << 20


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two small papers ingested once; each test works on its own copy."""
    require_shared_data()
    library = tmp_path_factory.mktemp("faults") / "library"
    assert main(["--library", str(library), "ingest", *(str(PDF_DIR / p) for p in PAPERS)]) == 0
    close_catalogs()
    return library


@pytest.fixture
def library(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "library"
    shutil.copytree(template, copy)
    return copy


def vectree(library: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`vectree --library LIBRARY ARGS...` in its own process (a SIGBUS would show as -7)."""
    return subprocess.run(
        [sys.executable, "-m", "graph.cli", "--library", str(library), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The single stderr line of a refused command, containing each of ``words`` (``ask``
    announces its thread id first, and ``ingest`` a library it creates, as they always do)."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("thread ", "created the library "))]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def documents(library: Path) -> list[str]:
    done = vectree(library, "docs", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(r["doc_id"] for r in json.loads(done.stdout))


def found(library: Path) -> list[str]:
    done = vectree(library, "search", QUERY, "--json")
    assert done.returncode == 0, done.stderr
    return [hit["doc_id"] for hit in json.loads(done.stdout)["results"]]


# -- damaged index ---------------------------------------------------------------------------------
def segment(library: Path) -> Path:
    [folder] = (library / "edge" / "vectree_structure" / "segments").iterdir()
    return folder


def truncate_segment_state(library: Path) -> None:
    state = segment(library) / "segment.json"
    state.write_bytes(state.read_bytes()[:20])


def garble_id_mappings(library: Path) -> None:
    """The id tracker's mappings overwritten near their start: the engine asks for a hundred
    gigabytes and aborts the process that opens the shard."""
    mappings = segment(library) / "mutable_id_tracker.mappings"
    data = bytearray(mappings.read_bytes())
    data[3:40] = b"\xff" * 37
    mappings.write_bytes(bytes(data))


def empty_payload_pages(library: Path) -> None:
    (segment(library) / "payload_storage" / "page_0.dat").write_bytes(b"")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated segment.json": truncate_segment_state,
    "garbled id mappings": garble_id_mappings,
    "emptied payload pages": empty_payload_pages,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_an_unreadable_index_is_named_in_one_line_and_rebuilt_from_the_documents(
    library: Path, damage: str
) -> None:
    before = documents(library)
    DAMAGE[damage](library)
    shard = library / "edge" / "vectree_structure"
    for command in (("search", QUERY), ("ask", "What AI support for expository writing?")):
        done = vectree(library, *command)
        assert done.returncode == 1
        one_line_error(done, f"the index in {shard} cannot be read", "vectree check --repair")
    pdf = PDF_DIR / "2206.10883v3.pdf"
    done = vectree(library, "ingest", str(pdf))
    assert done.returncode == 1
    one_line_error(done, "cannot be read", "vectree check --repair")

    checked = vectree(library, "check", "--json")
    assert checked.returncode == 2
    [problem] = json.loads(checked.stdout)["damaged"]
    assert problem["doc_id"] is None and problem["file"] == str(shard)

    repaired = vectree(library, "check", "--repair", "--json")
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    assert report["damaged"] == []
    rebuilt = {"doc_id": None, "action": "rebuilt the index from the documents"}
    assert report["repaired"] == [rebuilt]
    assert (library / "quarantine" / "index" / "edge" / "vectree_structure").is_dir()
    assert documents(library) == before
    assert found(library)[0] in before
    assert vectree(library, "check").returncode == 0


def test_a_repair_killed_at_any_moment_is_finished_by_the_next(library: Path) -> None:
    before = documents(library)
    garble_id_mappings(library)
    for delay in (0.3, 1.5, 3.0, 4.5):
        repair = subprocess.Popen(
            [sys.executable, "-m", "graph.cli", "--library", str(library), "check", "--repair"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        repair.send_signal(signal.SIGKILL)
        repair.wait()
    finished = vectree(library, "check", "--repair")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert vectree(library, "check").returncode == 0
    assert documents(library) == before
    assert found(library)[0] in before


# -- full and read-only disks ----------------------------------------------------------------------
def require_mounts() -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs or a read-only bind needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """A tmpfs of a given size in MiB (remountable to another size by calling again)."""
    require_mounts()
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted: list[Path] = []

    def mount(size_mib: int) -> Path:
        options = f"size={size_mib}m" + (",remount" if mounted else "")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    if mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def copy_library(source: Path, target: Path) -> Path:
    """A sparse copy (``cp --sparse=always``), as the library's own files lie on disk."""
    subprocess.run(["cp", "-a", "--sparse=always", str(source), str(target)], check=True)
    for lock in target.glob(".*.lock"):
        lock.unlink()
    return target


def fill(disk: Path) -> None:
    """Leave exactly 0 bytes free: big writes, then single bytes to the last block."""
    for size in (MIB, 4096, 1):
        with (disk / f"filler.{size}").open("wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"\0" * size)
            except OSError:
                pass


@pytest.mark.parametrize("exactly_full", [False, True])
def test_a_full_disk_is_refused_in_one_line_and_loses_nothing(
    template: Path, small_disk: Callable[[int], Path], exactly_full: bool
) -> None:
    """8 MiB is too little for any work on the index; with exactly 0 bytes free not even a lock
    file's holder record can be written (the lock holds unnamed). Every command ends in one
    line either way, and nothing is lost."""
    disk = small_disk(24 if exactly_full else 8)
    library = copy_library(template, disk / "library")
    before = sorted(p.name for p in (library / "docs").iterdir())
    if exactly_full:
        fill(disk)
        assert shutil.disk_usage(disk).free == 0
    for command in (
        ("search", QUERY),
        ("ask", "What AI support for expository writing?"),
        ("check",),
        ("ingest", str(PDF_DIR / "2206.10883v3.pdf")),
        ("remove", before[0]),
        ("check", "--repair"),
    ):
        done = vectree(library, *command)
        assert done.returncode == 1, (command, done.returncode, done.stderr)
        shortage = "0 bytes free" if exactly_full else "MiB needed"
        one_line_error(done, "not enough free space in", shortage)
        assert "damaged" not in done.stderr
    assert sorted(p.name for p in (library / "docs").iterdir()) == before
    for filler in disk.glob("filler.*"):
        filler.unlink()
    small_disk(400)
    assert documents(library) == before
    assert found(library)[0] in before
    assert vectree(library, "check").returncode == 0


@pytest.mark.parametrize("size_mib", [3, 260])
def test_a_new_library_on_a_full_disk_is_refused_before_parsing(
    small_disk: Callable[[int], Path], size_mib: int
) -> None:
    """3 MiB holds nothing; 260 MiB holds the library's files and a new index, but not what
    a write to that index then needs (its sparse files may fill): both refused up front, not
    after parsing every document."""
    require_shared_data()
    library = small_disk(size_mib) / "library"
    done = vectree(library, "ingest", str(PDF_DIR / PAPERS[0]))
    assert done.returncode == 1
    one_line_error(done, "not enough free space in", "ingesting 1 document:")
    assert not list((library / "docs").iterdir())
    assert not list((library / "staging").iterdir())


def test_a_disk_that_fills_mid_batch_keeps_the_summary_and_every_document(
    small_disk: Callable[[int], Path],
) -> None:
    """The disk fills once the first document is published: the others fail one line each,
    the summary is printed, the index is left searchable (not optimised, with a warning) and
    the same command finishes the batch once there is space."""
    require_shared_data()
    disk = small_disk(500)
    library = disk / "library"
    pdfs = [str(PDF_DIR / name) for name in (*PAPERS, "dyer12.pdf", "agarwal11.pdf")]
    batch = subprocess.Popen(
        [sys.executable, "-m", "graph.cli", "--library", str(library), "ingest", *pdfs],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while not (library / "docs").is_dir() or not any((library / "docs").iterdir()):
        assert batch.poll() is None and time.monotonic() < deadline, "no document was published"
        time.sleep(0.2)
    fill(disk)
    out, err = batch.communicate(timeout=300)
    assert batch.returncode == 2, err
    ingested = int(out.split("ingested ")[1].split(",")[0])
    assert 1 <= ingested < 4 and f"failed {4 - ingested}" in out, out
    assert out.count("not enough free space") == 4 - ingested
    assert "Traceback" not in err and "the index was not optimised" in err
    kept = documents(library)
    assert len(kept) == ingested
    for filler in disk.glob("filler.*"):
        filler.unlink()
    assert vectree(library, "check").returncode == 0
    assert vectree(library, "ingest", *pdfs).returncode == 0
    assert len(documents(library)) == 4 and set(kept) <= set(documents(library))


@pytest.fixture
def read_only(library: Path, tmp_path: Path) -> Iterator[Path]:
    """The library bind-mounted read-only, with the checkpoints of one question (a
    write-ahead-logged SQLite file, which a read-only open cannot read there)."""
    require_mounts()
    assert vectree(library, "ask", "What AI support for expository writing?").returncode == 0
    view = tmp_path / "read-only"
    view.mkdir()
    done = subprocess.run(["mount", "--bind", str(library), str(view)], check=False)
    if done.returncode != 0:
        pytest.skip("cannot bind-mount here")
    made_read_only = subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=False)
    if made_read_only.returncode != 0:
        subprocess.run(["umount", "-l", str(view)], check=False)
        pytest.skip("cannot remount a bind mount read-only here")
    yield view
    subprocess.run(["umount", "-l", str(view)], check=False)


def test_a_read_only_library_answers_reads_and_refuses_writes(read_only: Path) -> None:
    before = documents(read_only)
    assert found(read_only)[0] in before
    for command in (("check",), ("tree", before[0]), ("threads",)):
        done = vectree(read_only, *command)
        assert done.returncode == 0, (command, done.stderr)
    asked = vectree(read_only, "ask", "What AI support for expository writing?", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["citations"]
    for command in (
        ("ingest", str(PDF_DIR / "2206.10883v3.pdf")),
        ("remove", before[0]),
        ("check", "--repair"),
    ):
        done = vectree(read_only, *command)
        assert done.returncode == 1, (command, done.stderr)
        one_line_error(done, f"{read_only} is read-only: cannot run `vectree {command[0]}")
    assert documents(read_only) == before


# -- library paths ---------------------------------------------------------------------------------
READ_COMMANDS = (
    ("search", QUERY),
    ("ask", "What is this?"),
    ("docs",),
    ("tree", "abcdef"),
    ("trace", "abcdef"),
    ("check",),
    ("threads",),
    ("remove", "abcdef"),
)


def test_a_library_that_is_a_file_is_refused_by_every_command(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("a file, not a library")
    for command in (*READ_COMMANDS, ("ingest", str(tmp_path))):
        done = vectree(not_a_folder, *command)
        assert done.returncode == 1, command
        one_line_error(done, f"--library {not_a_folder} is a file")
    assert not_a_folder.read_text() == "a file, not a library"


def test_a_mistyped_library_is_refused_by_read_commands_and_created_by_ingest(
    tmp_path: Path,
) -> None:
    require_shared_data()
    mistyped = tmp_path / "librray"
    for command in READ_COMMANDS:
        done = vectree(mistyped, *command)
        assert done.returncode == 1, command
        one_line_error(done, f"{mistyped} does not exist")
        assert not mistyped.exists()
    done = vectree(mistyped, "ingest", str(PDF_DIR / PAPERS[0]))
    assert done.returncode == 0, done.stderr
    assert f"created the library {mistyped}" in done.stderr
    assert len(documents(mistyped)) == 1
