"""Chunk stores for the strategies that search passages instead of document/section entries.

Two schemes over the same library, each in its own Qdrant collection (dense + BM25, like the
structural index):

- ``dense``: the flat baseline passages, 800 tokens with a 400-token overlap, running across
  page boundaries (``dense``, ``dense-rerank``, ``search-o1``, ``raptor``'s leaves).
- ``rit``: node-aligned chunks of at most 512 tokens; no chunk spans two tree nodes and each
  carries its node id, title and ancestors (``rit``, ``agentic-search``). Trees are page
  granular, so a page belongs to the deepest, latest-starting node whose range holds it.

Chunks keep the text of each page they span separately (``segments``), so a sentence from a
chunk is cited to the page it is printed on. Stores are built lazily, per document, the first
time a strategy needs them; ``LIBRARY/chunks/<scheme>-v<N>.json`` lists the documents whose chunks
are completely written, and only those are searched, so an interrupted build is redone rather
than half used. The baselines score every chunk of the documents they search, so search runs on
an in-memory snapshot (``store.snapshot``: cosine + BM25 with Qdrant's IDF).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import models

from store.catalog import Catalog
from store.embeddings import token_offsets
from store.index import COMMITTED, DENSE, POINT_NAMESPACE, SPARSE, UPSERT_BATCH
from store.index_client import IndexClient
from store.library import read_json, write_json
from store.snapshot import Postings, Rows, build_postings, cosine_scores, unit_rows
from store.types import TreeNode, walk
from store.vectors import BoolArray, FloatArray, SparseQuery

DENSE_CHUNK_TOKENS = 800
DENSE_CHUNK_OVERLAP = 400
RIT_CHUNK_TOKENS = 512
SCHEMES = ("dense", "rit")
CHUNKER_VERSION = 3
"""Bumped whenever chunking changes: manifests are per version, so older chunks are rebuilt."""


@dataclass(frozen=True)
class Chunk:
    """One passage: its document, position, per-page text and (``rit``) its tree node."""

    doc_id: str
    ordinal: int
    segments: tuple[tuple[int, str], ...]
    tokens: int
    node_id: str | None = None
    title: str | None = None
    ancestors: tuple[tuple[str, str], ...] = ()  # (node_id, title), root first

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.segments)

    @property
    def pages(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(page for page, _ in self.segments))

    def payload(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "ordinal": self.ordinal,
            "segments": [[page, text] for page, text in self.segments],
            "tokens": self.tokens,
            "node_id": self.node_id,
            "title": self.title,
            "ancestors": [[node, title] for node, title in self.ancestors],
            "committed": COMMITTED,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Chunk:
        return cls(
            doc_id=str(payload["doc_id"]),
            ordinal=int(payload["ordinal"]),
            segments=tuple((int(p), str(t)) for p, t in payload["segments"]),
            tokens=int(payload["tokens"]),
            node_id=payload.get("node_id"),
            title=payload.get("title"),
            ancestors=tuple((str(n), str(t)) for n, t in payload.get("ancestors") or []),
        )


# -- chunking (pure) --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Token:
    page: int
    start: int
    end: int
    word_start: bool


def _tokens(pages: Iterable[tuple[int, str]]) -> tuple[list[_Token], dict[int, str]]:
    """Word-piece tokens of the pages with character offsets into each page's text."""
    tokens: list[_Token] = []
    texts: dict[int, str] = {}
    for page, text in pages:
        texts[page] = text
        previous_end = -1
        for start, end in token_offsets(text):
            tokens.append(_Token(page, start, end, start != previous_end))
            previous_end = end
    return tokens, texts


def _window(tokens: list[_Token], texts: dict[int, str]) -> tuple[tuple[int, str], ...]:
    """The text of a run of tokens, split by page (whole words: from first start to last end)."""
    segments: list[tuple[int, str]] = []
    for page in dict.fromkeys(t.page for t in tokens):
        on_page = [t for t in tokens if t.page == page]
        text = texts[page][on_page[0].start : on_page[-1].end].strip()
        if text:
            segments.append((page, text))
    return tuple(segments)


def _windows(size: int, overlap: int, word_starts: list[bool]) -> list[tuple[int, int]]:
    """[start, end) token windows of at most ``size`` tokens, each next one starting
    ``size - overlap`` tokens later; both ends snap back to word starts, so no window cuts a
    word in two (unless a run without a word start is longer than the window: no window is
    ever longer than ``size``).

    Every window starts after the one before, whatever the text: where snapping the overlap
    back would land on (or before) the current start — a run of tokens with no word start, such
    as table cells joined without spaces — the next window starts where this one ended. So a
    text of ``n`` tokens gives at most ``n`` windows.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(
            f"window of {size} tokens with an overlap of {overlap}: need 0 <= overlap < size"
        )
    total = len(word_starts)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < total:
        limit = min(start + size, total)
        end = _snap(word_starts, limit, start, limit)
        spans.append((start, end))
        if end == total:
            break
        overlapped = _snap(word_starts, end - overlap, start, end) if overlap else end
        start = overlapped if start < overlapped < end else end
    return spans


def _snap(word_starts: list[bool], position: int, floor: int, ceiling: int) -> int:
    """The nearest word start in (floor, position]; failing that, the first one in (position,
    ceiling); failing that, ``ceiling``. A window's end is snapped with ``ceiling`` at the
    window's size: a run with no word start that long is not a word (a table whose cells and
    ``<br>`` breaks were joined without spaces ran to 208,147 tokens), so it is cut there."""
    if position >= len(word_starts):
        return len(word_starts)
    earlier = (at for at in range(position, floor, -1) if word_starts[at])
    later = (at for at in range(position + 1, ceiling) if word_starts[at])
    return next(earlier, next(later, ceiling))


def dense_chunks(
    doc_id: str,
    pages: list[str],
    size: int = DENSE_CHUNK_TOKENS,
    overlap: int = DENSE_CHUNK_OVERLAP,
) -> list[Chunk]:
    """Flat overlapping passages over the whole document, across page boundaries."""
    tokens, texts = _tokens(enumerate(pages, start=1))
    chunks = []
    starts = [t.word_start for t in tokens]
    for ordinal, (start, end) in enumerate(_windows(size, overlap, starts)):
        segments = _window(tokens[start:end], texts)
        if segments:
            chunks.append(Chunk(doc_id, ordinal, segments, end - start))
    return chunks


def page_owners(tree: list[TreeNode], total_pages: int) -> dict[int, TreeNode]:
    """Each page's node: the deepest, latest-starting node whose page range holds it."""
    owners: dict[int, TreeNode] = {}
    for node in walk(tree):  # depth-first: children after their parent, siblings in order
        for page in range(node["start_page"], min(node["end_page"], total_pages) + 1):
            owners[page] = node
    return owners


def ancestry(tree: list[TreeNode]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each node's ancestors as (node_id, title), root first."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}

    def visit(nodes: list[TreeNode], above: tuple[tuple[str, str], ...]) -> None:
        for node in nodes:
            out[node["node_id"]] = above
            visit(node["nodes"], (*above, (node["node_id"], node["title"])))

    visit(tree, ())
    return out


def node_chunks(
    doc_id: str, pages: list[str], tree: list[TreeNode], size: int = RIT_CHUNK_TOKENS
) -> list[Chunk]:
    """Node-aligned chunks of at most ``size`` tokens, without overlap."""
    owners = page_owners(tree, len(pages))
    above = ancestry(tree)
    groups: list[tuple[TreeNode, list[int]]] = []
    for page in range(1, len(pages) + 1):
        node = owners.get(page)
        if node is None:
            continue
        if groups and groups[-1][0] is node:
            groups[-1][1].append(page)
        else:
            groups.append((node, [page]))
    chunks: list[Chunk] = []
    for node, node_pages in groups:
        tokens, texts = _tokens((p, pages[p - 1]) for p in node_pages)
        for start, end in _windows(size, 0, [t.word_start for t in tokens]):
            segments = _window(tokens[start:end], texts)
            if segments:
                chunks.append(
                    Chunk(
                        doc_id,
                        len(chunks),
                        segments,
                        end - start,
                        node_id=node["node_id"],
                        title=node["title"],
                        ancestors=above[node["node_id"]],
                    )
                )
    return chunks


# -- the store ------------------------------------------------------------------------------------
@dataclass
class ChunkMatrix:
    """A snapshot of a chunk collection: chunks in document order, unit dense rows, postings."""

    chunks: list[Chunk]
    matrix: FloatArray
    postings: Postings
    sparse_nonzeros: int

    @classmethod
    def build(cls, rows: Rows, visible: set[str]) -> ChunkMatrix:
        keep = [i for i, p in enumerate(rows.payloads) if p.get("doc_id") in visible]
        keep.sort(key=lambda i: (rows.payloads[i]["doc_id"], rows.payloads[i]["ordinal"]))
        sparse = [rows.sparse[i] for i in keep]
        return cls(
            chunks=[Chunk.from_payload(rows.payloads[i]) for i in keep],
            matrix=unit_rows(rows.dense[keep] if keep else rows.dense),
            postings=build_postings(sparse, rows),
            sparse_nonzeros=sum(len(indices) for indices, _ in sparse),
        )

    def scores(
        self, dense: FloatArray, sparse: SparseQuery, mask: BoolArray
    ) -> tuple[FloatArray, FloatArray]:
        """Cosine and BM25 score of every chunk; NaN outside ``mask`` (and, for BM25, where
        the chunk shares no term with the query)."""
        if not self.chunks:
            return np.zeros(0, np.float32), np.zeros(0, np.float32)
        cosine = cosine_scores(self.matrix, dense)
        bm25, touched = self.postings.bm25(sparse, len(self.chunks))
        cosine = np.where(mask, cosine, np.nan).astype(np.float32)
        bm25 = np.where(mask & touched, bm25, np.nan).astype(np.float32)
        return cosine, bm25

    def mask(self, doc_ids: Iterable[str] | None) -> BoolArray:
        """Chunks of the given documents (all chunks for ``None``)."""
        if doc_ids is None:
            return np.ones(len(self.chunks), dtype=bool)
        wanted = set(doc_ids)
        return np.array([c.doc_id in wanted for c in self.chunks], dtype=bool)


Chunker = Callable[[Catalog, str], list[Chunk]]


def _dense_chunker(catalog: Catalog, doc_id: str) -> list[Chunk]:
    return dense_chunks(doc_id, catalog.library.pages(doc_id))


def _rit_chunker(catalog: Catalog, doc_id: str) -> list[Chunk]:
    library = catalog.library
    return node_chunks(doc_id, library.pages(doc_id), library.tree(doc_id))


CHUNKERS: dict[str, Chunker] = {"dense": _dense_chunker, "rit": _rit_chunker}
_SNAPSHOTS: dict[tuple[Path, str], tuple[str, ChunkMatrix]] = {}
_BUILD_LOCK = threading.Lock()


class ChunkStore:
    """One scheme's chunks for one library: build what is missing, then search a snapshot."""

    def __init__(self, catalog: Catalog, scheme: str) -> None:
        if scheme not in CHUNKERS:
            raise ValueError(f"unknown chunk scheme {scheme!r}; one of {', '.join(SCHEMES)}")
        self.catalog = catalog
        self.scheme = scheme
        self.collection = f"{catalog.index.collection}__{scheme}_chunks"

    @property
    def manifest_path(self) -> Path:
        return self.catalog.library.root / "chunks" / f"{self.scheme}-v{CHUNKER_VERSION}.json"

    def manifest(self) -> dict[str, int]:
        """doc_id → number of chunks, for every document whose chunks are completely written."""
        if not self.manifest_path.is_file():
            return {}
        return {str(k): int(v) for k, v in read_json(self.manifest_path).items()}

    def missing(self, doc_ids: Iterable[str]) -> list[str]:
        done = self.manifest()
        return [d for d in doc_ids if d not in done and self.catalog.library.has(d)]

    def ensure(self, doc_ids: Iterable[str], progress: Callable[[int], None] | None = None) -> int:
        """Chunk, embed and write every listed document not yet in the store; returns how
        many were added. ``progress`` is told after each document. Writing holds the
        library's write lock, like every other writer of the index."""
        with _BUILD_LOCK:
            todo = self.missing(list(doc_ids))
            if not todo:
                return 0
            with self.catalog.writing("building chunk stores"):
                self._write(self.catalog.index.client, todo, progress)
            return len(todo)

    def _write(
        self, client: IndexClient, todo: list[str], progress: Callable[[int], None] | None
    ) -> None:
        index = self.catalog.index
        if not client.collection_exists(self.collection):
            index.create_hybrid_collection(client, self.collection)
        self.manifest_path.parent.mkdir(parents=True, exist_ok=True)
        manifest = self.manifest()
        for doc_id in todo:
            _delete_doc(client, self.collection, doc_id)  # leftovers of an interrupted build
            chunks = CHUNKERS[self.scheme](self.catalog, doc_id)
            texts = [_embedding_text(c) for c in chunks]
            dense, sparse = index.embed_dense(texts), index.embed_sparse(texts)
            points = [
                models.PointStruct(
                    id=str(uuid.uuid5(POINT_NAMESPACE, f"{doc_id}:{self.scheme}:{c.ordinal}")),
                    vector={DENSE: d, SPARSE: s},
                    payload=c.payload(),
                )
                for c, d, s in zip(chunks, dense, sparse, strict=True)
            ]
            for start in range(0, len(points), UPSERT_BATCH):
                client.upsert(self.collection, points[start : start + UPSERT_BATCH], wait=True)
            manifest[doc_id] = len(chunks)
            write_json(self.manifest_path, manifest)
            if progress:
                progress(1)

    def snapshot(self) -> ChunkMatrix:
        """The searchable chunks (reloaded when the manifest or the library changed)."""
        manifest = self.manifest()
        library = self.catalog.library
        version = f"{library.index_version()}:{sorted(manifest.items())}"
        key = (library.root, self.scheme)
        cached = _SNAPSHOTS.get(key)
        if cached and cached[0] == version:
            return cached[1]
        visible = {d for d in manifest if library.has(d)}
        rows = Rows.load(self.catalog.index.client, self.collection, payload=True)
        matrix = ChunkMatrix.build(rows, visible)
        _SNAPSHOTS[key] = (version, matrix)
        return matrix

    def footprint(self) -> dict[str, int]:
        """Points and stored vector numbers of the collection (dense floats, sparse non-zeros)."""
        matrix = self.snapshot()
        return {
            "points": len(matrix.chunks),
            "dense_dims": int(matrix.matrix.shape[1]) if matrix.matrix.ndim == 2 else 0,
            "dense_floats": int(matrix.matrix.size),
            "sparse_nonzeros": matrix.sparse_nonzeros,
        }


def _embedding_text(chunk: Chunk) -> str:
    """What is embedded: the chunk text, headed by its node path for node-aligned chunks."""
    if chunk.title is None:
        return chunk.text
    path = " > ".join([*(title for _, title in chunk.ancestors), chunk.title])
    return f"{path}\n{chunk.text}"


def _delete_doc(client: IndexClient, collection: str, doc_id: str) -> None:
    if client.collection_exists(collection):
        flt = models.Filter(
            must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]
        )
        client.delete(collection, points_selector=models.FilterSelector(filter=flt), wait=True)
