"""What every retrieval strategy shares: the request it gets, the recorder of its trajectory,
and the two ways it turns what it read into a cited answer.

A strategy other than the default agent loop runs inside one graph node (``strategy``). It
still records every call it makes as a :class:`~graph.state.Step` (sequence, layer, tool,
arguments, payload size, pages disclosed), so ``vectree trace``, the HTML timeline, the
adherence measures and the evaluation read all strategies alike. Layers keep their meaning
across strategies: 0 finds documents or passages, 1 shows structure (trees, outlines, induced
sub-forests), 2 returns content. A passage search that returns text discloses pages too; those
pages are listed in the step's ``disclosed`` field and may be cited.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from graph.citations import CITATION_FORMAT, format_citation
from graph.context import AgentContext
from graph.models import ModelCallError, invoke_model
from graph.state import RunStatus, Step
from store.catalog import Catalog
from store.embeddings import count_tokens
from tools.formatting import author_label
from tools.toolbox import SearchScope

NEEDS_LLM = "needs an LLM"
ANSWER_PROMPT = f"""Answer the question from the numbered passages only. After each claim cite
the page it comes from exactly as the passage header shows it: {CITATION_FORMAT}.
If the passages do not contain the answer, say so. Be concise and specific."""


@dataclass(frozen=True)
class Passage:
    """Text a strategy read, page by page (a whole page, or a chunk's part of each page it
    spans), so every sentence can be cited to the page it is printed on."""

    doc_id: str
    segments: tuple[tuple[int, str], ...]

    @property
    def pages(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(page for page, _ in self.segments))

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.segments)

    @property
    def disclosed(self) -> list[tuple[str, int]]:
        return [(self.doc_id, page) for page in self.pages]


@dataclass
class Usage:
    """Model tokens of a run: reported by the endpoint, or counted with the embedding
    tokenizer when the model reports none (the offline models), flagged as estimated."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    estimated: bool = False

    def add(self, prompt: Sequence[BaseMessage], reply: BaseMessage) -> None:
        self.model_calls += 1
        reported = getattr(reply, "usage_metadata", None)
        if reported:
            self.prompt_tokens += int(reported.get("input_tokens", 0))
            self.completion_tokens += int(reported.get("output_tokens", 0))
            return
        self.estimated = True
        self.prompt_tokens += sum(count_tokens(_message_text(m)) for m in prompt)
        self.completion_tokens += count_tokens(_message_text(reply))

    def merge(self, other: Usage) -> None:
        """Add another meter's counts (a sub-search run with its own recorder)."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.model_calls += other.model_calls
        self.estimated = self.estimated or other.estimated

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_calls": self.model_calls,
            "estimated": self.estimated,
        }


@dataclass
class Recorder:
    """Appends steps in the agent's trajectory format and keeps the pages disclosed so far."""

    steps: list[Step] = field(default_factory=list)
    pages_read: dict[str, list[int]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    def record(
        self,
        layer: int,
        tool: str,
        args: dict[str, Any],
        payload: str = "",
        *,
        error: str | None = None,
        disclosed: Iterable[tuple[str, int]] = (),
    ) -> Step:
        """One call, in order. ``disclosed`` pages become citable (only when the call worked)."""
        reads = [] if error else list(dict.fromkeys(disclosed))
        self._note_pages(reads)
        docs = list(dict.fromkeys(doc for doc, _ in reads))
        step = Step(
            seq=len(self.steps) + 1,
            layer=layer,
            tool=tool,
            args=args,
            ok=error is None,
            error=error,
            payload_tokens=count_tokens(payload),
            pages=[p for d, p in reads if d == docs[0]] if len(docs) == 1 else [],
            doc_id=docs[0] if len(docs) == 1 else args.get("doc_id"),
        )
        if len(docs) > 1:
            step["disclosed"] = {doc: [p for d, p in reads if d == doc] for doc in docs}
        self.steps.append(step)
        return step

    def absorb(self, part: Recorder) -> None:
        """Append another recorder's steps (numbered on from these), pages and usage: the
        log of a sub-search that ran with its own recorder."""
        for step in part.steps:
            renumbered = step.copy()
            renumbered["seq"] = len(self.steps) + 1
            self.steps.append(renumbered)
        self._note_pages((d, p) for d, pages in part.pages_read.items() for p in pages)
        self.usage.merge(part.usage)

    def _note_pages(self, reads: Iterable[tuple[str, int]]) -> None:
        for doc_id, page in reads:
            known = self.pages_read.setdefault(doc_id, [])
            if page not in known:
                known.append(page)

    def ask(self, model: Runnable[Any, Any], messages: list[BaseMessage]) -> AIMessage:
        """One model call (a chat model, or one with tools bound), with its tokens counted."""
        reply = invoke_model(model, messages)
        self.usage.add(messages, reply)
        return reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply.content))


@dataclass
class StrategyRequest:
    """Everything a strategy run gets: the question, its scope, the library and a model
    (``None`` = no LLM configured: run the offline reader, or say an LLM is needed)."""

    question: str
    scope: SearchScope
    context: AgentContext
    catalog: Catalog
    model: BaseChatModel | None
    recorder: Recorder = field(default_factory=Recorder)

    def label(self, doc_id: str) -> str:
        """'Author et al., Year' of a document, for citations."""
        meta = self.catalog.library.metadata(doc_id)
        return author_label(list(meta.get("authors") or []), meta.get("year"))

    def scoped_doc_ids(self) -> list[str]:
        """The documents this run may use (see ``SearchScope.documents``)."""
        return self.scope.documents(self.catalog)


@dataclass
class StrategyOutcome:
    """The answer text (inline citations), how the run ended, and why (see ``RunStatus``)."""

    answer: str
    status: RunStatus = "answered"
    detail: str = ""


def needs_llm(strategy: str, why: str) -> StrategyOutcome:
    """The clear refusal of a strategy that cannot run meaningfully without a model."""
    message = (
        f"Strategy {strategy!r} {NEEDS_LLM}: {why} Configure an OpenAI-compatible endpoint "
        "(VECTREE_MODEL and OPENAI_BASE_URL) or choose a strategy with an offline reader."
    )
    return StrategyOutcome(answer=message, status="needs_llm", detail=why)


def passage_header(request: StrategyRequest, passage: Passage) -> str:
    pages = passage.pages
    return format_citation(request.label(passage.doc_id), passage.doc_id, pages[0], pages[-1])


def answer_from_passages(request: StrategyRequest, passages: Sequence[Passage]) -> StrategyOutcome:
    """One answer call over what was read (an LLM), or the extractive reader (offline)."""
    if request.model is None:
        return StrategyOutcome(extractive_answer(request, passages))
    blocks = [
        f"[{i}] {passage_header(request, p)}\n{p.text.strip()}"
        for i, p in enumerate(passages, start=1)
    ]
    messages: list[BaseMessage] = [
        SystemMessage(ANSWER_PROMPT),
        HumanMessage(f"Question: {request.question}\n\nPassages:\n\n" + "\n\n".join(blocks)),
    ]
    try:
        reply = request.recorder.ask(request.model, messages)
    except ModelCallError as exc:
        return StrategyOutcome(answer="", status="failed", detail=exc.reason)
    return StrategyOutcome(_message_text(reply).strip())


def extractive_answer(request: StrategyRequest, passages: Sequence[Passage]) -> str:
    """The offline reader: the sentences of the read text that best match the question,
    each cited to its page (shared with the offline navigator)."""
    from graph.navigator import extractive_answer as navigator_answer

    pages = [(p.doc_id, page, text) for p in passages for page, text in p.segments]
    labels = {p.doc_id: request.label(p.doc_id) for p in passages}
    return navigator_answer(request.question, pages, labels)


def _message_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
    )
