"""Converting a library indexed by Qdrant local mode (``LIBRARY/qdrant/``) to Qdrant Edge.

Earlier versions kept the embedded index in qdrant-client's local mode. On first use of such a
library (or by ``vectree check --migrate``) every collection is copied point by point, vectors
and payloads as stored, into new Edge shards built in ``LIBRARY/edge.converting/``; the
``committed`` flag becomes the 0/1 integer Edge can match. Only when every collection's point
count agrees does one rename make ``LIBRARY/edge/`` appear; the old folder is then renamed to
``LIBRARY/qdrant.local-mode/`` (kept, never deleted, so nothing is lost; remove it once
satisfied). A conversion cut short leaves the old index untouched and is redone from scratch.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models
from tqdm import tqdm

from store.edge import EdgeClient
from store.locks import own_index, unflock, write_lock

LOG = logging.getLogger(__name__)
LOCAL_DIR = "qdrant"
BACKUP_DIR = "qdrant.local-mode"
PARTIAL_DIR = "edge.converting"
PAGE = 256
PayloadIndexes = dict[str, dict[str, models.PayloadSchemaType]]


class MigrationError(RuntimeError):
    """The local-mode index could not be converted (the old index is left as it was)."""


def needs_migration(root: Path) -> bool:
    """Whether the library still has a local-mode index and no Edge index yet."""
    return (root / LOCAL_DIR / "collection").is_dir() and not (root / "edge").is_dir()


def migrate_local_mode(
    root: Path, target: EdgeClient, wait_s: float, indexes: PayloadIndexes
) -> dict[str, Any] | None:
    """Convert the library's local-mode index into ``target``'s folder, once; None when there
    is nothing to convert. ``indexes`` names the payload indexes of each collection that has
    some. Returns ``{"collections": {name: points}, "backup": path}``."""
    if not needs_migration(root):
        _retire_converted(root)
        return None
    with write_lock(root, "converting the index to Qdrant Edge", wait_s):
        if not needs_migration(root):  # another process converted it meanwhile
            return None
        fd = own_index(root, target.wait_s)
        try:
            counts = _convert(root, target.threads, indexes)
        finally:
            unflock(fd)
    os.replace(root / PARTIAL_DIR, target.folder)
    backup = _retire_converted(root)
    LOG.warning("converted the index of %s to Qdrant Edge; the old one is in %s", root, backup)
    return {"collections": counts, "backup": str(backup)}


def _retire_converted(root: Path) -> Path:
    """Move a converted local-mode folder aside (also finishing a conversion cut short
    between its two renames)."""
    backup = root / BACKUP_DIR
    if (root / LOCAL_DIR).is_dir() and (root / "edge").is_dir():
        if backup.exists():
            shutil.rmtree(backup)
        os.replace(root / LOCAL_DIR, backup)
    return backup


def _convert(root: Path, threads: int, indexes: PayloadIndexes) -> dict[str, int]:
    """Copy every collection into a fresh ``edge.converting`` folder; the point counts."""
    partial = root / PARTIAL_DIR
    shutil.rmtree(partial, ignore_errors=True)
    try:
        source = QdrantClient(path=str(root / LOCAL_DIR))
    except RuntimeError as exc:
        raise MigrationError(
            f"the local-mode index in {root / LOCAL_DIR} is open in another process; stop it "
            "and run `vectree check --migrate`"
        ) from exc
    target = EdgeClient(partial, None, 0.0, threads)
    try:
        return {
            c.name: _copy(source, target, c.name, indexes.get(c.name, {}))
            for c in source.get_collections().collections
        }
    finally:
        target.close()
        source.close()


def _copy(
    source: QdrantClient,
    target: EdgeClient,
    name: str,
    indexes: dict[str, models.PayloadSchemaType],
) -> int:
    """Copy one collection: configuration, payload indexes, then the points page by page."""
    info = source.get_collection(name)
    vectors = info.config.params.vectors
    if not isinstance(vectors, dict):
        raise MigrationError(f"collection {name!r} has no named dense vectors")
    sparse = info.config.params.sparse_vectors or {}
    target.create_collection(name, vectors, sparse, info.config.metadata or {})
    for field, schema in indexes.items():
        target.create_payload_index(name, field, schema)
    total = source.count(name, exact=True).count
    offset: Any = None
    with tqdm(total=total, desc=f"converting {name}", unit="point", leave=False) as bar:
        while True:
            records, offset = source.scroll(
                name, limit=PAGE, offset=offset, with_payload=True, with_vectors=True
            )
            target.upsert(name, [_point(r) for r in records])
            bar.update(len(records))
            if offset is None:
                break
    copied = target.count(name).count
    if copied != total:
        raise MigrationError(f"collection {name!r}: {copied} of {total} points converted")
    target.optimize(name)
    return copied


def _point(record: models.Record) -> models.PointStruct:
    payload = dict(record.payload or {})
    if isinstance(payload.get("committed"), bool):
        payload["committed"] = int(payload["committed"])
    vector: Any = record.vector if isinstance(record.vector, dict) else {}
    return models.PointStruct(id=record.id, vector=vector, payload=payload)
