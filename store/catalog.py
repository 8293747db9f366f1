"""Keeps the library folder and the index in step: publish, remove, reconcile.

Visibility rule: a document is listed once its folder is renamed into ``docs/`` and searchable
once its points are marked committed, which happens right after. Anything an interrupted run
left half done is finished or undone by ``reconcile`` before the next batch starts.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from store.entries import IndexEntry
from store.index import StructuralIndex
from store.library import Library
from store.settings import IndexSettings

_OPEN: dict[Path, Catalog] = {}
_LOCK = threading.Lock()


@dataclass
class Catalog:
    """A library plus its structural index."""

    library: Library
    index: StructuralIndex

    def publish(self, doc_id: str, staging: Path, entries: list[IndexEntry]) -> None:
        """Index entries (hidden), make the folder visible, then make the entries searchable."""
        self.index.upsert_document(doc_id, entries)
        self.library.commit(staging, doc_id)
        self.index.mark_committed(doc_id)
        self.library.bump_index_version()

    def remove(self, doc_id: str) -> bool:
        """Delete a document completely: hide its folder, drop its points, delete the files."""
        hidden = self.library.hide(doc_id)
        self.index.delete_document(doc_id)
        self.library.bump_index_version()
        self.library.purge_trash(doc_id)
        return hidden is not None

    def replace_older_versions(self, doc_id: str, source: str) -> list[str]:
        """A changed file replaces what was ingested from the same source before."""
        older = [other for other in self.library.by_source(source) if other != doc_id]
        for other in older:
            self.remove(other)
        return older

    def reconcile(self) -> dict[str, int]:
        """Undo or finish the work of interrupted runs; returns what was repaired."""
        stale = self.library.abandoned_staging()
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)
        trashed = self.library.trashed()
        for doc_id in trashed:
            self.index.delete_document(doc_id)
            self.library.purge_trash(doc_id)
        finished = orphaned = 0
        for doc_id in self.index.doc_ids(committed=False):
            if self.library.has(doc_id):
                self.index.mark_committed(doc_id)
                finished += 1
            else:
                self.index.delete_document(doc_id)
                orphaned += 1
        if trashed or finished or orphaned:
            self.library.bump_index_version()
        return {
            "staging": len(stale),
            "trash": len(trashed),
            "finished": finished,
            "orphaned": orphaned,
        }


def open_catalog(root: Path, settings: IndexSettings | None = None) -> Catalog:
    """The process-wide catalog for a library folder (Qdrant local mode allows one client)."""
    root = root.resolve()
    with _LOCK:
        if root not in _OPEN:
            library = Library(root).ensure()
            index = StructuralIndex(settings or IndexSettings.from_env(), library.qdrant_dir)
            _OPEN[root] = Catalog(library, index)
        return _OPEN[root]


def close_catalogs() -> None:
    """Release every index client (tests and the CLI call this before exiting)."""
    with _LOCK:
        for catalog in _OPEN.values():
            catalog.index.close()
        _OPEN.clear()
