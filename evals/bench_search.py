"""Layer-0 search latency at 1,000 and 10,000 documents' worth of structural entries.

Each scale is a fresh library in a temporary folder whose Qdrant local-mode collection holds
1 document entry + 8 section entries per document (9 points per document). Texts are drawn
from a Zipf-distributed synthetic vocabulary and get real BM25 vectors from the project's
sparse embedder. As in the product (entries version 2), each section's BM25 vector covers its
content (``--content-words`` words, besides the compact text) and the document's covers all of
its sections; ``--content-words 0`` builds the compact entries of version 1 (before). Dense
vectors are random unit vectors (embedding 90,000 texts with MiniLM on two cores would take
several minutes and latency does not depend on what they mean).
Every document gets a ``docs/<id>/`` folder so the visibility check runs as in production.

Measured per scale and engine, over ``--queries`` queries after a warm-up:

* ``search``: ``DocumentSearch.search`` end to end (query embedding, both retrievers, fusion,
  gates, hits with descriptions), default gates, limit 10;
* ``filtered``: the same with a year range and a venue filter;
* ``engine``: the engine's candidate retrieval alone (query vectors precomputed);
* ``load``: opening the local-mode client (Qdrant reads its whole folder), then the matrix
  engine's one-time load (arrays copied out of the collection).

The Qdrant engine runs the same ``--queries`` up to ``--qdrant-max-docs`` documents; above
that, local mode is far too slow for 50 queries × 3 cases, so it is probed with
``--qdrant-probe`` queries (the ``queries`` column says how many).

The floor is search p50 ≤ 50 ms at 10,000 documents with the default engine (matrix):

    python -m evals.bench_search [--docs 1000 10000] [--queries 50] [--content-words 500]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import models

from store.catalog import Catalog, close_catalogs, open_catalog
from store.index import DENSE, SPARSE, point_id
from store.library import write_json
from store.search_engine import MatrixEngine, SearchFilters, SparseQuery, clear_engines, engine_for
from tools.search import DocumentSearch

SECTIONS_PER_DOC = 8
VOCABULARY = 30_000
DOC_WORDS = 60
SECTION_WORDS = 40
CONTENT_WORDS = 500
"""Words of a section's content behind its BM25 vector (QASPER papers: about 550 per top-level
section)."""
QUERY_WORDS = 6
VENUES = ("ACL", "EMNLP", "NAACL", "NeurIPS", "ICML", "ICLR", "TACL", "arXiv", "Nature", "SIGIR")
UPSERT_BATCH = 1024
FIELDS = ("docs", "points", "engine", "case", "p50_ms", "p95_ms", "queries")


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
        self.weights = weights / weights.sum()

    def text(self, n: int) -> str:
        return " ".join(self.rng.choice(self.words, size=n, p=self.weights))

    def query(self) -> str:
        """Query words skip the 100 most frequent (stop-word-like) ones."""
        return " ".join(self.rng.choice(self.words[100:2000], size=QUERY_WORDS))


# -- building a synthetic library ------------------------------------------------------------------
def build_library(
    root: Path, docs: int, corpus: Corpus, content_words: int = CONTENT_WORDS
) -> Catalog:
    """A library with ``docs`` visible documents and their 9 committed points each."""
    catalog = open_catalog(root)
    catalog.index.ensure_collection()
    dim = _dimension(catalog)
    rng = np.random.default_rng(docs)
    for start in range(0, docs, UPSERT_BATCH // (1 + SECTIONS_PER_DOC)):
        batch = range(start, min(docs, start + UPSERT_BATCH // (1 + SECTIONS_PER_DOC)))
        _write_batch(catalog, [f"doc{n:06d}" for n in batch], corpus, rng, dim, content_words)
    catalog.library.bump_index_version()
    return catalog


def _dimension(catalog: Catalog) -> int:
    info = catalog.index.client.get_collection(catalog.index.collection)
    vectors = info.config.params.vectors
    assert isinstance(vectors, dict)
    return int(vectors[DENSE].size)


def _write_batch(
    catalog: Catalog,
    doc_ids: list[str],
    corpus: Corpus,
    rng: np.random.Generator,
    dim: int,
    content_words: int,
) -> None:
    """Payloads, texts, BM25 vectors and random unit dense vectors for a batch of documents."""
    payloads: list[dict[str, Any]] = []
    keys: list[tuple[str, str]] = []
    contents: list[str] = []  # what each point's BM25 vector is built from
    for doc_id in doc_ids:
        base = {
            "doc_id": doc_id,
            "title": corpus.text(8).title(),
            "year": int(rng.integers(1995, 2026)),
            "venue": str(rng.choice(VENUES)),
            "authors": [corpus.text(2).title() for _ in range(3)],
            "section_ids": [f"{i:04d}" for i in range(SECTIONS_PER_DOC)],
            "total_pages": int(rng.integers(4, 40)),
            "committed": True,
        }
        payloads.append({**base, "entry_type": "document", "text": corpus.text(DOC_WORDS)})
        keys.append((doc_id, "document"))
        sections = [corpus.text(content_words) for _ in range(SECTIONS_PER_DOC)]
        contents.append(" ".join([payloads[-1]["text"], *sections]))
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
            contents.append(f"{payloads[-1]['text']} {sections[i]}")
        _write_visible(catalog, base)
    sparse = catalog.index.embed_sparse(contents)
    dense = rng.standard_normal((len(payloads), dim)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    points = [
        models.PointStruct(
            id=point_id(doc_id, key), vector={DENSE: d.tolist(), SPARSE: s}, payload=payload
        )
        for (doc_id, key), payload, d, s in zip(keys, payloads, dense, sparse, strict=True)
    ]
    catalog.index.client.upsert(catalog.index.collection, points, wait=True)


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


def timed(call: Callable[[], Any], repeats: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def measure_engine(
    catalog: Catalog, engine: str, queries: list[str], docs: int, warmup: int = 3
) -> list[dict[str, Any]]:
    """search / filtered / engine-only latencies of one engine on one library."""
    search = DocumentSearch(catalog, engine=engine)
    rows: list[dict[str, Any]] = []
    cursor = iter(range(10**9))

    def next_query() -> str:
        return queries[next(cursor) % len(queries)]

    cases: dict[str, Callable[[], Any]] = {
        "search": lambda: search.search(next_query()),
        "filtered": lambda: search.search(
            next_query(), year_min=2010, year_max=2020, journal="acl"
        ),
    }
    vectors = _query_vectors(catalog, queries)
    live = engine_for(catalog, engine)
    depth = catalog.index.settings.search_depth
    cases["engine"] = lambda: live.candidates(
        *vectors[next(cursor) % len(vectors)], SearchFilters(), depth
    )
    for case, call in cases.items():
        p50, p95 = percentiles(timed(call, len(queries), warmup))
        rows.append(_row(docs, engine, case, p50, p95, len(queries)))
        _log(f"{docs} docs, {engine}, {case}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return rows


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _query_vectors(catalog: Catalog, queries: list[str]) -> list[tuple[Any, SparseQuery]]:
    dense = catalog.index.embed_dense(queries)
    return [
        (
            np.asarray(d, dtype=np.float32),
            SparseQuery.from_vector(catalog.index.embed_sparse_query(q)),
        )
        for d, q in zip(dense, queries, strict=True)
    ]


def _row(docs: int, engine: str, case: str, p50: float, p95: float, n: int) -> dict[str, Any]:
    return {
        "docs": docs,
        "points": docs * (1 + SECTIONS_PER_DOC),
        "engine": engine,
        "case": case,
        "p50_ms": round(p50, 2),
        "p95_ms": round(p95, 2),
        "queries": n,
    }


def measure_loads(root: Path, docs: int) -> list[dict[str, Any]]:
    """Cold costs: opening the local-mode client, then loading the matrix engine."""
    close_catalogs()
    clear_engines()
    started = time.perf_counter()
    catalog = open_catalog(root)
    _ = catalog.index.client
    client_s = time.perf_counter() - started
    started = time.perf_counter()
    engine = engine_for(catalog, "matrix")
    assert isinstance(engine, MatrixEngine)
    load_s = time.perf_counter() - started
    return [
        {
            "docs": docs,
            "engine": "qdrant-local",
            "case": "open_client_s",
            "seconds": round(client_s, 2),
        },
        {"docs": docs, "engine": "matrix", "case": "load_s", "seconds": round(load_s, 2)},
    ]


def run_scale(
    docs: int, n_queries: int, qdrant_max_docs: int, probe: int, content_words: int = CONTENT_WORDS
) -> dict[str, Any]:
    """Build one scale, then measure loads, the matrix engine and the Qdrant engine.

    Above ``qdrant_max_docs`` the Qdrant engine (local mode: ~1–3 s a query at 10,000
    documents) is only probed with ``probe`` queries, reported as such.
    """
    corpus = Corpus()
    queries = [corpus.query() for _ in range(n_queries)]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "library"
        started = time.perf_counter()
        build_library(root, docs, corpus, content_words)
        build_s = time.perf_counter() - started
        _log(f"{docs} docs: built in {build_s:.0f} s")
        loads = measure_loads(root, docs)
        catalog = open_catalog(root)
        rows = measure_engine(catalog, "matrix", queries, docs)
        if docs <= qdrant_max_docs:
            rows += measure_engine(catalog, "qdrant", queries, docs)
        elif probe > 0:
            rows += measure_engine(catalog, "qdrant", queries[:probe], docs, warmup=1)
        close_catalogs()
        clear_engines()
    return {
        "docs": docs,
        "content_words": content_words,
        "build_s": round(build_s, 1),
        "latency": rows,
        "loads": loads,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument(
        "--qdrant-max-docs",
        type=int,
        default=1000,
        help="full Qdrant-engine run up to this many documents, a probe above",
    )
    parser.add_argument(
        "--qdrant-probe", type=int, default=5, help="queries for the Qdrant probe (0: skip)"
    )
    parser.add_argument(
        "--content-words",
        type=int,
        default=CONTENT_WORDS,
        help="words of content behind each section's BM25 vector (0: compact entries, version 1)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    results = [
        run_scale(docs, args.queries, args.qdrant_max_docs, args.qdrant_probe, args.content_words)
        for docs in args.docs
    ]
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(" | ".join(FIELDS))
    for result in results:
        for row in result["latency"]:
            print(" | ".join(str(row[name]) for name in FIELDS))
    print("\ndocs | build_s | open_client_s | matrix_load_s")
    for result in results:
        seconds = {row["case"]: row["seconds"] for row in result["loads"]}
        print(
            f"{result['docs']} | {result['build_s']} | {seconds['open_client_s']} | "
            f"{seconds['load_s']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
