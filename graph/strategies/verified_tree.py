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

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.strategies.pageindex import DocumentTree, json_values, node_line
from store.chat import ModelCallError
from store.text import SKIP_SECTIONS, content_words
from tools.results import Passage

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


def lexical_fallback(
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


# -- the run -------------------------------------------------------------------------------------
def run(request: StrategyRequest) -> StrategyOutcome:
    """Verified tree search in the one document in scope, or in the best-matching one."""
    doc_id = choose_document(request)
    if doc_id is None:
        return StrategyOutcome(
            "", status="failed", detail="no document in scope matches the question"
        )
    tree = DocumentTree.load(request, doc_id)
    if request.model is None:
        chosen = fallback(request, tree, "offline: node proposals need an LLM")
    else:
        try:
            chosen = proposed_nodes(request, tree, request.model)
        except ModelCallError as exc:
            return StrategyOutcome("", status="failed", detail=exc.reason)
        chosen = chosen or fallback(request, tree, f"confidence stayed below {CONFIDENCE_MIN}")
    passages = read_nodes(request, tree, chosen)
    if not passages:
        why = f"no section of {doc_id} shares a content word with the question"
        return StrategyOutcome("", status="failed", detail=why)
    outcome = answer_from_passages(request, passages)
    if request.model is None:
        note = OFFLINE_NOTE.format(nodes="; ".join(f"{i} {tree.nodes[i]['title']}" for i in chosen))
        return StrategyOutcome(f"{note}\n{outcome.answer}", outcome.status, outcome.detail)
    return outcome


def choose_document(request: StrategyRequest) -> str | None:
    """The only document in scope, or the structural search's best hit among several."""
    from tools.search import DocumentSearch

    doc_ids = request.scoped_doc_ids()
    if len(doc_ids) <= 1:
        return doc_ids[0] if doc_ids else None
    hits = DocumentSearch(request.catalog).search(
        request.question, limit=1, doc_ids=doc_ids, gates=request.context.gates_on
    )
    request.recorder.record(
        0,
        "search_documents",
        {"query": request.question, "limit": 1, "documents": len(doc_ids)},
        json.dumps([hit.as_dict() for hit in hits], ensure_ascii=False),
    )
    return hits[0].doc_id if hits else None


def tree_outline(tree: DocumentTree) -> str:
    """The whole tree, one indented line per node."""
    return "\n".join(
        "  " * (len(tree.path(node_id)) - 1) + node_line(node, SUMMARY_WORDS)
        for node_id, node in tree.nodes.items()
    )


def proposed_nodes(request: StrategyRequest, tree: DocumentTree, model: BaseChatModel) -> list[str]:
    """The passing ids of the first round with enough confidence, or [] after the retries."""
    outline = tree_outline(tree)
    request.recorder.record(1, "document_tree", {"doc_id": tree.doc_id}, outline)
    messages: list[BaseMessage] = [
        SystemMessage(PROPOSE_PROMPT),
        HumanMessage(
            f"Question: {request.question}\n\nSection tree of {tree.title!r} ({tree.doc_id}), "
            f"pages 1-{len(tree.pages)}:\n{outline}"
        ),
    ]
    for round_no in range(1, MAX_RETRIES + 2):
        reply = request.recorder.ask(model, messages)
        verification, report = check_round(request, tree, reply.text, round_no)
        if verification is not None and verification.confidence >= CONFIDENCE_MIN:
            return list(verification.passed)
        messages += [reply, HumanMessage(report)]
    return []


def check_round(
    request: StrategyRequest, tree: DocumentTree, text: str, round_no: int
) -> tuple[Verification | None, str]:
    """Verify one reply and record it as a ``propose_nodes`` step (an error below the bar);
    returns the verification (None for a malformed reply) and the report for a retry."""
    args: dict[str, Any] = {"doc_id": tree.doc_id, "round": round_no}
    try:
        proposed = parse_proposal(text)
    except ValueError as exc:
        args.update(proposed=[], confidence=0.0)
        request.recorder.record(1, "propose_nodes", args, text, error=str(exc))
        return None, f'Your reply was not usable: {exc}. Reply with a list such as ["0003"].'
    verification = verify(tree, proposed, request.question)
    confidence = verification.confidence
    args.update(
        proposed=proposed,
        passed=list(verification.passed),
        confidence=round(confidence, 3),
        failures=verification.failures,
    )
    low = f"confidence {confidence:.2f} is below {CONFIDENCE_MIN}"
    error = low if confidence < CONFIDENCE_MIN else None
    request.recorder.record(1, "propose_nodes", args, text, error=error)
    return verification, verification.report()


def fallback(request: StrategyRequest, tree: DocumentTree, reason: str) -> list[str]:
    """The lexical fallback's nodes, recorded as a layer-1 step."""
    ranked = lexical_fallback(tree, request.question)
    request.recorder.record(
        1,
        "lexical_fallback",
        {"doc_id": tree.doc_id, "reason": reason, "overlap": dict(ranked)},
        "\n".join(node_line(tree.nodes[node_id]) for node_id, _ in ranked),
    )
    return [node_id for node_id, _ in ranked]


def read_nodes(request: StrategyRequest, tree: DocumentTree, node_ids: list[str]) -> list[Passage]:
    """Read the planned pages of each chosen node, one layer-2 step per node."""
    passages: list[Passage] = []
    for node_id, pages in reading_plan(tree, node_ids, request.context.page_cap):
        passage = tree.passage(pages)
        request.recorder.record(
            2,
            "read_node",
            {"doc_id": tree.doc_id, "node_id": node_id, "pages": pages},
            passage.text,
            disclosed=passage.disclosed,
        )
        passages.append(passage)
    return passages
