"""RAPTOR: clustering, tree building, the cache, summaries and collapsed retrieval, with
deterministic fake embeddings (no embedding model)."""

from __future__ import annotations

import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from graph.strategies.raptor import (
    LEAF_TOKENS,
    ModelSummariser,
    RaptorRun,
    collapsed_retrieval,
    extractive_summary,
    node_passages,
    summariser_variant,
    tagged_sentences,
)
from store.raptor_tree import (
    CLUSTER_MAX,
    ROOT_SIZE,
    RaptorNode,
    RaptorStore,
    RaptorTree,
    Segments,
    build_tree,
    cluster,
    unit,
)
from tests.unit.test_strategy_dense import DOC_A, FakeLibrary, Script, make_request


def fake_embed(texts: list[str]) -> list[list[float]]:
    """A fixed pseudo-random 8-d vector per text."""
    return [np.random.default_rng(zlib.crc32(t.encode())).normal(size=8).tolist() for t in texts]


def first_sentences(members: list[RaptorNode]) -> Segments:
    return tuple(m.segments[0] for m in members)


def words(text: str) -> int:
    return len(text.split())


def leaves(count: int) -> list[Segments]:
    return [((i // 3 + 1, f"Leaf {i} says something about topic {i % 7}."),) for i in range(count)]


def points(count: int, seed: int = 3) -> np.ndarray:
    return unit(np.random.default_rng(seed).normal(size=(count, 8)))


def test_clustering_is_a_partition_into_small_groups_and_repeats_for_a_seed() -> None:
    vectors = points(61)
    groups = cluster(vectors, seed=11)
    assert sorted(i for g in groups for i in g) == list(range(61))
    assert all(1 <= len(g) <= CLUSTER_MAX for g in groups)
    assert cluster(vectors, seed=11) == groups
    assert len(groups) < 61


def test_identical_vectors_are_still_split_into_groups() -> None:
    groups = cluster(np.ones((20, 4), dtype=np.float32) / 2.0)
    assert sorted(i for g in groups for i in g) == list(range(20))
    assert all(len(g) <= CLUSTER_MAX for g in groups)


def check_tree(tree: RaptorTree, leaf_count: int) -> None:
    """Each layer's children are exactly the layer below, each once; pages are the leaves'."""
    by_layer: dict[int, list[RaptorNode]] = {}
    for node in tree.nodes:
        by_layer.setdefault(node.layer, []).append(node)
    assert len(by_layer[0]) == leaf_count
    assert len(by_layer[tree.depth - 1]) <= ROOT_SIZE
    for layer in range(1, tree.depth):
        below = sorted(n.index for n in by_layer[layer - 1])
        assert sorted(c for n in by_layer[layer] for c in n.children) == below
        assert len(by_layer[layer]) < len(below)

    def leaf_pages(node: RaptorNode) -> set[int]:
        if node.layer == 0:
            return set(node.pages)
        return set().union(*(leaf_pages(tree.nodes[c]) for c in node.children))

    for node in tree.nodes:
        assert set(node.pages) == leaf_pages(node)
    assert tree.vectors.shape == (len(tree.nodes), 8)


def test_tree_layers_partition_the_layer_below_and_terminate() -> None:
    tree = build_tree("doc", leaves(100), fake_embed, first_sentences, words, seed=5)
    assert tree.depth >= 3
    check_tree(tree, 100)
    again = build_tree("doc", leaves(100), fake_embed, first_sentences, words, seed=5)
    assert [n.children for n in again.nodes] == [n.children for n in tree.nodes]


def test_a_tree_of_identical_leaves_terminates() -> None:
    same = [((1, "The same text."),)] * 40
    tree = build_tree("doc", same, fake_embed, first_sentences, words)
    check_tree(tree, 40)


def test_small_documents_keep_only_their_leaves() -> None:
    tree = build_tree("doc", leaves(ROOT_SIZE), fake_embed, first_sentences, words)
    assert tree.depth == 1 and len(tree.nodes) == ROOT_SIZE


def test_the_cache_round_trips_and_rejects_other_settings(tmp_path: Path) -> None:
    tree = build_tree("doc", leaves(30), fake_embed, first_sentences, words)
    store = RaptorStore(tmp_path, "extractive", {"leaf_tokens": 250})
    assert store.load("doc", "monday") is None
    store.save(tree, "monday")
    loaded = store.load("doc", "monday")
    assert loaded is not None
    assert loaded.nodes == tree.nodes
    assert np.allclose(loaded.vectors, tree.vectors)
    assert store.load("doc", "tuesday") is None  # the document was ingested again
    assert RaptorStore(tmp_path, "extractive", {"leaf_tokens": 100}).load("doc", "monday") is None
    assert (
        RaptorStore(tmp_path, "llm-some/model", {"leaf_tokens": 250}).load("doc", "monday") is None
    )
    assert store.footprint() == {
        "trees": 1,
        "nodes": len(tree.nodes),
        "dense_floats": tree.vectors.size,
    }
    assert not list(tmp_path.rglob(".*.tmp"))


def node(index: int, layer: int, *segments: tuple[int, str]) -> RaptorNode:
    pages = tuple(dict.fromkeys(p for p, _ in segments))
    return RaptorNode(index, layer, tuple(segments), (), pages, sum(words(t) for _, t in segments))


MEMBERS = [
    node(
        0,
        0,
        (3, "Cats were photographed in three cities during the spring of 2019."),
        (4, "Every photograph of the cats was labelled by two annotators."),
    ),
    node(1, 0, (5, "The cats in the photographs were classified by a small network.")),
    node(2, 0, (6, "Unrelated remarks about the weather and the printing of the paper.")),
]


def test_extractive_summaries_quote_central_sentences_with_their_pages() -> None:
    summary = extractive_summary(MEMBERS, words=20)
    originals = {(p, t) for m in MEMBERS for p, t in m.segments}
    assert set(summary) <= originals
    assert 1 < len(summary) < len(originals)
    assert (6, MEMBERS[2].segments[0][1]) not in summary  # the off-topic sentence
    assert [p for p, _ in summary] == sorted(p for p, _ in summary)  # reading order


def test_model_summary_sentences_keep_only_tags_of_the_groups_pages() -> None:
    reply = (
        "Cats were photographed in 2019 [p.3]. Two annotators labelled them [p.4, p.5]. "
        "A network classified them [p.9]. An untagged sentence."
    )
    assert tagged_sentences(reply, {3, 4, 5}) == (
        (3, "Cats were photographed in 2019."),
        (4, "Two annotators labelled them."),
    )


def test_a_summary_reply_without_usable_tags_falls_back_to_the_extractive_summary() -> None:
    model = Script(replies=["A summary with no page tags at all.", "Fine [p.5]."])
    summarise = ModelSummariser(model)
    assert summarise(MEMBERS) == extractive_summary(MEMBERS)
    assert summarise(MEMBERS) == ((5, "Fine."),)
    cost = summarise.cost()
    assert cost["model_calls"] == 2 and cost["extractive_fallbacks"] == 1
    assert cost["error"] is None
    prompt = model.seen[0][-1].content
    assert isinstance(prompt, str) and prompt.startswith("[p.3] Cats were")


def test_trees_are_cached_per_summariser() -> None:
    assert summariser_variant(None) == "extractive"
    assert summariser_variant(Script()) == "llm-Script"


def test_collapsed_retrieval_takes_the_best_nodes_of_all_trees_within_the_budget() -> None:
    def tree(doc_id: str, rows: list[list[float]], tokens: list[int]) -> RaptorTree:
        nodes = [node(i, 0, (i + 1, "x " * t)) for i, t in enumerate(tokens)]
        return RaptorTree(doc_id, nodes, unit(rows))

    query = unit([[1.0, 0.0]])[0]
    a = tree("a", [[1.0, 0.0], [0.0, 1.0]], [50, 50])
    b = tree("b", [[0.9, 0.1], [0.7, 0.3]], [40, 30])
    empty = RaptorTree("c", [], np.zeros((0, 2), dtype=np.float32))
    picked = collapsed_retrieval([a, b, empty], query, budget=100)
    assert [(doc, n.index) for doc, n in picked] == [("a", 0), ("b", 0)]
    picked = collapsed_retrieval([a, b], query, budget=120)
    assert [(doc, n.index) for doc, n in picked] == [("a", 0), ("b", 0), ("b", 1)]


@pytest.mark.parametrize("count", [4, 9, 17, 50])
def test_every_leaf_has_exactly_one_parent_per_layer(count: int) -> None:
    tree = build_tree("doc", leaves(count), fake_embed, first_sentences, words)
    check_tree(tree, count)


class PagedLibrary(FakeLibrary):
    """Forty pages of distinct sentences for one document."""

    def pages(self, doc_id: str) -> list[str]:
        return [
            " ".join(
                f"Page {p} sentence {s} discusses topic {(p * s) % 11} at length."
                for s in range(12)
            )
            for p in range(1, 41)
        ]

    def record(self, doc_id: str) -> dict[str, str]:
        return {"doc_id": doc_id, "ingested_at": "2025-01-01T00:00:00"}


def test_a_tree_is_built_once_recorded_and_then_read_from_the_cache(tmp_path: Path) -> None:
    request = make_request(None)
    request.catalog.library = PagedLibrary()
    request.catalog.index = SimpleNamespace(embed_dense=fake_embed)
    store = RaptorStore(tmp_path, summariser_variant(None), {"leaf_tokens": LEAF_TOKENS})
    tree = RaptorRun(request, store, [DOC_A]).tree(DOC_A)
    assert tree is not None
    (step,) = request.recorder.steps
    assert (step["layer"], step["tool"], step["ok"]) == (1, "build_raptor_tree", True)
    assert step["details"]["layer_sizes"] == tree.layer_sizes() and tree.depth >= 2
    assert step["details"]["summariser"] == "extractive"
    check_tree(tree, tree.layer_sizes()[0])
    assert all(n.tokens <= LEAF_TOKENS for n in tree.nodes if n.layer == 0)
    again = RaptorRun(request, store, [DOC_A]).tree(DOC_A)
    assert again is not None
    assert len(request.recorder.steps) == 1
    assert again.nodes == tree.nodes


def test_a_failing_endpoint_is_asked_once_and_its_tree_is_not_cached(tmp_path: Path) -> None:
    class Down(Script):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            self.seen.append([])
            raise RuntimeError("endpoint down")

    model = Down()
    request = make_request(model)
    request.catalog.library = PagedLibrary()
    request.catalog.index = SimpleNamespace(embed_dense=fake_embed)
    store = RaptorStore(tmp_path, summariser_variant(model), {})
    tree = RaptorRun(request, store, [DOC_A]).tree(DOC_A)
    assert tree is not None
    assert len(model.seen) == 1 and tree.depth >= 2
    (step,) = request.recorder.steps
    assert step["details"]["cached"] is False
    assert (
        step["details"]["build_cost"]["error"]
        == "the model call failed: RuntimeError: endpoint down"
    )
    assert request.recorder.usage.model_calls == 0  # building is not charged to the question
    assert store.load(DOC_A, "2025-01-01T00:00:00") is None


def test_summaries_are_read_page_by_page_and_leaves_whole() -> None:
    leaf = node(0, 0, (3, "a"), (4, "b"))
    summary = node(9, 1, (5, "x"), (3, "y"), (5, "z"))
    assert [p.segments for p in node_passages("d", leaf)] == [((3, "a"), (4, "b"))]
    assert [p.segments for p in node_passages("d", summary)] == [
        ((5, "x"), (5, "z")),
        ((3, "y"),),
    ]
