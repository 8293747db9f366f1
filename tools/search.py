"""Layer-0 document search: hybrid dense + BM25 retrieval over structural entries.

Steps, each a small function below so the unit tests can check the arithmetic on hand-made
scores:

1. The engine (``store.search_engine``) returns the top entries under dense cosine and under
   BM25, filters applied. Dense vectors embed each entry's compact text; BM25 vectors carry the
   section's (or, for the document entry, the document's) whole text (``store.entries``).
2. Per document, three signals: the best dense score over its entries, the best BM25 score
   over its section entries (one section holds the words asked about) and the BM25 score of its
   document entry (the words are spread over the document).
3. Pre-fusion gate: a document that neither retriever finds relevant (best dense <
   ``dense_min`` and best BM25 < ``bm25_min``) is dropped, rather than letting fusion promote it.
4. Fusion: each signal is divided by its best value among the candidates and the three are
   added (``fuse``). Rank fusion (RRF, k = 60) let the weak dense signal pull documents that
   BM25 ranks well down the list: on the 331 QASPER development questions over 100 papers,
   recall@5 was 0.495 with RRF of dense and section BM25 and 0.568 with this sum; in 5-fold
   cross-validation over weights of 0–1 for the document and dense signals, every fold chose
   equal weights (held-out recall@5 0.568, see evals/reports/README.md).
5. Post-fusion gate, adapting to corpus size: above ``large_corpus`` documents a result needs at
   least ``relative`` × the top fused score; in smaller corpora both retrievers must agree (it
   passes both pre-gate thresholds) or one match must be strong. The gate orders, it never
   hides: documents that pass it come first, then the other pre-gate survivors, so a search
   returns up to ``limit`` results whenever that many pass the pre-fusion gate (cutting at the
   gate made top 10 return no more than top 5 in large libraries).
6. Only then are the shown fields (title, authors, section titles and pages…) fetched, for the
   returned documents and their matching sections (``SearchEngine.describe``).

Gates can be switched off (``gates=False`` or ``VECTREE_GATES=off``) for the raw-fusion
ablation; the thresholds (``store.settings.GateSettings``, calibrated defaults) are read from
VECTREE_GATE_*. A ``"*"`` query browses: every document matching the filters, newest first,
unscored.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from store.catalog import Catalog
from store.search_engine import (
    BoolArray,
    Candidates,
    DocumentInfo,
    SearchEngine,
    SearchFilters,
    SectionInfo,
    engine_for,
)
from store.settings import GateSettings
from store.vectors import FloatArray, IntArray, SparseQuery
from tools.filings import FilingFilter, filing_label, period_order

Floats = NDArray[np.floating[Any]]

RRF_K = 60
FLOAT_SLACK = 1e-12  # RRF sums are floats: "exactly 40 % of the top" must count as 40 %
BROWSE = "*"
MAX_SECTIONS = 3


# -- results ---------------------------------------------------------------------------------------
@dataclass
class SearchHit:
    """One ranked document, compact enough for an agent (~50 tokens serialised)."""

    doc_id: str
    title: str
    authors: list[str]
    year: int | None
    venue: str | None
    total_pages: int
    description: str
    score: float
    dense: float | None
    bm25: float | None
    matching_sections: list[dict[str, Any]] = field(default_factory=list)
    weak: bool = False  # below the post-fusion gate: shown after the results that pass it
    filing: str = ""  # a filing's form and fiscal period ("10-K FY2019"); "" for other documents
    issuer: str = ""  # a filing's issuer ("NIKE, Inc."); "" for other documents

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with scores rounded (more digits only cost tokens)."""
        out = asdict(self)
        for key in ("score", "dense", "bm25"):
            if out[key] is not None:
                out[key] = round(float(out[key]), 4)
        return out


@dataclass
class DocumentScores:
    """Per-document signals; ``doc`` indexes ``Candidates.doc_ids``; NaN = not found.

    ``dense``: best dense score of any entry; ``bm25``: best BM25 score of any entry (the
    gates); ``section_bm25`` / ``document_bm25``: best BM25 of a section entry / of the
    document entry (fusion)."""

    doc: IntArray
    dense: FloatArray
    bm25: FloatArray
    section_bm25: FloatArray
    document_bm25: FloatArray

    def take(self, keep: BoolArray) -> DocumentScores:
        """The documents where ``keep`` is true."""
        return DocumentScores(
            self.doc[keep],
            self.dense[keep],
            self.bm25[keep],
            self.section_bm25[keep],
            self.document_bm25[keep],
        )


# -- the arithmetic (pure functions) ---------------------------------------------------------------
def document_scores(candidates: Candidates) -> DocumentScores:
    """Max over each document's entries, per signal (entries a retriever missed are NaN)."""
    docs, inverse = np.unique(candidates.entry_doc, return_inverse=True)
    is_section = np.array([n is not None for n in candidates.node_ids], dtype=bool)
    no_score = np.full(len(candidates.bm25), np.nan, dtype=np.float32)

    def best(values: FloatArray) -> FloatArray:
        out = np.full(len(docs), -np.inf, dtype=np.float32)
        np.fmax.at(out, inverse, values)
        out[np.isneginf(out)] = np.nan
        return out

    return DocumentScores(
        docs.astype(np.int64),
        best(candidates.dense),
        best(candidates.bm25),
        best(np.where(is_section, candidates.bm25, no_score)),
        best(np.where(is_section, no_score, candidates.bm25)),
    )


def pre_gate(dense: Floats, bm25: Floats, gates: GateSettings) -> BoolArray:
    """Keep documents that at least one retriever finds relevant (NaN never passes)."""
    with np.errstate(invalid="ignore"):
        return np.asarray((dense >= gates.dense_min) | (bm25 >= gates.bm25_min))


def ranks(scores: Floats) -> Floats:
    """1-based rank by descending score, ties by position; NaN (not retrieved) gets NaN."""
    out = np.full(len(scores), np.nan)
    found = np.flatnonzero(~np.isnan(scores))
    order = found[np.lexsort((found, -scores[found]))]
    out[order] = np.arange(1, len(order) + 1)
    return out


def rrf(dense: Floats, bm25: Floats, k: int = RRF_K) -> Floats:
    """Reciprocal rank fusion: Σ 1 / (k + rank) over the retrievers that found the document."""
    total = np.zeros(len(dense))
    for rank in (ranks(dense), ranks(bm25)):
        found = ~np.isnan(rank)
        total[found] += 1.0 / (k + rank[found])
    return total


def scaled(signal: Floats) -> Floats:
    """A signal divided by its best value among the candidates (NaN and negatives count 0)."""
    values = np.clip(np.nan_to_num(signal.astype(np.float64), nan=0.0), 0.0, None)
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else values


def fuse(scores: DocumentScores) -> Floats:
    """Dense, section BM25 and document BM25, each scaled by its best candidate, summed."""
    return scaled(scores.dense) + scaled(scores.section_bm25) + scaled(scores.document_bm25)


def fused_order(fused: Floats, dense: Floats) -> IntArray:
    """Positions by descending fused score, ties by better dense score, then position (doc_id
    order)."""
    positions = np.arange(len(fused))
    dense_key = np.nan_to_num(dense.astype(np.float64), nan=-np.inf)
    return np.lexsort((positions, -dense_key, -fused)).astype(np.int64)


def agrees_or_strong(dense: float, bm25: float, gates: GateSettings) -> bool:
    """Small-corpus post-gate: both retrievers pass their pre-gate, or one match is strong."""
    both = dense >= gates.dense_min and bm25 >= gates.bm25_min
    return both or dense >= gates.dense_strong or bm25 >= gates.bm25_strong


def post_gate(
    order: Iterable[int],
    fused: Floats,
    dense: Floats,
    bm25: Floats,
    gates: GateSettings,
    corpus_size: int,
    visible: Callable[[int], bool] = lambda _: True,
) -> Iterator[tuple[int, bool]]:
    """Visible positions, those that pass the post-fusion gate first, each with whether it
    passed; lazily, so visibility (a file check per document) is only asked for the few
    results actually returned. The relative threshold is taken from the top *visible* result.
    """
    weaker: list[int] = []
    top: float | None = None
    for position in order:
        if not visible(position):
            continue
        if corpus_size > gates.large_corpus:
            top = fused[position] if top is None else top
            passed = bool(fused[position] >= gates.relative * top - FLOAT_SLACK)
        else:
            passed = agrees_or_strong(float(dense[position]), float(bm25[position]), gates)
        if passed:
            yield position, True
        else:
            weaker.append(position)
    yield from ((position, False) for position in weaker)


def raw_order(
    order: Iterable[int], visible: Callable[[int], bool] = lambda _: True
) -> Iterator[tuple[int, bool]]:
    """The ungated ablation: every visible document in fused order (none marked weak)."""
    return ((position, True) for position in order if visible(position))


def section_strength(dense: Floats, bm25: Floats, gates: GateSettings) -> Floats:
    """One number per section combining both signals, each scaled by its strong threshold."""
    d = np.clip(np.nan_to_num(dense.astype(np.float64), nan=0.0), 0.0, None)
    b = np.clip(np.nan_to_num(bm25.astype(np.float64), nan=0.0), 0.0, None)
    return d / max(gates.dense_strong, 1e-6) + b / max(gates.bm25_strong, 1e-6)


def matching_sections(
    candidates: Candidates, doc: int, gates: GateSettings, limit: int = MAX_SECTIONS
) -> list[str]:
    """Node ids of a document's best sections: relevant to at least one retriever, strongest
    first."""
    entries = np.flatnonzero(candidates.entry_doc == doc)
    is_section = np.array([candidates.node_ids[e] is not None for e in entries], dtype=bool)
    entries = entries[is_section] if len(entries) else entries
    dense, bm25 = candidates.dense[entries], candidates.bm25[entries]
    relevant = pre_gate(dense, bm25, gates)
    entries = entries[relevant]
    strength = section_strength(dense[relevant], bm25[relevant], gates)
    best = entries[np.lexsort((entries, -strength))][:limit]
    return [n for n in (candidates.node_ids[e] for e in best.tolist()) if n is not None]


def browse_order(documents: Iterable[DocumentInfo]) -> list[DocumentInfo]:
    """Newest first (unknown years last), then by title and doc_id."""
    return sorted(
        documents,
        key=lambda d: (d.year is None, -(d.year or 0), d.title.lower(), d.doc_id),
    )


# -- the service -----------------------------------------------------------------------------------
class DocumentSearch:
    """Hybrid search over a catalog's structural index (one per process is enough)."""

    def __init__(
        self,
        catalog: Catalog,
        gates: GateSettings | None = None,
        engine: SearchEngine | None = None,
    ) -> None:
        """``engine``: a ready engine (tests inject hand-built ones); by default the
        catalog's, at the index's current version."""
        self.catalog = catalog
        self.gates = gates or GateSettings.from_env()
        self._engine = engine

    @property
    def engine(self) -> SearchEngine:
        """The engine at the index's current version (reloaded after publish/remove)."""
        if self._engine is None:
            return engine_for(self.catalog)
        return self._engine

    def corpus_size(self) -> int:
        """Number of committed documents in the index."""
        return self.engine.corpus_size()

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        year_min: int | None = None,
        year_max: int | None = None,
        journal: str | None = None,
        author: str | None = None,
        doc_ids: Iterable[str] | None = None,
        gates: bool = True,
        filing: FilingFilter | None = None,
    ) -> list[SearchHit]:
        """Ranked documents for ``query`` (``"*"`` lists documents matching the filters);
        ``filing`` keeps only the filings of an issuer, form or fiscal period."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if not query or not query.strip():
            raise ValueError(f"empty query: give search words, or {BROWSE!r} to list documents")
        filters = SearchFilters(
            year_min=year_min,
            year_max=year_max,
            journal=_blank_to_none(journal),
            author=_blank_to_none(author),
            doc_ids=frozenset(doc_ids) if doc_ids is not None else None,
        )
        engine = self.engine
        wanted = filing or FilingFilter()
        if query.strip() == BROWSE:
            return self._browse(engine, filters, limit, wanted)
        gate_settings = self.gates if gates and self.gates.enabled else None
        return self._rank(engine, query, filters, limit, gate_settings, wanted)

    # -- internals ---------------------------------------------------------------------------------
    def _browse(
        self, engine: SearchEngine, filters: SearchFilters, limit: int, filing: FilingFilter
    ) -> list[SearchHit]:
        hits: list[SearchHit] = []
        for info in browse_order(engine.documents(filters)):
            if self._shown(info.doc_id, filing):
                hits.append(self._hit(info, 0.0, math.nan, math.nan, []))
                if len(hits) == limit:
                    break
        return hits

    def _rank(
        self,
        engine: SearchEngine,
        query: str,
        filters: SearchFilters,
        limit: int,
        gates: GateSettings | None,
        filing: FilingFilter,
    ) -> list[SearchHit]:
        index = self.catalog.index
        dense_query = np.asarray(index.embed_dense([query])[0], dtype=np.float32)
        sparse_query = SparseQuery.from_vector(index.embed_sparse_query(query))
        candidates = engine.candidates(
            dense_query, sparse_query, filters, index.settings.search_depth
        )
        scores = document_scores(candidates)
        if gates is not None:
            scores = scores.take(pre_gate(scores.dense, scores.bm25, gates))
        fused = fuse(scores)
        order = fused_order(fused, scores.dense).tolist()

        def visible(position: int) -> bool:
            return self._shown(candidates.doc_ids[scores.doc[position]], filing)

        if gates is None:
            selected = raw_order(order, visible)
        else:
            size = engine.corpus_size()
            selected = post_gate(order, fused, scores.dense, scores.bm25, gates, size, visible)
        chosen = list(itertools.islice(selected, limit))
        hits = self._hits(engine, candidates, scores, fused, chosen, gates or self.gates)
        return period_order(hits, query, self._filing)

    def _hits(
        self,
        engine: SearchEngine,
        candidates: Candidates,
        scores: DocumentScores,
        fused: Floats,
        chosen: list[tuple[int, bool]],
        section_gates: GateSettings,
    ) -> list[SearchHit]:
        """Hits for the chosen (position, passed) documents, their shown fields and matching
        sections fetched in one call."""
        doc_ids = [candidates.doc_ids[scores.doc[position]] for position, _ in chosen]
        nodes = [
            matching_sections(candidates, int(scores.doc[position]), section_gates)
            for position, _ in chosen
        ]
        pairs = zip(doc_ids, nodes, strict=True)
        shown = engine.describe(doc_ids, [(d, n) for d, doc_nodes in pairs for n in doc_nodes])
        hits: list[SearchHit] = []
        for (position, passed), doc_id, doc_nodes in zip(chosen, doc_ids, nodes, strict=True):
            info = shown.documents.get(doc_id)
            if info is None:  # removed since the query
                continue
            hit = self._hit(
                info,
                float(fused[position]),
                float(scores.dense[position]),
                float(scores.bm25[position]),
                [shown.sections[(doc_id, n)] for n in doc_nodes if (doc_id, n) in shown.sections],
            )
            hit.weak = not passed
            hits.append(hit)
        return hits

    def _hit(
        self,
        info: DocumentInfo,
        score: float,
        dense: float,
        bm25: float,
        sections: list[SectionInfo],
    ) -> SearchHit:
        meta = self._metadata(info.doc_id)
        return SearchHit(
            doc_id=info.doc_id,
            title=info.title,
            authors=list(info.authors),
            year=info.year,
            venue=info.venue,
            total_pages=info.total_pages,
            description=str(meta.get("description") or ""),
            filing=filing_label(meta.get("filing")),
            issuer=str((meta.get("filing") or {}).get("issuer") or ""),
            score=score,
            dense=None if math.isnan(dense) else dense,
            bm25=None if math.isnan(bm25) else bm25,
            matching_sections=[
                {
                    "node_id": s.node_id,
                    "title": s.title,
                    "start_page": s.start_page,
                    "end_page": s.end_page,
                }
                for s in sections
            ],
        )

    def _shown(self, doc_id: str, filing: FilingFilter) -> bool:
        """Listed, and a filing the filter admits when it asks for filings."""
        if not self.catalog.library.listed(doc_id):
            return False
        return not filing.active or filing.admits(self._filing(doc_id))

    def _filing(self, doc_id: str) -> Mapping[str, Any]:
        """A document's filing facts ({} for other documents)."""
        return self._metadata(doc_id).get("filing") or {}

    def _metadata(self, doc_id: str) -> Mapping[str, Any]:
        """A document's metadata.json ({} if it vanished or cannot be read meanwhile)."""
        try:
            return self.catalog.library.metadata(doc_id)
        except (OSError, ValueError):
            return {}


def _blank_to_none(value: str | None) -> str | None:
    return (value.strip() or None) if value is not None else None
