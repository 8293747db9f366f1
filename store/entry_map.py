"""Which entry a point id stands for: point id → (doc id, node id) of every committed entry.

Layer-0 queries ask the index for point ids and scores only (reading payloads costs about as
much as the search), so the search engine needs this map for the ~500 ids of every query. It
is derived from the document entries' ``section_ids``: a point id is the uuid5 of its document
and entry key (``store.index.point_key``), so the ids of a document's entries follow from its
id and its section ids. Deriving them takes a scroll of every document entry plus one SHA-1 per
entry (about half a second at 10,000 documents, ten times that at 100,000), which a process
that answers one query (``vectree search``) would pay in full.

So the map is also kept on disk, one file per collection named by the library's index
version (``entry-map/<collection>/<version>.npz``), written by the first process that derives
it at that version and loaded by the others in milliseconds. It is a cache: a missing or
unreadable file is derived again, and the version changes with every publish or removal. Since
a point id is a function of its entry, even a file of another version cannot resolve an id
wrongly: it can only lack entries (the engine then reads their payloads) or hold removed ones
(never returned by a query). Ids are kept as sorted 64-bit halves, no Python object per entry,
and looked up with a binary search.
"""

from __future__ import annotations

import logging
import os
import threading
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from store.index import point_key

LOG = logging.getLogger(__name__)
MAP_DIR = "entry-map"
FORMAT = 1
"""Bumped when the file's layout changes (older files are then derived again)."""
EntryRef = tuple[str, str | None]
"""(doc id, node id) of an index entry; the node id is ``None`` for the document entry."""
DOCUMENT_NODE = -1
"""``node`` of a document entry (a section's is its index in ``node_ids``)."""


def entry_key(node_id: str | None) -> str:
    """The entry key behind a point id (``store.entries``): ``document`` or ``section:<id>``."""
    return "document" if node_id is None else f"section:{node_id}"


def id_halves(ids: Sequence[str]) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """The high and low 64 bits of uuid strings (as Qdrant returns point ids)."""
    raw = bytes.fromhex("".join(ids).replace("-", ""))
    halves = np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(-1, 2)
    return halves[:, 0], halves[:, 1]


@dataclass(frozen=True)
class EntryMap:
    """Every entry's point id as (``hi``, ``lo``), sorted, with its document (an index into
    ``doc_ids``) and its section (an index into ``node_ids``, ``DOCUMENT_NODE`` for the
    document entry)."""

    hi: NDArray[np.uint64]
    lo: NDArray[np.uint64]
    doc: NDArray[np.int32]
    node: NDArray[np.int32]
    doc_ids: NDArray[np.str_]
    node_ids: NDArray[np.str_]

    @classmethod
    def derive(cls, documents: Iterable[tuple[str, Sequence[str]]]) -> EntryMap:
        """The map of these (doc id, section ids) documents' entries."""
        doc_ids: list[str] = []
        node_index: dict[str, int] = {}
        his: list[int] = []
        los: list[int] = []
        docs: list[int] = []
        nodes: list[int] = []
        for doc_id, section_ids in documents:
            row = len(doc_ids)
            doc_ids.append(doc_id)
            for node_id in [None, *section_ids]:
                hi, lo = point_key(doc_id, entry_key(node_id))
                his.append(hi)
                los.append(lo)
                docs.append(row)
                nodes.append(
                    DOCUMENT_NODE
                    if node_id is None
                    else node_index.setdefault(node_id, len(node_index))
                )
        hi_array = np.array(his, dtype=np.uint64)
        lo_array = np.array(los, dtype=np.uint64)
        order = np.lexsort((lo_array, hi_array))
        return cls(
            hi=hi_array[order],
            lo=lo_array[order],
            doc=np.array(docs, dtype=np.int32)[order],
            node=np.array(nodes, dtype=np.int32)[order],
            doc_ids=np.array(doc_ids, dtype=np.str_),
            node_ids=np.array(list(node_index), dtype=np.str_),
        )

    def __len__(self) -> int:
        return len(self.hi)

    def refs(self, ids: Sequence[str]) -> dict[str, EntryRef]:
        """(doc id, node id) of each listed point id the map holds (the others are left out)."""
        if not ids or not len(self.hi):
            return {}
        hi, lo = id_halves(ids)
        rows = np.minimum(np.searchsorted(self.hi, hi), len(self.hi) - 1)
        same_hi = self.hi[rows] == hi
        rows = np.where(same_hi & (self.lo[rows] != lo), self._scan(hi, lo, rows), rows)
        hit = np.flatnonzero(same_hi & (self.lo[rows] == lo))
        found = rows[hit]
        doc_ids = self.doc_ids[self.doc[found]].tolist()
        nodes = self.node[found].tolist()
        node_ids = self.node_ids.tolist()
        return {
            ids[i]: (doc_id, None if node == DOCUMENT_NODE else node_ids[node])
            for i, doc_id, node in zip(hit.tolist(), doc_ids, nodes, strict=True)
        }

    def _scan(
        self, hi: NDArray[np.uint64], lo: NDArray[np.uint64], rows: NDArray[np.intp]
    ) -> NDArray[np.intp]:
        """Rows of ids whose high half is shared with another entry (almost never: 64-bit
        halves), found by scanning the run of that half for the low one."""
        scanned = rows.copy()
        for i in np.flatnonzero((self.hi[rows] == hi) & (self.lo[rows] != lo)):
            row = int(rows[i])
            while row < len(self.hi) and self.hi[row] == hi[i] and self.lo[row] != lo[i]:
                row += 1
            scanned[i] = min(row, len(self.hi) - 1)
        return scanned

    # -- the file ----------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write atomically (a reader sees the old file, the new one or none)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with tmp.open("wb") as handle:
            np.savez(
                handle,
                format=np.array(FORMAT),
                hi=self.hi,
                lo=self.lo,
                doc=self.doc,
                node=self.node,
                doc_ids=self.doc_ids,
                node_ids=self.node_ids,
            )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> EntryMap | None:
        """The map saved at ``path``; None when there is none or it cannot be used (logged)."""
        try:
            with np.load(path, allow_pickle=False) as saved:
                if int(saved["format"]) != FORMAT:
                    return None
                loaded = cls(
                    hi=saved["hi"],
                    lo=saved["lo"],
                    doc=saved["doc"],
                    node=saved["node"],
                    doc_ids=saved["doc_ids"],
                    node_ids=saved["node_ids"],
                )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            LOG.warning("ignoring the unreadable entry map %s (%s); deriving it again", path, exc)
            return None
        return loaded if loaded.consistent() else None

    def consistent(self) -> bool:
        """Arrays of one length whose indexes point inside their tables."""
        n = len(self.hi)
        if not (len(self.lo) == len(self.doc) == len(self.node) == n):
            return False
        if n == 0:
            return True
        return bool(
            self.doc.min() >= 0
            and self.doc.max() < len(self.doc_ids)
            and self.node.min() >= DOCUMENT_NODE
            and self.node.max() < len(self.node_ids)
        )


def map_path(library_root: Path, collection: str, version: str) -> Path:
    """The file of a collection's map at an index version."""
    return library_root / MAP_DIR / collection / f"{version}.npz"


def remove_other_versions(path: Path) -> None:
    """Delete the collection's files of other versions (they are never read again)."""
    for other in path.parent.glob("*.npz"):
        if other != path:
            other.unlink(missing_ok=True)
