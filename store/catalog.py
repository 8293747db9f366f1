"""Keeps the library folder and the index in step: publish, remove, reconcile.

Visibility rule: a document is listed once its folder is renamed into ``docs/`` and searchable
once its points are marked committed, which happens right after. Anything an interrupted run
left half done is finished or undone by ``reconcile`` before the next batch starts.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from store.completeness import shortfall
from store.entries import EmbeddedEntry, stored_entries
from store.faults import (
    IndexIncomplete,
    NoSpace,
    ReadOnlyLibrary,
    StorageError,
    require_space,
    writable,
)
from store.index import StructuralIndex
from store.library import Library
from store.locks import holder, write_depth, write_lock
from store.settings import IndexSettings

LOG = logging.getLogger(__name__)
_OPEN: dict[Path, Catalog] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Unfinished:
    """What interrupted runs left behind: found by ``Catalog.unfinished`` (which ``vectree
    check`` reports) and finished or undone by ``Catalog.reconcile``."""

    staging: list[Path]
    """Staging folders whose writer is gone."""
    trash: list[str]
    """Documents hidden for removal whose removal did not finish."""
    unpublished: list[str]
    """Visible documents whose points were never marked committed."""
    orphaned: list[str]
    """Uncommitted points of documents that never became visible."""


@dataclass
class Catalog:
    """A library plus its structural index."""

    library: Library
    index: StructuralIndex

    @contextmanager
    def writing(self, command: str) -> Iterator[None]:
        """The library's write lock (``store.locks``), held for a whole ``command`` that
        changes the library; taken before the index is opened for writing, it waits
        VECTREE_WRITE_WAIT for another writer, then fails in one line naming it. When the
        outermost such block of a process ends, the index is settled
        (``StructuralIndex.settle``). A library on a read-only filesystem is refused at once,
        in one line (``ReadOnlyLibrary``)."""
        root = self.library.root
        if not writable(root):
            raise ReadOnlyLibrary(root, f"run `{command}`")
        with write_lock(root, command, self.index.settings.write_wait_s):
            yield
            if write_depth(root) == 1 and self.index.opened:
                self._settle(command)

    def _settle(self, command: str) -> None:
        """Optimise and flush the index after a write command. Its work is done and searchable
        already (the write-ahead log holds it), so a disk too full to optimise costs a warning,
        not the command's report; the next write command optimises it."""
        try:
            self.index.settle()
        except StorageError as exc:
            reason = exc.shortage if isinstance(exc, NoSpace) else str(exc)
            LOG.warning(
                "`%s` is done, but the index was not optimised (%s): it is searchable as it "
                "is, and the next write command optimises it",
                command,
                reason,
            )

    def index_changed(self) -> None:
        """A new index version, recording what the index now holds (after every change of
        the searchable documents)."""
        self.library.bump_index_version(self.index.held())

    def require_complete(self) -> None:
        """``IndexIncomplete`` in one line, with the remedy, when the index holds less than
        the visible documents and the last recorded change say it should
        (``store.completeness``)."""
        writer = holder(self.library.root)
        problem = shortfall(
            self.index.held(),
            self.library.visible_count(),
            self.library.recorded_counts(),
            writer,
        )
        if problem is not None:
            raise IndexIncomplete(
                self.index.location, problem, None if writer is None else str(writer)
            )

    def require_space(self, extra: int, what: str) -> None:
        """``NoSpace`` in one line, before anything is written, unless the disk holds what the
        index may take on its next writes plus ``extra`` bytes of library files."""
        require_space(self.library.root, self.index.write_space_needed() + extra, what)

    def publish(self, doc_id: str, staging: Path, entries: list[EmbeddedEntry]) -> None:
        """Index entries (hidden), make the folder visible, then make the entries searchable."""
        self.index.upsert_document(doc_id, entries)
        self.library.commit(staging, doc_id)
        self.index.mark_committed(doc_id)
        self.index_changed()

    def remove(self, doc_id: str) -> bool:
        """Delete a document completely: hide its folder, drop its points, delete the files.

        The index is opened and the free space its write needs checked first, so a removal
        that cannot reach it changes nothing. One cut short after hiding the folder leaves the
        document in the trash; removing the same id again (or the next ``reconcile``) finishes
        it. Returns whether there was anything to remove.
        """
        _ = self.index.client  # open it (waiting for the folder) before touching anything
        self.require_space(0, "removing a document")
        present = self.library.has(doc_id) or doc_id in self.library.trashed()
        self.library.hide(doc_id)
        self.index.delete_document(doc_id)
        self.index_changed()
        self.library.purge_trash(doc_id)
        return present

    def replace_older_versions(self, doc_id: str, source: str) -> list[str]:
        """A changed file replaces what was ingested from the same source before."""
        older = [other for other in self.library.by_source(source) if other != doc_id]
        for other in older:
            self.remove(other)
        return older

    def reindex(self, doc_id: str) -> int:
        """Restore a visible document's index entries from its (sound) files, searchable at
        once; returns how many were written."""
        entries = self.index.embed_entries(stored_entries(self.library, doc_id))
        self.index.upsert_document(doc_id, entries)
        self.index.mark_committed(doc_id)
        self.index_changed()
        return len(entries)

    def move_index_aside(self) -> Path:
        """Move an unreadable embedded index aside (nothing deleted) while owning it with its
        shards closed; the next write starts a new one. Returns where it went."""
        with self.index.closed():
            target = self.library.move_index_aside()
        self.index_changed()
        return target

    def quarantine(self, doc_id: str) -> Path:
        """Take a damaged document out of use without losing it: its folder moves to
        ``quarantine/`` (invisible from that instant), its points and derived caches go."""
        target = self.library.quarantine(self.library.doc_dir(doc_id))
        self.index.delete_document(doc_id)
        self.library.forget_derived(doc_id)
        self.index_changed()
        return target

    def unfinished(self) -> Unfinished:
        """What interrupted runs left behind, without changing anything."""
        trash = self.library.trashed()
        # A trashed document's points all go with its removal, committed or not.
        uncommitted = sorted(self.index.doc_ids(committed=False) - set(trash))
        return Unfinished(
            staging=self.library.abandoned_staging(),
            trash=trash,
            unpublished=[d for d in uncommitted if self.library.has(d)],
            orphaned=[d for d in uncommitted if not self.library.has(d)],
        )

    def reconcile(self) -> dict[str, int]:
        """Undo or finish the work of interrupted runs; returns what was repaired."""
        left = self.unfinished()
        for folder in left.staging:
            shutil.rmtree(folder, ignore_errors=True)
        for doc_id in left.trash:
            self.index.delete_document(doc_id)
            self.library.purge_trash(doc_id)
        for doc_id in left.unpublished:
            self.index.mark_committed(doc_id)
        for doc_id in left.orphaned:
            self.index.delete_document(doc_id)
        if left.trash or left.unpublished or left.orphaned:
            self.index_changed()
        return {
            "staging": len(left.staging),
            "trash": len(left.trash),
            "finished": len(left.unpublished),
            "orphaned": len(left.orphaned),
        }


def open_catalog(root: Path, settings: IndexSettings | None = None) -> Catalog:
    """The process-wide catalog for a library folder (one index client per library and
    process: an embedded shard may be open once)."""
    root = root.resolve()
    with _LOCK:
        if root not in _OPEN:
            library = Library(root).ensure()
            index = StructuralIndex(settings or IndexSettings.from_env(), library.root)
            _OPEN[root] = Catalog(library, index)
        return _OPEN[root]


def close_catalogs() -> None:
    """Release every index client (tests and the CLI call this before exiting)."""
    with _LOCK:
        for catalog in _OPEN.values():
            catalog.index.close()
        _OPEN.clear()
