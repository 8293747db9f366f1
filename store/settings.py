"""Typed settings for the library, the index and the optional LLM, with environment fallbacks.

Every knob a user may need lives here so the CLI, the ingestion graph and the tests agree on
one source of truth instead of reading environment variables in scattered places.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _env(name: str, default: str | None = None) -> str | None:
    """Read an environment variable, treating an empty value as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


class LLMSettings(BaseModel):
    """An OpenAI-compatible chat endpoint; ``model`` unset means "no LLM configured"."""

    model: str | None = Field(default=None, description="Chat model name (VECTREE_MODEL).")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."
    )
    api_key: str | None = Field(default=None, description="API key (OPENAI_API_KEY).")
    temperature: float = Field(default=0.0, description="Sampling temperature for ingestion.")
    timeout_s: float = Field(default=120.0, description="Per-request timeout in seconds.")
    max_concurrency: int = Field(default=4, description="Concurrent enrichment calls.")

    @property
    def configured(self) -> bool:
        """True when a model name was given; only then do LLM stages run."""
        return bool(self.model)

    @classmethod
    def from_env(cls) -> LLMSettings:
        """Build from VECTREE_MODEL / OPENAI_BASE_URL / OPENAI_API_KEY."""
        return cls(
            model=_env("VECTREE_MODEL"),
            base_url=_env("VECTREE_BASE_URL", _env("OPENAI_BASE_URL")),
            api_key=_env("VECTREE_API_KEY", _env("OPENAI_API_KEY")),
        )


class IndexSettings(BaseModel):
    """Where the structural index lives and which embedding model fills it."""

    qdrant_url: str | None = Field(
        default=None, description="Qdrant server URL (QDRANT_URL); unset = local mode."
    )
    qdrant_api_key: str | None = Field(default=None, description="Qdrant API key.")
    collection: str = Field(default="vectree_structure", description="Collection name.")
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL, description="fastembed dense model (VECTREE_EMBEDDING)."
    )
    model_cache: Path | None = Field(
        default=None, description="Folder for converted models (VECTREE_MODEL_CACHE)."
    )
    search_engine: str = Field(
        default="auto",
        description="Search engine (VECTREE_SEARCH_ENGINE): auto | matrix | qdrant; auto = "
        "in-memory matrix for local mode, Qdrant's own query API for a server.",
    )
    search_depth: int = Field(
        default=256,
        ge=1,
        description="Entries each retriever returns per query (VECTREE_SEARCH_DEPTH).",
    )

    @classmethod
    def from_env(cls) -> IndexSettings:
        """Build from QDRANT_URL / QDRANT_API_KEY / VECTREE_EMBEDDING / VECTREE_MODEL_CACHE /
        VECTREE_SEARCH_ENGINE / VECTREE_SEARCH_DEPTH."""
        cache = _env("VECTREE_MODEL_CACHE")
        return cls(
            qdrant_url=_env("QDRANT_URL"),
            qdrant_api_key=_env("QDRANT_API_KEY"),
            collection=_env("VECTREE_COLLECTION", "vectree_structure") or "vectree_structure",
            embedding_model=_env("VECTREE_EMBEDDING", DEFAULT_EMBEDDING_MODEL)
            or DEFAULT_EMBEDDING_MODEL,
            model_cache=Path(cache) if cache else None,
            search_engine=_env("VECTREE_SEARCH_ENGINE", "auto") or "auto",
            search_depth=int(_env("VECTREE_SEARCH_DEPTH", "256") or "256"),
        )


def default_library_dir() -> Path:
    """The library folder: VECTREE_HOME, else ./library in the working directory."""
    return Path(_env("VECTREE_HOME", "library") or "library").expanduser().resolve()


def env_text(name: str, default: str = "") -> str:
    """An environment variable as text ("" when unset), for dataclass default factories."""
    return _env(name, default) or ""


@dataclass(kw_only=True)
class RunContext:
    """Fields every graph's run context shares: where the library is and which LLM to use.

    The API key is deliberately not a field: contexts are shown in Studio and stored with runs,
    so the key is read from the environment only.
    """

    library: str = field(
        default_factory=lambda: str(default_library_dir()),
        metadata={"description": "Library folder (VECTREE_HOME, default ./library)."},
    )
    model: str = field(
        default_factory=lambda: env_text("VECTREE_MODEL"),
        metadata={"description": "Chat model name (VECTREE_MODEL); empty = offline."},
    )
    base_url: str = field(
        default_factory=lambda: env_text("VECTREE_BASE_URL", env_text("OPENAI_BASE_URL")),
        metadata={"description": "OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."},
    )

    def llm_settings(self, **overrides: object) -> LLMSettings:
        """LLM settings from this context plus the environment (for the key)."""
        update = {"model": self.model or None, "base_url": self.base_url or None, **overrides}
        return LLMSettings.from_env().model_copy(update=update)
