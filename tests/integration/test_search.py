"""Layer-0 search over a real library: real PDFs, real embeddings, the embedded Qdrant Edge index
(checked against the same entries in qdrant-client's reference implementation)."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import models

from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import Catalog, close_catalogs, open_catalog
from store.edge import EdgeClient
from store.index import ServerClient, scroll_points
from store.search_engine import SearchEngine, clear_engines
from tests.conftest import PDF_DIR, require_shared_data
from tools.search import DocumentSearch, SearchHit

pytestmark = pytest.mark.integration

PDFS = [
    "2020.acl-main.447.pdf",
    "2023.eacl-main.121.pdf",
    "bohnet09.pdf",
    "mooney05.pdf",
    "paperqa-perspective.pdf",
]
S2ORC_QUERY = "large corpus of academic papers from Semantic Scholar"
QUERIES = [
    S2ORC_QUERY,
    "dependency parsing accuracy and speed",
    "retrieval augmented question answering over scientific literature",
    "relation extraction with weak supervision",
    "evaluation of language models",
]


@pytest.fixture(scope="module")
def library() -> Iterator[Path]:
    """Five development PDFs ingested once for the whole module."""
    require_shared_data()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "library"
        report = ingest_paths(
            [PDF_DIR / name for name in PDFS], IngestContext(library=str(root)), progress=False
        )
        assert report.count("ingested") == len(PDFS), report.as_dict()
        yield root
        close_catalogs()
        clear_engines()


def doc_for(catalog: Catalog, pdf: str) -> str:
    (doc_id,) = [r["doc_id"] for r in catalog.library.documents() if r["source"].endswith(pdf)]
    return doc_id


def ids(hits: list[SearchHit]) -> list[str]:
    return [hit.doc_id for hit in hits]


def same(a: float | None, b: float | None) -> bool:
    """Equal scores (float32 arithmetic differs in the last digits), or both absent."""
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5)
    )


def test_s2orc_paper_comes_first(library: Path) -> None:
    catalog = open_catalog(library)
    hits = DocumentSearch(catalog).search(S2ORC_QUERY)
    assert hits and hits[0].doc_id == doc_for(catalog, "2020.acl-main.447.pdf")
    top = hits[0]
    assert top.title and top.total_pages > 0 and top.description
    assert top.dense is not None and top.bm25 is not None and top.score > 0
    assert top.matching_sections and all(
        1 <= s["start_page"] <= s["end_page"] <= top.total_pages for s in top.matching_sections
    )


def test_the_embedded_index_is_qdrant_edge(library: Path) -> None:
    search = DocumentSearch(open_catalog(library))
    assert isinstance(search.engine.client, EdgeClient)
    assert search.corpus_size() == len(PDFS)
    assert (library / "edge" / "vectree_structure" / "vectree-collection.json").is_file()


def reference_engine(catalog: Catalog) -> SearchEngine:
    """The library's entries copied, as stored, into qdrant-client's in-memory reference."""
    index = catalog.index
    reference = ServerClient(":memory:")
    index.create_hybrid_collection(reference, index.collection)
    records = list(scroll_points(index.client, index.collection, None, True))
    points = [models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for r in records]  # type: ignore[arg-type]
    reference.upsert(index.collection, points)
    return SearchEngine(reference, index.collection)


@pytest.mark.parametrize("gates", [True, False])
def test_edge_ranks_like_the_qdrant_reference(library: Path, gates: bool) -> None:
    catalog = open_catalog(library)
    edge = DocumentSearch(catalog)
    reference = DocumentSearch(catalog, engine=reference_engine(catalog))
    for query in QUERIES:
        a = edge.search(query, gates=gates)
        b = reference.search(query, gates=gates)
        assert ids(a) == ids(b), query
        for x, y in zip(a, b, strict=True):
            assert x.score == pytest.approx(y.score)
            assert same(x.dense, y.dense) and same(x.bm25, y.bm25)
            assert x.matching_sections == y.matching_sections


def test_filters_restrict_the_results(library: Path) -> None:
    catalog = open_catalog(library)
    search = DocumentSearch(catalog)
    meta = {r["doc_id"]: catalog.library.metadata(r["doc_id"]) for r in catalog.library.documents()}
    every = ids(search.search("*", limit=50))
    assert sorted(every) == sorted(meta)

    years = sorted({m["year"] for m in meta.values() if m["year"]})
    assert len(years) >= 2
    cut = years[-1]
    for s in (search, DocumentSearch(catalog, engine=reference_engine(catalog))):
        newer = s.search("*", limit=50, year_min=cut)
        assert {h.doc_id for h in newer} == {d for d, m in meta.items() if (m["year"] or 0) >= cut}
        older = s.search("parsing language", limit=50, year_max=cut - 1, gates=False)
        assert older and all(h.year is not None and h.year < cut for h in older)

        with_venue = next(m for m in meta.values() if m["venue"])
        venue_word = with_venue["venue"].split()[0].upper()
        venue_hits = s.search("*", limit=50, journal=venue_word)
        assert venue_hits and all(venue_word.lower() in (h.venue or "").lower() for h in venue_hits)

        with_author = next(m for m in meta.values() if m["authors"])
        surname = with_author["authors"][0].split()[-1].lower()
        author_hits = s.search("papers", limit=50, author=surname, gates=False)
        assert author_hits
        assert all(any(surname in a.lower() for a in h.authors) for h in author_hits)

        chosen = sorted(meta)[:2]
        restricted = s.search("language", limit=50, doc_ids=chosen, gates=False)
        assert restricted and set(ids(restricted)) <= set(chosen)


def test_browse_lists_every_document_newest_first(library: Path) -> None:
    hits = DocumentSearch(open_catalog(library)).search("*", limit=50)
    assert len(hits) == len(PDFS)
    years = [h.year if h.year is not None else -1 for h in hits]
    known = [y for y in years if y >= 0]
    assert known == sorted(known, reverse=True)
    assert years[len(known) :] == [-1] * (len(years) - len(known))
    assert all(h.score == 0 for h in hits)


def test_index_version_bump_makes_the_engine_see_changes(library_dir: Path) -> None:
    require_shared_data()
    context = IngestContext(library=str(library_dir))
    ingest_paths([PDF_DIR / "bohnet09.pdf", PDF_DIR / "mooney05.pdf"], context, progress=False)
    catalog = open_catalog(library_dir)
    search = DocumentSearch(catalog)
    first_engine = search.engine
    assert search.corpus_size() == 2 and search.engine is first_engine

    ingest_paths([PDF_DIR / "2020.acl-main.447.pdf"], context, progress=False)
    s2orc = doc_for(catalog, "2020.acl-main.447.pdf")
    assert search.engine is not first_engine and search.corpus_size() == 3
    assert search.search(S2ORC_QUERY)[0].doc_id == s2orc

    assert catalog.remove(s2orc)
    assert search.corpus_size() == 2
    assert s2orc not in ids(search.search(S2ORC_QUERY, gates=False))
    assert s2orc not in ids(search.search("*", limit=50))
    clear_engines()
