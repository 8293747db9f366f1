"""The embedded index: Qdrant Edge shards behind the store's ``IndexClient`` protocol.

Why Edge: it is Qdrant's own engine in-process (the server's Rust segments, HNSW and payload
indexes, sparse vectors with the IDF modifier, a write-ahead log), so the embedded library and a
Qdrant server (``QDRANT_URL``) answer the same queries the same way, and every module above
``store.index`` talks to one interface (``store.index_client``): the part of qdrant-client's
that the store uses, plus keeping the index. ``EdgeClient`` takes the client's arguments
(``qdrant_client.models``), runs them on one shard per collection under
``LIBRARY/edge/<collection>/`` and answers with qdrant-client's types.

Ownership: a shard may be open in one process only, and merely trying to open a held shard
breaks the holder's later flushes. So the client opens shards only while this process owns
the library's index lock (``store.locks.own_index``), and a lender thread gives the lock up
between two operations whenever another process waits for it; the next operation takes it
again. Each shard's leftovers of an optimisation killed half way (``temp_segments/``) are
removed when it is opened, which is safe because nobody else can be optimising it then.

Damage and disks (``store.faults``): every engine error becomes :class:`IndexUnreadable`, one
line naming the shard, whose remedy (``vectree check --repair``) rebuilds the index from the
documents. A shard not closed cleanly by this code since its files last changed (its
``STAMP_FILE`` no longer matches them) is read through by a child process before this one
opens it (``store.shard_probe``), since some damage aborts the process that opens it. Free
space is checked before a shard is opened and before each write, so the engine never touches
a memory-mapped page the disk cannot back (SIGBUS). A library on a read-only filesystem is
searched in a private, sparse copy of its shards (``read_only_copy``) and refuses writes.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import qdrant_edge as edge
from qdrant_client import models
from qdrant_client.http import models as rest

from store.faults import (
    MIB,
    IndexUnreadable,
    ReadOnlyLibrary,
    StorageError,
    one_line,
    require_space,
    storage_error,
    unallocated_bytes,
    writable,
)
from store.library import read_json, write_json
from store.locks import POLL_S, index_wanted, own_index, unflock
from store.shard_probe import META_FILE, probe, shard_config

LOG = logging.getLogger(__name__)
TEMP_SEGMENTS = "temp_segments"
STAMP_FILE = "vectree-closed-cleanly.json"
"""A digest of a shard's files written right after this code flushed and closed it: while it
matches, the shard is opened without a probe."""
FRESH_SHARD_BYTES = 200 * MIB
"""What the engine pre-allocates for a new shard or segment (measured: 195 MiB of sparse files
for a new collection: two 32 MiB log segments, 32 MiB vector, payload and BM25 pages, the
payload indexes)."""
T = TypeVar("T")
_SCHEMAS = {
    models.PayloadSchemaType.KEYWORD: edge.PayloadSchemaType.Keyword,
    models.PayloadSchemaType.INTEGER: edge.PayloadSchemaType.Integer,
    models.PayloadSchemaType.FLOAT: edge.PayloadSchemaType.Float,
    models.PayloadSchemaType.BOOL: edge.PayloadSchemaType.Bool,
    models.PayloadSchemaType.TEXT: edge.PayloadSchemaType.Text,
}
_DISTANCES = {
    models.Distance.COSINE: edge.Distance.Cosine,
    models.Distance.DOT: edge.Distance.Dot,
    models.Distance.EUCLID: edge.Distance.Euclid,
}


class EdgeClient:
    """One library's collections as Qdrant Edge shards, opened only while this process owns
    the library's index (see the module docstring). One instance per folder and process
    (``edge_client``); every method is safe to call from several threads."""

    def __init__(
        self,
        folder: Path,
        lock_root: Path | None,
        wait_s: float,
        threads: int,
        source: Path | None = None,
    ) -> None:
        """``folder`` holds one shard per collection; ``lock_root`` is the library folder whose
        index lock guards them (None: the caller holds it already, as a migration does, or the
        folder is a private copy); ``source`` is the read-only folder ``folder`` copies."""
        self.folder = folder
        self.source = source
        self.lock_root = lock_root
        self.wait_s = wait_s
        self.threads = threads
        self._shards: dict[str, edge.EdgeShard] = {}
        self._written: set[str] = set()
        self._lock_fd: int | None = None
        self._mutex = threading.RLock()
        self._lender: threading.Thread | None = None
        self._stop = threading.Event()

    # -- ownership -----------------------------------------------------------------------------
    @contextmanager
    def _owned(self) -> Iterator[None]:
        """Run one operation as the index's owner (taking the lock first when lent out)."""
        with self._mutex:
            if self.lock_root is not None and self._lock_fd is None:
                self._lock_fd = own_index(self.lock_root, self.wait_s)
                self._start_lender()
            yield

    def _start_lender(self) -> None:
        if self._lender is not None and self._lender.is_alive():
            return
        self._stop.clear()
        self._lender = threading.Thread(target=self._lend, name="edge-lender", daemon=True)
        self._lender.start()

    def _lend(self) -> None:
        """While this process owns the index, let go of it whenever another process waits,
        between two operations (an operation in progress finishes first)."""
        assert self.lock_root is not None
        while not self._stop.wait(POLL_S):
            if not index_wanted(self.lock_root):
                continue
            with self._mutex:
                if self._lock_fd is not None and index_wanted(self.lock_root):
                    LOG.info("lending the index of %s to a waiting process", self.lock_root)
                    self._release()
                    return

    def _release(self) -> None:
        """Flush and close every shard, then give up the index lock."""
        for name in list(self._shards):
            self._close_shard(name)
        if self._lock_fd is not None:
            unflock(self._lock_fd)
            self._lock_fd = None

    def _close_shard(self, name: str) -> None:
        """Flush and close an open shard, stamping it as closed cleanly (a private copy of a
        read-only library is not stamped: it is thrown away). A shard that cannot be flushed
        (a full disk) is closed unstamped, with a warning."""
        shard = self._shards.pop(name)
        try:
            shard.flush()
        except Exception as exc:  # a full disk: the write-ahead log holds every write made
            LOG.warning(
                "could not flush %s (%s); its write-ahead log keeps every write, and the next "
                "command reads it through",
                self._path(name),
                one_line(str(exc)),
            )
            with suppress(Exception):  # the warning above says all there is to say
                shard.close()
            return
        shard.close()
        if self.source is None:
            stamp_clean_close(self._path(name))

    @contextmanager
    def closed(self) -> Iterator[None]:
        """Own the index with every shard closed for the block (to move its folder aside)."""
        with self._owned():
            for name in list(self._shards):
                self._shards.pop(name).close()
            yield

    def close(self) -> None:
        """Flush, close the shards and let go of the index (the client stays usable: the next
        call opens them again)."""
        self._stop.set()
        with self._mutex:
            self._release()
        if self._lender is not None and self._lender is not threading.current_thread():
            self._lender.join()
            self._lender = None

    # -- shards --------------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"invalid collection name {name!r}")
        return self.folder / name

    def _shard(self, name: str) -> edge.EdgeShard:
        """The open shard of a collection (opened and cleaned on first use); owned already.

        Before opening: the space its write-ahead log will take, and a probe in a child
        process unless the shard is as this code last closed it."""
        shard = self._shards.get(name)
        if shard is None:
            if not self.collection_exists(name):
                raise ValueError(f"collection {name!r} does not exist in {self.folder}")
            path = self._path(name)
            shown = self._shown(path)
            remove_stale_builders(path)
            require_open_space(path)
            if not closed_cleanly(path):
                LOG.info("%s was not closed cleanly: reading it through in a child first", shown)
                problem = probe(path)
                if problem is not None:
                    raise IndexUnreadable(shown, _within(path, problem))
            try:
                shard = edge.EdgeShard.load(str(path), self._config(name))
            except Exception as exc:  # the engine raises plain Exception
                raise IndexUnreadable(shown, _within(path, str(exc))) from None
            self._shards[name] = shard
        return shard

    def _shown(self, path: Path) -> Path:
        """A shard's folder as the user knows it (the library's, not a read-only copy's)."""
        if self.source is None:
            return path
        return self.source / path.relative_to(self.folder)

    def _config(self, name: str) -> edge.EdgeConfig:
        """The shard's configuration as created, with this process's search thread bound."""
        return shard_config(self._meta(name), self.threads)

    def _meta(self, name: str) -> dict[str, Any]:
        value: dict[str, Any] = read_json(self._path(name) / META_FILE)
        return value

    def _run(self, name: str, work: Callable[[edge.EdgeShard], T]) -> T:
        with self._owned():
            shard = self._shard(name)
            try:
                return work(shard)
            except StorageError:
                raise
            except Exception as exc:
                if type(exc) is not Exception:  # ours (TypeError, ValueError): a bug, not damage
                    raise
                raise self._engine_error(name, exc) from None

    def _write(self, name: str, work: Callable[[edge.EdgeShard], T], settled: bool = False) -> T:
        """A write: refused on a read-only library, and unless the shard's sparse files can
        all be filled and a new segment written. Remembered for ``written`` unless it is the
        settling itself."""
        if self.source is not None:
            raise ReadOnlyLibrary(self.source, "write to its index")
        path = self._path(name)
        require_space(path, write_space_needed(path), "writing to its index")
        if not settled:
            self._written.add(name)
        return self._run(name, work)

    def settle(self) -> None:
        """Optimise and flush the collections written since the last call, so the write-ahead
        log does not grow and the next searches run on optimised segments."""
        with self._mutex:
            names, self._written = sorted(self._written), set()
        for name in names:
            if self.collection_exists(name):
                self.optimize(name)

    def upgrade(self, collection_name: str) -> None:
        """Nothing to convert here: an embedded index written by an earlier version is
        converted when it is opened (``store.migrate``)."""
        return None

    def damaged(self) -> dict[str, str]:
        """Each collection's shard folder (as the user knows it) that a child process cannot
        read through, with why (the open shards are closed first, so the child never opens a
        held one). A disk too full to open a shard raises ``NoSpace`` rather than calling the
        shard unreadable."""
        problems: dict[str, str] = {}
        with self._owned():
            for described in self.get_collections().collections:
                name = described.name
                if name in self._shards:
                    self._close_shard(name)
                path = self._path(name)
                require_open_space(path)
                problem = probe(path)
                if problem is not None:
                    problems[str(self._shown(path))] = _within(path, problem)
        return problems

    def _engine_error(self, name: str, exc: Exception) -> StorageError:
        """An engine error as one line: a full disk or a read-only file says so; anything
        else is damage, rebuilt by ``vectree check --repair``."""
        message, shown = str(exc), self._shown(self._path(name))
        for code in (errno.ENOSPC, errno.EROFS, errno.EACCES):
            if f"(os error {code})" in message:  # how the engine words an OS error
                error = storage_error(OSError(code, message), shown, "write its index")
                if error is not None:
                    return error
        return IndexUnreadable(shown, _within(self._path(name), message))

    # -- collections ---------------------------------------------------------------------------
    def collection_exists(self, collection_name: str) -> bool:
        return (self._path(collection_name) / META_FILE).is_file()

    def get_collections(self) -> models.CollectionsResponse:
        names = sorted(p.parent.name for p in self.folder.glob(f"*/{META_FILE}"))
        return models.CollectionsResponse(
            collections=[models.CollectionDescription(name=n) for n in names]
        )

    def collection_metadata(self, collection_name: str) -> dict[str, Any]:
        return dict(self._meta(collection_name).get("metadata") or {})

    def create_collection(
        self,
        collection_name: str,
        vectors_config: dict[str, models.VectorParams],
        sparse_vectors_config: dict[str, models.SparseVectorParams] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """A shard with cosine dense vectors and IDF sparse vectors (the only kinds the store
        declares); anything else is refused rather than silently changed."""
        for params in vectors_config.values():
            if params.distance != models.Distance.COSINE:
                raise ValueError(f"only cosine dense vectors are supported, not {params.distance}")
        for sparse in (sparse_vectors_config or {}).values():
            if sparse.modifier != models.Modifier.IDF:
                raise ValueError("only IDF-weighted sparse vectors are supported")
        if self.source is not None:
            raise ReadOnlyLibrary(self.source, "create an index collection")
        with self._owned():
            path = self._path(collection_name)
            require_space(self.folder, FRESH_SHARD_BYTES, "creating its index")
            if path.exists():  # a creation cut short: no metadata, nothing searchable
                shutil.rmtree(path)
            meta = {
                "dense": {name: p.size for name, p in vectors_config.items()},
                "sparse": sorted(sparse_vectors_config or {}),
                "metadata": metadata or {},
            }
            path.mkdir(parents=True)
            write_json(path / META_FILE, meta)
            try:
                shard = edge.EdgeShard.create(str(path), self._config(collection_name))
            except Exception as exc:
                raise self._engine_error(collection_name, exc) from None
            self._shards[collection_name] = shard
        return True

    def create_payload_index(
        self, collection_name: str, field_name: str, field_schema: models.PayloadSchemaType
    ) -> None:
        operation = edge.UpdateOperation.create_field_index(field_name, _SCHEMAS[field_schema])
        self._write(collection_name, lambda shard: shard.update(operation))

    # -- writing -------------------------------------------------------------------------------
    def upsert(
        self, collection_name: str, points: Sequence[models.PointStruct], wait: bool = True
    ) -> None:
        converted = [
            edge.Point(id=str(p.id), vector=_vectors(p.vector), payload=p.payload) for p in points
        ]
        operation = edge.UpdateOperation.upsert_points(converted)
        self._write(collection_name, lambda shard: shard.update(operation))

    def set_payload(
        self,
        collection_name: str,
        payload: dict[str, Any],
        points: models.FilterSelector | models.Filter,
        wait: bool = True,
    ) -> None:
        operation = edge.UpdateOperation.set_payload_by_filter(_selected(points), payload)
        self._write(collection_name, lambda shard: shard.update(operation))

    def delete(
        self,
        collection_name: str,
        points_selector: models.FilterSelector | models.Filter,
        wait: bool = True,
    ) -> None:
        operation = edge.UpdateOperation.delete_points_by_filter(_selected(points_selector))
        self._write(collection_name, lambda shard: shard.update(operation))

    def optimize(self, collection_name: str) -> bool:
        """Build the shard's indexes now (HNSW once a segment is large enough) and flush, so
        searches after a write command run on optimised segments; True if anything changed."""

        def work(shard: edge.EdgeShard) -> bool:
            changed = shard.optimize()
            shard.flush()
            return changed

        return self._write(collection_name, work, settled=True)

    # -- reading -------------------------------------------------------------------------------
    def count(
        self, collection_name: str, count_filter: models.Filter | None = None, exact: bool = True
    ) -> models.CountResult:
        request = edge.CountRequest(filter=_filter(count_filter), exact=True)
        return models.CountResult(count=self._run(collection_name, lambda s: s.count(request)))

    def scroll(
        self,
        collection_name: str,
        scroll_filter: models.Filter | None = None,
        limit: int = 10,
        offset: Any = None,
        with_payload: bool | list[str] = True,
        with_vectors: bool | list[str] = False,
    ) -> tuple[list[models.Record], Any]:
        request = edge.ScrollRequest(
            offset=str(offset) if offset is not None else None,
            limit=limit,
            filter=_filter(scroll_filter),
            with_payload=with_payload,
            with_vector=with_vectors,
        )
        records, following = self._run(collection_name, lambda s: s.scroll(request))
        converted = [
            models.Record(id=str(r.id), payload=r.payload, vector=_record_vectors(r.vector))
            for r in records
        ]
        return converted, (str(following) if following is not None else None)

    def retrieve(
        self,
        collection_name: str,
        ids: Sequence[Any],
        with_payload: bool | list[str] = True,
        with_vectors: bool | list[str] = False,
    ) -> list[models.Record]:
        """The points with these ids (missing ones are left out), as ``QdrantClient.retrieve``."""
        point_ids: list[int | UUID | str] = [str(i) for i in ids]
        records = self._run(
            collection_name,
            lambda shard: shard.retrieve(point_ids, with_payload, with_vectors),
        )
        return [
            models.Record(id=str(r.id), payload=r.payload, vector=_record_vectors(r.vector))
            for r in records
        ]

    def query_batch_points(
        self, collection_name: str, requests: Sequence[models.QueryRequest]
    ) -> list[rest.QueryResponse]:
        """Nearest neighbours of several dense or sparse vectors in one call (the only query
        the store sends). Each answer is validated as a whole by pydantic-core, from plain
        dicts: per point, that is under a microsecond, against 1.2 µs for the validating
        constructor and 5 µs for ``model_construct`` (pure Python)."""
        batch = edge.QueryBatchRequest([_query_request(r) for r in requests])
        answers = self._run(collection_name, lambda shard: shard.query_batch(batch))
        return [
            rest.QueryResponse.model_validate(
                {
                    "points": [
                        {
                            "id": str(p.id),
                            "version": p.version,
                            "score": p.score,
                            "payload": p.payload,
                        }
                        for p in found
                    ]
                }
            )
            for found in answers
        ]


def _within(shard: Path, problem: str) -> str:
    """An engine message with the shard's own folder left out of the paths it names (the
    error already names the folder once)."""
    return problem.replace(f"{shard}/", "").replace(str(shard), "the shard")


def _payload_fields(selection: Any) -> bool | list[str]:
    if selection is None:
        return True
    if isinstance(selection, bool | list):
        return selection
    raise TypeError("payload is selected by a list of field names")


def _query_request(request: models.QueryRequest) -> edge.QueryRequest:
    query: Any = request.query
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    if isinstance(query, models.SparseVector):
        vector: Any = edge.SparseVector(indices=list(query.indices), values=list(query.values))
    elif isinstance(query, list):
        vector = list(query)
    else:
        raise TypeError(f"unsupported query {type(query).__name__}: the store sends vectors")
    params = request.params
    return edge.QueryRequest(
        limit=request.limit or 10,
        query=edge.Query.Nearest(vector, using=request.using),
        filter=_filter(request.filter),
        with_payload=_payload_fields(request.with_payload),
        params=edge.SearchParams(hnsw_ef=params.hnsw_ef, exact=bool(params.exact))
        if params is not None
        else None,
    )


def remove_stale_builders(shard: Path) -> list[Path]:
    """Delete what an optimisation killed half way left in a shard (``temp_segments/``, often
    hundreds of MB); only called by the shard's owner, so no optimisation is running."""
    removed = sorted((shard / TEMP_SEGMENTS).glob("*"))
    for leftover in removed:
        LOG.warning("removing %s, left by an interrupted index optimisation", leftover)
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()
    return removed


def stale_builders(folder: Path) -> list[Path]:
    """Leftovers of interrupted optimisations in every shard under ``folder`` (for reports)."""
    return sorted(folder.glob(f"*/{TEMP_SEGMENTS}/*"))


# -- conversions from qdrant-client's models -----------------------------------------------------
def _vectors(vector: Any) -> dict[str, Any]:
    if not isinstance(vector, dict):
        raise TypeError("points carry named vectors")
    return {
        name: edge.SparseVector(indices=list(v.indices), values=list(v.values))
        if isinstance(v, models.SparseVector)
        else list(v)
        for name, v in vector.items()
    }


def _record_vectors(vector: Any) -> dict[str, Any] | None:
    if not isinstance(vector, dict):
        return None
    return {
        name: models.SparseVector(indices=list(v.indices), values=list(v.values))
        if isinstance(v, edge.SparseVector)
        else list(v)
        for name, v in vector.items()
    }


def _filter(flt: models.Filter | None) -> edge.Filter | None:
    if flt is None:
        return None
    return edge.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
    )


def _selected(points: models.FilterSelector | models.Filter) -> edge.Filter:
    """The filter of a points selector (the store selects points by filter only)."""
    flt = points.filter if isinstance(points, models.FilterSelector) else points
    converted = _filter(flt)
    assert converted is not None
    return converted


def _conditions(conditions: Any) -> list[Any] | None:
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        conditions = [conditions]
    return [_condition(c) for c in conditions]


def _condition(condition: Any) -> Any:
    if isinstance(condition, models.Filter):
        return _filter(condition)
    if not isinstance(condition, models.FieldCondition):
        raise TypeError(f"unsupported filter condition {type(condition).__name__}")
    if condition.range is not None:
        r = condition.range
        bounds = {"gte": r.gte, "gt": r.gt, "lte": r.lte, "lt": r.lt}
        if not all(b is None or isinstance(b, int | float) for b in bounds.values()):
            raise TypeError("only numeric ranges are supported")
        return edge.FieldCondition(key=condition.key, range=edge.RangeFloat(**bounds))  # type: ignore[arg-type]
    return edge.FieldCondition(key=condition.key, match=_match(condition.match))


def _match(match: Any) -> Any:
    if isinstance(match, models.MatchValue):
        if isinstance(match.value, bool):
            # Edge matches no JSON boolean with MatchValue: flags are stored as integers.
            raise ValueError("boolean payload flags are stored as 0/1 integers; match those")
        return edge.MatchValue(match.value)
    if isinstance(match, models.MatchAny):
        return edge.MatchAny(list(match.any))  # type: ignore[arg-type]
    raise TypeError(f"unsupported match {type(match).__name__}")


def require_open_space(shard: Path) -> None:
    """``NoSpace`` unless the disk can hold what opening the shard writes: its write-ahead
    log's pre-allocated segments, filled on open."""
    require_space(shard, unallocated_bytes(shard.glob("wal/*")), "opening its index")


def write_space_needed(folder: Path) -> int:
    """Free space a write under ``folder`` (a shard, or the whole index) may take: every
    sparse byte the engine may still fill, plus a new segment."""
    files = (p for p in folder.rglob("*") if p.is_file())
    return unallocated_bytes(files) + FRESH_SHARD_BYTES


# -- clean closes -----------------------------------------------------------------------------
def fingerprint(shard: Path) -> str:
    """A digest of every file of a shard (name, size, modification time), our own files aside."""
    rows = []
    for path in sorted(p for p in shard.rglob("*") if p.is_file()):
        if path.name in (STAMP_FILE, META_FILE):
            continue
        stat = path.stat()
        rows.append([str(path.relative_to(shard)), stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def stamp_clean_close(shard: Path) -> None:
    """Record that this code just flushed and closed the shard (best effort: a library that
    cannot be written is probed every time instead)."""
    try:
        write_json(shard / STAMP_FILE, {"fingerprint": fingerprint(shard)})
    except OSError as exc:
        LOG.debug("could not stamp %s as closed cleanly: %s", shard, exc)


def closed_cleanly(shard: Path) -> bool:
    """Whether the shard's files are exactly as this code left them when it last closed it."""
    try:
        stamp = json.loads((shard / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp.get("fingerprint") == fingerprint(shard)


# -- read-only libraries -------------------------------------------------------------------------
def read_only_copy(index_folder: Path) -> Path:
    """A private copy of a read-only library's shards (the engine writes to every shard it
    opens), sparse like the original so it takes only the blocks that hold data; removed when
    the process ends."""
    copy = Path(tempfile.mkdtemp(prefix="vectree-read-only-index-"))
    atexit.register(shutil.rmtree, copy, True)
    target = copy / index_folder.name
    if index_folder.is_dir():
        require_space(copy, used_bytes(index_folder), f"a private copy of {index_folder}")
        shutil.copytree(index_folder, target, copy_function=copy_sparse)
    else:
        target.mkdir()
    return target


def used_bytes(folder: Path) -> int:
    """Disk blocks the files under ``folder`` occupy (what a sparse copy needs)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def copy_sparse(source: str, target: str) -> str:
    """Copy a file's data regions only, leaving its holes as holes."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(src.fileno(), offset, os.SEEK_DATA)
            except OSError:  # no data after offset
                break
            end = os.lseek(src.fileno(), start, os.SEEK_HOLE)
            src.seek(start)
            dst.seek(start)
            dst.write(src.read(end - start))
            offset = end
        dst.truncate(size)
    shutil.copystat(source, target)
    return target


_CLIENTS: dict[Path, EdgeClient] = {}
_CLIENTS_LOCK = threading.Lock()


def edge_client(library_root: Path, wait_s: float, threads: int) -> EdgeClient:
    """The process's one client for a library's shards (two in one process would open the
    same shard twice). A library this process cannot write is searched in a private copy."""
    root = library_root.resolve()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(root)
        if client is None:
            if writable(root):
                client = EdgeClient(root / "edge", root, wait_s, threads)
            else:
                copy = read_only_copy(root / "edge")
                client = EdgeClient(copy, None, wait_s, threads, source=root / "edge")
            _CLIENTS[root] = client
        return client
