"""What disks and damaged index files do to a library, each told in one line with its remedy.

The index (``LIBRARY/edge/``) is derived data: the documents' own files are the source of
truth, so an index that cannot be opened or read is rebuilt from them by ``vectree check
--repair``. The engine keeps its files memory-mapped and pre-allocates them sparsely (32 MiB
write-ahead-log segments, 32 MiB payload and vector pages): on a full disk, touching a page
that has no block behind it kills the process with SIGBUS, which no handler can turn into a
message. So free space is checked before the engine is given the chance
(:func:`require_space`), and every other ``OSError`` of a write is named by
:func:`storage_error`.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

MIB = 1 << 20
SPACE_MARGIN = 16 * MIB
"""Kept free beyond what a write is known to need (SQLite journals, JSON files, logs)."""


class StorageError(RuntimeError):
    """A failure of the library's folder or index the user can act on: one line, no
    traceback (the command line and the server both show ``str(exc)``)."""


class IndexUnreadable(StorageError):
    """An index folder the engine cannot open or read (damaged files)."""

    def __init__(self, folder: Path | str, problem: str) -> None:
        problem = one_line(problem)
        super().__init__(
            f"the index in {folder} cannot be read ({problem}); run `vectree check --repair` "
            "to rebuild it from the documents (nothing is lost)"
        )
        self.folder = str(folder)
        self.problem = problem


class IndexIncomplete(StorageError):
    """An index that holds less than the library says it should (``store.completeness``): a
    search would answer from part of the library."""

    def __init__(self, where: str, shortfall: str, writer: str | None) -> None:
        remedy = (
            f"{writer} is changing the library: try again when it has finished"
            if writer
            else "run `vectree check --repair` to rebuild the lost entries from the documents "
            "(nothing is lost)"
        )
        super().__init__(f"the index in {where} {shortfall}; {remedy}")


class NoSpace(StorageError):
    """Not enough free space for what a command is about to write."""

    def __init__(self, folder: Path, needed: int, free: int, what: str) -> None:
        super().__init__(
            f"not enough free space in {folder} for {what}: {_mib(needed)} needed, "
            f"{_mib(free)} free; free some space and run the command again (nothing was changed)"
        )
        self.folder = folder
        self.needed = needed
        self.free = free

    @property
    def shortage(self) -> str:
        """The shortage alone, for a message about work that was done all the same."""
        needed, free = _mib(self.needed), _mib(self.free)
        return f"not enough free space in {self.folder}: {needed} needed, {free} free"


class ReadOnlyLibrary(StorageError):
    """A write asked of a library on a read-only filesystem (or without write permission)."""

    def __init__(self, folder: Path, what: str) -> None:
        super().__init__(
            f"{folder} is read-only: cannot {what}; read commands (search, ask, docs, tree, "
            "check) still work"
        )
        self.folder = folder


class LibraryPathError(StorageError):
    """A ``--library`` that is not a library folder: a file, or a folder that does not exist
    when a command only reads."""


def one_line(text: str) -> str:
    """The first non-empty line of an engine's message (they run to dozens of lines)."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return "no detail given"


def _mib(size: int) -> str:
    return f"{size / MIB:.0f} MiB" if size >= MIB else f"{size} bytes"


def free_bytes(folder: Path) -> int:
    """Free space, for this user, on the filesystem holding ``folder`` (or its nearest
    existing parent)."""
    return shutil.disk_usage(_nearest_existing(folder)).free


def unallocated_bytes(files: Iterable[Path]) -> int:
    """Bytes the files claim but have no disk blocks for yet (sparse pre-allocation): what
    writing through their memory maps may still need."""
    total = 0
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        total += max(0, stat.st_size - stat.st_blocks * 512)
    return total


def require_space(folder: Path, needed: int, what: str) -> None:
    """:class:`NoSpace` unless ``needed`` bytes plus a margin are free under ``folder``."""
    free = free_bytes(folder)
    if free < needed + SPACE_MARGIN:
        raise NoSpace(folder, needed + SPACE_MARGIN, free, what)


def writable(folder: Path) -> bool:
    """Whether this process may create files in ``folder`` (a read-only mount or missing
    permission says no)."""
    existing = _nearest_existing(folder)
    return os.access(existing, os.W_OK) and not _read_only_mount(existing)


def _nearest_existing(folder: Path) -> Path:
    """``folder``, or its nearest parent that exists (a library not created yet lives on the
    filesystem of the folder it will be created in)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _read_only_mount(folder: Path) -> bool:
    """``os.access`` ignores read-only mounts for root; ``statvfs`` does not."""
    return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)


def storage_error(exc: OSError, folder: Path, what: str) -> StorageError | None:
    """The one-line error for an ``OSError`` met while writing under ``folder``, or None when
    it is not about the disk (then it is a bug and keeps its traceback)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return NoSpace(folder, SPACE_MARGIN, free_bytes(folder), what)
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnlyLibrary(folder, what)
    return None
