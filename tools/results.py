"""What a tool call returns, and how a tool declares itself to the tool engine.

Every tool (the seven agent tools of ``tools.toolbox`` and the tools a strategy brings) returns
a :class:`ToolResult`; misuse is answered with :func:`failure`, never raised. The engine that
validates, budgets, runs and records calls is ``graph.tool_engine``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from store.embeddings import count_tokens
from tools.schemas import ToolArgs

PageRef = tuple[str, int]
"""(doc_id, page): one page a call disclosed."""


@dataclass(frozen=True)
class Passage:
    """Text a tool showed, page by page (a whole page, or a chunk's part of each page it
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
    def disclosed(self) -> list[PageRef]:
        return [(self.doc_id, page) for page in self.pages]


@dataclass
class ToolResult:
    """The outcome of one tool call: the content the model reads (text, or text and image
    parts), whether it worked, a structured ``artifact`` (kept on the ToolMessage for offline
    policies and inspection), the document it was about, and the pages it disclosed (what
    citations may point at): ``pages`` of ``doc_id``, and ``disclosed`` pages of any document
    (a passage search shows several). ``passages`` is the text shown, for an answer written
    without the model; ``details`` is recorded with the call's step."""

    content: str | list[dict[str, Any]]
    ok: bool = True
    artifact: Any = field(default_factory=dict)
    pages: list[int] = field(default_factory=list)
    doc_id: str | None = None
    disclosed: tuple[PageRef, ...] = ()
    passages: tuple[Passage, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    """What the call found out beyond its text (a proposal's confidence, a build's cost),
    recorded with its step for inspection."""

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return " ".join(part.get("text", "") for part in self.content if part.get("type") == "text")

    @property
    def tokens(self) -> int:
        """Payload size in tokens (text parts; an image counts as its caption only)."""
        return count_tokens(self.text)

    @property
    def error(self) -> str | None:
        """What went wrong, as the model was told it (None when the call worked)."""
        return None if self.ok else self.text.removeprefix("Error: ")

    def pages_read(self) -> list[PageRef]:
        """Every page this call made citable, in order (none when it failed)."""
        if not self.ok:
            return []
        own = [(self.doc_id, page) for page in self.pages] if self.doc_id else []
        return list(dict.fromkeys([*own, *self.disclosed]))


def failure(message: str) -> ToolResult:
    """An instructive error the model can act on."""
    return ToolResult(content=f"Error: {message}", ok=False, artifact={"error": message})


@dataclass(frozen=True)
class Tool:
    """One tool as the engine runs it: ``schema``'s class name is the tool name, its docstring
    and field descriptions are what the model reads, its ``layer`` is recorded with each call;
    ``run`` gets the validated arguments as keywords; ``limit`` caps its successful runs."""

    schema: type[ToolArgs]
    run: Callable[..., ToolResult]
    limit: int | None = None

    @property
    def name(self) -> str:
        return self.schema.__name__

    @property
    def layer(self) -> int:
        return self.schema.layer
