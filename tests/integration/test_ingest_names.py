"""A PDF whose file name is not valid UTF-8 (Linux names are bytes) is ingested, not taken for
a corrupt PDF, and its source is kept exactly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from graph.cli.library import demo_corpus
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs
from store.library import Library

pytestmark = pytest.mark.integration


def test_a_latin1_file_name_is_ingested_and_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    name = os.fsdecode(b"caf\xe9.pdf")
    shutil.copy(sorted(demo_corpus().glob("*.pdf"))[0], folder / name)
    library = tmp_path / "library"
    report = ingest_paths([folder], IngestContext(library=str(library)), progress=False)
    close_catalogs()
    assert [o.status for o in report.outcomes] == ["ingested"], report.outcomes
    records = Library(library).documents()
    assert len(records) == 1 and records[0]["source"] == str(folder / name)
