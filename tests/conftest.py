"""Shared test fixtures: paths to the development data and isolated libraries."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("VECTREE_SHARED_DATA", ROOT.parent / "shared" / "data"))
PDF_DIR = SHARED_DATA / "pdfs"
OUTLINE_DIR = SHARED_DATA / "reference-trees" / "author-outlines"
QASPER_FILE = SHARED_DATA / "qasper" / "qasper-test-v0.3.dev100.json"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real LLM or a Qdrant server configured in the caller's shell."""
    for name in (
        "VECTREE_MODEL",
        "OPENAI_BASE_URL",
        "VECTREE_BASE_URL",
        "QDRANT_URL",
        "VECTREE_JUDGE_MODEL",
        "VECTREE_JUDGE_BASE_URL",
        "VECTREE_SERVER_KEYS",
        "VECTREE_SERVER_MODELS",
        "VECTREE_INBOX",
        "VECTREE_SERVER_INGEST_KEYS",
        "VECTREE_INGEST_MAX_PAGES",
        "VECTREE_INGEST_MAX_PAGE_CHARS",
        "VECTREE_INGEST_MAX_BYTES",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def library_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh library folder; index clients opened on it are closed afterwards."""
    from store.catalog import close_catalogs

    folder = tmp_path / "library"
    yield folder
    close_catalogs()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """All development PDFs ingested once per test session, with two worker processes."""
    from ingest.context import IngestContext
    from ingest.pipeline import ingest_paths
    from store.catalog import close_catalogs

    require_shared_data()
    library = tmp_path_factory.mktemp("corpus") / "library"
    report = ingest_paths([PDF_DIR], IngestContext(library=str(library)), workers=2, progress=False)
    yield library, report
    close_catalogs()


def require_shared_data() -> None:
    if not PDF_DIR.is_dir():
        pytest.fail(f"development data not found at {SHARED_DATA} (set VECTREE_SHARED_DATA)")


@pytest.fixture
def stub(scripted: Any) -> Iterator[Any]:
    """The local OpenAI-compatible endpoint answering with the module's ``scripted`` model;
    a request the stub could not serve fails the test."""
    from tests.llm_stub import LLMStub

    with LLMStub(scripted) as server:
        yield server
    assert not server.errors, server.errors
