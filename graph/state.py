"""State of the query agent.

``messages`` are LangChain messages (serialised to JSON by the checkpointer); every other field
is plain JSON so a checkpoint can be read without this code.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

# How a run ended. "running" while it goes on; "answered": the model or the offline reader
# answered; "budget": a budget ran out (any answer was written from what was read);
# "fallback": the model gave no answer, one was written from the passages read; "failed": an
# error ended the run; "needs_llm": the strategy cannot run without a model; "invalid": the
# input was refused before anything ran (``graph.inputs``). The why is in
# ``status_detail``.
RunStatus = Literal["running", "answered", "budget", "fallback", "failed", "needs_llm", "invalid"]


def status_text(status: str, detail: str = "") -> str:
    """The status as people read it: "failed: the model call failed: …"."""
    return f"{status}: {detail}" if detail else status


class Step(TypedDict):
    """One tool call in the order it was made."""

    seq: int
    layer: int
    tool: str
    args: dict[str, Any]
    ok: bool
    error: str | None
    payload_tokens: int
    pages: list[int]
    doc_id: str | None
    disclosed: NotRequired[dict[str, list[int]]]  # pages of several documents (passage search)
    found: NotRequired[list[str]]  # documents a document search returned, best first
    details: NotRequired[dict[str, Any]]  # what a strategy's own tool found out (JSON)


class Citation(TypedDict):
    """A page the answer cites (always one the run read)."""

    doc_id: str
    page: int
    label: str
    quote: str
    ocr: NotRequired[bool]
    """The page's text was read by OCR (absent: from its text layer)."""


class AgentInput(TypedDict, total=False):
    """What a caller provides: the question, optionally restricted to some documents."""

    question: str
    doc_ids: list[str]
    filters: dict[str, Any]


class AgentOutput(TypedDict, total=False):
    """What a caller gets back (with how the run ended and what it cost)."""

    answer: str
    citations: list[Citation]
    trajectory: list[Step]
    strategy: str
    status: RunStatus
    status_detail: str
    usage: dict[str, Any]


class AgentState(AgentInput, AgentOutput, total=False):
    """Everything the nodes share."""

    messages: Annotated[list[AnyMessage], add_messages]
    layer: int
    model_turns: int
    tool_calls: int
    pages_read: dict[str, list[int]]
    citation_retries: int
    tool_choice: str  # "auto", or the tool the next model turn must call (graph.turns)
    # The tool loop of a strategy whose model calls its own tools (``graph.strategies.tool_loop``):
    # its own conversation, the successful runs per tool and the passages shown (JSON).
    loop_messages: Annotated[list[AnyMessage], add_messages]
    tool_runs: dict[str, int]
    passages: list[dict[str, Any]]
