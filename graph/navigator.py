"""The offline navigator: a deterministic chat model that drives the agent without an LLM.

It is a real LangChain chat model that emits tool calls, so it runs through exactly the same
graph, tools, budget and checkpoints as an LLM: search → open the best documents' trees →
search within each of them (``search_within_paper`` ranks every page, BM25 + dense + the score
of the best section holding it) → read the best pages, as many as come close to the best one
(``READ_RATIO``, at most ``MAX_READ_PAGES``) → answer extractively with page citations, saying
plainly that the answer is extractive. It is the embedded default and the reproducible offline
baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from graph.extractive import extractive_answer
from store.text import SKIP_SECTIONS
from tools.filings import asked_period, same_issuer
from tools.formatting import author_label
from tools.pages import page_score, pages_to_read
from tools.relevance import relevance

MAX_READ_PAGES = 4
READ_RATIO = 0.7
"""Read the pages whose within-paper score is at least ``READ_RATIO`` × the best page's, at most
``MAX_READ_PAGES`` of them: evidence is good enough once the pages that match about as well as
the best one are read. Both were chosen with ``tools.pages``' weights on the QASPER development
papers, the choice cross-validated over 5 folds by paper (``python -m evals.tune_reader``; folds
in evals/reports/README.md)."""
WITHIN_SECTIONS = 5
"""Sections ``search_within_paper`` lists for the navigator (its pages are ranked over the whole
document either way)."""
NO_DOCUMENTS = (
    "Extractive answer (offline navigator): no document in the library matches this question."
)


@dataclass
class Conversation:
    """What the navigator needs from the message history."""

    question: str = ""
    doc_ids: list[str] = field(default_factory=list)
    results: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    calls_made: int = 0
    nudged: bool = False

    def artifacts(self, tool: str) -> list[dict[str, Any]]:
        return [
            artifact for name, artifact in self.results if name == tool and "error" not in artifact
        ]

    def called(self, tool: str) -> bool:
        return any(name == tool for name, _ in self.results)


def read_conversation(messages: list[BaseMessage]) -> Conversation:
    view = Conversation()
    for message in messages:
        if isinstance(message, HumanMessage):
            if message.name in ("budget", "citation_check"):
                view.nudged = True
            elif not view.question:
                view.question = str(message.content).split("\n\n")[0]
                view.doc_ids = list(message.additional_kwargs.get("doc_ids") or [])
                trees = message.additional_kwargs.get("trees") or []  # the no-vector ablation
                view.results.extend(("get_document_tree", dict(tree)) for tree in trees)
        elif isinstance(message, AIMessage):
            view.calls_made += len(message.tool_calls) + len(message.invalid_tool_calls)
        elif isinstance(message, ToolMessage):
            view.results.append((message.name or "", dict(message.artifact or {})))
    return view


class NavigatorChatModel(BaseChatModel):
    """Deterministic tool-calling model; see the module docstring."""

    top_k: int = 10
    page_cap: int = 10
    strategy: str = "vectree"
    docs_to_open: int = 2
    sections_to_read: int = 4
    pages_per_section: int = 2
    answer_sentences: int = 3
    max_read_pages: int = MAX_READ_PAGES
    read_ratio: float = READ_RATIO

    @property
    def _llm_type(self) -> str:
        return "vectree-offline-navigator"

    def bind_tools(self, tools: Any, **kwargs: Any) -> NavigatorChatModel:  # type: ignore[override]
        """The navigator knows the tools already; binding is a no-op."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._next(read_conversation(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    # -- the policy ----------------------------------------------------------------------
    def _next(self, view: Conversation) -> AIMessage:
        if view.nudged or view.artifacts("get_page_content"):
            return AIMessage(content=self._answer(view))
        if self.strategy == "no-tree":
            return self._next_without_tree(view)
        if view.doc_ids and not view.called("get_document_tree"):
            calls = [
                ("get_paper_metadata", {"doc_id": d}) for d in view.doc_ids[: self.docs_to_open]
            ]
            calls += [
                ("get_document_tree", {"doc_id": d}) for d in view.doc_ids[: self.docs_to_open]
            ]
            return self._calls(view, calls)
        if not view.doc_ids and not view.called("search_documents"):
            return self._calls(
                view, [("search_documents", {"query": view.question, "limit": self.top_k})]
            )
        if not view.called("get_document_tree"):
            hits = [h for a in view.artifacts("search_documents") for h in a["results"]]
            if not hits:
                return AIMessage(content=NO_DOCUMENTS)
            return self._calls(
                view, [("get_document_tree", {"doc_id": d}) for d in self._to_open(view, hits)]
            )
        if not view.called("search_within_paper"):
            query: dict[str, Any] = {"query": view.question, "limit": WITHIN_SECTIONS}
            calls = [("search_within_paper", {"doc_id": d, **query}) for d in self._opened(view)]
            return self._calls(view, calls)
        plan = self._choose_pages(view)
        if not plan:
            return AIMessage(content=self._answer(view))
        return self._calls(view, [("get_page_content", {"doc_id": d, "pages": p}) for d, p in plan])

    def _to_open(self, view: Conversation, hits: list[dict[str, Any]]) -> list[str]:
        """The best ``docs_to_open`` results, less the first one's issuer's other filings when
        the question names a period: search has put the filing of that period first among
        them (``tools.filings.period_order``), and the others report other periods, whose
        statements match the same words."""
        first, *others = hits[: self.docs_to_open]
        if asked_period(view.question) is not None and first.get("issuer"):
            others = [h for h in others if not same_issuer(first["issuer"], h.get("issuer"))]
        return [first["doc_id"], *(h["doc_id"] for h in others)]

    def _opened(self, view: Conversation) -> list[str]:
        """The documents to search within: the opened trees, or, when every tree came in the
        first message (the ``no-vector`` ablation), those whose best section matches best."""
        trees = view.artifacts("get_document_tree")
        if len(trees) <= self.docs_to_open:
            return [tree["doc_id"] for tree in trees]
        best = [
            max(relevance(view.question, [f"{n['title']}. {n['summary']}" for n in t["nodes"]]))
            if t["nodes"]
            else 0.0
            for t in trees
        ]
        order = np.argsort(-np.array(best), kind="stable")[: self.docs_to_open]
        return [trees[int(i)]["doc_id"] for i in order]

    def _next_without_tree(self, view: Conversation) -> AIMessage:
        """The ``no-tree`` ablation: search, then read the pages of the sections the search
        results name (their page ranges are all there is to go on)."""
        if not view.called("search_documents"):
            return self._calls(
                view, [("search_documents", {"query": view.question, "limit": self.top_k})]
            )
        hits = [h for a in view.artifacts("search_documents") for h in a["results"]]
        plan: dict[str, list[int]] = {}
        for hit in hits[: self.docs_to_open]:
            pages = plan.setdefault(hit["doc_id"], [])
            sections = hit["matching_sections"] or [{"start_page": 1, "end_page": 1}]
            for section in sections[: self.sections_to_read]:
                last = min(section["end_page"], section["start_page"] + self.pages_per_section - 1)
                room = self.page_cap - len(pages)
                new = [p for p in range(section["start_page"], last + 1) if p not in pages]
                pages.extend(new[:room])
        calls = [("get_page_content", {"doc_id": d, "pages": p}) for d, p in plan.items() if p]
        if not calls:
            return AIMessage(content=NO_DOCUMENTS if not hits else self._answer(view))
        return self._calls(view, calls)

    def _calls(self, view: Conversation, calls: list[tuple[str, dict[str, Any]]]) -> AIMessage:
        tool_calls = [
            {
                "name": name,
                "args": args,
                "id": f"nav_{view.calls_made + i + 1}",
                "type": "tool_call",
            }
            for i, (name, args) in enumerate(calls)
        ]
        return AIMessage(content="", tool_calls=tool_calls)

    # -- choosing pages ------------------------------------------------------------------
    def _choose_pages(self, view: Conversation) -> list[tuple[str, list[int]]]:
        """The best pages across the documents searched, per document: those scoring at least
        ``read_ratio`` × the best, at most ``max_read_pages`` (reference lists skipped)."""
        skipped = {
            (tree["doc_id"], node["node_id"])
            for tree in view.artifacts("get_document_tree")
            for node in tree["nodes"]
            if SKIP_SECTIONS.match(node["title"])
        }
        candidates = [
            (found["doc_id"], page)
            for found in view.artifacts("search_within_paper")
            for page in found.get("pages", [])
            if (found["doc_id"], page["node_id"]) not in skipped
        ]
        if not candidates:
            return []
        scores = page_score(
            np.array([p["bm25"] for _, p in candidates]),
            np.array([p["dense"] for _, p in candidates]),
            np.array([p["section"] for _, p in candidates]),
            statement=np.array([bool(p.get("statement")) for _, p in candidates], dtype=bool),
        )
        most = min(self.max_read_pages, self.page_cap)
        plan: dict[str, list[int]] = {}
        for index in pages_to_read(scores, most, self.read_ratio):
            doc_id, page = candidates[index]
            plan.setdefault(doc_id, []).append(int(page["page"]))
        return [(doc_id, sorted(pages)) for doc_id, pages in plan.items()]

    # -- answering -----------------------------------------------------------------------
    def _answer(self, view: Conversation) -> str:
        return extractive_answer(
            view.question, _read_pages(view), _labels(view), self.answer_sentences
        )


def _read_pages(view: Conversation) -> list[tuple[str, int, str]]:
    """(doc_id, page, text) of every page read so far, in reading order."""
    return [
        (artifact["doc_id"], page["page"], page["text"])
        for artifact in view.artifacts("get_page_content")
        for page in artifact["pages"]
    ]


def _labels(view: Conversation) -> dict[str, str]:
    """'Author et al., Year' per document, from search results and metadata."""
    labels: dict[str, str] = {}
    for artifact in view.artifacts("search_documents"):
        for hit in artifact["results"]:
            labels[hit["doc_id"]] = author_label(hit["authors"], hit["year"])
    for artifact in view.artifacts("get_paper_metadata"):
        meta = artifact["metadata"]
        labels[artifact["doc_id"]] = author_label(meta["authors"], meta["year"])
    return labels
