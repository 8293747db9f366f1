"""Layer-0 fusion and gates on hand-made scores, and the Edge engine against Qdrant's reference
implementation (qdrant-client in memory)."""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from qdrant_client import models

from store.completeness import IndexCounts
from store.edge import EdgeClient
from store.entry_map import EntryMap
from store.index import DENSE, POINT_NAMESPACE, SPARSE, ServerClient, point_id, scroll_points
from store.index_client import IndexClient
from store.library import Library
from store.search_engine import (
    Candidates,
    Descriptions,
    DocumentInfo,
    SearchEngine,
    SearchFilters,
    SectionInfo,
    engine_for,
)
from store.settings import IndexSettings
from store.snapshot import Rows, build_postings, qdrant_idf
from store.vectors import SparseQuery
from tools.search import (
    DocumentSearch,
    GateSettings,
    document_scores,
    fuse,
    post_gate,
    pre_gate,
    ranks,
    rrf,
    scaled,
)

GATES = GateSettings(dense_min=0.3, bm25_min=3.0, dense_strong=0.6, bm25_strong=12.0)
NAN = math.nan


# -- fakes -----------------------------------------------------------------------------------------
class FakeEngine:
    """Returns fixed per-entry scores; records the filters it was asked with."""

    name = "fake"
    version = ""

    def __init__(
        self,
        entries: list[tuple[str, str | None, float, float]],
        corpus: int,
        years: dict[str, int | None] | None = None,
    ) -> None:
        doc_ids = sorted({doc for doc, _, _, _ in entries} | set(years or {}))
        self.infos = [
            DocumentInfo(d, f"Title {d}", ("Ann Lee",), (years or {}).get(d), "ACL", 9)
            for d in doc_ids
        ]
        self.entries = entries
        self.corpus = corpus
        self.filters: SearchFilters | None = None

    def candidates(
        self, dense: Any, sparse: SparseQuery, filters: SearchFilters, depth: int
    ) -> Candidates:
        self.filters = filters
        position = {info.doc_id: i for i, info in enumerate(self.infos)}
        return Candidates(
            doc_ids=[info.doc_id for info in self.infos],
            entry_doc=np.array([position[d] for d, _, _, _ in self.entries], dtype=np.int64),
            node_ids=[n for _, n, _, _ in self.entries],
            dense=np.array([d for _, _, d, _ in self.entries], dtype=np.float32),
            bm25=np.array([b for _, _, _, b in self.entries], dtype=np.float32),
        )

    def documents(self, filters: SearchFilters) -> list[DocumentInfo]:
        self.filters = filters
        return list(self.infos)

    def describe(self, doc_ids: list[str], sections: list[tuple[str, str]]) -> Descriptions:
        self.described = (list(doc_ids), list(sections))
        return Descriptions(
            {info.doc_id: info for info in self.infos if info.doc_id in doc_ids},
            {(d, n): SectionInfo(n, f"Section {n}", 1, 2) for d, n in sections},
        )

    def corpus_size(self) -> int:
        return self.corpus


class FakeLibrary:
    def __init__(self, hidden: set[str] | None = None) -> None:
        self.hidden = hidden or set()

    def has(self, doc_id: str) -> bool:
        return doc_id not in self.hidden

    def listed(self, doc_id: str) -> bool:
        return self.has(doc_id)

    def metadata(self, doc_id: str) -> dict[str, Any]:
        return {"description": f"About {doc_id}."}


def fake_search(engine: FakeEngine, hidden: set[str] | None = None) -> DocumentSearch:
    index = SimpleNamespace(
        embed_dense=lambda texts: [[1.0, 0.0] for _ in texts],
        embed_sparse_query=lambda text: models.SparseVector(indices=[1], values=[1.0]),
        settings=IndexSettings(),
    )
    catalog = SimpleNamespace(index=index, library=FakeLibrary(hidden))
    return DocumentSearch(catalog, gates=GATES, engine=engine)  # type: ignore[arg-type]


def doc(doc_id: str, dense: float, bm25: float) -> tuple[str, None, float, float]:
    return (doc_id, None, dense, bm25)


def section(doc_id: str, node: str, dense: float, bm25: float) -> tuple[str, str, float, float]:
    return (doc_id, node, dense, bm25)


# -- pure arithmetic -------------------------------------------------------------------------------
def test_rrf_uses_k_60_and_only_the_retrievers_that_found_the_document() -> None:
    dense = np.array([0.9, 0.5, NAN])
    bm25 = np.array([NAN, 3.0, 5.0])
    fused = rrf(dense, bm25)
    assert fused == pytest.approx([1 / 61, 1 / 62 + 1 / 62, 1 / 61])
    assert rrf(dense, bm25, k=0) == pytest.approx([1.0, 1.0, 1.0])


def test_ranks_are_one_based_descending_with_ties_by_position() -> None:
    assert ranks(np.array([0.2, 0.9, 0.2, NAN])).tolist()[:3] == [2.0, 1.0, 3.0]
    assert math.isnan(ranks(np.array([0.2, 0.9, 0.2, NAN]))[3])


TWO_DOCUMENTS = ["a", "b"]
PART = "0001"


def test_document_scores_take_the_best_entry_of_each_signal() -> None:
    candidates = Candidates(
        doc_ids=TWO_DOCUMENTS,
        entry_doc=np.array([0, 0, 1, 0]),
        node_ids=[None, PART, PART, PART],
        dense=np.array([0.2, 0.7, NAN, NAN], dtype=np.float32),
        bm25=np.array([NAN, 1.0, 4.0, 6.0], dtype=np.float32),
    )
    scores = document_scores(candidates)
    assert scores.doc.tolist() == [0, 1]
    assert scores.dense[0] == pytest.approx(0.7) and math.isnan(scores.dense[1])
    assert scores.bm25.tolist() == pytest.approx([6.0, 4.0])
    assert scores.section_bm25.tolist() == pytest.approx([6.0, 4.0])
    assert all(math.isnan(v) for v in scores.document_bm25)  # a's document entry: no BM25 match


def test_fusion_adds_the_signals_each_scaled_by_its_best_candidate() -> None:
    assert scaled(np.array([2.0, 1.0, NAN, -0.5])).tolist() == [1.0, 0.5, 0.0, 0.0]
    assert scaled(np.array([NAN, NAN])).tolist() == [0.0, 0.0]
    candidates = Candidates(
        doc_ids=TWO_DOCUMENTS,
        entry_doc=np.array([0, 0, 1, 1]),
        node_ids=[None, PART, None, PART],
        dense=np.array([0.4, 0.2, 0.2, NAN], dtype=np.float32),
        bm25=np.array([10.0, 2.0, 5.0, 8.0], dtype=np.float32),
    )
    # a: dense 0.4/0.4 + sections 2/8 + document 10/10; b: 0.2/0.4 + 8/8 + 5/10
    assert fuse(document_scores(candidates)).tolist() == pytest.approx([2.25, 2.0])


def test_pre_gate_drops_documents_neither_retriever_finds_relevant() -> None:
    dense = np.array([0.31, 0.1, 0.1, NAN, 0.29])
    bm25 = np.array([NAN, 3.0, 2.9, 3.5, 2.99])
    assert pre_gate(dense, bm25, GATES).tolist() == [True, True, False, True, False]


def test_post_gate_large_corpus_puts_results_under_40_percent_of_the_top_last() -> None:
    fused = np.array([0.05, 0.02, 0.0199, 0.03])
    nan = np.full(4, NAN)
    kept = list(post_gate([0, 3, 1, 2], fused, nan, nan, GATES, corpus_size=51))
    # 0.02 = 40 % of 0.05 passes, 0.0199 does not: it still comes back, last and weak
    assert kept == [(0, True), (3, True), (1, True), (2, False)]


def test_post_gate_relative_threshold_comes_from_the_top_visible_result() -> None:
    fused = np.array([0.1, 0.03, 0.02])
    nan = np.full(3, NAN)
    kept = list(post_gate([0, 1, 2], fused, nan, nan, GATES, 100, visible=lambda p: p != 0))
    assert kept == [(1, True), (2, True)]


def test_post_gate_small_corpus_puts_agreement_and_strong_matches_first() -> None:
    dense = np.array([0.35, 0.55, 0.1, 0.65, 0.35])
    bm25 = np.array([3.5, NAN, 12.0, NAN, 2.0])
    fused = np.ones(5)
    kept = list(post_gate(range(5), fused, dense, bm25, GATES, corpus_size=50))
    # agree / bm25 strong / dense strong first, then the others in fused order
    assert kept == [(0, True), (2, True), (3, True), (1, False), (4, False)]


# -- DocumentSearch on a fake engine ---------------------------------------------------------------
def ladder(n: int) -> list[tuple[str, None, float, float]]:
    """doc00 found by both retrievers, doc01… by dense only with falling scores."""
    entries = [doc("doc00", 0.95, 20.0)]
    entries += [doc(f"doc{i:02d}", 0.9 - i * 0.01, NAN) for i in range(1, n)]
    return entries


def test_large_corpus_results_under_40_percent_of_the_top_come_back_weak() -> None:
    search = fake_search(FakeEngine(ladder(20), corpus=100))
    hits = search.search("q", limit=50)
    # top: dense 1 + document BM25 1 = 2; a dense-only doc i scores (0.9 - 0.01 i) / 0.95,
    # at least 0.4 · 2 iff i ≤ 14
    assert [h.doc_id for h in hits] == [f"doc{i:02d}" for i in range(20)]
    assert [h.weak for h in hits] == [False] * 15 + [True] * 5
    assert hits[0].score == pytest.approx(2.0)
    assert hits[14].score == pytest.approx(0.76 / 0.95)
    assert len(search.search("q", limit=10)) == 10  # the gate never shortens the list


def test_gates_off_is_raw_fusion_over_every_candidate() -> None:
    entries = [*ladder(20), doc("weak", 0.01, 0.5)]
    search = fake_search(FakeEngine(entries, corpus=100))
    assert len(search.search("q", limit=50)) == 20  # "weak" fails the pre-gate
    raw = search.search("q", limit=50, gates=False)
    assert len(raw) == 21 and not any(h.weak for h in raw)
    # raw fusion scores "weak" 0.01/0.95 + 0.5/20: last but one, above doc19's 0.71/0.95
    assert raw[-1].doc_id == "weak" or raw[-2].doc_id == "weak"
    off = DocumentSearch(search.catalog, gates=GateSettings(enabled=False), engine=search.engine)
    assert len(off.search("q", limit=50)) == 21


def test_small_corpus_puts_agreement_and_strong_matches_first() -> None:
    entries = [
        doc("agree", 0.4, 4.0),
        doc("dense_weak", 0.5, NAN),
        doc("bm25_strong", 0.1, 13.0),
        doc("dense_strong", 0.7, 1.0),
        doc("neither", 0.2, 2.0),
    ]
    hits = fake_search(FakeEngine(entries, corpus=5)).search("q")
    passing = [h.doc_id for h in hits if not h.weak]
    assert sorted(passing) == ["agree", "bm25_strong", "dense_strong"]
    assert [h.doc_id for h in hits[3:]] == ["dense_weak"]  # "neither" fails the pre-gate
    assert hits[3].weak


def test_invisible_documents_are_never_returned() -> None:
    search = fake_search(FakeEngine(ladder(5), corpus=5), hidden={"doc00"})
    engine = FakeEngine(ladder(5), corpus=100)
    search = fake_search(engine, hidden={"doc00"})
    ids = [h.doc_id for h in search.search("q")]
    assert "doc00" not in ids and ids[0] == "doc01"


def test_limit_and_hit_fields() -> None:
    entries = [doc("a", 0.9, 14.0), section("a", "0003", 0.5, NAN)]
    hits = fake_search(FakeEngine(entries, corpus=3)).search("q", limit=1)
    assert len(hits) == 1
    out = hits[0].as_dict()
    assert out["doc_id"] == "a" and out["description"] == "About a."
    assert out["authors"] == ["Ann Lee"] and out["venue"] == "ACL" and out["total_pages"] == 9
    assert out["dense"] == pytest.approx(0.9) and out["bm25"] == pytest.approx(14.0)
    assert out["score"] == pytest.approx(2.0)  # dense 0.9/0.9 + document BM25 14/14
    assert out["weak"] is False
    assert out["matching_sections"] == [
        {"node_id": "0003", "title": "Section 0003", "start_page": 1, "end_page": 2}
    ]


def test_shown_fields_are_fetched_once_for_the_returned_hits_only() -> None:
    entries = [*ladder(6), section("doc01", "0002", 0.7, 20.0), section("doc04", "0001", 0.7, 20.0)]
    engine = FakeEngine(entries, corpus=100)
    hits = fake_search(engine).search("q", limit=2)
    returned = [h.doc_id for h in hits]
    assert engine.described[0] == returned and len(returned) == 2
    assert engine.described[1] == [(d, n) for d, n, _, _ in entries[6:] if d in returned]


def test_a_document_removed_after_the_query_is_left_out() -> None:
    engine = FakeEngine(ladder(3), corpus=3)
    found = engine.describe

    def describe(doc_ids: list[str], sections: list[tuple[str, str]]) -> Descriptions:
        shown = found(doc_ids, sections)
        shown.documents.pop("doc00", None)
        return shown

    engine.describe = describe  # type: ignore[method-assign]
    assert [h.doc_id for h in fake_search(engine).search("q")] == ["doc01", "doc02"]


def test_matching_sections_are_the_three_strongest_relevant_ones() -> None:
    entries = [
        doc("a", 0.9, 30.0),
        section("a", "0001", 0.35, NAN),  # 0.35/0.6 = 0.58: fourth, cut
        section("a", "0002", 0.29, 2.9),  # below both pre-gate thresholds: never shown
        section("a", "0003", 0.2, 12.0),  # 0.33 + 1.0
        section("a", "0004", 0.45, 6.0),  # 0.75 + 0.5
        section("a", "0005", 0.3, 3.0),  # 0.5 + 0.25
    ]
    (hit,) = fake_search(FakeEngine(entries, corpus=2)).search("q")
    assert [s["node_id"] for s in hit.matching_sections] == ["0003", "0004", "0005"]
    assert hit.dense == pytest.approx(0.9) and hit.bm25 == pytest.approx(30.0)


def test_filters_are_passed_to_the_engine() -> None:
    engine = FakeEngine([doc("a", 0.9, 14.0)], corpus=1)
    fake_search(engine).search(
        "q", year_min=2019, year_max=2021, journal=" ACL ", author="lee", doc_ids=["a", "b"]
    )
    assert engine.filters == SearchFilters(
        year_min=2019, year_max=2021, journal="ACL", author="lee", doc_ids=frozenset({"a", "b"})
    )


def test_browse_lists_newest_first_then_by_title_without_scores() -> None:
    years = {"c": 2020, "a": None, "b": 2021, "d": 2020}
    engine = FakeEngine([], corpus=4, years=years)
    hits = fake_search(engine, hidden={"d"}).search("*", limit=10)
    assert [h.doc_id for h in hits] == ["b", "c", "a"]
    assert all(h.score == 0 and h.dense is None and h.bm25 is None for h in hits)
    assert len(fake_search(engine).search("*", limit=2)) == 2


def test_bad_arguments_are_refused() -> None:
    search = fake_search(FakeEngine([doc("a", 0.9, 14.0)], corpus=1))
    with pytest.raises(ValueError, match="limit"):
        search.search("q", limit=0)
    with pytest.raises(ValueError, match="empty query"):
        search.search("  ")


def test_gate_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VECTREE_GATE_DENSE_MIN", "0.4")
    monkeypatch.setenv("VECTREE_GATE_BM25_STRONG", "9")
    monkeypatch.setenv("VECTREE_GATE_LARGE_CORPUS", "20")
    monkeypatch.setenv("VECTREE_GATES", "off")
    gates = GateSettings.from_env()
    assert (gates.dense_min, gates.bm25_strong, gates.large_corpus) == (0.4, 9.0, 20)
    assert not gates.enabled and gates.bm25_min == GateSettings().bm25_min
    monkeypatch.setenv("VECTREE_GATE_RELATIVE", "lots")
    with pytest.raises(ValueError, match="VECTREE_GATE_RELATIVE"):
        GateSettings.from_env()


# -- the Edge engine against Qdrant's reference (qdrant-client in memory, tiny) ------------------
COLLECTION = "c"
DIM = 8
VENUES = ["Proc. of ACL", "EMNLP", None, "Nature Machine Intelligence"]


def tiny_collection(client: IndexClient, docs: int = 14, seed: int = 3, bare: bool = False) -> None:
    """Documents with 1 document + 3 section entries, some years unknown, two uncommitted, a
    third without ``section_ids`` (the engine reads those entries' payloads);
    ``bare``: some entries without any BM25 term (Qdrant's engine leaves those out of the IDF's
    N, qdrant-client's local mode counts them, so the engines are compared without them)."""
    rnd = random.Random(seed)
    client.create_collection(
        COLLECTION,
        vectors_config={DENSE: models.VectorParams(size=DIM, distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    points = []
    for n in range(docs):
        base = {
            "doc_id": f"d{n:02d}",
            "title": f"Paper {n}",
            "year": None if n % 5 == 0 else 2010 + n,
            "venue": VENUES[n % 4],
            "authors": ["Ann Lee", "Bo Chen"] if n % 2 else ["Carla Diaz"],
            "total_pages": 10,
            "committed": int(n < docs - 2),
            **({"section_ids": ["0000", "0001", "0002"]} if n % 3 else {}),
        }
        for key in ["document", "section:0000", "section:0001", "section:0002"]:
            payload = {**base, "entry_type": key.split(":")[0]}
            if key != "document":
                node = key.split(":")[1]
                payload.update(node_id=node, section_title=f"S{node}", start_page=1, end_page=2)
            terms = sorted(rnd.sample(range(30), rnd.randint(0 if bare else 1, 6)))
            vector = {
                DENSE: [rnd.gauss(0, 1) for _ in range(DIM)],
                SPARSE: models.SparseVector(
                    indices=terms, values=[rnd.uniform(0.5, 2.0) for _ in terms]
                ),
            }
            points.append(
                models.PointStruct(id=point_id(base["doc_id"], key), vector=vector, payload=payload)
            )
    client.upsert(COLLECTION, points)


def _match(key: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


@pytest.fixture
def edge(tmp_path: Path) -> Iterator[EdgeClient]:
    client = EdgeClient(tmp_path / "edge", tmp_path, wait_s=0, threads=1)
    tiny_collection(client)
    yield client
    client.close()


def keyed(candidates: Candidates) -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for j, d in enumerate(candidates.entry_doc.tolist()):
        key = (candidates.doc_ids[d], candidates.node_ids[j] or "")
        out[key] = (float(candidates.dense[j]), float(candidates.bm25[j]))
    return out


@pytest.mark.parametrize(
    "filters",
    [
        SearchFilters(),
        SearchFilters(year_min=2014),
        SearchFilters(year_min=2012, year_max=2018),
        SearchFilters(journal="acl"),
        SearchFilters(author="LEE"),
        SearchFilters(doc_ids=frozenset({"d01", "d02", "d07", "d13"})),
        SearchFilters(entry_types=("section",)),
        SearchFilters(entry_types=("document",), journal="nature", year_max=2030),
    ],
)
def test_edge_and_the_qdrant_reference_return_the_same_candidates(
    edge: EdgeClient, filters: SearchFilters
) -> None:
    reference = ServerClient(":memory:")
    tiny_collection(reference)
    ours, theirs = SearchEngine(edge, COLLECTION), SearchEngine(reference, COLLECTION)
    rnd = random.Random(11)
    for depth in (5, 100):
        for _ in range(5):
            dense = np.array([rnd.gauss(0, 1) for _ in range(DIM)], dtype=np.float32)
            terms = np.array(sorted(rnd.sample(range(32), 4)), dtype=np.int64)
            sparse = SparseQuery(terms, np.ones(4, dtype=np.float32))
            a = keyed(ours.candidates(dense, sparse, filters, depth))
            b = keyed(theirs.candidates(dense, sparse, filters, depth))
            assert a.keys() == b.keys()
            for key, (dense_a, bm25_a) in a.items():
                dense_b, bm25_b = b[key]
                assert np.allclose([dense_a, bm25_a], [dense_b, bm25_b], atol=1e-5, equal_nan=True)
    assert {i.doc_id for i in ours.documents(filters)} == {
        i.doc_id for i in theirs.documents(filters)
    }
    assert ours.corpus_size() == theirs.corpus_size() == 12


def test_edge_retrieve_answers_as_the_qdrant_reference(edge: EdgeClient) -> None:
    reference = ServerClient(":memory:")
    tiny_collection(reference)
    ids = [point_id("d03", "document"), point_id("d07", "section:0001"), point_id("zz", "document")]
    for selection in (True, ["doc_id", "node_id"]):
        ours = edge.retrieve(COLLECTION, ids, with_payload=selection)
        theirs = reference.retrieve(COLLECTION, ids, with_payload=selection)
        assert sorted((str(r.id), r.payload) for r in ours) == sorted(
            (str(r.id), r.payload) for r in theirs
        )
        assert len(ours) == 2 and all(r.vector is None for r in ours)


def test_point_ids_are_uuid5_of_the_document_and_entry() -> None:
    for doc_id, key in [("d01", "document"), ("9a9eb47ba637cafc", "section:0004"), ("é", "")]:
        assert point_id(doc_id, key) == str(uuid.uuid5(POINT_NAMESPACE, f"{doc_id}:{key}"))


def test_entry_refs_read_payloads_only_for_entries_the_document_table_does_not_list(
    edge: EdgeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    retrieve = edge.retrieve

    def spy(collection_name: str, ids: list[str], **kwargs: Any) -> list[models.Record]:
        asked.append(list(ids))
        return retrieve(collection_name, ids, **kwargs)

    monkeypatch.setattr(edge, "retrieve", spy)
    engine = SearchEngine(edge, COLLECTION)
    listed, unlisted = point_id("d01", "section:0002"), point_id("d03", "section:0001")
    documents = point_id("d03", "document")
    refs = engine.entry_refs([listed, unlisted, documents])
    assert asked == [[unlisted]]  # d03 has no section_ids; every document entry is known
    assert (refs[listed], refs[unlisted], refs[documents]) == (
        ("d01", "0002"),
        ("d03", "0001"),
        ("d03", None),
    )
    engine.entry_refs([unlisted])
    assert len(asked) == 1


def test_the_entry_map_is_kept_per_index_version_and_read_by_the_next_engine(
    edge: EdgeClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / "entry-map" / COLLECTION / "v1.npz"
    first = SearchEngine(edge, COLLECTION, "v1", kept)
    ids = [point_id("d01", "section:0002"), point_id("d04", "document")]
    assert first.entry_refs(ids) == {ids[0]: ("d01", "0002"), ids[1]: ("d04", None)}
    assert kept.is_file()

    def no_scroll(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the kept map must be read, not derived again")

    monkeypatch.setattr(edge, "scroll", no_scroll)
    second = SearchEngine(edge, COLLECTION, "v1", kept)
    assert second.entry_refs(ids) == first.entry_refs(ids)
    assert len(second.entry_map) == len(first.entry_map) == 8 * 4 + 4  # d03, d06, d09: no sections
    monkeypatch.undo()
    newer = tmp_path / "entry-map" / COLLECTION / "v2.npz"
    SearchEngine(edge, COLLECTION, "v2", newer).entry_refs(ids)
    assert sorted(p.name for p in newer.parent.iterdir()) == ["v2.npz"]


def test_an_unreadable_entry_map_is_derived_again(edge: EdgeClient, tmp_path: Path) -> None:
    kept = tmp_path / "v1.npz"
    kept.write_bytes(b"not a map")
    engine = SearchEngine(edge, COLLECTION, "v1", kept)
    entry = point_id("d07", "section:0001")
    assert engine.entry_refs([entry]) == {entry: ("d07", "0001")}
    assert EntryMap.load(kept) is not None


def test_the_entry_map_resolves_ids_whose_high_halves_collide() -> None:
    derived = EntryMap.derive([("a", ["0001", "0002"]), ("b", [])])
    ids = [point_id("a", "document"), point_id("a", "section:0002"), point_id("b", "document")]
    same_high = replace(derived, hi=np.zeros_like(derived.hi))
    order = np.argsort(same_high.lo)
    same_high = replace(
        same_high,
        lo=same_high.lo[order],
        doc=same_high.doc[order],
        node=same_high.node[order],
    )
    zeroed = [f"00000000-0000-0000-{i[19:]}" for i in ids]
    assert same_high.refs(zeroed) == {
        zeroed[0]: ("a", None),
        zeroed[1]: ("a", "0002"),
        zeroed[2]: ("b", None),
    }
    unknown = str(uuid.uuid4())
    assert derived.refs([*ids, unknown]) == {
        ids[0]: ("a", None),
        ids[1]: ("a", "0002"),
        ids[2]: ("b", None),
    }


NO_TERMS = SparseQuery(np.array([], np.int64), np.array([], np.float32))


@pytest.mark.parametrize("types", [("section",), ("document",)])
def test_an_entry_type_filter_keeps_only_that_type(edge: EdgeClient, types: tuple[str]) -> None:
    engine = SearchEngine(edge, COLLECTION)
    found = engine.candidates(
        np.ones(DIM, np.float32), NO_TERMS, SearchFilters(entry_types=types), 100
    )
    assert len(found) > 0
    assert {"section" if node else "document" for node in found.node_ids} == set(types)


def test_describe_gives_the_fields_the_documents_and_sections_show(edge: EdgeClient) -> None:
    engine = SearchEngine(edge, COLLECTION)
    shown = engine.describe(["d01", "d04", "gone"], [("d01", "0002"), ("gone", "0001")])
    listed = {i.doc_id: i for i in engine.documents(SearchFilters())}
    assert shown.documents == {"d01": listed["d01"], "d04": listed["d04"]}
    assert shown.sections == {("d01", "0002"): SectionInfo("0002", "S0002", 1, 2)}
    assert engine.describe([], []) == Descriptions({}, {})


def test_exhaustive_bm25_is_qdrant_idf_times_the_stored_weights(tmp_path: Path) -> None:
    edge = EdgeClient(tmp_path / "edge", tmp_path, wait_s=0, threads=1)
    tiny_collection(edge, bare=True)
    rows = Rows.load(edge, COLLECTION)
    postings = build_postings(rows.sparse, rows)
    term = 7
    scores, touched = postings.bm25(
        SparseQuery(np.array([term]), np.array([1.0], np.float32)), len(rows.sparse)
    )
    points = list(scroll_points(edge, COLLECTION, None, True))
    df = sum(term in p.vector[SPARSE].indices for p in points)  # type: ignore[index]
    with_terms = sum(bool(p.vector[SPARSE].indices) for p in points)  # type: ignore[index]
    assert rows.sparse_points == with_terms < len(points)
    idf = float(qdrant_idf(np.array(df), with_terms))
    assert len(points) == 14 * 4 and len(rows.payloads) == 12 * 4
    found_rows, values, found_df = postings.lookup(term)
    assert found_df == df  # uncommitted points count, like Qdrant
    assert touched[found_rows].all()
    assert scores[found_rows] == pytest.approx(values * idf, rel=1e-6)
    query = SparseQuery(np.array([term]), np.array([1.0], np.float32))
    served = SearchEngine(edge, COLLECTION).candidates(
        np.ones(DIM, np.float32), query, SearchFilters(), 100
    )
    assert sorted(served.bm25[~np.isnan(served.bm25)]) == pytest.approx(
        sorted(scores[touched]), rel=1e-5
    )


def test_year_filters_exclude_documents_without_a_year(edge: EdgeClient) -> None:
    engine = SearchEngine(edge, COLLECTION)
    years = [i.year for i in engine.documents(SearchFilters(year_max=2100))]
    assert None not in years and len(years) == 12 - 3  # d00, d05, d10 have no year


def test_edge_refuses_boolean_flags_it_could_never_match(edge: EdgeClient) -> None:
    with pytest.raises(ValueError, match="0/1 integers"):
        edge.count(COLLECTION, models.Filter(must=[_match("committed", True)]))


def test_engine_is_cached_until_the_index_version_changes(tmp_path: Path) -> None:
    client = ServerClient(":memory:")
    tiny_collection(client, docs=6)
    library = Library(tmp_path / "lib").ensure()
    index = SimpleNamespace(settings=IndexSettings(), client=client, collection=COLLECTION)
    checked: list[str] = []
    catalog = SimpleNamespace(
        library=library, index=index, require_complete=lambda: checked.append("checked")
    )
    first = engine_for(catalog)
    assert first.corpus_size() == 4
    assert engine_for(catalog) is first
    client.set_payload(COLLECTION, {"committed": 1}, points=models.Filter())
    assert engine_for(catalog) is first  # no bump: the same engine (its table is kept)
    assert first.corpus_size() == 4  # counted once per index version, not per search
    library.bump_index_version(IndexCounts(entries=6, documents=6, document_entries=6))
    second = engine_for(catalog)
    assert second is not first and second.corpus_size() == 6
    assert checked == ["checked", "checked"]  # completeness checked once per version


def test_both_engines_keep_the_index_through_one_protocol(tmp_path: Path, edge: EdgeClient) -> None:
    server = ServerClient(":memory:")
    tiny_collection(server)
    engines: list[IndexClient] = [edge, server]
    for engine in engines:
        assert engine.collection_metadata(COLLECTION) == {}
        assert engine.damaged() == {}
        engine.settle()
        assert engine.count(COLLECTION, exact=True).count == 14 * 4
    # A server's index is the server's to repair, and its flags written as JSON booleans by an
    # earlier version become the 0/1 integers searches match.
    with pytest.raises(ValueError, match="server's: repair it there"):
        server.closed()
    server.set_payload(COLLECTION, {"committed": True}, points=models.Filter())
    assert server.upgrade(COLLECTION) == {"flags": {"1": 14 * 4, "0": 0}}
    committed = models.Filter(must=[_match("committed", 1)])
    assert server.count(COLLECTION, count_filter=committed).count == 14 * 4
    assert server.upgrade(COLLECTION) is None
    assert edge.upgrade(COLLECTION) is None  # converted when opened (store.migrate)
    with edge.closed():
        pass
