"""Verified tree search, the VecTree paper's standalone single-document mode: the model names the
sections that should answer the question, every name is checked against the tree, and only a
proposal that passes often enough is read.

The model sees the whole section tree (id, title, page range, summary) and replies with a JSON
list of node ids. Each id must exist in the tree, have a page range inside the document, and
share a content word (stop words removed) with the question through its title or summary.
Confidence is the fraction of proposed ids passing all three checks. Below CONFIDENCE_MIN the
model is asked again with a report naming each failed id and why, at most MAX_RETRIES times; a
reply that is not a JSON list counts as a failed round. If confidence is still low, a lexical
fallback takes the FALLBACK_NODES sections sharing the most content words with the question.
The chosen sections' pages are then read, leaves first, up to the page cap, and one answer call
answers from them. The checks show that the ids conform, not that the sections hold the answer.

Corpus mode (several documents in scope): the structural document search picks the one
document to search, recorded as a layer-0 step.

Offline policy (no model): proposals need a model, so the lexical fallback picks the sections
directly and the extractive reader answers; the answer says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.strategies.pageindex import DocumentTree, node_line
from store.chat import ModelCallError, json_values
from store.text import SKIP_SECTIONS, content_words
from tools.results import Passage, Tool, ToolResult, failure
from tools.schemas import ToolArgs

CONFIDENCE_MIN = 0.5
MAX_RETRIES = 2
FALLBACK_NODES = 5
SUMMARY_WORDS = 30

PROPOSE_PROMPT = """You choose the sections of one document that hold the answer to a question.
You get the document's section tree: per node its id, title, page range and a summary. Reply
with a JSON list of the ids of the sections most likely to contain the answer, most specific
first, at most five, e.g. ["0004", "0011"], and nothing else."""
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
            return 'You proposed no node ids. Reply with a JSON list such as ["0003", "0007"].'
        failed = "\n".join(f"- {node_id}: {why}" for node_id, why in self.failures.items())
        return (
            f"Confidence {self.confidence:.2f}: {len(self.passed)} of {len(self.proposed)} "
            f"proposed ids passed the checks, at least {CONFIDENCE_MIN} is needed. Failed:\n"
            f"{failed}\nPropose again from the tree above, as a JSON list of node ids."
        )


def parse_proposal(text: str) -> list[str]:
    """The node ids of a reply: the first JSON list in it (or an object holding one), each id
    once. Raises ValueError when the reply holds no such list."""
    for value in json_values(text, "[{"):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, list)), None)
        if isinstance(value, list):
            return list(dict.fromkeys(_node_id(item) for item in value))
    raise ValueError("the reply holds no JSON list of node ids")


def _node_id(item: Any) -> str:
    if isinstance(item, dict):
        item = item.get("node_id", item.get("id", ""))
    return str(item).strip()


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
    """Node ids proposed as holding the answer, checked against the tree (layer 1): the call
    works when enough of them pass, else it fails with a report naming each failed id."""

    layer = 1

    doc_id: str = Field(description="The document searched.")
    round: int = Field(ge=1, le=MAX_RETRIES + 1, description="Which round of proposals.")
    proposed: list[str] = Field(max_length=50, description="The proposed node ids.")


class lexical_fallback(ToolArgs):
    """The sections sharing the most content words with the question, when no proposal was
    confident enough or no model can propose (layer 1)."""

    layer = 1

    doc_id: str = Field(description="The document searched.")
    reason: str = Field(description="Why the fallback chooses.")


class read_node(ToolArgs):
    """Pages of one chosen section (layer 2)."""

    layer = 2

    doc_id: str = Field(description="The document searched.")
    node_id: str = Field(description="The section read.")
    pages: list[int] = Field(min_length=1, description="Its pages to read.")


@dataclass
class VerifiedSearch:
    """One run's actions, each a call through the tool engine: choose the document, show its
    tree, check each round of proposals, fall back, read the chosen sections."""

    request: StrategyRequest
    tree: DocumentTree | None = None
    verification: Verification | None = None
    chosen: list[str] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)

    def __post_init__(self) -> None:
        tools = [
            self.request.agent_tool("search_documents"),
            Tool(document_tree, self._outline, limit=1),
            Tool(propose_nodes, self._propose, limit=MAX_RETRIES + 1),
            Tool(lexical_fallback, self._fallback, limit=1),
            Tool(read_node, self._read),
        ]
        budget = 3 + (MAX_RETRIES + 1) + self.request.context.page_cap
        self.engine = self.request.engine(tools, budget)

    def choose_document(self) -> str | None:
        """The only document in scope, or the document search's best hit among several."""
        doc_ids = self.request.scoped_doc_ids()
        if len(doc_ids) <= 1:
            return doc_ids[0] if doc_ids else None
        result = self.engine.call("search_documents", {"query": self.request.question, "limit": 1})
        hits = result.artifact.get("results") if result.ok else None
        return str(hits[0]["doc_id"]) if hits else None

    def outline(self) -> str:
        """The tree the model proposes from, shown through a ``document_tree`` call."""
        tree = cast(DocumentTree, self.tree)
        return self.engine.call("document_tree", {"doc_id": tree.doc_id}).text

    def check_round(self, text: str, round_no: int) -> tuple[Verification | None, str]:
        """Verify one reply as a ``propose_nodes`` call (an error below the bar); returns the
        verification (None for a malformed reply) and the report for a retry."""
        tree = cast(DocumentTree, self.tree)
        args: dict[str, Any] = {"doc_id": tree.doc_id, "round": round_no}
        try:
            proposed = parse_proposal(text)
        except ValueError as exc:
            self.engine.call("propose_nodes", {**args, "proposed": []}, str(exc))
            return None, f'Your reply was not usable: {exc}. Reply with a list such as ["0003"].'
        self.verification = None
        self.engine.call("propose_nodes", {**args, "proposed": proposed})
        if self.verification is None:  # the engine refused the call
            return None, "Propose again, as a JSON list of node ids."
        return self.verification, self.verification.report()

    def fallback(self, reason: str) -> list[str]:
        tree = cast(DocumentTree, self.tree)
        self.engine.call("lexical_fallback", {"doc_id": tree.doc_id, "reason": reason})
        return self.chosen

    def read(self, node_ids: list[str]) -> list[Passage]:
        """The planned pages of each chosen node, one layer-2 call per node."""
        tree = cast(DocumentTree, self.tree)
        for node_id, pages in reading_plan(tree, node_ids, self.request.context.page_cap):
            self.engine.call(
                "read_node", {"doc_id": tree.doc_id, "node_id": node_id, "pages": pages}
            )
        return self.passages

    # -- the tools' runs ---------------------------------------------------------------------
    def _outline(self, doc_id: str) -> ToolResult:
        return ToolResult(tree_outline(cast(DocumentTree, self.tree)), doc_id=doc_id)

    def _propose(self, doc_id: str, proposed: list[str], **_round: int) -> ToolResult:
        verification = verify(cast(DocumentTree, self.tree), proposed, self.request.question)
        self.verification = verification
        details = {
            "passed": list(verification.passed),
            "confidence": round(verification.confidence, 3),
            "failures": verification.failures,
        }
        if verification.confidence < CONFIDENCE_MIN:
            low = f"confidence {verification.confidence:.2f} is below {CONFIDENCE_MIN}"
            return ToolResult(f"Error: {low}", ok=False, doc_id=doc_id, details=details)
        return ToolResult(", ".join(verification.passed), doc_id=doc_id, details=details)

    def _fallback(self, doc_id: str, reason: str) -> ToolResult:
        tree = cast(DocumentTree, self.tree)
        ranked = lexical_ranking(tree, self.request.question)
        self.chosen = [node_id for node_id, _ in ranked]
        text = "\n".join(node_line(tree.nodes[node_id]) for node_id, _ in ranked)
        return ToolResult(text, doc_id=doc_id, details={"overlap": dict(ranked)})

    def _read(self, doc_id: str, node_id: str, pages: list[int]) -> ToolResult:
        tree = cast(DocumentTree, self.tree)
        if node_id not in tree.nodes:
            return failure(f"there is no node {node_id!r} in {doc_id}")
        passage = tree.passage(p for p in pages if 1 <= p <= len(tree.pages))
        self.passages.append(passage)
        return ToolResult(
            passage.text, doc_id=doc_id, pages=list(passage.pages), passages=(passage,)
        )


# -- the run -------------------------------------------------------------------------------------
def run(request: StrategyRequest) -> StrategyOutcome:
    """Verified tree search in the one document in scope, or in the best-matching one."""
    search = VerifiedSearch(request)
    doc_id = search.choose_document()
    if doc_id is None:
        return StrategyOutcome(
            "", status="failed", detail="no document in scope matches the question"
        )
    search.tree = tree = DocumentTree.load(request, doc_id)
    if request.model is None:
        chosen = search.fallback("offline: node proposals need an LLM")
    else:
        try:
            chosen = proposed_nodes(request, search, request.model)
        except ModelCallError as exc:
            return StrategyOutcome("", status="failed", detail=exc.reason)
        chosen = chosen or search.fallback(f"confidence stayed below {CONFIDENCE_MIN}")
    passages = search.read(chosen)
    if not passages:
        why = f"no section of {doc_id} shares a content word with the question"
        return StrategyOutcome("", status="failed", detail=why)
    outcome = answer_from_passages(request, passages)
    if request.model is None:
        note = OFFLINE_NOTE.format(nodes="; ".join(f"{i} {tree.nodes[i]['title']}" for i in chosen))
        return StrategyOutcome(f"{note}\n{outcome.answer}", outcome.status, outcome.detail)
    return outcome


def tree_outline(tree: DocumentTree) -> str:
    """The whole tree, one indented line per node."""
    return "\n".join(
        "  " * (len(tree.path(node_id)) - 1) + node_line(node, SUMMARY_WORDS)
        for node_id, node in tree.nodes.items()
    )


def proposed_nodes(
    request: StrategyRequest, search: VerifiedSearch, model: BaseChatModel
) -> list[str]:
    """The passing ids of the first round with enough confidence, or [] after the retries."""
    tree = cast(DocumentTree, search.tree)
    outline = search.outline()
    messages: list[BaseMessage] = [
        SystemMessage(PROPOSE_PROMPT),
        HumanMessage(
            f"Question: {request.question}\n\nSection tree of {tree.title!r} ({tree.doc_id}), "
            f"pages 1-{len(tree.pages)}:\n{outline}"
        ),
    ]
    for round_no in range(1, MAX_RETRIES + 2):
        reply = request.recorder.ask(model, messages)
        verification, report = search.check_round(reply.text, round_no)
        if verification is not None and verification.confidence >= CONFIDENCE_MIN:
            return list(verification.passed)
        messages += [reply, HumanMessage(report)]
    return []
