"""Run-time configuration of the ingestion graph (its ``context_schema``, shown in Studio)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from store.settings import LLMSettings, default_library_dir

STRUCTURE_MODES = ("auto", "outline", "headings", "llm")


def _env(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


@dataclass(kw_only=True)
class IngestContext:
    """How one document is ingested."""

    library: str = field(
        default_factory=lambda: str(default_library_dir()),
        metadata={"description": "Library folder (VECTREE_HOME, default ./library)."},
    )
    structure: str = field(
        default="auto",
        metadata={"description": "Structure source: auto | outline | headings | llm."},
    )
    parser: str = field(
        default_factory=lambda: _env("VECTREE_PARSER", "pymupdf4llm"),
        metadata={"description": "PDF parser: pymupdf4llm | pymupdf4llm-layout | marker."},
    )
    model: str = field(
        default_factory=lambda: _env("VECTREE_MODEL", ""),
        metadata={"description": "LLM for structure, summaries, metadata; empty = offline."},
    )
    base_url: str = field(
        default_factory=lambda: _env("VECTREE_BASE_URL", _env("OPENAI_BASE_URL", "")),
        metadata={"description": "OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."},
    )

    keep_index_open: bool = field(
        default=False,
        metadata={
            "description": "Hold the local index open between documents (batch CLI); "
            "off, the index folder is released after each document for other readers."
        },
    )

    def __post_init__(self) -> None:
        if self.structure not in STRUCTURE_MODES:
            raise ValueError(f"structure must be one of {', '.join(STRUCTURE_MODES)}")

    def llm_settings(self) -> LLMSettings:
        """LLM settings; the API key is read from the environment only, never from context."""
        env = LLMSettings.from_env()
        return env.model_copy(
            update={"model": self.model or None, "base_url": self.base_url or None}
        )
