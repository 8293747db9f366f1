"""Run-time configuration of the query agent: its ``context_schema``, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.registry import STRATEGY_HELP, STRATEGY_NAMES, strategy_spec
from store.settings import LLMSettings, RunContext, served_context

LIMITS: dict[str, tuple[int, int]] = {
    "max_model_turns": (1, 100),
    "max_tool_calls": (1, 100),
    "nudge_after": (1, 100),
    "page_cap": (1, 20),
    "top_k": (1, 20),
}
"""The allowed range of each budget of a run."""


def _check_whole(name: str, value: object, low: int, high: int) -> None:
    """A budget must be a whole number inside its range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"context.{name}: must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"context.{name}: must be from {low} to {high}, got {value}")


@dataclass(kw_only=True)
class AgentContext(RunContext):
    """How one question is answered (no model = the offline extractive navigator)."""

    temperature: float = field(
        default=0.0, metadata={"description": "Sampling temperature of the chat model."}
    )
    max_model_turns: int = field(
        default=30, metadata={"description": "Budget: model turns before the run must end."}
    )
    max_tool_calls: int = field(
        default=30,
        metadata={"description": "Budget: tool calls (failed and repeated ones count too)."},
    )
    nudge_after: int = field(
        default=10,
        metadata={"description": "From this tool call on, a synthesise-now note is appended."},
    )
    page_cap: int = field(
        default=10, metadata={"description": "Most pages one get_page_content call may return."}
    )
    gates: bool = field(
        default=True,
        metadata={"description": "Relevance gates of document search (off = raw fusion)."},
    )
    top_k: int = field(
        default=10,
        metadata={"description": "Search results the offline navigator asks for (it reads two)."},
    )
    strategy: str = field(default="vectree", metadata={"description": STRATEGY_HELP})

    def __post_init__(self) -> None:
        """Refuse a context that cannot run, with one line naming the field (budgets are
        capped: a caller cannot buy an unbounded run)."""
        if self.strategy not in STRATEGY_NAMES:
            raise ValueError(
                f"context.strategy: {self.strategy!r} is not a strategy; choose one of "
                f"{', '.join(STRATEGY_NAMES)}"
            )
        for name, (low, high) in LIMITS.items():
            _check_whole(name, getattr(self, name), low, high)
        if not isinstance(self.gates, bool):
            raise ValueError(f"context.gates: must be true or false, got {self.gates!r}")
        temperature = self.temperature
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise ValueError(f"context.temperature: must be a number, got {temperature!r}")
        if not 0 <= temperature <= 2:
            raise ValueError(f"context.temperature: must be from 0 to 2, got {temperature}")

    @property
    def uses_agent_loop(self) -> bool:
        return strategy_spec(self.strategy).uses_agent_loop

    @property
    def gates_on(self) -> bool:
        """Gates apply unless switched off or ablated (``no-gates``)."""
        return self.gates and strategy_spec(self.strategy).gates

    def llm_settings(self, **overrides: object) -> LLMSettings:
        """LLM settings with this context's temperature."""
        return super().llm_settings(temperature=self.temperature, **overrides)


@dataclass(kw_only=True)
class ServedAgentContext(AgentContext):
    """The context of a run on the server (the exported ``agent`` graph): a caller chooses the
    strategy, budgets within their caps and a model the operator allows; the library and the
    endpoint are the server's own (``store.settings.served_context``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        served_context(self)
