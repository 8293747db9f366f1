"""Per-entry candidate scores for a query, from Qdrant: the embedded Edge index or a server.

The engine sends two nearest-neighbour queries to the index's collection, dense cosine and BM25
(sparse vectors with Qdrant's IDF modifier), each limited to the committed entries that pass
the filters, and returns the top ``depth`` entries of each with the score of every retriever
that returned the entry (NaN where it did not). Fusion and gating live in ``tools/search.py``.

The queries return point ids and scores only. Reading a point's payload costs Qdrant about as
much as the search itself (the whole payload is read and decoded, whatever fields are asked
for), and turning 2 × 256 full payloads into Python objects took most of a query's time. So the
engine resolves ids through the entry map (``store.entry_map``: point id → (doc id, node id) of
every committed entry, kept on disk per index version) and asks the index only for ids it
lacks. What a result shows (``PAYLOAD_FIELDS``: title,
authors, venue, section titles and pages…) is retrieved by point id afterwards, for the few
documents and sections returned (``describe``).

The same code serves both deployments: ``StructuralIndex.client`` is an ``IndexClient``
(``store.index_client``), a Qdrant server through qdrant-client (``QDRANT_URL``) or the
embedded ``store.edge.EdgeClient``. Filtered dense queries search the HNSW graph with
``hnsw_ef`` of at least ``HNSW_EF``: at the default ef, a single-year filter lost 16 % of the
exact top 10.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from qdrant_client import models

from store.entry_map import EntryMap, EntryRef, entry_key, map_path, remove_other_versions
from store.index import COMMITTED, DENSE, SPARSE, point_id, scroll_points
from store.index_client import IndexClient
from store.vectors import BoolArray, FloatArray, IntArray, SparseQuery

LOG = logging.getLogger(__name__)
HNSW_EF = 256
ENTRY_TYPES: tuple[str, ...] = ("document", "section")
PAYLOAD_FIELDS = [
    "doc_id",
    "entry_type",
    "node_id",
    "section_title",
    "start_page",
    "end_page",
    "title",
    "year",
    "venue",
    "authors",
    "total_pages",
    "committed",
]
RANKING_FIELDS = ["doc_id", "entry_type", "node_id"]
"""What fusion reads of a candidate: its document, and its section (node ids order ties)."""


# -- values exchanged with the search layer ------------------------------------------------------
@dataclass(frozen=True)
class SearchFilters:
    """Document filters shared by both engines; ``None`` means "no restriction".

    ``journal`` and ``author`` are case-insensitive substrings of the venue and of any author
    name; a year filter excludes documents whose year is unknown.
    """

    year_min: int | None = None
    year_max: int | None = None
    journal: str | None = None
    author: str | None = None
    doc_ids: frozenset[str] | None = None
    entry_types: tuple[str, ...] = ENTRY_TYPES

    @property
    def has_year(self) -> bool:
        return self.year_min is not None or self.year_max is not None


@dataclass(frozen=True)
class DocumentInfo:
    """The payload fields of a document that a search result shows."""

    doc_id: str
    title: str
    authors: tuple[str, ...]
    year: int | None
    venue: str | None
    total_pages: int


@dataclass(frozen=True)
class SectionInfo:
    """A top-level section entry: where it is and what it is called."""

    node_id: str
    title: str
    start_page: int
    end_page: int


@dataclass
class Candidates:
    """Candidate entries of one query and their per-retriever scores.

    ``doc_ids`` is sorted (so its row order is a deterministic tie-break); ``entry_doc`` points
    each candidate entry into it; ``node_ids`` holds each entry's section node id (``None`` for
    a document entry). ``dense``/``bm25`` are NaN where that retriever did not return the entry
    (not in its top ``depth``, or no shared BM25 term). What a result shows of its document and
    sections comes from ``SearchEngine.describe``.
    """

    doc_ids: Sequence[str]
    entry_doc: IntArray
    node_ids: list[str | None]
    dense: FloatArray
    bm25: FloatArray

    @classmethod
    def empty(cls) -> Candidates:
        return cls([], np.zeros(0, np.int64), [], np.zeros(0, np.float32), np.zeros(0, np.float32))

    def __len__(self) -> int:
        return len(self.entry_doc)


@dataclass(frozen=True)
class Descriptions:
    """Shown fields of some documents (by doc id) and sections (by (doc id, node id))."""

    documents: dict[str, DocumentInfo]
    sections: dict[tuple[str, str], SectionInfo]


def _document_info(payload: dict[str, Any]) -> DocumentInfo:
    year = payload.get("year")
    return DocumentInfo(
        doc_id=str(payload["doc_id"]),
        title=str(payload.get("title") or ""),
        authors=tuple(str(a) for a in payload.get("authors") or ()),
        year=int(year) if isinstance(year, int | float) and not isinstance(year, bool) else None,
        venue=str(payload["venue"]) if payload.get("venue") else None,
        total_pages=int(payload.get("total_pages") or 0),
    )


def _section_info(payload: dict[str, Any]) -> SectionInfo | None:
    if payload.get("entry_type") != "section":
        return None
    return SectionInfo(
        node_id=str(payload.get("node_id") or ""),
        title=str(payload.get("section_title") or ""),
        start_page=int(payload.get("start_page") or 0),
        end_page=int(payload.get("end_page") or 0),
    )


def _match(field_name: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=field_name, match=models.MatchValue(value=value))


_DOCUMENTS = models.Filter(must=[_match("committed", COMMITTED), _match("entry_type", "document")])


class _DocumentTable:
    """Per-document columns (sorted by doc_id) that turn document filters into masks."""

    def __init__(self, infos: Sequence[DocumentInfo]) -> None:
        self.infos = sorted(infos, key=lambda info: info.doc_id)
        self.ids = np.array([info.doc_id for info in self.infos], dtype=str)
        self.year = np.array(
            [info.year if info.year is not None else -1 for info in self.infos], dtype=np.int64
        )
        self.venue = np.array([(info.venue or "").lower() for info in self.infos], dtype=str)
        # one string per document; "\n" never occurs in a (stripped) filter, so no false hits
        self.authors = np.array(["\n".join(info.authors).lower() for info in self.infos], dtype=str)

    def __len__(self) -> int:
        return len(self.infos)

    def mask(self, filters: SearchFilters) -> BoolArray | None:
        """Documents passing the document-level filters; ``None`` when nothing restricts."""
        mask: BoolArray | None = None

        def narrow(keep: BoolArray) -> None:
            nonlocal mask
            mask = keep if mask is None else mask & keep

        if filters.has_year:
            keep = self.year >= 0
            if filters.year_min is not None:
                keep &= self.year >= filters.year_min
            if filters.year_max is not None:
                keep &= self.year <= filters.year_max
            narrow(keep)
        if filters.journal is not None:
            narrow(_contains(self.venue, filters.journal))
        if filters.author is not None:
            narrow(_contains(self.authors, filters.author))
        if filters.doc_ids is not None:
            narrow(np.isin(self.ids, np.array(sorted(filters.doc_ids), dtype=str)))
        return mask

    def matching(self, filters: SearchFilters) -> list[DocumentInfo]:
        mask = self.mask(filters)
        if mask is None:
            return list(self.infos)
        return [self.infos[i] for i in np.flatnonzero(mask)]


def _contains(column: NDArray[np.str_], needle: str) -> BoolArray:
    """Case-insensitive substring test over a lower-cased string column (vectorised)."""
    text = " ".join(needle.split()).lower()
    if not len(column):
        return np.zeros(0, dtype=bool)
    return np.asarray(np.strings.find(column, text) >= 0)


def _row_key(ref: EntryRef) -> tuple[str, int, str]:
    """Rows grouped by document, its document entry first, then sections in tree order."""
    doc_id, node = ref
    return (doc_id, 0, "") if node is None else (doc_id, 1, node)


# -- the engine ----------------------------------------------------------------------------------
@dataclass
class SearchEngine:
    """Candidates through Qdrant's query API, for the index's client (Edge or a server).

    Year, doc-id and entry-type filters go into the Qdrant filter; the venue and author
    substring filters (case-insensitive, any author) are resolved to doc ids through a table of
    the document entries, scrolled once per index version, because Qdrant's text match is
    token-based and its substring match case-sensitive.
    """

    client: IndexClient
    collection: str
    version: str = ""
    map_file: Path | None = None
    """Where the entry map of this version is kept (None: derived in memory only)."""
    name: str = field(default="qdrant", init=False)
    _table: _DocumentTable | None = field(default=None, init=False, repr=False)
    _map: EntryMap | None = field(default=None, init=False, repr=False)
    _committed_docs: int | None = field(default=None, init=False, repr=False)
    _map_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _learned: dict[str, EntryRef] = field(default_factory=dict, init=False, repr=False)

    @property
    def table(self) -> _DocumentTable:
        """Payloads of the committed document entries (scrolled once per index version, only
        for the filters and browsing that need them)."""
        if self._table is None:
            infos: list[DocumentInfo] = []
            if self.client.collection_exists(self.collection):
                for point in scroll_points(
                    self.client, self.collection, _DOCUMENTS, False, PAYLOAD_FIELDS
                ):
                    infos.append(_document_info(point.payload or {}))
            self._table = _DocumentTable(infos)
        return self._table

    @property
    def entry_map(self) -> EntryMap:
        """The entry map of this index version: the saved one, or derived from the document
        entries' ``section_ids`` (one scroll of two fields) and saved for the next process;
        once per engine, however many threads ask at the same time."""
        with self._map_lock:
            if self._map is None:
                saved = EntryMap.load(self.map_file) if self.map_file is not None else None
                self._map = saved if saved is not None else self._derive_map()
            return self._map

    def _derive_map(self) -> EntryMap:
        documents: list[tuple[str, list[str]]] = []
        if self.client.collection_exists(self.collection):
            for point in scroll_points(
                self.client, self.collection, _DOCUMENTS, False, ["doc_id", "section_ids"]
            ):
                payload = point.payload or {}
                sections = [str(n) for n in payload.get("section_ids") or ()]
                documents.append((str(payload["doc_id"]), sections))
        derived = EntryMap.derive(documents)
        if self.map_file is not None:
            try:
                derived.save(self.map_file)
                remove_other_versions(self.map_file)
            except OSError as exc:
                LOG.warning("could not keep the entry map in %s: %s", self.map_file, exc)
        return derived

    def corpus_size(self) -> int:
        """Number of committed documents: counted once per index version (no table is loaded
        for it), since an exact count under the committed filter costs every search about
        18 ms at 100,000 documents and only a commit or a removal changes it."""
        if self._committed_docs is None:
            self._committed_docs = (
                int(self.client.count(self.collection, count_filter=_DOCUMENTS).count)
                if self.client.collection_exists(self.collection)
                else 0
            )
        return self._committed_docs

    def documents(self, filters: SearchFilters) -> list[DocumentInfo]:
        """Every committed document matching the filters (for browsing), unordered."""
        return self.table.matching(filters)

    def query_filter(self, filters: SearchFilters) -> models.Filter | None:
        """The Qdrant filter for ``filters``; ``None`` when no document can match. Every entry
        is a document or a section entry, so the entry type is a condition only when one of
        them is left out (a condition that keeps every point still costs each visited point a
        lookup: about a millisecond of a 10,000-document query)."""
        must: list[models.Condition] = [_match("committed", COMMITTED)]
        if set(filters.entry_types) != set(ENTRY_TYPES):
            types = list(filters.entry_types)
            must.append(models.FieldCondition(key="entry_type", match=models.MatchAny(any=types)))
        if filters.has_year:
            rng = models.Range(gte=filters.year_min, lte=filters.year_max)
            must.append(models.FieldCondition(key="year", range=rng))
        allowed = self._allowed_doc_ids(filters)
        if allowed is not None:
            if not allowed:
                return None
            must.append(models.FieldCondition(key="doc_id", match=models.MatchAny(any=allowed)))
        return models.Filter(must=must)

    def _allowed_doc_ids(self, filters: SearchFilters) -> list[str] | None:
        if filters.journal is None and filters.author is None:
            return sorted(filters.doc_ids) if filters.doc_ids is not None else None
        text_only = SearchFilters(
            journal=filters.journal, author=filters.author, doc_ids=filters.doc_ids
        )
        return [info.doc_id for info in self.table.matching(text_only)]

    def candidates(
        self, dense: FloatArray, sparse: SparseQuery, filters: SearchFilters, depth: int
    ) -> Candidates:
        """Top ``depth`` entries under each retriever, filters applied, committed only."""
        if not filters.entry_types or not self.client.collection_exists(self.collection):
            return Candidates.empty()
        flt = self.query_filter(filters)
        if flt is None:
            return Candidates.empty()
        requests = [self._request(np.asarray(dense, np.float32).tolist(), DENSE, flt, depth)]
        if len(sparse.indices):
            vector = models.SparseVector(
                indices=sparse.indices.tolist(), values=sparse.values.tolist()
            )
            requests.append(self._request(vector, SPARSE, flt, depth))
        answers = self.client.query_batch_points(self.collection, requests=requests)
        scores: dict[str, tuple[float, float]] = {}
        for point in answers[0].points:
            scores[str(point.id)] = (point.score, math.nan)
        for point in answers[1].points if len(answers) > 1 else []:
            scores[str(point.id)] = (scores.get(str(point.id), (math.nan,))[0], point.score)
        refs = self.entry_refs(scores)
        # an id without a ref was removed between the query and the retrieval
        found = [(refs[i], dense, bm25) for i, (dense, bm25) in scores.items() if i in refs]
        return _candidates_from(found)

    def entry_refs(self, ids: Iterable[str]) -> dict[str, EntryRef]:
        """(doc id, node id) of each point id: from the entry map, and for ids it lacks (an
        entry without ``section_ids``), from their payloads."""
        wanted = list(ids)
        refs = self.entry_map.refs(wanted)
        missing = []
        for i in wanted:
            if i in refs:
                continue
            if i in self._learned:
                refs[i] = self._learned[i]
            else:
                missing.append(i)
        if missing:
            LOG.debug("reading the payloads of %d entries missing from the entry map", len(missing))
            for record in self.client.retrieve(
                self.collection, missing, with_payload=RANKING_FIELDS
            ):
                refs[str(record.id)] = self._learned[str(record.id)] = _entry_ref(
                    record.payload or {}
                )
        return refs

    def describe(self, doc_ids: Sequence[str], sections: Sequence[tuple[str, str]]) -> Descriptions:
        """The shown fields of these documents and (doc id, node id) sections, in one retrieval
        by point id; an entry removed since the query is simply absent."""
        wanted = [(doc_id, None) for doc_id in doc_ids] + list(sections)
        ids = [point_id(doc_id, entry_key(node)) for doc_id, node in wanted]
        if not ids:
            return Descriptions({}, {})
        records = self.client.retrieve(self.collection, ids, with_payload=PAYLOAD_FIELDS)
        documents: dict[str, DocumentInfo] = {}
        found: dict[tuple[str, str], SectionInfo] = {}
        for record in records:
            payload = record.payload or {}
            info = _section_info(payload)
            if info is None:
                documents[str(payload["doc_id"])] = _document_info(payload)
            else:
                found[(str(payload["doc_id"]), info.node_id)] = info
        return Descriptions(documents, found)

    def query(
        self, query: Any, using: str, flt: models.Filter, depth: int
    ) -> list[models.ScoredPoint]:
        """One retriever's top ``depth`` entries (what ``candidates`` sends twice in a batch)."""
        request = self._request(query, using, flt, depth)
        return list(self.client.query_batch_points(self.collection, requests=[request])[0].points)

    @staticmethod
    def _request(query: Any, using: str, flt: models.Filter, depth: int) -> models.QueryRequest:
        return models.QueryRequest(
            query=query,
            using=using,
            filter=flt,
            limit=depth,
            with_payload=False,
            params=models.SearchParams(hnsw_ef=max(HNSW_EF, depth)),
        )


def _entry_ref(payload: dict[str, Any]) -> EntryRef:
    node = payload.get("node_id")
    is_section = payload.get("entry_type") == "section"
    return str(payload["doc_id"]), str(node or "") if is_section else None


def _candidates_from(entries: list[tuple[EntryRef, float, float]]) -> Candidates:
    """Candidates from ((doc id, node id), dense, bm25) triples, grouped by document."""
    if not entries:
        return Candidates.empty()
    keys = sorted((_row_key(ref), dense, bm25) for ref, dense, bm25 in entries)
    entry_docs = [doc_id for (doc_id, _, _), _, _ in keys]
    doc_ids = sorted(set(entry_docs))
    row = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    return Candidates(
        doc_ids=doc_ids,
        entry_doc=np.array([row[doc_id] for doc_id in entry_docs], dtype=np.int64),
        node_ids=[node if kind else None for (_, kind, node), _, _ in keys],
        dense=np.array([d for _, d, _ in keys], dtype=np.float32),
        bm25=np.array([b for _, _, b in keys], dtype=np.float32),
    )


# -- caching -------------------------------------------------------------------------------------
_CACHE: dict[tuple[Path, str], SearchEngine] = {}
_CACHE_LOCK = threading.Lock()


def engine_for(catalog: Any) -> SearchEngine:
    """The engine for a catalog at its current index version (a new one, with a fresh
    document table, when the version changed or the catalog's client was replaced). A new
    engine is made only for an index that holds what the library says it should
    (``Catalog.require_complete``: ``IndexIncomplete`` otherwise).

    ``catalog`` is a ``store.catalog.Catalog``; the client always comes from its index, since
    an embedded shard may be open once per process.
    """
    index = catalog.index
    key = (catalog.library.root.resolve(), index.collection)
    with _CACHE_LOCK:
        version = catalog.library.index_version()
        client = index.client
        cached = _CACHE.get(key)
        if cached is not None and cached.version == version and cached.client is client:
            return cached
        catalog.require_complete()
        kept = map_path(key[0], index.collection, version) if version else None
        engine = SearchEngine(client, index.collection, version, kept)
        _CACHE[key] = engine
        return engine


def clear_engines() -> None:
    """Drop every cached engine (tests)."""
    with _CACHE_LOCK:
        _CACHE.clear()
