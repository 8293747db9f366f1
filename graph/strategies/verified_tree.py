"""Verified tree search, the VecTree paper's standalone single-document mode: the model names the
sections that should answer the question, every name is checked against the tree, and only a
proposal that passes often enough is read.

The model sees the whole section tree (id, title, page range, summary) and proposes node ids
with the ``propose_nodes`` tool. Each id must exist in the tree, have a page range inside the
document, and share a content word (stop words removed) with the question through its title or
summary. Confidence is the fraction of proposed ids passing all three checks. Below
CONFIDENCE_MIN the proposal fails with a report naming each failed id and why, and the model may
propose again, at most MAX_RETRIES more times. If confidence is still low after the last round,
a lexical fallback takes the FALLBACK_NODES sections sharing the most content words with the
question. The model then reads the chosen sections with ``read_node`` (their pages planned
leaves first, up to the page cap; no other section can be read) and answers from them. The
checks show that the ids conform, not that the sections hold the answer. With a model this runs
as the checkpointed tool loop (``graph.strategies.tool_loop``), one step per turn, the search
rebuilt at every step from the calls recorded since its ``document_tree`` call.

Corpus mode (several documents in scope): the agent's document search picks the one document
to search, a layer-0 step.

Offline policy (no model): proposals need a model, so the lexical fallback picks the sections
directly and the extractive reader answers; the answer says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.strategies.pageindex import DocumentTree, node_line
from graph.strategies.tool_loop import CITE_RULE, IdList, ToolLoop, run_tool_loop
from store.text import SKIP_SECTIONS, content_words
from tools.results import Passage, Tool, ToolResult, failure
from tools.schemas import ToolArgs

CONFIDENCE_MIN = 0.5
MAX_RETRIES = 2
FALLBACK_NODES = 5
SUMMARY_WORDS = 30

LOOP_PROMPT = f"""You answer a question from one document whose section tree you get: per node
its id, title, page range and a summary. First call propose_nodes with the ids of the sections
most likely to contain the answer, most specific first, at most five. Every id is checked; if
too few pass you get a report naming each failure, and may propose again (at most
{MAX_RETRIES + 1} rounds in all). Then read the sections that passed (or that the fallback
chose) with read_node, and answer from what you read, with no tool call. {CITE_RULE}"""
OFFLINE_NOTE = (
    "Node proposals need an LLM; without one, the lexical fallback picked the sections "
    "sharing the most question words: {nodes}."
)


# -- the checks (pure) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Verification:
    """One round of proposals checked: the ids that passed and why each other id failed."""

    proposed: tuple[str, ...]
    passed: tuple[str, ...]
    failures: dict[str, str]

    @property
    def confidence(self) -> float:
        return len(self.passed) / len(self.proposed) if self.proposed else 0.0

    def report(self) -> str:
        """The error report of a low-confidence round, for the model's next try."""
        if not self.proposed:
            return "You proposed no node ids; propose ids from the tree, e.g. 0003 and 0007."
        failed = "\n".join(f"- {node_id}: {why}" for node_id, why in self.failures.items())
        return (
            f"Confidence {self.confidence:.2f}: {len(self.passed)} of {len(self.proposed)} "
            f"proposed ids passed the checks, at least {CONFIDENCE_MIN} is needed. Failed:\n"
            f"{failed}"
        )


def check_node(tree: DocumentTree, raw_id: str, question_words: set[str]) -> str | None:
    """Why a proposed id fails (None when it passes): unknown, a page range outside the
    document, or no content word shared with the question."""
    node_id = tree.find(raw_id)
    if node_id is None:
        return "no node with this id exists in the tree"
    node = tree.nodes[node_id]
    start, end, total = node["start_page"], node["end_page"], len(tree.pages)
    if not 1 <= start <= end <= total:
        return f"its page range {start}-{end} is not within the document's pages 1-{total}"
    if not question_words & tree.node_words(node_id):
        return "its title and summary share no content word with the question"
    return None


def verify(tree: DocumentTree, proposed: list[str], question: str) -> Verification:
    """Check every proposed id; passing ids are kept in the tree's spelling."""
    words = set(content_words(question))
    failures = {raw: why for raw in proposed if (why := check_node(tree, raw, words))}
    passed = [tree.find(raw) for raw in proposed if raw not in failures]
    return Verification(
        tuple(proposed), tuple(dict.fromkeys(p for p in passed if p is not None)), failures
    )


def lexical_ranking(
    tree: DocumentTree, question: str, limit: int = FALLBACK_NODES
) -> list[tuple[str, int]]:
    """The ``limit`` sections sharing the most content words with the question (ties in
    document order), with their overlap; sections sharing none, and references or
    acknowledgements, are left out."""
    words = set(content_words(question))
    overlaps = [
        (node_id, len(words & tree.node_words(node_id)))
        for node_id, node in tree.nodes.items()
        if not SKIP_SECTIONS.match(node["title"])
    ]
    ranked = sorted((item for item in overlaps if item[1]), key=lambda item: -item[1])
    return ranked[:limit]


def reading_plan(
    tree: DocumentTree, node_ids: list[str], page_cap: int
) -> list[tuple[str, list[int]]]:
    """Pages to read per chosen node: leaves first (they are the most specific), each page
    once, at most ``page_cap`` pages in all."""
    ordered = sorted(node_ids, key=lambda node_id: bool(tree.nodes[node_id]["nodes"]))
    plan: list[tuple[str, list[int]]] = []
    seen: set[int] = set()
    for node_id in ordered:
        room = page_cap - len(seen)
        pages = [p for p in tree.node_pages(node_id) if p not in seen][:room]
        if pages:
            plan.append((node_id, pages))
            seen.update(pages)
    return plan


# -- the tools -----------------------------------------------------------------------------------
class document_tree(ToolArgs):
    """The whole section tree of one document, one indented line per node with its id, title,
    page range and summary (layer 1)."""

    layer = 1

    doc_id: str = Field(description="The document searched.")


class propose_nodes(ToolArgs):
    """Propose the sections most likely to hold the answer, most specific first, at most five
    (layer 1). Every id is checked against the tree; the proposal passes when at least half of
    the ids do, else you get a report naming each failed id and may propose again."""

    layer = 1

    node_ids: IdList = Field(max_length=50, description='Node ids from the tree, e.g. ["0004"].')


class lexical_fallback(ToolArgs):
    """The sections sharing the most content words with the question, when no proposal was
    confident enough or no model can propose (layer 1)."""

    layer = 1

    reason: str = Field(description="Why the fallback chooses.")


class read_node(ToolArgs):
    """Read one section that passed the checks (or that the fallback chose): its planned pages
    (layer 2)."""

    layer = 2

    node_id: str = Field(description="A section that passed, as the proposal result lists it.")


@dataclass
class VerifiedSearch:
    """One document's search. Every action is a call through the tool engine: the offline
    policy calls them on the search's own engine; a model calls ``propose_nodes`` and
    ``read_node`` in the checkpointed tool loop (:meth:`loop`), where the search is rebuilt at
    every step by replaying what was recorded since its ``document_tree`` call."""

    request: StrategyRequest
    tree: DocumentTree
    chosen: list[str] = field(default_factory=list)
    rounds: int = 0
    read_pages: set[int] = field(default_factory=set)
    passages: list[Passage] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.engine = self.request.engine(self.tools(offline=True), MAX_CALLS)

    def tools(self, offline: bool = False) -> list[Tool]:
        """The tools a model calls; offline also the tree and the fallback the policy calls."""
        for_model = [
            Tool(propose_nodes, self._propose),
            Tool(read_node, self._read),
        ]
        if not offline:
            return for_model
        return [
            Tool(document_tree, self._outline, limit=1),
            Tool(lexical_fallback, self._fallback, limit=1),
            *for_model,
        ]

    # -- the model's loop ------------------------------------------------------------------------
    def loop(self) -> ToolLoop:
        """Propose and read as tools, the tree in the first message (shown by the search's
        ``document_tree`` call the first time)."""
        if self.request.recorder.since("document_tree") is None:
            self.engine.call("document_tree", {"doc_id": self.tree.doc_id})
        first = (
            f"Question: {self.request.question}\n\nSection tree of {self.tree.title!r} "
            f"({self.tree.doc_id}), pages 1-{len(self.tree.pages)}:\n{tree_outline(self.tree)}"
        )
        return ToolLoop(self.tools(), MAX_CALLS, LOOP_PROMPT, first_message=first)

    def replay(self) -> None:
        """Rebuild the rounds, the chosen sections and the pages read from the calls recorded
        since the search showed its tree."""
        for step in self.request.recorder.since("document_tree") or []:
            details: dict[str, Any] = step.get("details", {})
            if step["tool"] == "propose_nodes" and "confidence" in details:
                self.rounds += 1
                passed: list[str] = details["passed"] if step["ok"] else []
                self.chosen = passed or list(details.get("fallback", []))
            elif step["tool"] == "lexical_fallback" and step["ok"]:
                self.chosen = list(details.get("overlap", {}))
            elif step["tool"] == "read_node" and step["ok"]:
                self.read_pages.update(step["pages"])

    # -- the offline policy -----------------------------------------------------------------------
    def fallback(self, reason: str) -> list[str]:
        self.engine.call("lexical_fallback", {"reason": reason})
        return self.chosen

    def read_all(self) -> list[Passage]:
        """Every chosen section's planned pages, one ``read_node`` call per section."""
        for node_id, _ in reading_plan(self.tree, self.chosen, self.request.context.page_cap):
            self.engine.call("read_node", {"node_id": node_id})
        return self.passages

    # -- the tools' runs ---------------------------------------------------------------------
    def _outline(self, doc_id: str) -> ToolResult:
        return ToolResult(tree_outline(self.tree), doc_id=doc_id)

    def _propose(self, node_ids: list[str]) -> ToolResult:
        if self.rounds >= MAX_RETRIES + 1:
            return failure(f"at most {MAX_RETRIES + 1} rounds of proposals; read and answer")
        self.rounds += 1
        verification = verify(self.tree, node_ids, self.request.question)
        details: dict[str, Any] = {
            "passed": list(verification.passed),
            "confidence": round(verification.confidence, 3),
            "failures": verification.failures,
        }
        doc_id = self.tree.doc_id
        if verification.confidence >= CONFIDENCE_MIN:
            self.chosen = list(verification.passed)
            text = f"Passed: {self._plan()}. Read them with read_node, then answer."
            return ToolResult(text, doc_id=doc_id, details=details)
        low = f"confidence {verification.confidence:.2f} is below {CONFIDENCE_MIN}"
        if self.rounds <= MAX_RETRIES:
            error = f"{low}. {verification.report()}\nPropose again from the tree."
            return ToolResult(f"Error: {error}", ok=False, doc_id=doc_id, details=details)
        self._choose_by_overlap()
        details["fallback"] = self.chosen
        error = (
            f"{low} after {self.rounds} rounds; the lexical fallback chose the sections sharing "
            f"the most words with the question: {self._plan() or 'none'}. Read them with "
            "read_node, then answer."
        )
        return ToolResult(f"Error: {error}", ok=False, doc_id=doc_id, details=details)

    def _plan(self) -> str:
        plan = reading_plan(self.tree, self.chosen, self.request.context.page_cap)
        return "; ".join(f"{i} {self.tree.nodes[i]['title']} (pages {pages})" for i, pages in plan)

    def _choose_by_overlap(self) -> list[tuple[str, int]]:
        """The lexical fallback's sections become the chosen ones; returned with overlaps."""
        ranked = lexical_ranking(self.tree, self.request.question)
        self.chosen = [node_id for node_id, _ in ranked]
        return ranked

    def _fallback(self, reason: str) -> ToolResult:
        ranked = self._choose_by_overlap()
        text = "\n".join(node_line(self.tree.nodes[node_id]) for node_id, _ in ranked)
        return ToolResult(text, doc_id=self.tree.doc_id, details={"overlap": dict(ranked)})

    def _read(self, node_id: str) -> ToolResult:
        plan = dict(reading_plan(self.tree, self.chosen, self.request.context.page_cap))
        found = self.tree.find(node_id)
        if found not in plan:
            allowed = ", ".join(plan) or "none yet: propose sections first"
            return failure(f"read only the sections that passed the checks ({allowed})")
        pages = [p for p in plan[found] if p not in self.read_pages]
        if not pages:
            return failure(f"section {found} was read already; answer from what you read")
        passage = self.tree.passage(pages)
        self.passages.append(passage)
        self.read_pages.update(pages)
        return ToolResult(passage.text, doc_id=self.tree.doc_id, pages=pages, passages=(passage,))


MAX_CALLS = 2 + (MAX_RETRIES + 1) + FALLBACK_NODES
"""Tree, fallback, the proposal rounds and a read per chosen section (at most FALLBACK_NODES)."""


# -- the run -------------------------------------------------------------------------------------
def choose_document(request: StrategyRequest) -> str | None:
    """The only document in scope, or the agent's document search's best hit among several."""
    doc_ids = request.scoped_doc_ids()
    if len(doc_ids) <= 1:
        return doc_ids[0] if doc_ids else None
    engine = request.engine([request.agent_tool("search_documents")], max_calls=1)
    result = engine.call("search_documents", {"query": request.question, "limit": 1})
    hits = result.artifact.get("results") if result.ok else None
    return str(hits[0]["doc_id"]) if hits else None


def document_search(request: StrategyRequest, doc_id: str) -> VerifiedSearch:
    """A document's search over the request's recorder, replayed to where it stands."""
    search = VerifiedSearch(request, DocumentTree.load(request, doc_id))
    search.replay()
    return search


def declared_loop(request: StrategyRequest) -> ToolLoop:
    """The tool loop of a single-document search driven by a model (the graph's
    ``tool_loop`` node)."""
    (doc_id,) = request.scoped_doc_ids()[:1] or [""]
    return document_search(request, doc_id).loop()


def run(request: StrategyRequest) -> StrategyOutcome:
    """Verified tree search in the one document in scope, or in the best-matching one."""
    doc_id = choose_document(request)
    if doc_id is None:
        return StrategyOutcome(
            "", status="failed", detail="no document in scope matches the question"
        )
    if request.model is not None:
        return run_tool_loop(request, lambda step: document_search(step, doc_id).loop())
    search = VerifiedSearch(request, DocumentTree.load(request, doc_id))
    chosen = search.fallback("offline: node proposals need an LLM")
    passages = search.read_all()
    if not passages:
        why = f"no section of {doc_id} shares a content word with the question"
        return StrategyOutcome("", status="failed", detail=why)
    outcome = answer_from_passages(request, passages)
    tree = search.tree
    note = OFFLINE_NOTE.format(nodes="; ".join(f"{i} {tree.nodes[i]['title']}" for i in chosen))
    return StrategyOutcome(f"{note}\n{outcome.answer}", outcome.status, outcome.detail)


def tree_outline(tree: DocumentTree) -> str:
    """The whole tree, one indented line per node."""
    return "\n".join(
        "  " * (len(tree.path(node_id)) - 1) + node_line(node, SUMMARY_WORDS)
        for node_id, node in tree.nodes.items()
    )
