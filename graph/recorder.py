"""The trajectory recorder every run shares: the agent loop's tool engine, every strategy and
its sub-searches append their calls here as :class:`~graph.state.Step` records (sequence,
layer, tool, arguments, payload size, pages disclosed), keep the pages that may be cited, and
count the model's tokens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable

from graph.state import Step
from store.chat import Purpose, Usage, invoke
from store.embeddings import count_tokens


@dataclass
class Recorder:
    """Appends steps in the agent's trajectory format and keeps the pages disclosed so far."""

    steps: list[Step] = field(default_factory=list)
    pages_read: dict[str, list[int]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Recorder:
        """The recorder a run's checkpointed state holds (every loop step rebuilds it; state
        stays JSON)."""
        recorder = cls()
        recorder.restore(state)
        return recorder

    def restore(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state``: its trajectory, the pages it may cite and the tokens its
        model spent (the keys :meth:`state_update` writes)."""
        self.steps = list(state.get("trajectory") or [])
        self.pages_read = {d: list(p) for d, p in (state.get("pages_read") or {}).items()}
        self.usage = Usage(**(state.get("usage") or {}))

    def state_update(self) -> dict[str, Any]:
        """What this recorder holds, as the state update :meth:`from_state` reads back."""
        return {
            "trajectory": self.steps,
            "pages_read": self.pages_read,
            "usage": self.usage.as_dict(),
        }

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
        details: dict[str, Any] | None = None,
    ) -> Step:
        """One call, in order. ``disclosed`` pages become citable (only when the call worked).
        The step names the one document it read, else ``doc_id`` (the document the call was
        about; by default its ``doc_id`` argument); ``found`` lists what a document search
        returned, best first; ``details`` what a strategy's own tool found out."""
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
        if details:
            step["details"] = details
        self.steps.append(step)
        return step

    def since(self, tool: str) -> list[Step] | None:
        """The steps after the latest call of ``tool``, None when it was never called: where a
        strategy rebuilt from its recorded calls starts (a thread's earlier questions may have
        made the same calls before it)."""
        starts = [i for i, step in enumerate(self.steps) if step["tool"] == tool]
        return self.steps[starts[-1] + 1 :] if starts else None

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

    def ask(
        self,
        model: Runnable[Any, Any],
        messages: Sequence[BaseMessage],
        purpose: Purpose = "answer",
    ) -> AIMessage:
        """One model call (a chat model, or one with tools bound), with its tokens counted."""
        return invoke(model, messages, self.usage, purpose)
