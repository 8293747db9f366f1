"""Layer-0 search at 1,000, 10,000 and 100,000 documents: Qdrant Edge against exhaustive numpy.

Each scale is a fresh library in a temporary folder whose embedded index holds 1 document entry
+ 8 section entries per document (9 points per document). Texts are drawn from a
Zipf-distributed synthetic vocabulary. As in the product (entries version 2), each section's
BM25 vector covers its content (``--content-words`` words, besides the compact text) and the
document's covers all of its sections. Embedding 800,000 section contents of 500 words with the
BM25 embedder would take hours on two cores, so the build embeds a pool of ``--sparse-pool``
synthetic section contents (compact text + content) once with the project's sparse embedder,
each section takes a pool vector drawn at random, and a document entry's BM25 vector is the
mean of its sections' vectors (a term in one section of eight gets an eighth of its weight,
close to what BM25's length normalisation gives the whole document). Dense vectors are
synthetic too (embedding 900,000 texts with MiniLM would also take hours): each document lies
near one of 400 topic directions and its entries near it, as embeddings cluster; queries lie
near a topic. Every draw is seeded, so a scale is the same library in every run. Every
document gets a ``docs/<id>/`` folder so the visibility check runs as in production. After
writing, the index is settled as a write command leaves it (optimised: HNSW and payload
indexes).

Two engines answer the same queries in one run:

* ``edge``: the product's engine (``store.search_engine`` on Qdrant Edge);
* ``numpy``: exhaustive numpy scoring of every entry (``evals.exact``), which is what the
  previous embedded engine computed. It holds every vector in Python while it loads (tens of
  GB at 900,000 points), so above ``NUMPY_MAX_DOCS`` documents it is not run and its record
  says so (``skipped``).

Per engine and scale, over ``--queries`` queries after a warm-up (query vectors precomputed;
the query embedding is timed separately as ``embed_ms``):

* ``open_s``: from a closed library to the first answered query, what every ``vectree search``
  process pays (Edge loads its shards, the engine reads the entry map kept for this index
  version; numpy scrolls every point out of the index and builds its arrays);
* ``first_open_s`` (edge): the same for the first process after the documents changed, which
  derives the entry map (a scroll of the document entries, the point id of every entry) and
  keeps it;
* ``dense_*``/``bm25_*``: one retriever's top ``search_depth`` entries;
* ``fused_*``: both retrievers plus the fusion of ``tools.search`` (per-document signals,
  their scaled sum and the order); the fields that results show are fetched afterwards for the
  returned documents only, which ``search_p50_ms`` includes;
* ``filtered_*``: the same under a single-year filter (the restrictive case for HNSW);
* ``recall_at_10``: overlap of the filtered dense top 10 (HNSW) with the exact top 10 (Qdrant's
  exhaustive search, ``exact=True``, on the same points; the mean over queries);
  ``recall_unfiltered_at_10`` likewise without the filter;
* ``search_p50_ms`` (edge): ``DocumentSearch.search`` end to end, embedding included.

    python -m evals.bench_search [--docs 1000 10000 100000] [--queries 50]
        [--content-words 500] [--sparse-pool 2048] [--keep DIR] [--json]

``--json`` prints one record per engine and scale: ``{engine, docs, open_s, fused_p50_ms,
fused_p95_ms, filtered_p50_ms, recall_at_10, …}``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import models

from evals.exact import ExactScorer
from store.catalog import Catalog, close_catalogs, open_catalog
from store.entry_map import MAP_DIR
from store.index import DENSE, SPARSE, point_id
from store.library import write_json
from store.search_engine import (
    Candidates,
    SearchEngine,
    SearchFilters,
    clear_engines,
    engine_for,
)
from store.vectors import FloatArray, IntArray, SparseQuery
from tools.search import DocumentSearch, document_scores, fuse, fused_order

SECTIONS_PER_DOC = 8
VOCABULARY = 30_000
DOC_WORDS = 60
SECTION_WORDS = 40
CONTENT_WORDS = 500
"""Words of a section's content behind its BM25 vector (QASPER papers: about 550 per top-level
section)."""
QUERY_WORDS = 6
SPARSE_POOL = 2048
"""Section contents embedded with the BM25 embedder per build (``--sparse-pool``)."""
NUMPY_MAX_DOCS = 10_000
"""Largest scale the numpy reference is run at (its load holds every vector in Python)."""
VENUES = ("ACL", "EMNLP", "NAACL", "NeurIPS", "ICML", "ICLR", "TACL", "arXiv", "Nature", "SIGIR")
UPSERT_BATCH = 1024
FIELDS = (
    "engine",
    "docs",
    "open_s",
    "first_open_s",
    "fused_p50_ms",
    "fused_p95_ms",
    "filtered_p50_ms",
    "recall_at_10",
    "recall_unfiltered_at_10",
    "dense_p50_ms",
    "bm25_p50_ms",
    "embed_ms",
    "search_p50_ms",
)
TOPICS = 400
TOPIC_SEED = 11
YEAR = 2012
"""The single-year filter (about 1 in 31 documents)."""


class Corpus:
    """Deterministic synthetic texts from a Zipf-distributed pseudo-word vocabulary."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        consonants, vowels = list("bcdfgklmnprstvz"), list("aeiou")
        syllables = np.array([c + v for c in consonants for v in vowels])
        words = {"".join(self.rng.choice(syllables, size=3)) for _ in range(VOCABULARY * 2)}
        self.words = np.array(sorted(words)[:VOCABULARY])
        self.rng.shuffle(self.words)
        weights = 1.0 / np.arange(1, len(self.words) + 1) ** 1.07
        cdf = np.cumsum(weights / weights.sum())
        self.cdf = cdf / cdf[-1]

    def text(self, n: int) -> str:
        """``n`` Zipf-distributed words: what ``rng.choice(words, p=weights)`` draws, without
        recomputing the cumulative weights at every call (millions of calls at 100,000 docs)."""
        return " ".join(self.words[self.cdf.searchsorted(self.rng.random(n), side="right")])

    def query(self) -> str:
        """Query words skip the 100 most frequent (stop-word-like) ones."""
        return " ".join(self.rng.choice(self.words[100:2000], size=QUERY_WORDS))


# -- building a synthetic library ------------------------------------------------------------------
class SparsePool:
    """Real BM25 vectors of a few thousand synthetic section contents, shared out to sections.

    Embedding every section's content is what made large scales take hours; drawing from a
    pool keeps the vectors' statistics (length, Zipf terms, BM25 weights) at a fixed cost.
    """

    def __init__(self, vectors: list[tuple[IntArray, FloatArray]]) -> None:
        self.vectors = vectors

    @classmethod
    def embed(cls, catalog: Catalog, corpus: Corpus, size: int, content_words: int) -> SparsePool:
        """``size`` section contents (compact text + content) through the sparse embedder."""
        texts = [corpus.text(SECTION_WORDS + content_words) for _ in range(size)]
        embedded = catalog.index.embed_sparse(texts)
        return cls(
            [(np.array(v.indices, np.int64), np.array(v.values, np.float32)) for v in embedded]
        )

    def __len__(self) -> int:
        return len(self.vectors)

    def section(self, draw: int) -> models.SparseVector:
        indices, values = self.vectors[draw]
        return models.SparseVector(indices=indices.tolist(), values=values.tolist())

    def document(self, draws: IntArray) -> models.SparseVector:
        """The mean of the drawn sections' vectors (terms summed, divided by the sections)."""
        indices = np.concatenate([self.vectors[d][0] for d in draws.tolist()])
        values = np.concatenate([self.vectors[d][1] for d in draws.tolist()])
        terms, slot = np.unique(indices, return_inverse=True)
        merged = np.bincount(slot, weights=values, minlength=len(terms)) / len(draws)
        return models.SparseVector(indices=terms.tolist(), values=merged.tolist())


def build_library(
    root: Path,
    docs: int,
    corpus: Corpus,
    content_words: int = CONTENT_WORDS,
    pool_size: int = SPARSE_POOL,
) -> Catalog:
    """A library with ``docs`` visible documents and their 9 committed points each."""
    catalog = open_catalog(root)
    catalog.index.ensure_collection()
    dim = _dimension(catalog)
    started = time.perf_counter()
    pool = SparsePool.embed(catalog, corpus, pool_size, content_words)
    _log(f"{docs} docs: {pool_size} BM25 pool vectors in {time.perf_counter() - started:.0f} s")
    rng = np.random.default_rng(docs)
    per_batch = UPSERT_BATCH // (1 + SECTIONS_PER_DOC)
    for start in range(0, docs, per_batch):
        batch = range(start, min(docs, start + per_batch))
        _write_batch(catalog, [f"doc{n:06d}" for n in batch], corpus, rng, dim, pool)
        if start // per_batch % 100 == 99:
            _log(f"{docs} docs: {start + len(batch)} written")
    catalog.index_changed()
    catalog.index.settle()
    return catalog


def _dimension(catalog: Catalog) -> int:
    return len(catalog.index.embed_dense(["dimension probe"])[0])


def _write_batch(
    catalog: Catalog,
    doc_ids: list[str],
    corpus: Corpus,
    rng: np.random.Generator,
    dim: int,
    pool: SparsePool,
) -> None:
    """Payloads, pooled BM25 vectors and topical unit dense vectors for a batch of documents."""
    payloads: list[dict[str, Any]] = []
    keys: list[tuple[str, str]] = []
    sparse: list[models.SparseVector] = []
    for doc_id in doc_ids:
        base = {
            "doc_id": doc_id,
            "title": corpus.text(8).title(),
            "year": int(rng.integers(1995, 2026)),
            "venue": str(rng.choice(VENUES)),
            "authors": [corpus.text(2).title() for _ in range(3)],
            "section_ids": [f"{i:04d}" for i in range(SECTIONS_PER_DOC)],
            "total_pages": int(rng.integers(4, 40)),
            "committed": 1,
        }
        payloads.append({**base, "entry_type": "document", "text": corpus.text(DOC_WORDS)})
        keys.append((doc_id, "document"))
        draws = rng.integers(0, len(pool), size=SECTIONS_PER_DOC)
        sparse.append(pool.document(draws))
        sparse.extend(pool.section(d) for d in draws.tolist())
        for i in range(SECTIONS_PER_DOC):
            payloads.append(
                {
                    **base,
                    "entry_type": "section",
                    "node_id": f"{i:04d}",
                    "section_title": corpus.text(3).title(),
                    "start_page": i + 1,
                    "end_page": i + 2,
                    "text": corpus.text(SECTION_WORDS),
                }
            )
            keys.append((doc_id, f"section:{i:04d}"))
        _write_visible(catalog, base)
    dense = topical_vectors(rng, len(doc_ids), dim)
    points = [
        models.PointStruct(
            id=point_id(doc_id, key), vector={DENSE: d.tolist(), SPARSE: s}, payload=payload
        )
        for (doc_id, key), payload, d, s in zip(keys, payloads, dense, sparse, strict=True)
    ]
    catalog.index.client.upsert(catalog.index.collection, points, wait=True)


def topics(dim: int) -> FloatArray:
    """Fixed unit topic directions shared by entries and queries."""
    centres = np.random.default_rng(TOPIC_SEED).standard_normal((TOPICS, dim))
    return (centres / np.linalg.norm(centres, axis=1, keepdims=True)).astype(np.float32)


def _unit(vectors: Any) -> FloatArray:
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


def topical_vectors(rng: np.random.Generator, docs: int, dim: int) -> FloatArray:
    """Unit vectors for ``docs`` documents of 9 entries: each document near one topic, its
    entries near the document (embeddings cluster so; uniform random vectors would not, and
    would make every nearest-neighbour index look worse than on real entries)."""
    centre = topics(dim)[rng.integers(0, TOPICS, size=docs)]
    noise = 1.0 / np.sqrt(dim)
    doc = _unit(centre + 1.2 * noise * rng.standard_normal((docs, dim)))
    entries = np.repeat(doc, 1 + SECTIONS_PER_DOC, axis=0)
    return _unit(entries + 0.8 * noise * rng.standard_normal(entries.shape))


def _write_visible(catalog: Catalog, base: dict[str, Any]) -> None:
    """The manifest and metadata files that make a document visible and described."""
    folder = catalog.library.doc_dir(base["doc_id"])
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "document.json", {"doc_id": base["doc_id"], "title": base["title"]})
    write_json(folder / "metadata.json", {"description": f"Synthetic paper {base['doc_id']}."})


# -- measuring -------------------------------------------------------------------------------------
def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def timed(calls: list[Callable[[], Any]], warmup: int = 3) -> list[float]:
    """Seconds of each call, after ``warmup`` untimed ones."""
    for call in calls[:warmup]:
        call()
    samples = []
    for call in calls:
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


Query = tuple[FloatArray, SparseQuery]


def query_vectors(catalog: Catalog, queries: list[str]) -> tuple[list[Query], float]:
    """Dense and BM25 vectors of every query, and the mean embedding time per query (ms)."""
    started = time.perf_counter()
    embedded = catalog.index.embed_dense(queries)
    sparse = [SparseQuery.from_vector(catalog.index.embed_sparse_query(q)) for q in queries]
    embed_ms = (time.perf_counter() - started) * 1000 / max(1, len(queries))
    # The entries' dense vectors are synthetic, so the queries' are too: near a topic.
    dim = len(embedded[0])
    rng = np.random.default_rng(len(queries))
    near = topics(dim)[rng.integers(0, TOPICS, size=len(queries))]
    dense = _unit(near + rng.standard_normal((len(queries), dim)) / np.sqrt(dim))
    return list(zip(dense, sparse, strict=True)), embed_ms


def fused(candidates: Candidates) -> IntArray:
    """The fusion step of ``tools.search`` (documents in fused order)."""
    scores = document_scores(candidates)
    return fused_order(fuse(scores), scores.dense)


def _fused_query(engine: Any, query: Query, filters: SearchFilters, depth: int) -> IntArray:
    return fused(engine.candidates(query[0], query[1], filters, depth))


@dataclass
class OpenedEdge:
    """A library opened in a fresh state, with the first query answered."""

    catalog: Catalog
    engine: SearchEngine
    vectors: list[Query]
    embed_ms: float
    open_s: float
    """From nothing open to the first answer, the query embedding excluded."""


def edge_open(root: Path, queries: list[str]) -> OpenedEdge:
    """Open the library with no catalog or engine left in the process and answer one query."""
    close_catalogs()
    clear_engines()
    started = time.perf_counter()
    catalog = open_catalog(root)
    engine = engine_for(catalog)
    vectors, embed_ms = query_vectors(catalog, queries)
    engine.candidates(*vectors[0], SearchFilters(), catalog.index.settings.search_depth)
    open_s = time.perf_counter() - started - embed_ms * len(queries) / 1000
    return OpenedEdge(catalog, engine, vectors, embed_ms, open_s)


def measure_edge(root: Path, queries: list[str], docs: int) -> dict[str, Any]:
    """The product's engine: the first open at this index version (deriving the entry map),
    a cold open that reads the kept map, then every case."""
    shutil.rmtree(root / MAP_DIR, ignore_errors=True)
    first_open_s = edge_open(root, queries).open_s
    opened = edge_open(root, queries)
    catalog, engine, vectors, embed_ms = (
        opened.catalog,
        opened.engine,
        opened.vectors,
        opened.embed_ms,
    )
    depth = catalog.index.settings.search_depth
    year = SearchFilters(year_min=YEAR, year_max=YEAR)
    flt = engine.query_filter(SearchFilters())
    year_flt = engine.query_filter(year)
    assert flt is not None and year_flt is not None
    sparse = [
        models.SparseVector(indices=s.indices.tolist(), values=s.values.tolist())
        for _, s in vectors
    ]
    cases: dict[str, list[Callable[[], Any]]] = {
        "dense": [partial(engine.query, d.tolist(), DENSE, flt, depth) for d, _ in vectors],
        "bm25": [partial(engine.query, s, SPARSE, flt, depth) for s in sparse],
        "fused": [partial(_fused_query, engine, v, SearchFilters(), depth) for v in vectors],
        "filtered": [partial(_fused_query, engine, v, year, depth) for v in vectors],
    }
    record = _latencies("edge", docs, opened.open_s, cases)
    record["first_open_s"] = round(first_open_s, 3)
    search = DocumentSearch(catalog)
    record["search_p50_ms"] = round(
        percentiles(timed([partial(search.search, q) for q in queries]))[0], 2
    )
    record["embed_ms"] = round(embed_ms, 2)
    record["recall_at_10"] = _recall(engine, vectors, year_flt)
    record["recall_unfiltered_at_10"] = _recall(engine, vectors, flt)
    return record


def measure_numpy(root: Path, queries: list[str], docs: int) -> dict[str, Any]:
    """Exhaustive numpy scoring, as the previous embedded engine did, on the same entries."""
    close_catalogs()
    clear_engines()
    started = time.perf_counter()
    catalog = open_catalog(root)
    scorer = ExactScorer.load(catalog)
    depth = catalog.index.settings.search_depth
    vectors, embed_ms = query_vectors(catalog, queries)
    years = np.array([int(p.get("year") or -1) for p in scorer.payloads])
    everything = np.ones(len(scorer.payloads), dtype=bool)
    _exhaustive(scorer, vectors[0], everything, depth)
    open_s = time.perf_counter() - started - embed_ms * len(queries) / 1000
    in_year = years == YEAR
    cases: dict[str, list[Callable[[], Any]]] = {
        "dense": [partial(_top, scorer.dense(d), everything, depth) for d, _ in vectors],
        "bm25": [partial(lambda s: _top(*scorer.bm25(s), depth), s) for _, s in vectors],
        "fused": [partial(_exhaustive, scorer, v, everything, depth) for v in vectors],
        "filtered": [partial(_exhaustive, scorer, v, in_year, depth) for v in vectors],
    }
    record = _latencies("numpy", docs, open_s, cases)
    record.update(embed_ms=round(embed_ms, 2), recall_at_10=1.0, recall_unfiltered_at_10=1.0)
    return record


def _latencies(
    engine: str, docs: int, open_s: float, cases: dict[str, list[Callable[[], Any]]]
) -> dict[str, Any]:
    record: dict[str, Any] = {"engine": engine, "docs": docs, "open_s": round(open_s, 3)}
    for case, calls in cases.items():
        p50, p95 = percentiles(timed(calls))
        record[f"{case}_p50_ms"], record[f"{case}_p95_ms"] = round(p50, 2), round(p95, 2)
        _log(f"{docs} docs, {engine}, {case}: p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    return record


def _top(scores: FloatArray, eligible: Any, depth: int) -> IntArray:
    rows = np.flatnonzero(eligible)
    if len(rows) > depth:
        rows = rows[np.argpartition(-scores[rows], depth - 1)[:depth]]
    return rows.astype(np.int64)


def _exhaustive(scorer: ExactScorer, query: Query, mask: Any, depth: int) -> IntArray:
    """Both retrievers' top entries and their reciprocal-rank fusion, over every entry."""
    dense = scorer.dense(query[0])
    bm25, touched = scorer.bm25(query[1])
    dense_rows = _top(dense, mask, depth)
    bm25_rows = _top(bm25, mask & touched, depth)
    fused_scores: dict[int, float] = {}
    for scores, rows in ((dense, dense_rows), (bm25, bm25_rows)):
        for rank, row in enumerate(rows[np.argsort(-scores[rows])].tolist()):
            fused_scores[row] = fused_scores.get(row, 0.0) + 1.0 / (60 + rank + 1)
    return np.array(sorted(fused_scores, key=fused_scores.__getitem__, reverse=True))


def _recall(engine: Any, vectors: list[Query], flt: models.Filter) -> float:
    """Mean overlap of the engine's dense top 10 (HNSW) with Qdrant's exhaustive top 10."""
    overlaps = []
    for dense, _ in vectors:
        query = dense.tolist()
        exact = {str(p.id) for p in _exact_top(engine, query, flt, 10)}
        got = {str(p.id) for p in engine.query(query, DENSE, flt, 10)}
        overlaps.append(len(exact & got) / max(1, len(exact)))
    return round(float(np.mean(overlaps)), 4)


def _exact_top(
    engine: Any, query: list[float], flt: models.Filter, limit: int
) -> list[models.ScoredPoint]:
    """The exact dense top ``limit``: a full scan of the filtered points instead of HNSW."""
    request = models.QueryRequest(
        query=query,
        using=DENSE,
        filter=flt,
        limit=limit,
        with_payload=False,
        params=models.SearchParams(exact=True),
    )
    return list(engine.client.query_batch_points(engine.collection, requests=[request])[0].points)


@dataclass(frozen=True)
class Scale:
    """What a synthetic library is built from (a kept library is reused for the same scale)."""

    docs: int
    content_words: int = CONTENT_WORDS
    pool_size: int = SPARSE_POOL

    @property
    def folder(self) -> str:
        return f"docs-{self.docs}-{self.content_words}-pool{self.pool_size}"


def run_scale(scale: Scale, n_queries: int, keep: Path | None = None) -> list[dict[str, Any]]:
    """Build one scale (or reuse the one kept under ``keep``), then measure both engines (numpy
    only up to ``NUMPY_MAX_DOCS``)."""
    corpus = Corpus()
    queries = [corpus.query() for _ in range(n_queries)]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "library" if keep is None else keep / scale.folder
        build_s = _built(root, scale, corpus)
        records = [measure_edge(root, queries, scale.docs)]
        if scale.docs <= NUMPY_MAX_DOCS:
            records.append(measure_numpy(root, queries, scale.docs))
        else:
            records.append(_numpy_skipped(scale.docs))
        close_catalogs()
        clear_engines()
    for record in records:
        record.update(
            points=scale.docs * (1 + SECTIONS_PER_DOC),
            content_words=scale.content_words,
            sparse_pool=scale.pool_size,
            build_s=round(build_s, 1),
        )
    return records


def _numpy_skipped(docs: int) -> dict[str, Any]:
    """The record of a numpy run not made, with the reason (logged as well)."""
    reason = (
        f"numpy reference not run above {NUMPY_MAX_DOCS} documents: its load holds all "
        f"{docs * (1 + SECTIONS_PER_DOC)} points' vectors as Python lists (tens of GB)"
    )
    _log(f"{docs} docs: {reason}")
    return {"engine": "numpy", "docs": docs, "skipped": reason}


BUILT_FILE = "bench-built.json"
"""Written into a kept library once it is complete: a build cut short is built again."""


def _built(root: Path, scale: Scale, corpus: Corpus) -> float:
    """Build the library at ``root`` unless a complete one is there; the build's seconds."""
    marker = root / BUILT_FILE
    if marker.exists():
        build_s = float(json.loads(marker.read_text())["build_s"])
        _log(f"{scale.docs} docs: reusing {root} (built in {build_s:.0f} s)")
        return build_s
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
    build_library(root, scale.docs, corpus, scale.content_words, scale.pool_size)
    close_catalogs()
    build_s = time.perf_counter() - started
    write_json(marker, {**asdict(scale), "build_s": build_s})
    _log(f"{scale.docs} docs: built and optimised in {build_s:.0f} s")
    return build_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument(
        "--content-words",
        type=int,
        default=CONTENT_WORDS,
        help="words of content behind each section's BM25 vector (0: compact entries)",
    )
    parser.add_argument(
        "--sparse-pool",
        type=int,
        default=SPARSE_POOL,
        help="section contents embedded with the BM25 embedder; sections draw their vectors "
        "from them",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build each scale's library under DIR and reuse it in later runs "
        "(default: a temporary folder, removed afterwards)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON record per line")
    args = parser.parse_args(argv)
    records = [
        r
        for docs in args.docs
        for r in run_scale(
            Scale(docs, args.content_words, args.sparse_pool), args.queries, args.keep
        )
    ]
    if args.json:
        for record in records:
            print(json.dumps(record))
        return 0
    print(" | ".join(FIELDS))
    for record in records:
        print(" | ".join(str(record.get(name, "")) for name in FIELDS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
