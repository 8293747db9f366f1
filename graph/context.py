"""Run-time configuration of the query agent: its ``context_schema``, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.strategies import STRATEGY_HELP, STRATEGY_NAMES, strategy_spec
from store.settings import LLMSettings, RunContext


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
        metadata={"description": "Relevance gates of document search (off = raw RRF)."},
    )
    top_k: int = field(
        default=5, metadata={"description": "Documents the offline navigator opens at most."}
    )
    strategy: str = field(default="vectree", metadata={"description": STRATEGY_HELP})

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGY_NAMES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGY_NAMES)}")
        if min(self.max_model_turns, self.max_tool_calls, self.page_cap) < 1:
            raise ValueError("budgets and page_cap must be at least 1")

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
