"""Per-entry candidate scores for a query: an in-memory matrix engine, or Qdrant's query API.

Why two engines: Qdrant local mode (the default, index in ``LIBRARY/qdrant``) searches by brute
force in Python; at 90,000 structural entries a filtered dense query takes ~650 ms and a sparse
one ~600 ms, far over the 50 ms search budget. ``MatrixEngine`` loads the committed points once
into numpy (a normalised dense matrix, a BM25 inverted index with Qdrant's IDF, payload columns)
and answers every query with a handful of vectorised operations (~20 ms end to end at 10,000
documents, query embedding included; see ``evals/bench_search.py``). ``QdrantEngine`` sends
the same queries to Qdrant itself; it is the path for a Qdrant server (``QDRANT_URL``), where
search is indexed and fast, and, against local mode, the reference the matrix engine is tested
against.

Both engines return the same thing (:class:`Candidates`): the top ``depth`` entries under each
retriever after the filters, with the score of every retriever that returned the entry (NaN
where it did not). Fusion and gating live in ``tools/search.py``.

The matrix engine is a snapshot: it is cached per (library, collection) together with the
library's index version (``Library.index_version``, bumped by the catalog on every publish and
removal) and reloaded when that version changes.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np
from numpy.typing import NDArray
from qdrant_client import QdrantClient, models

from store.index import DENSE, SPARSE, IndexLockedError

FloatArray = NDArray[np.float32]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

ENGINE_KINDS = ("auto", "matrix", "qdrant")
ENTRY_TYPES: tuple[str, ...] = ("document", "section")
SCROLL_PAGE = 1024
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


@dataclass(frozen=True)
class SparseQuery:
    """A BM25 query vector: term ids and their weights (fastembed gives 1.0 per term)."""

    indices: IntArray
    values: FloatArray

    @classmethod
    def from_vector(cls, vector: models.SparseVector) -> SparseQuery:
        return cls(
            np.asarray(vector.indices, dtype=np.int64), np.asarray(vector.values, dtype=np.float32)
        )


@dataclass
class Candidates:
    """Candidate entries of one query and their per-retriever scores.

    ``documents`` is a table sorted by doc_id (so its row order is a deterministic tie-break);
    ``entry_doc`` points each candidate entry into it. ``dense``/``bm25`` are NaN where that
    retriever did not return the entry (not in its top ``depth``, or no shared BM25 term).
    """

    documents: Sequence[DocumentInfo]
    entry_doc: IntArray
    sections: list[SectionInfo | None]
    dense: FloatArray
    bm25: FloatArray

    @classmethod
    def empty(cls) -> Candidates:
        return cls([], np.zeros(0, np.int64), [], np.zeros(0, np.float32), np.zeros(0, np.float32))

    def __len__(self) -> int:
        return len(self.entry_doc)


class SearchEngine(Protocol):
    """What ``tools.search.DocumentSearch`` needs from an engine."""

    name: str
    version: str

    def candidates(
        self, dense: FloatArray, sparse: SparseQuery, filters: SearchFilters, depth: int
    ) -> Candidates:
        """Top ``depth`` entries under each retriever, filters applied, committed only."""
        ...

    def documents(self, filters: SearchFilters) -> list[DocumentInfo]:
        """Every committed document matching the filters (for browsing), unordered."""
        ...

    def corpus_size(self) -> int:
        """Number of committed documents."""
        ...


# -- shared helpers --------------------------------------------------------------------------------
def qdrant_idf(document_frequency: NDArray[Any], corpus_size: int) -> NDArray[np.float64]:
    """Qdrant's IDF modifier: ln((N - n + 0.5) / (n + 0.5) + 1), N = points with the vector."""
    df = np.asarray(document_frequency, dtype=np.float64)
    return np.log((corpus_size - df + 0.5) / (df + 0.5) + 1.0)


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


def _scroll(
    client: QdrantClient,
    collection: str,
    flt: models.Filter | None,
    vectors: bool,
    payload: list[str] | bool = PAYLOAD_FIELDS,
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


def _match(field_name: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=field_name, match=models.MatchValue(value=value))


def _top(scores: FloatArray, eligible: BoolArray, depth: int) -> IntArray:
    """Indices of the ``depth`` highest eligible scores (unordered; ties at the cut arbitrary)."""
    rows = np.flatnonzero(eligible)
    if len(rows) > depth:
        keep = np.argpartition(-scores[rows], depth - 1)[:depth]
        rows = rows[keep]
    return rows.astype(np.int64)


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

    def position(self, doc_ids: Iterable[str]) -> IntArray:
        """Row of each doc id (all must be present)."""
        return np.searchsorted(self.ids, np.array(list(doc_ids), dtype=str)).astype(np.int64)

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


# -- the matrix engine -----------------------------------------------------------------------------
@dataclass
class Postings:
    """A BM25 inverted index: for term ``terms[i]``, rows/values in ``starts[i]:starts[i+1]``."""

    terms: IntArray
    starts: IntArray
    rows: IntArray
    values: FloatArray
    document_frequency: IntArray  # over every live point with a sparse vector, like Qdrant
    corpus_points: int

    def bm25(self, query: SparseQuery, rows_total: int) -> tuple[FloatArray, BoolArray]:
        """BM25 of every row (Qdrant's IDF × stored term weights) and which rows share a term."""
        scores = np.zeros(rows_total, dtype=np.float32)
        touched = np.zeros(rows_total, dtype=bool)
        for term, weight in zip(query.indices.tolist(), query.values.tolist(), strict=True):
            rows, values, df = self.lookup(term)
            if not len(rows):
                continue
            idf = float(qdrant_idf(np.array(df), self.corpus_points))
            scores[rows] += np.float32(weight * idf) * values  # a term occurs once per row
            touched[rows] = True
        return scores, touched

    def lookup(self, term: int) -> tuple[IntArray, FloatArray, int]:
        """Rows and weights of one term among committed rows, and its collection-wide df."""
        at = int(np.searchsorted(self.terms, term))
        if at >= len(self.terms) or self.terms[at] != term:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), 0
        lo, hi = int(self.starts[at]), int(self.starts[at + 1])
        return self.rows[lo:hi], self.values[lo:hi], int(self.document_frequency[at])


@dataclass
class Rows:
    """Committed points as pulled from Qdrant (any order), plus collection-wide term counts."""

    payloads: list[dict[str, Any]]
    dense: FloatArray
    sparse: list[tuple[IntArray, FloatArray]]
    every_term: IntArray  # term ids of every live point with a sparse vector, concatenated
    sparse_points: int  # how many such points (Qdrant's N for IDF)

    @classmethod
    def from_records(cls, records: Iterable[models.Record]) -> Rows:
        """From scrolled records; uncommitted points count for IDF but are not searchable."""
        payloads: list[dict[str, Any]] = []
        dense: list[list[float]] = []
        sparse: list[tuple[IntArray, FloatArray]] = []
        terms: list[IntArray] = []
        for record in records:
            vectors = record.vector if isinstance(record.vector, dict) else {}
            vector = vectors.get(SPARSE)
            pair = _sparse_pair(vector if isinstance(vector, models.SparseVector) else None)
            if isinstance(vector, models.SparseVector):
                terms.append(pair[0])
            values = vectors.get(DENSE)
            payload = record.payload or {}
            if payload.get("committed") is True and isinstance(values, list):
                payloads.append(payload)
                dense.append(cast(list[float], values))
                sparse.append(pair)
        return cls(payloads, _matrix(dense), sparse, _concat(terms), len(terms))

    @classmethod
    def load(
        cls, client: QdrantClient, collection: str, payload: list[str] | bool = PAYLOAD_FIELDS
    ) -> Rows:
        """Every committed point (local-mode arrays when possible, else a paged scroll)."""
        if not client.collection_exists(collection):
            return cls([], _matrix([]), [], _ints(), 0)
        rows = cls.from_local(client, collection)
        if rows is None:
            rows = cls.from_records(_scroll(client, collection, None, True, payload))
        return rows

    @classmethod
    def from_local(cls, client: QdrantClient, collection: str) -> Rows | None:
        """Straight from a local-mode collection's arrays; ``None`` if they are not as expected.

        Scrolling 90,000 points through local mode copies every vector into Python lists and
        takes ~30 s; its in-memory arrays give the same rows in a few seconds. The layout is
        private to qdrant-client, so anything unexpected falls back to scrolling, and the unit
        tests check both paths against Qdrant's own query results.
        """
        try:
            inner: Any = getattr(client, "_client", None)
            local: Any = inner.collections[collection]
            payloads: list[dict[str, Any]] = local.payload
            n = len(payloads)
            alive = ~np.asarray(local.deleted[:n], dtype=bool)
            has_dense = alive & ~np.asarray(local.deleted_per_vector[DENSE][:n], dtype=bool)
            has_sparse = alive & ~np.asarray(local.deleted_per_vector[SPARSE][:n], dtype=bool)
            matrix = np.asarray(local.vectors[DENSE][:n], dtype=np.float32)
            stored = local.sparse_vectors[SPARSE][:n]
        except (AttributeError, KeyError, TypeError):
            return None
        if len(has_dense) != n or matrix.shape[0] != n or len(stored) != n:
            return None
        rows = [i for i in np.flatnonzero(has_dense).tolist() if payloads[i].get("committed")]
        sparse_rows = np.flatnonzero(has_sparse).tolist()
        return cls(
            payloads=[payloads[i] for i in rows],
            dense=matrix[rows],
            sparse=[_sparse_pair(stored[i]) for i in rows],
            every_term=_concat([np.asarray(stored[i].indices, np.int64) for i in sparse_rows]),
            sparse_points=len(sparse_rows),
        )


def _sparse_pair(vector: models.SparseVector | None) -> tuple[IntArray, FloatArray]:
    if vector is None:
        return _ints(), np.zeros(0, np.float32)
    return np.asarray(vector.indices, np.int64), np.asarray(vector.values, np.float32)


def _matrix(rows: list[list[float]]) -> FloatArray:
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1 if rows else 0)


def _concat(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays).astype(np.int64) if arrays else _ints()


@dataclass
class MatrixEngine:
    """All committed entries in numpy; every query is a few vectorised operations."""

    table: _DocumentTable
    row_doc: IntArray
    row_is_section: BoolArray
    sections: list[SectionInfo | None]
    matrix: FloatArray
    postings: Postings
    version: str = ""
    load_seconds: float = 0.0
    name: str = field(default="matrix", init=False)

    @classmethod
    def load(cls, client: QdrantClient, collection: str, version: str = "") -> MatrixEngine:
        """Read every point once (local-mode arrays when possible, else a paged scroll)."""
        started = time.perf_counter()
        engine = cls.from_rows(Rows.load(client, collection), version)
        engine.load_seconds = time.perf_counter() - started
        return engine

    @classmethod
    def from_rows(cls, rows: Rows, version: str = "") -> MatrixEngine:
        """Sort rows by document (document entry first, then sections) and build the arrays."""
        order = sorted(range(len(rows.payloads)), key=lambda i: _row_key(rows.payloads[i]))
        payloads = [rows.payloads[i] for i in order]
        infos: dict[str, DocumentInfo] = {}
        for payload in payloads:
            infos.setdefault(str(payload["doc_id"]), _document_info(payload))
        table = _DocumentTable(list(infos.values()))
        matrix = unit_rows(rows.dense[order] if order else rows.dense)
        return cls(
            table=table,
            row_doc=table.position(str(p["doc_id"]) for p in payloads) if payloads else _ints(),
            row_is_section=np.array([p.get("entry_type") == "section" for p in payloads], bool),
            sections=[_section_info(p) for p in payloads],
            matrix=matrix,
            postings=build_postings([rows.sparse[i] for i in order], rows),
            version=version,
        )

    # -- queries -------------------------------------------------------------------------------
    def corpus_size(self) -> int:
        return len(self.table)

    def documents(self, filters: SearchFilters) -> list[DocumentInfo]:
        return self.table.matching(filters)

    def row_mask(self, filters: SearchFilters) -> BoolArray:
        """Rows passing the filters: document filters broadcast to rows, plus entry types."""
        doc_mask = self.table.mask(filters)
        rows = len(self.row_doc)
        mask = np.ones(rows, dtype=bool) if doc_mask is None else doc_mask[self.row_doc]
        if "section" not in filters.entry_types:
            mask &= ~self.row_is_section
        if "document" not in filters.entry_types:
            mask &= self.row_is_section
        return mask

    def dense_scores(self, query: FloatArray) -> FloatArray:
        return cosine_scores(self.matrix, query)

    def bm25_scores(self, query: SparseQuery) -> tuple[FloatArray, BoolArray]:
        return self.postings.bm25(query, len(self.row_doc))

    def candidates(
        self, dense: FloatArray, sparse: SparseQuery, filters: SearchFilters, depth: int
    ) -> Candidates:
        if not len(self.row_doc):
            return Candidates.empty()
        mask = self.row_mask(filters)
        dense_all = self.dense_scores(dense)
        bm25_all, touched = self.bm25_scores(sparse)
        dense_rows = _top(dense_all, mask, depth)
        bm25_rows = _top(bm25_all, mask & touched, depth)
        rows = np.union1d(dense_rows, bm25_rows)
        dense_out = np.full(len(rows), np.nan, dtype=np.float32)
        bm25_out = np.full(len(rows), np.nan, dtype=np.float32)
        in_dense, in_bm25 = np.isin(rows, dense_rows), np.isin(rows, bm25_rows)
        dense_out[in_dense] = dense_all[rows[in_dense]]
        bm25_out[in_bm25] = bm25_all[rows[in_bm25]]
        return Candidates(
            documents=self.table.infos,
            entry_doc=self.row_doc[rows],
            sections=[self.sections[r] for r in rows.tolist()],
            dense=dense_out,
            bm25=bm25_out,
        )


def cosine_scores(matrix: FloatArray, query: FloatArray) -> FloatArray:
    """Cosine similarity of every row to the query (rows are unit length)."""
    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    return np.asarray(matrix @ (q / norm if norm > 0 else q), dtype=np.float32)


def unit_rows(dense: FloatArray) -> FloatArray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return (dense / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _ints() -> IntArray:
    return np.zeros(0, dtype=np.int64)


def _row_key(payload: dict[str, Any]) -> tuple[str, int, str]:
    """Rows grouped by document, its document entry first, then sections in tree order."""
    return (
        str(payload["doc_id"]),
        0 if payload.get("entry_type") == "document" else 1,
        str(payload.get("node_id") or ""),
    )


def build_postings(vectors: Sequence[tuple[IntArray, FloatArray]], rows: Rows) -> Postings:
    """Invert the committed rows' sparse vectors; df counted over every live point (Qdrant)."""
    lengths = np.array([len(indices) for indices, _ in vectors], dtype=np.int64)
    if not len(lengths) or lengths.sum() == 0:
        terms = _ints()
        return Postings(terms, np.zeros(1, np.int64), _ints(), np.zeros(0, np.float32), terms, 0)
    indices = np.concatenate([indices for indices, _ in vectors])
    values = np.concatenate([values for _, values in vectors])
    row_ids = np.repeat(np.arange(len(vectors), dtype=np.int64), lengths)
    order = np.argsort(indices, kind="stable")
    indices, values, row_ids = indices[order], values[order], row_ids[order]
    terms, starts = np.unique(indices, return_index=True)
    known, counts = np.unique(rows.every_term, return_counts=True)
    at = np.minimum(np.searchsorted(known, terms), max(len(known) - 1, 0))
    frequency = counts[at] if len(known) else np.zeros(len(terms), np.int64)
    return Postings(
        terms=terms.astype(np.int64),
        starts=np.append(starts, len(indices)).astype(np.int64),
        rows=row_ids,
        values=values,
        document_frequency=frequency.astype(np.int64),
        corpus_points=rows.sparse_points,
    )


# -- the Qdrant engine -----------------------------------------------------------------------------
@dataclass
class QdrantEngine:
    """The same candidates through Qdrant's query API (fast on a server, slow in local mode).

    Year, doc-id and entry-type filters go into the Qdrant filter; the venue and author
    substring filters are resolved to doc ids through a cached table of document entries,
    because Qdrant's text match is token-based and would disagree with the matrix engine.
    """

    client: QdrantClient
    collection: str
    version: str = ""
    name: str = field(default="qdrant", init=False)
    _table: _DocumentTable | None = field(default=None, init=False, repr=False)

    @property
    def table(self) -> _DocumentTable:
        """Payloads of the committed document entries (scrolled once per index version)."""
        if self._table is None:
            infos: list[DocumentInfo] = []
            if self.client.collection_exists(self.collection):
                flt = models.Filter(
                    must=[_match("committed", True), _match("entry_type", "document")]
                )
                for point in _scroll(self.client, self.collection, flt, vectors=False):
                    infos.append(_document_info(point.payload or {}))
            self._table = _DocumentTable(infos)
        return self._table

    def corpus_size(self) -> int:
        return len(self.table)

    def documents(self, filters: SearchFilters) -> list[DocumentInfo]:
        return self.table.matching(filters)

    def query_filter(self, filters: SearchFilters) -> models.Filter | None:
        """The Qdrant filter for ``filters``; ``None`` when no document can match."""
        must: list[models.Condition] = [
            _match("committed", True),
            models.FieldCondition(
                key="entry_type", match=models.MatchAny(any=list(filters.entry_types))
            ),
        ]
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
        if not filters.entry_types or not self.client.collection_exists(self.collection):
            return Candidates.empty()
        flt = self.query_filter(filters)
        if flt is None:
            return Candidates.empty()
        found: dict[str, tuple[dict[str, Any], float, float]] = {}
        for point in self._query(np.asarray(dense, np.float32).tolist(), DENSE, flt, depth):
            found[str(point.id)] = (point.payload or {}, point.score, math.nan)
        if len(sparse.indices):
            vector = models.SparseVector(
                indices=sparse.indices.tolist(), values=sparse.values.tolist()
            )
            for point in self._query(vector, SPARSE, flt, depth):
                payload, dense_score, _ = found.get(
                    str(point.id), (point.payload or {}, math.nan, math.nan)
                )
                found[str(point.id)] = (payload, dense_score, point.score)
        return _candidates_from(list(found.values()))

    def _query(
        self, query: Any, using: str, flt: models.Filter, depth: int
    ) -> list[models.ScoredPoint]:
        response = self.client.query_points(
            self.collection,
            query=query,
            using=using,
            query_filter=flt,
            limit=depth,
            with_payload=PAYLOAD_FIELDS,
        )
        return list(response.points)


def _candidates_from(entries: list[tuple[dict[str, Any], float, float]]) -> Candidates:
    """Candidates from (payload, dense, bm25) triples, with a doc table of just their documents."""
    if not entries:
        return Candidates.empty()
    entries.sort(key=lambda item: _row_key(item[0]))
    infos: dict[str, DocumentInfo] = {}
    for payload, _, _ in entries:
        infos.setdefault(str(payload["doc_id"]), _document_info(payload))
    table = _DocumentTable(list(infos.values()))
    return Candidates(
        documents=table.infos,
        entry_doc=table.position(str(p["doc_id"]) for p, _, _ in entries),
        sections=[_section_info(p) for p, _, _ in entries],
        dense=np.array([d for _, d, _ in entries], dtype=np.float32),
        bm25=np.array([b for _, _, b in entries], dtype=np.float32),
    )


# -- choosing and caching --------------------------------------------------------------------------
_CACHE: dict[tuple[Path, str, str], SearchEngine] = {}
_CACHE_LOCK = threading.Lock()


def resolve_kind(kind: str, server: bool) -> str:
    """``auto`` means matrix for local mode and Qdrant for a server."""
    kind = (kind or "auto").strip().lower()
    if kind not in ENGINE_KINDS:
        raise ValueError(
            f"unknown search engine {kind!r} (VECTREE_SEARCH_ENGINE): use one of "
            + ", ".join(ENGINE_KINDS)
        )
    if kind == "auto":
        return "qdrant" if server else "matrix"
    return kind


def engine_for(catalog: Any, kind: str | None = None) -> SearchEngine:
    """The engine for a catalog at its current index version (rebuilt when it changed).

    ``catalog`` is a ``store.catalog.Catalog``; the client always comes from its index, since
    Qdrant local mode allows one client per folder and process.
    """
    index = catalog.index
    chosen = resolve_kind(kind or index.settings.search_engine, bool(index.settings.qdrant_url))
    key = (catalog.library.root.resolve(), index.collection, chosen)
    with _CACHE_LOCK:
        version = catalog.library.index_version()
        cached = _CACHE.get(key)
        if chosen == "matrix":
            if cached is not None and cached.version == version:
                return cached
            engine: SearchEngine = _load_matrix(index, version, cached)
        else:
            client = index.client
            if cached is not None and cached.version == version and _same_client(cached, client):
                return cached
            engine = QdrantEngine(client, index.collection, version)
        _CACHE[key] = engine
        return engine


def _load_matrix(index: Any, version: str, cached: SearchEngine | None) -> SearchEngine:
    """Load a snapshot holding the local folder lock only while reading it.

    A process that only searches (the LangGraph server, `vectree ask`) thus never locks the
    CLI or another server out. While a writer holds the lock past the wait, the previous
    snapshot keeps serving (stale by at most that write) rather than failing the search.
    """
    try:
        return index.read_snapshot(  # type: ignore[no-any-return]
            lambda client: MatrixEngine.load(client, index.collection, version)
        )
    except IndexLockedError:
        if cached is None:
            raise
        return cached


def _same_client(engine: Any, client: QdrantClient) -> bool:
    """A Qdrant engine must not outlive the client it queries (catalogs can be reopened)."""
    return not isinstance(engine, QdrantEngine) or engine.client is client


def clear_engines() -> None:
    """Drop every cached engine (tests; frees the matrices)."""
    with _CACHE_LOCK:
        _CACHE.clear()
