"""RAPTOR summary trees: recursive clustering of a document's passages, and their on-disk cache.

A tree is built bottom-up. Layer 0 holds the leaves (passages of page text); each higher layer
clusters the unit embeddings of the layer below with a seeded spherical k-means into groups of
about :data:`CLUSTER_TARGET` (never more than :data:`CLUSTER_MAX`: larger groups are split
again) and writes one summary node per group. Building stops once a layer has at most
:data:`ROOT_SIZE` nodes. Every node of a layer has exactly one parent, so each leaf sits under
exactly one node of every layer above it.

Every node is a list of ``(page, text)`` segments, like a passage: leaves carry their page
text; summaries carry sentences each tied to one page (how a summariser ties them is its own
business, see ``graph.strategies.raptor``). ``pages`` of a summary are all its leaves' pages.

Trees are cached per document under ``LIBRARY/raptor/<variant>/`` (``<doc_id>.json`` with the
nodes, ``<doc_id>.npy`` with their unit vectors; both written via a temporary file and a
rename, the JSON last, so a half-written tree is never read). The variant names the summariser
(``extractive`` or ``llm-<model>``), so trees built offline and with a model never mix. The JSON
also records the leaf size, the embedding model and when the document was ingested; a tree
built with other settings, or from an earlier ingestion of the document, is rebuilt.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from store.library import read_json, write_json
from store.snapshot import unit_rows

CLUSTER_TARGET = 6
CLUSTER_MAX = 8
ROOT_SIZE = 3
KMEANS_ITERATIONS = 30
SEED = 7
FORMAT_VERSION = 1

FloatArray = NDArray[np.float32]
Segments = tuple[tuple[int, str], ...]
Embed = Callable[[list[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True)
class RaptorNode:
    """One node: its layer, text by page, children (indices into the tree) and leaf pages."""

    index: int
    layer: int
    segments: Segments
    children: tuple[int, ...]
    pages: tuple[int, ...]
    tokens: int

    @property
    def text(self) -> str:
        return _join(self.segments)

    def payload(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "layer": self.layer,
            "segments": [[page, text] for page, text in self.segments],
            "children": list(self.children),
            "pages": list(self.pages),
            "tokens": self.tokens,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> RaptorNode:
        return cls(
            index=int(payload["index"]),
            layer=int(payload["layer"]),
            segments=tuple((int(p), str(t)) for p, t in payload["segments"]),
            children=tuple(int(c) for c in payload["children"]),
            pages=tuple(int(p) for p in payload["pages"]),
            tokens=int(payload["tokens"]),
        )


@dataclass
class RaptorTree:
    """A document's nodes (leaves first, then each layer in turn) and their unit vectors."""

    doc_id: str
    nodes: list[RaptorNode]
    vectors: FloatArray

    @property
    def depth(self) -> int:
        """Number of layers (1 = leaves only)."""
        return 1 + max((n.layer for n in self.nodes), default=0)

    def layer_sizes(self) -> list[int]:
        return [sum(n.layer == layer for n in self.nodes) for layer in range(self.depth)]


# -- clustering (pure) --------------------------------------------------------------------------
def unit(vectors: Sequence[Sequence[float]] | FloatArray) -> FloatArray:
    """Embedder output as a float32 matrix of unit rows."""
    return unit_rows(np.asarray(vectors, dtype=np.float32))


def kmeans(vectors: FloatArray, k: int, seed: int) -> NDArray[np.int64]:
    """Spherical k-means (cosine) with k-means++ seeding: the label of every row."""
    rng = np.random.default_rng(seed)
    n = len(vectors)
    centres = [int(rng.integers(n))]
    while len(centres) < k:
        nearest = np.max(vectors @ vectors[centres].T, axis=1)
        weight = np.clip(1.0 - nearest, 0.0, None) ** 2
        total = float(weight.sum())
        probs = weight / total if total > 0 else np.full(n, 1.0 / n)
        centres.append(int(rng.choice(n, p=probs)))
    means = vectors[centres]
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(KMEANS_ITERATIONS):
        fresh = np.argmax(vectors @ means.T, axis=1).astype(np.int64)
        if np.array_equal(fresh, labels):
            break
        labels = fresh
        for c in range(k):
            members = vectors[labels == c]
            if len(members):
                means[c] = unit_rows(members.mean(axis=0, keepdims=True))[0]
    return labels


def cluster(
    vectors: FloatArray, target: int = CLUSTER_TARGET, most: int = CLUSTER_MAX, seed: int = SEED
) -> list[list[int]]:
    """Partition the rows into groups of about ``target`` and at most ``most`` rows.

    Groups are ordered by their first row and list rows in order, so the result depends only
    on the vectors and the seed. A group k-means cannot split (identical rows) is cut in order.
    """
    n = len(vectors)
    if n <= most:
        return [list(range(n))] if n else []
    labels = kmeans(vectors, math.ceil(n / target), seed)
    groups = [
        [int(i) for i in np.flatnonzero(labels == label)]
        for label in dict.fromkeys(labels.tolist())
    ]
    if len(groups) == 1:
        return [list(range(start, min(start + target, n))) for start in range(0, n, target)]
    out: list[list[int]] = []
    for group in groups:
        if len(group) <= most:
            out.append(group)
        else:
            out.extend(
                [group[i] for i in sub] for sub in cluster(vectors[group], target, most, seed)
            )
    return out


# -- building -----------------------------------------------------------------------------------
Summarise = Callable[[list[RaptorNode]], Segments]
Count = Callable[[str], int]


def build_tree(
    doc_id: str,
    leaves: list[Segments],
    embed: Embed,
    summarise: Summarise,
    count: Count,
    seed: int = SEED,
) -> RaptorTree:
    """Leaves → clustered summary layers until a layer has at most ROOT_SIZE nodes.

    ``summarise`` turns a cluster's nodes into the parent's segments, ``count`` gives a text's
    tokens. Each layer has fewer nodes than the one below (a cluster has at least one member
    and k-means is asked for fewer clusters than rows), so building always ends.
    """
    nodes = [
        RaptorNode(i, 0, segments, (), _pages(segments), count(_join(segments)))
        for i, segments in enumerate(leaves)
    ]
    vectors = unit(embed([n.text for n in nodes])) if nodes else np.zeros((0, 1), np.float32)
    layer = list(range(len(nodes)))
    while len(layer) > ROOT_SIZE:
        groups = cluster(vectors[layer], seed=seed + nodes[layer[0]].layer)
        if len(groups) >= len(layer):
            break
        parents = [
            _parent(nodes, [layer[i] for i in group], len(nodes) + g, summarise, count)
            for g, group in enumerate(groups)
        ]
        vectors = np.vstack([vectors, unit(embed([p.text for p in parents]))])
        layer = [p.index for p in parents]
        nodes.extend(parents)
    return RaptorTree(doc_id, nodes, vectors)


def _parent(
    nodes: list[RaptorNode], members: list[int], index: int, summarise: Summarise, count: Count
) -> RaptorNode:
    """The summary node of one cluster."""
    children = [nodes[i] for i in members]
    segments = summarise(children)
    pages = sorted({page for child in children for page in child.pages})
    return RaptorNode(
        index, children[0].layer + 1, segments, tuple(members), tuple(pages), count(_join(segments))
    )


def _pages(segments: Segments) -> tuple[int, ...]:
    return tuple(dict.fromkeys(page for page, _ in segments))


def _join(segments: Segments) -> str:
    return "\n".join(text for _, text in segments)


# -- the cache ----------------------------------------------------------------------------------
class RaptorStore:
    """Cached trees of one library for one summariser variant."""

    def __init__(self, library_root: Path, variant: str, settings: dict[str, Any]) -> None:
        self.folder = library_root / "raptor" / _slug(variant)
        self.settings = {"format": FORMAT_VERSION, **settings}

    def _paths(self, doc_id: str) -> tuple[Path, Path]:
        return self.folder / f"{doc_id}.json", self.folder / f"{doc_id}.npy"

    def load(self, doc_id: str, stamp: str) -> RaptorTree | None:
        """The cached tree, or None when missing, incomplete, built with other settings or
        from another ingestion of the document (``stamp``, e.g. its ingestion time)."""
        meta_path, vector_path = self._paths(doc_id)
        if not (meta_path.is_file() and vector_path.is_file()):
            return None
        meta = read_json(meta_path)
        if meta.get("settings") != self.settings or meta.get("stamp") != stamp:
            return None
        nodes = [RaptorNode.from_payload(n) for n in meta["nodes"]]
        vectors = np.load(vector_path).astype(np.float32)
        if len(vectors) != len(nodes):
            return None
        return RaptorTree(doc_id, nodes, vectors)

    def save(self, tree: RaptorTree, stamp: str) -> None:
        """Vectors first, then the JSON that makes the tree visible (each atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        meta_path, vector_path = self._paths(tree.doc_id)
        tmp = vector_path.with_name(f".{vector_path.name}.tmp")
        with tmp.open("wb") as handle:
            np.save(handle, tree.vectors)
        os.replace(tmp, vector_path)
        write_json(
            meta_path,
            {"settings": self.settings, "stamp": stamp, "nodes": [n.payload() for n in tree.nodes]},
        )

    def footprint(self) -> dict[str, int]:
        """Trees, nodes and stored vector floats of this variant."""
        trees = nodes = floats = 0
        for meta_path in sorted(self.folder.glob("*.json")):
            vectors = np.load(meta_path.with_suffix(".npy"), mmap_mode="r")
            trees += 1
            nodes += len(read_json(meta_path)["nodes"])
            floats += int(vectors.size)
        return {"trees": trees, "nodes": nodes, "dense_floats": floats}


def _slug(text: str) -> str:
    """A folder name from a summariser's name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "default"
