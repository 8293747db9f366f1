"""RAPTOR: a per-document tree of recursive cluster summaries, searched as one flat pool.

Leaves. Each document is cut into consecutive 250-token passages without overlap rather than
reusing the 800-token ``dense`` chunks: MiniLM reads at most 256 tokens, so an 800-token leaf
would be clustered and retrieved by its first third only; without overlap, neighbouring leaves
do not cluster together merely for sharing text, and the retrieval budget is not spent twice on
the same sentences.

Tree. ``store.raptor_tree`` clusters each layer (seeded spherical k-means, groups of about 6,
at most 8) and summarises every group into a parent until a layer has at most 3 nodes. Trees
are built the first time a run needs a document and cached in the library, separately for
each summariser. With a model, a group's summary is one model call (calls made while building
are reported in the build step, not charged to the question; after a failed call the rest is
summarised extractively and that tree is not cached). Offline, the summary is
extractive: the group's sentences closest (tf-idf cosine) to the group's centroid, about 100
words, in reading order.

Retrieval. Collapsed tree: every node of every layer of the run's documents is scored by cosine
to the question and taken best first until 2,000 tokens; then one answer call (offline: the
extractive reader).

Citations. Only page text is citable, so every node is a list of (page, text) segments and a
run discloses exactly the pages of the segments it shows (a summary is shown page by page,
each part headed by its own page). Leaves are page text. Offline
summaries are sentences quoted from the leaves, each kept with its page, so citing one is
citing printed text. A model's summary is a paraphrase: the summariser must end each sentence
with the page tag of the piece it draws on, sentences without a tag from the group's own pages
are dropped, and a group whose reply keeps nothing gets the extractive summary. Such a sentence
is cited to the page it was tagged with, whose text the citation list shows for checking.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import Field

from graph.strategies.base import (
    StrategyOutcome,
    StrategyRequest,
    answer_from_passages,
    passages_result,
)
from store.chat import ModelCallError, Usage, invoke, message_text
from store.chunks import dense_chunks
from store.embeddings import count_tokens
from store.raptor_tree import (
    CLUSTER_MAX,
    CLUSTER_TARGET,
    ROOT_SIZE,
    SEED,
    FloatArray,
    RaptorNode,
    RaptorStore,
    RaptorTree,
    Segments,
    build_tree,
    unit,
)
from store.text import content_words, readable_sentences
from tools.results import Passage, Tool, ToolResult
from tools.schemas import ToolArgs

LEAF_TOKENS = 250
BUDGET_TOKENS = 2000
SUMMARY_WORDS = 100
SENTENCE_MIN_WORDS = 5
PAGE_TAG = re.compile(r"(?P<text>[^\[\]]+?)\s*\[pp?\.\s*(?P<page>\d+)[^\]]*\]")
SUMMARY_PROMPT = """Summarise the text pieces below in at most 100 words for a search index over
the document. Keep names, numbers, methods and findings; no preamble. End every sentence with
the tag of the piece it draws on, such as [p.7]."""
_BUILD_LOCK = threading.Lock()


# -- summarisers ----------------------------------------------------------------------------
def extractive_summary(members: Sequence[RaptorNode], words: int = SUMMARY_WORDS) -> Segments:
    """The sentences most central to the group (tf-idf cosine to its centroid), about
    ``words`` words, in reading order, each with its page."""
    candidates = [
        (page, sentence)
        for member in members
        for page, text in member.segments
        for sentence in readable_sentences(text, min_words=SENTENCE_MIN_WORDS)
    ]
    if not candidates:
        page, text = members[0].segments[0]
        return ((page, " ".join(text.split()[:words])),)
    matrix = _tfidf([s for _, s in candidates])
    centre = matrix.mean(axis=0)
    scores = matrix @ (centre / (np.linalg.norm(centre) or 1.0))
    chosen: list[int] = []
    seen: set[str] = set()
    total = 0
    for index in np.argsort(-scores, kind="stable"):
        text = candidates[int(index)][1]
        if text in seen:
            continue
        seen.add(text)
        chosen.append(int(index))
        total += len(text.split())
        if total >= words:
            break
    return tuple(candidates[i] for i in sorted(chosen))


def _tfidf(texts: list[str]) -> FloatArray:
    """Unit tf-idf rows over the texts' content words."""
    bags = [Counter(content_words(t)) for t in texts]
    vocabulary = {w: i for i, w in enumerate(sorted({w for bag in bags for w in bag}))}
    df = Counter(w for bag in bags for w in bag)
    matrix = np.zeros((len(texts), max(len(vocabulary), 1)), dtype=np.float32)
    for row, bag in enumerate(bags):
        for word, count in bag.items():
            matrix[row, vocabulary[word]] = count * math.log(1 + len(texts) / df[word])
    return unit(matrix)


class ModelSummariser:
    """One model call per group; replies are parsed into page-tagged sentences (see the module
    docstring). Calls go through a recorder of their own, so tree building is reported apart
    from the question's cost. After a failed call the rest of the tree is summarised
    extractively and ``error`` is set: such a tree serves the run but is not cached."""

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.usage = Usage()
        self.fallbacks = 0
        self.error: str | None = None

    def __call__(self, members: list[RaptorNode]) -> Segments:
        segments = self._ask(members) if self.error is None else ()
        if not segments:
            self.fallbacks += 1
            return extractive_summary(members)
        return segments

    def _ask(self, members: list[RaptorNode]) -> Segments:
        pages = {page for member in members for page, _ in member.segments}
        pieces = "\n\n".join(
            f"[p.{page}] {text}" for member in members for page, text in member.segments
        )
        messages = [SystemMessage(SUMMARY_PROMPT), HumanMessage(pieces)]
        try:
            reply = message_text(invoke(self.model, messages, self.usage, "summary"))
        except ModelCallError as exc:  # an endpoint failure must not lose the run
            self.error = exc.reason
            return ()
        return tagged_sentences(reply, pages)

    def cost(self) -> dict[str, Any]:
        return {
            **self.usage.as_dict(),
            "extractive_fallbacks": self.fallbacks,
            "error": self.error,
        }


def tagged_sentences(reply: str, pages: set[int]) -> Segments:
    """(page, sentence) for every sentence of the reply tagged with one of ``pages``."""
    out = []
    for match in PAGE_TAG.finditer(reply):
        text = match["text"].strip(" .;,:\n")
        if text and int(match["page"]) in pages:
            out.append((int(match["page"]), f"{text}."))
    return tuple(out)


def summariser_variant(model: BaseChatModel | None) -> str:
    """The cache variant: trees summarised by different summarisers are kept apart."""
    if model is None:
        return "extractive"
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return f"llm-{name or type(model).__name__}"


# -- building and retrieval ---------------------------------------------------------------------
def leaves(doc_id: str, pages: list[str]) -> list[Segments]:
    """Consecutive LEAF_TOKENS passages of the document, without overlap."""
    return [c.segments for c in dense_chunks(doc_id, pages, size=LEAF_TOKENS, overlap=0)]


class build_raptor_tree(ToolArgs):
    """Build one document's RAPTOR tree (leaves, then clustered summaries layer by layer) and
    cache it in the library (layer 1)."""

    layer = 1

    doc_id: str = Field(description="The document whose tree is needed.")


class retrieve_tree_nodes(ToolArgs):
    """The nodes of every tree of the run, leaves and summaries alike, best cosine to the
    query first, until the token budget (layer 0)."""

    layer = 0

    query: str = Field(min_length=1, description="What the nodes should be about.")


@dataclass
class RaptorRun:
    """One run's two tools, called through the tool engine: a tree is built (and recorded)
    only when the cache has none, then the collapsed tree is searched once."""

    request: StrategyRequest
    store: RaptorStore
    doc_ids: list[str]
    trees: dict[str, RaptorTree] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tools = [Tool(build_raptor_tree, self._build), Tool(retrieve_tree_nodes, self._retrieve)]
        self.engine = self.request.engine(tools, max_calls=len(self.doc_ids) + 1)

    def build(self) -> None:
        """Every document's tree, from the cache or built."""
        for doc_id in self.doc_ids:
            self.tree(doc_id)

    def tree(self, doc_id: str) -> RaptorTree | None:
        """The cached tree of a document, else the one the build call makes (None if refused)."""
        stamp = self._stamp(doc_id)
        cached = self.store.load(doc_id, stamp)
        if cached is not None:
            self.trees[doc_id] = cached
            return cached
        self.engine.call("build_raptor_tree", {"doc_id": doc_id})
        return self.trees.get(doc_id)

    def retrieve(self, query: str) -> ToolResult:
        return self.engine.call("retrieve_tree_nodes", {"query": query})

    def _stamp(self, doc_id: str) -> str:
        return str(self.request.catalog.library.record(doc_id).get("ingested_at", ""))

    def _build(self, doc_id: str) -> ToolResult:
        library = self.request.catalog.library
        stamp = self._stamp(doc_id)
        model = self.request.model
        with _BUILD_LOCK:
            start = time.perf_counter()
            tree = self.store.load(doc_id, stamp)  # another run may have built it meanwhile
            summarise = ModelSummariser(model) if model is not None else extractive_summary
            pieces = leaves(doc_id, library.pages(doc_id))
            if tree is None:
                embed = self.request.catalog.index.embed_dense
                tree = build_tree(doc_id, pieces, embed, summarise, count_tokens)
            failed = isinstance(summarise, ModelSummariser) and summarise.error is not None
            if not failed:
                self.store.save(tree, stamp)
        self.trees[doc_id] = tree
        details: dict[str, Any] = {
            "leaves": len(pieces),
            "layer_sizes": tree.layer_sizes(),
            "summariser": summariser_variant(model),
            "seconds": round(time.perf_counter() - start, 2),
            "cached": not failed,
        }
        if isinstance(summarise, ModelSummariser):
            details["build_cost"] = summarise.cost()
        sizes = " → ".join(map(str, tree.layer_sizes()))
        return ToolResult(
            f"RAPTOR tree of {doc_id}: {sizes} nodes by layer", doc_id=doc_id, details=details
        )

    def _retrieve(self, query: str) -> ToolResult:
        trees = list(self.trees.values())
        vector = unit(self.request.catalog.index.embed_dense([query]))[0]
        picked = collapsed_retrieval(trees, vector)
        passages = [p for doc_id, node in picked for p in node_passages(doc_id, node)]
        layers = Counter(str(node.layer) for _, node in picked)
        return passages_result(
            passages,
            budget_tokens=BUDGET_TOKENS,
            documents=len(trees),
            nodes_by_layer=dict(sorted(layers.items())),
        )


def node_passages(doc_id: str, node: RaptorNode) -> list[Passage]:
    """What the answerer reads of a node: a leaf as one passage; a summary as one passage per
    page, so each of its sentences is headed by exactly the page it is tied to."""
    if node.layer == 0:
        return [Passage(doc_id, node.segments)]
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page, text in node.segments:
        by_page.setdefault(page, []).append((page, text))
    return [Passage(doc_id, tuple(segments)) for segments in by_page.values()]


def collapsed_retrieval(
    trees: Sequence[RaptorTree], query: FloatArray, budget: int = BUDGET_TOKENS
) -> list[tuple[str, RaptorNode]]:
    """All nodes of all trees, best cosine first, until the next one would pass ``budget``."""
    scored = [
        (-float(score), t, n)
        for t, tree in enumerate(trees)
        if tree.nodes
        for n, score in enumerate(tree.vectors @ query)
    ]
    picked: list[tuple[str, RaptorNode]] = []
    used = 0
    for _, t, n in sorted(scored):
        node = trees[t].nodes[n]
        if used + node.tokens > budget:
            break
        picked.append((trees[t].doc_id, node))
        used += node.tokens
    return picked


def run(request: StrategyRequest) -> StrategyOutcome:
    """Build (or load) the documents' trees, retrieve from the collapsed tree, answer once."""
    catalog = request.catalog
    settings = {
        "leaf_tokens": LEAF_TOKENS,
        "summary_words": SUMMARY_WORDS,
        "clusters": [CLUSTER_TARGET, CLUSTER_MAX, ROOT_SIZE, SEED],
        "embedding_model": catalog.index.settings.embedding_model,
    }
    store = RaptorStore(catalog.library.root, summariser_variant(request.model), settings)
    raptor = RaptorRun(request, store, request.scoped_doc_ids())
    raptor.build()
    result = raptor.retrieve(request.question)
    if not result.ok:
        return StrategyOutcome("", "failed", str(result.error))
    return answer_from_passages(request, result.passages)
