"""What every retrieval strategy shares: the request it gets, the recorder of its trajectory,
and the two ways it turns what it read into a cited answer.

A strategy other than the default agent loop runs in the ``strategy`` node, or, when its model
calls its own tools, as the ``tool_loop`` subgraph (``graph.strategies.tool_loop``). Every action
it takes is a tool call through the one tool engine (``StrategyRequest.engine``), its own tools
where its actions are not the agent's, so the engine budgets, refuses and records it as a
:class:`~graph.state.Step` (sequence, layer, tool, arguments, payload size, pages disclosed)
and ``vectree trace``, the HTML timeline, the adherence measures and the evaluation read all
strategies alike. Layers keep their meaning
across strategies: 0 finds documents or passages, 1 shows structure (trees, outlines, induced
sub-forests), 2 returns content. A passage search that returns text discloses pages too; those
pages are listed in the step's ``disclosed`` field and may be cited.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from graph import extractive
from graph.context import AgentContext
from graph.recorder import Recorder
from graph.registry import declared
from graph.state import RunStatus
from graph.tool_engine import ToolEngine
from store.catalog import Catalog
from store.chat import ModelCallError, message_text, prompt_budget
from store.embeddings import count_tokens, truncate_to_tokens
from tools.formatting import CITATION_FORMAT, author_label, format_citation
from tools.results import Passage, Tool, ToolResult
from tools.toolbox import SearchScope, Toolbox

NEEDS_LLM = "needs an LLM"
ANSWER_TOKENS = 100_000
"""The passages one answer call may carry, unless the model's context window is smaller."""
ANSWER_PROMPT = f"""Answer the question from the numbered passages only. After each claim cite
the page it comes from exactly as the passage header shows it: {CITATION_FORMAT}.
If the passages do not contain the answer, say so. Be concise and specific."""


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

    def agent_tool(self, name: str) -> Tool:
        """One of the agent's tools, bound to this run's library, scope and gates, for a
        strategy whose action is the agent's (a document search, a section tree)."""
        toolbox = Toolbox(
            self.catalog,
            gates_on=self.context.gates_on,
            page_cap=self.context.page_cap,
            scope=self.scope,
        )
        return next(tool for tool in toolbox.tools() if tool.name == name)

    def engine(self, tools: Sequence[Tool], max_calls: int) -> ToolEngine:
        """The tool engine the strategy's actions go through: each is budgeted against
        ``max_calls``, refused with an instructive error when it cannot run, and recorded in
        this run's trajectory, exactly like the agent's tool calls."""
        return ToolEngine(tools, max_calls, self.recorder)


@dataclass
class StrategyOutcome:
    """The answer text (inline citations), how the run ended, and why (see ``RunStatus``)."""

    answer: str
    status: RunStatus = "answered"
    detail: str = ""


Runner = Callable[[StrategyRequest], StrategyOutcome]


def runner(strategy: str) -> Runner:
    """The run function of a strategy that does not use the agent loop."""
    run: Runner = declared(strategy, "runner")
    return run


def needs_llm(strategy: str, why: str) -> StrategyOutcome:
    """The clear refusal of a strategy that cannot run meaningfully without a model."""
    message = (
        f"Strategy {strategy!r} {NEEDS_LLM}: {why} Configure an OpenAI-compatible endpoint "
        "(VECTREE_MODEL and OPENAI_BASE_URL) or choose a strategy with an offline reader."
    )
    return StrategyOutcome(answer=message, status="needs_llm", detail=why)


def passages_result(passages: Sequence[Passage], **details: Any) -> ToolResult:
    """What a strategy's passage search returns: the passages' text (the step's payload), their
    pages made citable, and what else the search found out."""
    return ToolResult(
        content="\n\n".join(p.text for p in passages),
        disclosed=tuple(page for p in passages for page in p.disclosed),
        passages=tuple(passages),
        details=details,
    )


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
    framing = f"{ANSWER_PROMPT}\nQuestion: {request.question}\n\nPassages:\n\n"
    blocks = fitting(blocks, prompt_budget(request.model, ANSWER_TOKENS) - count_tokens(framing))
    messages: list[BaseMessage] = [
        SystemMessage(ANSWER_PROMPT),
        HumanMessage(f"Question: {request.question}\n\nPassages:\n\n" + "\n\n".join(blocks)),
    ]
    try:
        reply = request.recorder.ask(request.model, messages)
    except ModelCallError as exc:
        return StrategyOutcome(answer="", status="failed", detail=exc.reason)
    return StrategyOutcome(message_text(reply).strip())


def fitting(blocks: Sequence[str], budget: int) -> list[str]:
    """The leading blocks (best first) whose tokens fit ``budget``; at least the first, cut."""
    kept: list[str] = []
    used = 0
    for block in blocks:
        size = count_tokens(block)
        if used + size > budget:
            if not kept:
                kept.append(truncate_to_tokens(block, max(1, budget)))
            break
        kept.append(block)
        used += size
    return kept


def extractive_answer(request: StrategyRequest, passages: Sequence[Passage]) -> str:
    """The offline reader: the sentences of the read text that best match the question,
    each cited to its page (shared with the offline navigator)."""
    pages = [(p.doc_id, page, text) for p in passages for page, text in p.segments]
    labels = {p.doc_id: request.label(p.doc_id) for p in passages}
    return extractive.extractive_answer(request.question, pages, labels)
