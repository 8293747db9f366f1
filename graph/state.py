"""State of the query agent.

``messages`` are LangChain messages (serialised to JSON by the checkpointer); every other field
is plain JSON so a checkpoint can be read without this code.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages


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


class Citation(TypedDict):
    """A page the answer cites (always one the run read)."""

    doc_id: str
    page: int
    label: str
    quote: str


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
    status: str
    usage: dict[str, Any]


class AgentState(AgentInput, AgentOutput, total=False):
    """Everything the nodes share."""

    messages: Annotated[list[AnyMessage], add_messages]
    layer: int
    model_turns: int
    tool_calls: int
    pages_read: dict[str, list[int]]
    citation_retries: int
