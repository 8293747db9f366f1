"""Typed settings for the library, the index, search, parsing, the LLM and the judge.

This is the only module that reads environment variables: every other module takes its values
from the settings groups below, each built by a ``from_env()`` classmethod (or, for the run
contexts, by the dataclass default factories of ``RunContext``). Values are read when a group is
built, not cached at import, so a process (or a test) that changes the environment and builds a
new group sees the change. Every variable read here is listed in the README's Configuration
table; ``tests/unit/test_settings_env.py`` holds the two to each other and checks that no other
module reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError
from pydantic.dataclasses import dataclass as settings_dataclass

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_PARSER = "pymupdf4llm"


# -- reading the environment (nowhere else) --------------------------------------------------------
class SettingsError(ValueError):
    """An environment variable holds a value that cannot be used; the message names it."""


def _env(name: str, default: str | None = None) -> str | None:
    """Read an environment variable, treating an empty value as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


def _env_float(name: str, default: float) -> float:
    """A number from the environment; a value that is not one names the variable in the error."""
    raw = _env(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None


def _env_int(name: str, default: int) -> int:
    """A whole number from the environment; a value that is not one names the variable."""
    raw = _env(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, got {raw!r}") from None


def _env_positive(name: str, default: int) -> int:
    """A whole number of at least 1 from the environment."""
    value = _env_int(name, default)
    if value < 1:
        raise SettingsError(f"{name} must be at least 1, got {value}")
    return value


def _env_optional_positive(name: str) -> int | None:
    """A whole number of at least 1 from the environment, or None when unset."""
    return _env_positive(name, 1) if _env(name) else None


def _ingest_keys(raw: str | None, keys: tuple[str, ...]) -> tuple[str, ...] | None:
    """VECTREE_SERVER_INGEST_KEYS: unset is everyone, ``none`` no one, else keys that must be
    among VECTREE_SERVER_KEYS (a key that is not one would silently admit nobody)."""
    if raw is None:
        return None
    if raw.strip().lower() == "none":
        return ()
    chosen = tuple(dict.fromkeys(key.strip() for key in raw.split(",") if key.strip()))
    unknown = [key for key in chosen if key not in keys]
    if unknown:
        raise SettingsError(
            f"VECTREE_SERVER_INGEST_KEYS names {len(unknown)} key(s) not in VECTREE_SERVER_KEYS"
        )
    return chosen


def _env_flag(name: str, default: bool) -> bool:
    """A switch: unset keeps the default; 0, false, off and no turn it off, anything else on."""
    raw = _env(name)
    if raw is None:
        return default
    return raw.lower() not in ("0", "false", "off", "no")


def _env_path(name: str) -> Path | None:
    """A folder from the environment with ``~`` expanded, or None when unset."""
    raw = _env(name)
    return Path(raw).expanduser() if raw else None


# -- the LLM and the judge ----------------------------------------------------------------------
class LLMSettings(BaseModel):
    """An OpenAI-compatible chat endpoint; ``model`` unset means "no LLM configured"."""

    model: str | None = Field(default=None, description="Chat model name (VECTREE_MODEL).")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."
    )
    api_key: str | None = Field(default=None, description="API key (OPENAI_API_KEY).")
    temperature: float = Field(default=0.0, description="Sampling temperature for ingestion.")
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Per-attempt read timeout in seconds (VECTREE_LLM_TIMEOUT).",
    )
    connect_timeout_s: float = Field(
        default=10.0, gt=0, description="Per-attempt connect timeout (VECTREE_LLM_CONNECT_TIMEOUT)."
    )
    attempts: int = Field(
        default=4,
        ge=1,
        description="Attempts per model call, first one included (VECTREE_LLM_ATTEMPTS).",
    )
    backoff_s: float = Field(
        default=1.0,
        ge=0,
        description="Wait before the first retry, doubled each retry (VECTREE_LLM_BACKOFF).",
    )
    backoff_max_s: float = Field(
        default=20.0, ge=0, description="Longest backoff wait (VECTREE_LLM_BACKOFF_MAX)."
    )
    retry_after_max_s: float = Field(
        default=60.0,
        ge=0,
        description="Longest Retry-After wait honoured (VECTREE_LLM_RETRY_AFTER_MAX).",
    )
    deadline_s: float = Field(
        default=300.0,
        gt=0,
        description="Total time per model call, retries included (VECTREE_LLM_DEADLINE).",
    )
    max_concurrency: int = Field(default=4, description="Concurrent enrichment calls.")
    context_tokens: int | None = Field(
        default=None,
        ge=256,
        description="The model's context window in tokens (VECTREE_LLM_CONTEXT_TOKENS; default "
        "unknown). When set, prompts are cut to fit it with the reply.",
    )
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Most tokens one reply may have (VECTREE_LLM_MAX_TOKENS; default: the "
        "server's own limit). Keeps a small local model from rambling until its deadline.",
    )

    @property
    def configured(self) -> bool:
        """True when a model name was given; only then do LLM stages run."""
        return bool(self.model)

    @classmethod
    def from_env(cls) -> LLMSettings:
        """Build from VECTREE_MODEL, VECTREE_BASE_URL or OPENAI_BASE_URL, VECTREE_API_KEY or
        OPENAI_API_KEY, and the retry policy's VECTREE_LLM_* variables."""
        defaults = cls()
        return cls(
            model=_env("VECTREE_MODEL"),
            base_url=_env("VECTREE_BASE_URL", _env("OPENAI_BASE_URL")),
            api_key=_env("VECTREE_API_KEY", _env("OPENAI_API_KEY")),
            timeout_s=_env_float("VECTREE_LLM_TIMEOUT", defaults.timeout_s),
            connect_timeout_s=_env_float("VECTREE_LLM_CONNECT_TIMEOUT", defaults.connect_timeout_s),
            attempts=int(_env_float("VECTREE_LLM_ATTEMPTS", defaults.attempts)),
            backoff_s=_env_float("VECTREE_LLM_BACKOFF", defaults.backoff_s),
            backoff_max_s=_env_float("VECTREE_LLM_BACKOFF_MAX", defaults.backoff_max_s),
            retry_after_max_s=_env_float("VECTREE_LLM_RETRY_AFTER_MAX", defaults.retry_after_max_s),
            deadline_s=_env_float("VECTREE_LLM_DEADLINE", defaults.deadline_s),
            context_tokens=_env_optional_positive("VECTREE_LLM_CONTEXT_TOKENS"),
            max_tokens=_env_optional_positive("VECTREE_LLM_MAX_TOKENS"),
        )


@settings_dataclass(frozen=True)
class JudgeSettings:
    """The evaluation judge's endpoint; any field left unset falls back to the answering
    model's setting (the retry policy is always the answering model's). The judge always runs
    at temperature 0."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float | None = None

    @classmethod
    def from_env(cls) -> JudgeSettings:
        """VECTREE_JUDGE_MODEL / _BASE_URL / _API_KEY, else VECTREE_MODEL, VECTREE_BASE_URL or
        OPENAI_BASE_URL, VECTREE_API_KEY or OPENAI_API_KEY."""
        agent = LLMSettings.from_env()
        return cls(
            model=_env("VECTREE_JUDGE_MODEL") or agent.model,
            base_url=_env("VECTREE_JUDGE_BASE_URL") or agent.base_url,
            api_key=_env("VECTREE_JUDGE_API_KEY") or agent.api_key,
        )

    @property
    def configured(self) -> bool:
        return bool(self.model)

    def llm_settings(self) -> LLMSettings:
        """The judge's endpoint as chat-model settings, at temperature 0, under the retry
        policy of the environment (one policy for every model call)."""
        agent = LLMSettings.from_env()
        return agent.model_copy(
            update={
                "model": self.model,
                "base_url": self.base_url,
                "api_key": self.api_key,
                "temperature": 0.0,
                "timeout_s": self.timeout_s or agent.timeout_s,
            }
        )


# -- the index and its models ----------------------------------------------------------------------
def model_cache_dir() -> Path:
    """Where converted models live: VECTREE_MODEL_CACHE, else ``~/.cache/vectree/models``.

    A stable per-user location means the one-off conversion is shared by every run and test.
    """
    return _env_path("VECTREE_MODEL_CACHE") or Path.home() / ".cache" / "vectree" / "models"


def embedding_threads() -> int:
    """ONNX threads of each embedding model (VECTREE_EMBED_THREADS, default 1).

    One thread per process is faster here than ONNX Runtime's default of one per core, whose
    threads spin while they wait: on 2 cores, 224 section texts took 6.3 s with one thread and
    8.9 s with the default (12.2 s against 15.8 s with two ingestion workers embedding at
    once), and a query 11 ms against 13 ms. Parallel work is spread over processes instead.
    """
    value = _env("VECTREE_EMBED_THREADS", "1") or "1"
    if not value.isdigit() or int(value) < 1:
        raise SettingsError(
            f"VECTREE_EMBED_THREADS must be a whole number of at least 1, not {value!r}"
        )
    return int(value)


class IndexSettings(BaseModel):
    """Where the structural index lives and which embedding model fills it."""

    qdrant_url: str | None = Field(
        default=None,
        description="Qdrant server URL (QDRANT_URL); unset = the embedded Qdrant Edge index "
        "in the library folder.",
    )
    qdrant_api_key: str | None = Field(default=None, description="Qdrant API key.")
    collection: str = Field(
        default="vectree_structure",
        pattern=r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}$",
        description="Collection name (VECTREE_COLLECTION): letters, digits, '_', '-' and '.'; "
        "it also names folders in the library (the embedded shard, the entry map).",
    )
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL, description="fastembed dense model (VECTREE_EMBEDDING)."
    )
    model_cache: Path | None = Field(
        default=None, description="Folder for converted models (VECTREE_MODEL_CACHE)."
    )
    search_threads: int = Field(
        default_factory=lambda: max(1, min(os.cpu_count() or 1, 4)),
        ge=1,
        description="Search threads per embedded shard (VECTREE_SEARCH_THREADS; default: the "
        "cores, at most 4).",
    )
    index_wait_s: float = Field(
        default=30.0,
        ge=0,
        description="Seconds a process waits for another one owning the embedded index (it "
        "lets go after its current operation) before giving up (VECTREE_INDEX_WAIT).",
    )
    search_depth: int = Field(
        default=256,
        ge=1,
        description="Entries each retriever returns per query (VECTREE_SEARCH_DEPTH).",
    )
    write_wait_s: float = Field(
        default=60.0,
        ge=0,
        description="Seconds a writer (ingest, remove) waits for another writer of the same "
        "library before giving up in one line (VECTREE_WRITE_WAIT).",
    )

    @classmethod
    def from_env(cls) -> IndexSettings:
        """Build from QDRANT_URL / QDRANT_API_KEY / VECTREE_COLLECTION / VECTREE_EMBEDDING /
        VECTREE_MODEL_CACHE / VECTREE_SEARCH_THREADS / VECTREE_INDEX_WAIT /
        VECTREE_SEARCH_DEPTH / VECTREE_WRITE_WAIT."""
        defaults = cls()
        try:
            return cls(
                qdrant_url=_env("QDRANT_URL"),
                qdrant_api_key=_env("QDRANT_API_KEY"),
                collection=_env("VECTREE_COLLECTION", defaults.collection) or defaults.collection,
                embedding_model=_env("VECTREE_EMBEDDING", DEFAULT_EMBEDDING_MODEL)
                or DEFAULT_EMBEDDING_MODEL,
                model_cache=_env_path("VECTREE_MODEL_CACHE"),
                search_threads=_env_int("VECTREE_SEARCH_THREADS", defaults.search_threads),
                index_wait_s=_env_float("VECTREE_INDEX_WAIT", defaults.index_wait_s),
                search_depth=_env_int("VECTREE_SEARCH_DEPTH", defaults.search_depth),
                write_wait_s=_env_float("VECTREE_WRITE_WAIT", defaults.write_wait_s),
            )
        except ValidationError as exc:
            raise SettingsError(_invalid(exc, INDEX_VARIABLES)) from None


INDEX_VARIABLES = {
    "qdrant_url": "QDRANT_URL",
    "qdrant_api_key": "QDRANT_API_KEY",
    "collection": "VECTREE_COLLECTION",
    "embedding_model": "VECTREE_EMBEDDING",
    "model_cache": "VECTREE_MODEL_CACHE",
    "search_threads": "VECTREE_SEARCH_THREADS",
    "index_wait_s": "VECTREE_INDEX_WAIT",
    "search_depth": "VECTREE_SEARCH_DEPTH",
    "write_wait_s": "VECTREE_WRITE_WAIT",
}
"""The environment variable behind each ``IndexSettings`` field (for error messages)."""


def _invalid(exc: ValidationError, variables: dict[str, str]) -> str:
    """One line naming each variable whose value was refused, and why."""
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else ""
        problems.append(f"{variables.get(name, name)}: {error['msg']} (got {error['input']!r})")
    return "; ".join(problems)


# -- the relevance gates of document search --------------------------------------------------------
# Gate defaults calibrated for sentence-transformers/all-MiniLM-L6-v2 by
# ``python -m evals.calibrate_gates`` (the rule is in that module's docstring) on the 100
# The 100 QASPER development papers, 331 questions, BM25 vectors carrying each section's whole
# text (entries version 2), `python -m evals.calibrate_gates --pdfs ''`:
# dense_min/bm25_min = the pair rejecting the most non-gold (question, document) pairs (10 %)
# while 99.1 % of gold documents pass on at least one signal and each signal alone admits
# ≥ 50 % of them (dense 93 %, BM25 88 %); dense_strong/bm25_strong = 99th percentile of
# non-gold scores. The gates order results rather than hide them (tools/search.py), so with
# these values recall@1/5/10 equals the ungated search (0.372 / 0.571 / 0.653). The paper's
# SPECTER2 values (0.35 / 1.0 / 0.55 / 4.0) do not transfer: MiniLM cosines and Qdrant-IDF
# BM25 scores use other scales. BM25 grows with ln(collection size), so recalibrate for
# libraries far larger than ~1,300 entries if the gates matter there.
DEFAULT_DENSE_MIN = 0.19
DEFAULT_BM25_MIN = 2.75
DEFAULT_DENSE_STRONG = 0.53
DEFAULT_BM25_STRONG = 9.25
DEFAULT_LARGE_CORPUS = 50
DEFAULT_RELATIVE = 0.4


@settings_dataclass(frozen=True)
class GateSettings:
    """Relevance-gate thresholds of document search (``tools.search`` explains each gate)."""

    dense_min: float = DEFAULT_DENSE_MIN
    bm25_min: float = DEFAULT_BM25_MIN
    dense_strong: float = DEFAULT_DENSE_STRONG
    bm25_strong: float = DEFAULT_BM25_STRONG
    large_corpus: int = DEFAULT_LARGE_CORPUS
    relative: float = DEFAULT_RELATIVE
    enabled: bool = True

    @classmethod
    def from_env(cls) -> GateSettings:
        """Defaults, each replaced by its VECTREE_GATE_* variable when set; VECTREE_GATES=off
        switches the gates off."""
        return cls(
            dense_min=_env_float("VECTREE_GATE_DENSE_MIN", DEFAULT_DENSE_MIN),
            bm25_min=_env_float("VECTREE_GATE_BM25_MIN", DEFAULT_BM25_MIN),
            dense_strong=_env_float("VECTREE_GATE_DENSE_STRONG", DEFAULT_DENSE_STRONG),
            bm25_strong=_env_float("VECTREE_GATE_BM25_STRONG", DEFAULT_BM25_STRONG),
            large_corpus=int(_env_float("VECTREE_GATE_LARGE_CORPUS", DEFAULT_LARGE_CORPUS)),
            relative=_env_float("VECTREE_GATE_RELATIVE", DEFAULT_RELATIVE),
            enabled=_env_flag("VECTREE_GATES", True),
        )


# -- PDF parsing -----------------------------------------------------------------------------------
class ParserSettings(BaseModel):
    """The default PDF parser and where the optional marker parser finds its model weights."""

    parser: str = Field(
        default=DEFAULT_PARSER,
        description="Default PDF parser (VECTREE_PARSER): pymupdf4llm | pymupdf4llm-layout | "
        "marker.",
    )
    marker_models: Path = Field(
        default_factory=lambda: _default_marker_models(),
        description="marker's model weights (MODEL_CACHE_DIR, the variable marker itself reads).",
    )

    @classmethod
    def from_env(cls) -> ParserSettings:
        """Build from VECTREE_PARSER / MODEL_CACHE_DIR (taken literally, as marker takes it)."""
        models = _env("MODEL_CACHE_DIR")
        return cls(
            parser=_env("VECTREE_PARSER", DEFAULT_PARSER) or DEFAULT_PARSER,
            marker_models=Path(models) if models else _default_marker_models(),
        )


def _default_marker_models() -> Path:
    """marker's own default model folder."""
    return Path.home() / ".cache" / "datalab" / "models"


# -- the library and the run contexts --------------------------------------------------------------
def default_library_dir() -> Path:
    """The library folder: VECTREE_HOME, else ./library in the working directory."""
    return Path(_env("VECTREE_HOME", "library") or "library").expanduser().resolve()


@dataclass(kw_only=True)
class RunContext:
    """Fields every graph's run context shares: where the library is and which LLM to use.

    The defaults are read from the environment each time a context is built. The API key is
    deliberately not a field: contexts are shown in Studio and stored with runs, so the key is
    read from the environment only (``llm_settings``).
    """

    library: str = field(
        default_factory=lambda: str(default_library_dir()),
        metadata={"description": "Library folder (VECTREE_HOME, default ./library)."},
    )
    model: str = field(
        default_factory=lambda: LLMSettings.from_env().model or "",
        metadata={"description": "Chat model name (VECTREE_MODEL); empty = offline."},
    )
    base_url: str = field(
        default_factory=lambda: LLMSettings.from_env().base_url or "",
        metadata={"description": "OpenAI-compatible endpoint URL (OPENAI_BASE_URL)."},
    )

    def llm_settings(self, **overrides: object) -> LLMSettings:
        """LLM settings from this context plus the environment (for the key)."""
        update = {"model": self.model or None, "base_url": self.base_url or None, **overrides}
        return LLMSettings.from_env().model_copy(update=update)


# -- the served API (`vectree serve`) ------------------------------------------------------------
REQUEST_MARGIN = 1024 * 1024
"""What a request carries besides a supplied document (its other fields, the run's settings)."""


@settings_dataclass(frozen=True)
class ServerSettings:
    """Who may call the LangGraph server and which files its ``ingest`` graph may read.

    ``api_keys`` empty means an open server (local development). Each key is one caller
    identity; the keys are kept out of the repr so they never reach a log line.
    """

    api_keys: tuple[str, ...] = field(default=(), repr=False)
    inbox: Path | None = None
    models: tuple[str, ...] = ()
    """Chat models a run may choose besides the configured one (VECTREE_SERVER_MODELS)."""
    ingest_keys: tuple[str, ...] | None = field(default=None, repr=False)
    """The keys whose callers may run the ``ingest`` graph (VECTREE_SERVER_INGEST_KEYS): None
    (unset) lets every key ingest; ``none`` lets no one."""
    jobs: int = 4
    """Runs the server executes at once (VECTREE_SERVER_JOBS); the others wait in its queue."""
    run_timeout_s: int = 900
    """Longest a served run may take before it ends as timed out (VECTREE_SERVER_RUN_TIMEOUT):
    a supplied document at the size limit takes about 100 s to ingest."""
    max_pages: int = 5000
    """Pages a served document may have: a supplied one, or a PDF in the inbox
    (VECTREE_INGEST_MAX_PAGES)."""
    max_page_chars: int = 200_000
    """Characters of one supplied page (VECTREE_INGEST_MAX_PAGE_CHARS); a dense printed page
    holds about 5,000."""
    max_bytes: int = 32 * 1024 * 1024
    """Bytes of a supplied document (its JSON) or of a PDF in the inbox
    (VECTREE_INGEST_MAX_BYTES). A 26.5 MB supplied document of 5,000 pages took 94 s to ingest
    and raised the server's peak memory to 1.1 GB; a request body larger than this (plus
    ``REQUEST_MARGIN``) is refused before it is read."""

    @classmethod
    def from_env(cls) -> ServerSettings:
        """VECTREE_SERVER_KEYS (comma-separated; blanks and repeats ignored), VECTREE_INBOX,
        VECTREE_SERVER_MODELS and VECTREE_SERVER_INGEST_KEYS (comma-separated),
        VECTREE_SERVER_JOBS, VECTREE_SERVER_RUN_TIMEOUT, and the
        ingestion limits VECTREE_INGEST_MAX_PAGES, _MAX_PAGE_CHARS and _MAX_BYTES."""
        raw = _env("VECTREE_SERVER_KEYS") or ""
        keys = tuple(dict.fromkeys(key.strip() for key in raw.split(",") if key.strip()))
        models = tuple(m.strip() for m in (_env("VECTREE_SERVER_MODELS") or "").split(","))
        defaults = cls()
        return cls(
            api_keys=keys,
            inbox=_env_path("VECTREE_INBOX"),
            models=tuple(dict.fromkeys(m for m in models if m)),
            ingest_keys=_ingest_keys(_env("VECTREE_SERVER_INGEST_KEYS"), keys),
            jobs=_env_positive("VECTREE_SERVER_JOBS", defaults.jobs),
            run_timeout_s=_env_positive("VECTREE_SERVER_RUN_TIMEOUT", defaults.run_timeout_s),
            max_pages=_env_positive("VECTREE_INGEST_MAX_PAGES", defaults.max_pages),
            max_page_chars=_env_positive("VECTREE_INGEST_MAX_PAGE_CHARS", defaults.max_page_chars),
            max_bytes=_env_positive("VECTREE_INGEST_MAX_BYTES", defaults.max_bytes),
        )

    def server_limits(self) -> dict[str, str]:
        """The LangGraph server's own settings that enforce these limits: each run's timeout,
        and the largest request body it reads."""
        return {
            "BG_JOB_TIMEOUT_SECS": str(self.run_timeout_s),
            "HTTP_MAX_REQUEST_BODY_BYTES": str(self.max_bytes + REQUEST_MARGIN),
        }

    def may_ingest(self, key: str) -> bool:
        """Whether the caller with this key may run the ``ingest`` graph."""
        return self.ingest_keys is None or key in self.ingest_keys

    def inbox_dir(self, library: Path) -> Path:
        """The folder the served ``ingest`` graph reads from: VECTREE_INBOX, else LIBRARY/inbox."""
        return (self.inbox or Path(library) / "inbox").resolve()


def served_context(context: RunContext) -> None:
    """Confine a run context on the server: the library and the LLM endpoint are the
    server's own (its environment), whatever the caller sent, so a caller can neither read
    another library nor have the server send its key and prompts to a URL of their choosing;
    the model must be the configured one, one on the operator's allow-list
    (VECTREE_SERVER_MODELS), or empty (the offline reader)."""
    own = RunContext()
    context.library, context.base_url = own.library, own.base_url
    allowed = tuple(dict.fromkeys(m for m in (own.model, *ServerSettings.from_env().models) if m))
    if context.model and context.model not in allowed:
        offered = ", ".join(allowed) or "none (this server runs offline)"
        raise ValueError(
            f"context.model: {context.model!r} is not offered by this server; choose one of: "
            f"{offered}"
        )
