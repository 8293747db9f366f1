"""Disk and index faults told in one line: free space, OS errors, a probe's verdict, sparse
copies, setting an index aside."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from store.edge import closed_cleanly, copy_sparse, stamp_clean_close
from store.faults import (
    MIB,
    SPACE_MARGIN,
    IndexUnreadable,
    NoSpace,
    ReadOnlyLibrary,
    require_space,
    storage_error,
    unallocated_bytes,
)
from store.library import Library
from store.shard_probe import _child_problem


def test_sparse_pre_allocation_counts_as_space_still_needed(tmp_path: Path) -> None:
    sparse = tmp_path / "page_0.dat"
    with sparse.open("wb") as handle:
        handle.write(b"x" * 4096)
        handle.truncate(32 * MIB)
    assert 32 * MIB - 8192 <= unallocated_bytes([sparse]) <= 32 * MIB - 4096
    assert unallocated_bytes([tmp_path / "missing"]) == 0


def test_a_write_that_cannot_fit_is_refused_naming_the_folder_and_the_space(
    tmp_path: Path,
) -> None:
    require_space(tmp_path, 0, "a small write")
    with pytest.raises(NoSpace) as refused:
        require_space(tmp_path, 1 << 60, "writing to its index")
    message = str(refused.value)
    assert message.startswith(f"not enough free space in {tmp_path} for writing to its index: ")
    assert "MiB needed" in message and "nothing was changed" in message
    assert refused.value.needed == (1 << 60) + SPACE_MARGIN


def test_os_errors_of_the_disk_are_named_and_others_keep_their_traceback(
    tmp_path: Path,
) -> None:
    full = storage_error(OSError(errno.ENOSPC, "No space left"), tmp_path, "write the document")
    assert isinstance(full, NoSpace)
    read_only = storage_error(OSError(errno.EROFS, "Read-only"), tmp_path, "write")
    assert isinstance(read_only, ReadOnlyLibrary) and "is read-only" in str(read_only)
    assert storage_error(OSError(errno.ENOENT, "missing"), tmp_path, "write") is None


def test_an_unreadable_index_names_its_folder_and_the_remedy_in_one_line() -> None:
    error = IndexUnreadable("/lib/edge/c", "Service runtime error: bad\n  at line 3\nbacktrace")
    assert str(error) == (
        "the index in /lib/edge/c cannot be read (Service runtime error: bad); run "
        "`vectree check --repair` to rebuild it from the documents (nothing is lost)"
    )


def test_a_probe_reports_an_exception_or_an_abort_in_one_line() -> None:
    raised = "Traceback …\n  File x\nException: Service runtime error: failed to load segment\n"
    assert _child_problem(1, raised) == "Service runtime error: failed to load segment"
    aborted = "memory allocation of 103079215104 bytes failed\nstack backtrace:\n   0: rust_oom\n"
    assert _child_problem(-6, aborted) == (
        "the engine aborted (signal 6): memory allocation of 103079215104 bytes failed"
    )


def test_a_stamp_holds_until_a_file_of_the_shard_changes(tmp_path: Path) -> None:
    shard = tmp_path / "shard"
    (shard / "wal").mkdir(parents=True)
    (shard / "wal" / "open-1").write_bytes(b"log")
    assert not closed_cleanly(shard)
    stamp_clean_close(shard)
    assert closed_cleanly(shard)
    os.utime(shard / "wal" / "open-1", ns=(1, 1))
    assert not closed_cleanly(shard)


def test_a_sparse_copy_keeps_data_and_holes(tmp_path: Path) -> None:
    source = tmp_path / "chunk_0.mmap"
    with source.open("wb") as handle:
        handle.write(b"head")
        handle.seek(8 * MIB)
        handle.write(b"tail")
        handle.truncate(16 * MIB)
    target = tmp_path / "copy.mmap"
    copy_sparse(str(source), str(target))
    assert target.read_bytes() == source.read_bytes()
    assert target.stat().st_blocks * 512 <= 1 * MIB


def test_an_index_set_aside_keeps_everything_derived_from_it(tmp_path: Path) -> None:
    library = Library(tmp_path / "library").ensure()
    for name in ("edge/c/segments", "chunks", "entry-map/c"):
        (library.root / name).mkdir(parents=True)
    first = library.move_index_aside()
    assert first == library.quarantine_dir / "index"
    assert sorted(p.name for p in first.iterdir()) == ["chunks", "edge", "entry-map"]
    assert not (library.root / "edge").exists() and library.docs_dir.is_dir()
    (library.root / "edge").mkdir()
    assert library.move_index_aside() == library.quarantine_dir / "index.1"
