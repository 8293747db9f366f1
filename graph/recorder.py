"""The trajectory recorder every run shares: the agent loop's tool engine, every strategy and
its sub-searches append their calls here as :class:`~graph.state.Step` records (sequence,
layer, tool, arguments, payload size, pages disclosed), keep the pages that may be cited, and
count the model's tokens."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable

from graph.models import invoke_model
from graph.state import Step
from store.embeddings import count_tokens


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
        self.prompt_tokens += sum(count_tokens(message_text(m)) for m in prompt)
        self.completion_tokens += count_tokens(message_text(reply))

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
        doc_id: str | EllipsisType | None = ...,
        found: list[str] | None = None,
    ) -> Step:
        """One call, in order. ``disclosed`` pages become citable (only when the call worked).
        The step names the one document it read, else ``doc_id`` (the document the call was
        about; by default its ``doc_id`` argument); ``found`` lists what a document search
        returned, best first."""
        reads = [] if error else list(dict.fromkeys(disclosed))
        self._note_pages(reads)
        docs = list(dict.fromkeys(doc for doc, _ in reads))
        about = args.get("doc_id") if doc_id is ... else doc_id
        about = docs[0] if len(docs) == 1 else about
        step = Step(
            seq=len(self.steps) + 1,
            layer=layer,
            tool=tool,
            args=args,
            ok=error is None,
            error=error,
            payload_tokens=count_tokens(payload),
            pages=[p for d, p in reads if d == docs[0]] if len(docs) == 1 else [],
            doc_id=about if isinstance(about, str) else None,
        )
        if len(docs) > 1:
            step["disclosed"] = {doc: [p for d, p in reads if d == doc] for doc in docs}
        if found:
            step["found"] = found
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

    def ask(self, model: Runnable[Any, Any], messages: Sequence[BaseMessage]) -> AIMessage:
        """One model call (a chat model, or one with tools bound), with its tokens counted."""
        reply = invoke_model(model, messages)
        self.usage.add(messages, reply)
        return reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply.content))


def message_text(message: BaseMessage) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
    )
