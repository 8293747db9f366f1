"""The Qdrant collection of structural entries: dense (fastembed) + sparse BM25 vectors.

By default the index is embedded in the library folder (Qdrant Edge shards, ``store.edge``);
``QDRANT_URL`` points the same code at a server. Points are written with ``committed=0`` and
set to 1 only after the document's folder is visible, so searches (which filter on
``committed``) never see a half document; ``reconcile`` finishes or undoes whatever an
interrupted run left behind. Flags are 0/1 integers because Edge matches no JSON boolean.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from qdrant_client import QdrantClient, models

from store.completeness import IndexCounts
from store.edge import FRESH_SHARD_BYTES, edge_client, write_space_needed
from store.embeddings import default_cache_dir, dense_embedder, sparse_embedder
from store.entries import ENTRIES_VERSION, EmbeddedEntry, EntryVectors, IndexEntry
from store.index_client import IndexClient
from store.migrate import migrate_local_mode
from store.settings import IndexSettings

DENSE = "dense"
SPARSE = "bm25"
POINT_NAMESPACE = uuid.UUID("5b1d3c52-3f8e-4d8a-9a57-2b8f1f0c9e11")
_NAMESPACE_BYTES = POINT_NAMESPACE.bytes  # ``UUID.bytes`` is recomputed at every access
UPSERT_BATCH = 64
DENSE_BATCH = 1
"""Texts per dense model run. A batch is padded to its longest text, and a document's entries
range from a few dozen tokens (a section title and summary) to a few hundred (the document
entry): one text per run took 45 % less time for the 224 entries of the development PDFs than
one batch per document (5.7 s against 10.2 s), with identical vectors."""
LOG = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
PAYLOAD_INDEXES = {
    "doc_id": models.PayloadSchemaType.KEYWORD,
    "entry_type": models.PayloadSchemaType.KEYWORD,
    "committed": models.PayloadSchemaType.INTEGER,
    "year": models.PayloadSchemaType.INTEGER,
}
COMMITTED, HIDDEN = 1, 0
"""Values of the ``committed`` payload flag."""
# Points per scroll call when every point of a collection is read.
SCROLL_PAGE = 1024


class IndexMismatchError(RuntimeError):
    """The collection was built with another embedding model than the one configured."""


def point_key(doc_id: str, key: str) -> tuple[int, int]:
    """The high and low 64 bits of an entry's point id (``point_id``): the search engine's
    entry map (``store.entry_map``) derives them for every indexed entry (900,000 at 100,000
    documents), so they come from the SHA-1 digest directly rather than through ``uuid``."""
    digest = hashlib.sha1(_NAMESPACE_BYTES + f"{doc_id}:{key}".encode()).digest()
    hi = int.from_bytes(digest[:8], "big") & ~0xF000 | 0x5000  # version 5
    lo = int.from_bytes(digest[8:16], "big") & ~(0xC0 << 56) | (0x80 << 56)  # RFC 4122 variant
    return hi, lo


def point_id(doc_id: str, key: str) -> str:
    """Stable point id per (document, entry), so re-writes replace rather than duplicate:
    ``str(uuid.uuid5(POINT_NAMESPACE, f"{doc_id}:{key}"))``."""
    hi, lo = point_key(doc_id, key)
    h = f"{hi:016x}{lo:016x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _exclusive(
    method: Callable[Concatenate[StructuralIndex, P], T],
) -> Callable[Concatenate[StructuralIndex, P], T]:
    """Run an index method under the index's lock, so two threads never interleave the steps
    of one method (a document's upsert, say)."""

    @functools.wraps(method)
    def run(self: StructuralIndex, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class ServerClient(QdrantClient):
    """A Qdrant server through qdrant-client, with the index operations of ``IndexClient`` that
    a server does for itself or that the library may not do to it."""

    def __init__(self, location: str, api_key: str | None = None) -> None:
        """``location``: the server's URL (or ``:memory:``, qdrant-client's in-process
        reference of the server's behaviour, which the tests use)."""
        super().__init__(location=location, api_key=api_key)
        self.location = location

    def collection_metadata(self, collection_name: str) -> dict[str, Any]:
        return dict(self.get_collection(collection_name).config.metadata or {})

    def upgrade(self, collection_name: str) -> dict[str, Any] | None:
        """``committed`` flags an earlier version stored as JSON booleans become 0/1 integers
        (a ``MatchValue(True)`` matches no JSON boolean on every engine)."""
        if not self.collection_exists(collection_name):
            return None
        converted = {}
        for flag, value in ((True, COMMITTED), (False, HIDDEN)):
            flt = models.Filter(must=[_match("committed", flag)])
            converted[str(value)] = self.count(collection_name, count_filter=flt).count
            self.set_payload(collection_name, {"committed": value}, points=flt, wait=True)
        return {"flags": converted} if any(converted.values()) else None

    def closed(self) -> AbstractContextManager[None]:
        raise ValueError(f"the index at {self.location} is a server's: repair it there")

    def damaged(self) -> dict[str, str]:
        """A server checks its own storage: nothing to report here."""
        return {}

    def settle(self) -> None:
        """A server optimises by itself."""


class StructuralIndex:
    """Read and write structural entries; one instance per process and storage folder."""

    def __init__(self, settings: IndexSettings, library_root: Path) -> None:
        self.settings = settings
        self.library_root = library_root
        self.collection = settings.collection
        self.migrated: dict[str, Any] | None = None
        """What opening the index converted from an earlier version (``migrate``)."""
        self._lock = threading.RLock()

    @cached_property
    def client(self) -> IndexClient:
        """The server's client with ``QDRANT_URL``, else the library's embedded Edge index
        (converted first from Qdrant local mode if the library was built with it)."""
        if self.settings.qdrant_url:
            return ServerClient(self.settings.qdrant_url, self.settings.qdrant_api_key)
        client = edge_client(
            self.library_root, self.settings.index_wait_s, self.settings.search_threads
        )
        self.migrated = migrate_local_mode(
            self.library_root,
            client,
            self.settings.write_wait_s,
            {self.collection: PAYLOAD_INDEXES},
        )
        return client

    def migrate(self) -> dict[str, Any] | None:
        """Bring an index of an earlier version up to date, once; what was converted, or None.

        Embedded: a Qdrant local-mode index is converted to Edge (``store.migrate``) when the
        index is opened. Server: ``committed`` flags stored as JSON booleans become the 0/1
        integers searches match (``ServerClient.upgrade``)."""
        client = self.client
        return self.migrated or client.upgrade(self.collection)

    @property
    def embedded(self) -> bool:
        return not self.settings.qdrant_url

    @property
    def opened(self) -> bool:
        """Whether this process has used the index (so a write command has something to
        settle)."""
        return "client" in self.__dict__

    @cached_property
    def _cache_dir(self) -> Path:
        return self.settings.model_cache or default_cache_dir()

    @_exclusive
    def close(self) -> None:
        """Let go of the index (the embedded one is reopened by the next call)."""
        if "client" in self.__dict__:
            self.client.close()
            if not self.embedded:
                del self.__dict__["client"]

    @contextmanager
    def closed(self) -> Iterator[None]:
        """The embedded index owned with its shards closed, for the block (a server's index
        is not this library's to move: refused)."""
        client = self.client
        with self._lock, client.closed():
            yield

    def write_space_needed(self) -> int:
        """Free space the embedded index may take on the next writes (0 for a server). Before
        the collection's shard exists, its first write creates one (``FRESH_SHARD_BYTES`` of
        sparse files the engine fills later) and then needs what any write to it needs."""
        if not self.embedded:
            return 0
        folder = self.library_root / "edge"
        created = (folder / self.collection).is_dir()
        return write_space_needed(folder) + (0 if created else FRESH_SHARD_BYTES)

    def verify(self) -> dict[str, str]:
        """Each embedded collection that cannot be read through, with why (a server checks
        its own storage: nothing to report here)."""
        client = self.client
        with self._lock:
            return client.damaged()

    @_exclusive
    def settle(self) -> None:
        """After a write command: build the embedded shards' indexes (HNSW for large
        segments) and flush, so the write-ahead log does not grow and the next searches run on
        optimised segments. A server optimises by itself."""
        self.client.settle()

    # -- collection ----------------------------------------------------------------------
    @_exclusive
    def ensure_collection(self) -> None:
        """Create the collection on first use; refuse to mix embedding models."""
        if self.client.collection_exists(self.collection):
            self._check_model()
            return
        self.create_hybrid_collection(self.client, self.collection)
        for field, schema in PAYLOAD_INDEXES.items():
            self.client.create_payload_index(self.collection, field, field_schema=schema)

    def create_hybrid_collection(self, client: IndexClient, name: str) -> None:
        """A collection with this index's dense vector (cosine) and a BM25 vector (IDF)."""
        dim = len(self.embed_dense(["dimension probe"])[0])
        client.create_collection(
            name,
            vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"embedding_model": self.settings.embedding_model},
        )

    def _check_model(self) -> None:
        built_with = self.client.collection_metadata(self.collection).get("embedding_model")
        if built_with and built_with != self.settings.embedding_model:
            raise IndexMismatchError(
                f"collection {self.collection!r} was built with {built_with}, but "
                f"{self.settings.embedding_model} is configured; use another collection "
                "(VECTREE_COLLECTION) or re-ingest into a new library"
            )

    # -- embedding -----------------------------------------------------------------------
    def embed_dense(self, texts: list[str]) -> list[list[float]]:
        """One text per model run (``DENSE_BATCH``)."""
        model = dense_embedder(self.settings.embedding_model, self._cache_dir)
        return [vector.tolist() for vector in model.embed(texts, batch_size=DENSE_BATCH)]

    def embed_sparse(self, texts: list[str]) -> list[models.SparseVector]:
        model = sparse_embedder(self._cache_dir)
        return [
            models.SparseVector(indices=v.indices.tolist(), values=v.values.tolist())
            for v in model.embed(texts)
        ]

    def embed_sparse_query(self, text: str) -> models.SparseVector:
        vector = next(iter(sparse_embedder(self._cache_dir).query_embed(text)))
        return models.SparseVector(indices=vector.indices.tolist(), values=vector.values.tolist())

    def embed_entries(self, entries: list[IndexEntry]) -> list[EmbeddedEntry]:
        """Both vectors of every entry: the dense one of its compact text, the BM25 one of its
        content. Needs no open index, so ingestion workers embed in parallel and the process
        that owns the index only writes."""
        dense = self.embed_dense([entry["text"] for entry in entries])
        sparse = self.embed_sparse([entry["content"] for entry in entries])
        return [
            EmbeddedEntry(
                **entry,
                vectors=EntryVectors(
                    dense=d, sparse_indices=list(s.indices), sparse_values=list(s.values)
                ),
            )
            for entry, d, s in zip(entries, dense, sparse, strict=True)
        ]

    # -- writing -------------------------------------------------------------------------
    @_exclusive
    def upsert_document(self, doc_id: str, entries: list[EmbeddedEntry]) -> int:
        """Write a document's embedded entries, not yet searchable (``committed=0``)."""
        self.ensure_collection()
        points = [
            models.PointStruct(
                id=point_id(doc_id, entry["key"]),
                vector={
                    DENSE: entry["vectors"]["dense"],
                    SPARSE: models.SparseVector(
                        indices=entry["vectors"]["sparse_indices"],
                        values=entry["vectors"]["sparse_values"],
                    ),
                },
                payload={**entry["payload"], "text": entry["text"], "committed": HIDDEN},
            )
            for entry in entries
        ]
        for start in range(0, len(points), UPSERT_BATCH):
            self.client.upsert(self.collection, points[start : start + UPSERT_BATCH], wait=True)
        return len(points)

    @_exclusive
    def mark_committed(self, doc_id: str) -> None:
        """Make a document's entries searchable (after its folder became visible)."""
        self.client.set_payload(
            self.collection, {"committed": COMMITTED}, points=_doc_filter(doc_id), wait=True
        )

    @_exclusive
    def delete_document(self, doc_id: str) -> None:
        """Drop a document's points here and in the derived chunk collections
        (``<collection>__<scheme>_chunks``)."""
        derived = [
            c.name
            for c in self.client.get_collections().collections
            if c.name.startswith(f"{self.collection}__")
        ]
        for name in [self.collection, *derived]:
            if self.client.collection_exists(name):
                self.client.delete(name, points_selector=_doc_filter(doc_id), wait=True)

    # -- reading -------------------------------------------------------------------------
    @_exclusive
    def count(self, doc_id: str | None = None, committed_only: bool = True) -> int:
        if not self.client.collection_exists(self.collection):
            return 0
        conditions: list[models.Condition] = (
            [_match("committed", COMMITTED)] if committed_only else []
        )
        if doc_id:
            conditions.append(_match("doc_id", doc_id))
        result = self.client.count(self.collection, count_filter=models.Filter(must=conditions))
        return int(result.count)

    @_exclusive
    def held(self) -> IndexCounts:
        """What the index holds, for the completeness check (``store.completeness``): three
        count queries."""
        if not self.client.collection_exists(self.collection):
            return IndexCounts(0, 0, 0)
        committed = _match("committed", COMMITTED)
        documents = _match("entry_type", "document")

        def count(*conditions: models.Condition) -> int:
            flt = models.Filter(must=list(conditions))
            return int(self.client.count(self.collection, count_filter=flt).count)

        return IndexCounts(count(committed), count(committed, documents), count(documents))

    @property
    def location(self) -> str:
        """Where the entries live, as a user would look for them: the shard folder, or the
        server's collection URL."""
        if self.settings.qdrant_url:
            return f"{self.settings.qdrant_url.rstrip('/')}/collections/{self.collection}"
        return str(self.library_root / "edge" / self.collection)

    def doc_ids(self, committed: bool | None = None) -> set[str]:
        """Distinct doc ids in the index, optionally by commit state (paged scroll)."""
        return set(self.point_counts(committed))

    @_exclusive
    def point_counts(self, committed: bool | None = None) -> Counter[str]:
        """Points per doc id, optionally by commit state, in one paged scroll (a count query
        per document would scan the collection once per document)."""
        flag = COMMITTED if committed else HIDDEN
        flt = models.Filter(must=[_match("committed", flag)]) if committed is not None else None
        return Counter(str(payload["doc_id"]) for payload in self._payloads(["doc_id"], flt))

    @_exclusive
    def outdated(self) -> set[str]:
        """Doc ids with entries written by an older ``ENTRIES_VERSION`` (re-index them)."""
        return {
            str(payload["doc_id"])
            for payload in self._payloads(["doc_id", "entries_version"], None)
            if int(payload.get("entries_version") or 1) < ENTRIES_VERSION
        }

    def _payloads(self, fields: list[str], flt: models.Filter | None) -> Iterator[dict[str, Any]]:
        """The chosen payload fields of every point matching ``flt``, scrolled page by page."""
        if not self.client.collection_exists(self.collection):
            return
        points = scroll_points(self.client, self.collection, flt, vectors=False, payload=fields)
        yield from (p.payload for p in points if p.payload)


def scroll_points(
    client: IndexClient,
    collection: str,
    flt: models.Filter | None,
    vectors: bool,
    payload: list[str] | bool = True,
) -> Iterator[models.Record]:
    """Every point matching ``flt``, page by page (a single scroll call is capped)."""
    offset: Any = None
    while True:
        points, offset = client.scroll(
            collection,
            scroll_filter=flt,
            limit=SCROLL_PAGE,
            offset=offset,
            with_payload=payload,
            with_vectors=[DENSE, SPARSE] if vectors else False,
        )
        yield from points
        if offset is None:
            return


def _match(field: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=field, match=models.MatchValue(value=value))


def _doc_filter(doc_id: str) -> models.FilterSelector:
    return models.FilterSelector(filter=models.Filter(must=[_match("doc_id", doc_id)]))
