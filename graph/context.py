"""Run-time configuration of the query agent: its ``context_schema``, shown in Studio."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from store.settings import LLMSettings, default_library_dir

STRATEGIES = ("vectree",)


def _env(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


@dataclass(kw_only=True)
class AgentContext:
    """How one question is answered."""

    library: str = field(
        default_factory=lambda: str(default_library_dir()),
        metadata={"description": "Library folder (VECTREE_HOME, default ./library)."},
    )
    model: str = field(
        default_factory=lambda: _env("VECTREE_MODEL", ""),
        metadata={"description": "Chat model name; empty = the offline extractive navigator."},
    )
    base_url: str = field(
        default_factory=lambda: _env("VECTREE_BASE_URL", _env("OPENAI_BASE_URL", "")),
        metadata={"description": "OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."},
    )
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
    strategy: str = field(
        default="vectree", metadata={"description": "Retrieval strategy (vectree)."}
    )

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}")
        if min(self.max_model_turns, self.max_tool_calls, self.page_cap) < 1:
            raise ValueError("budgets and page_cap must be at least 1")

    def llm_settings(self) -> LLMSettings:
        """LLM settings (API key from the environment only, never from the context)."""
        env = LLMSettings.from_env()
        return env.model_copy(
            update={
                "model": self.model or None,
                "base_url": self.base_url or None,
                "temperature": self.temperature,
            }
        )
