"""A library indexed by Qdrant local mode (earlier versions) is converted to Qdrant Edge on first
use or by `vectree check --migrate`: every point kept, flags made integers, the old index kept
aside, and a conversion cut short redone from scratch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from graph.cli import main
from store.catalog import Catalog, close_catalogs, open_catalog
from store.index import scroll_points
from store.migrate import BACKUP_DIR, LOCAL_DIR, PARTIAL_DIR
from store.search_engine import clear_engines
from tests.unit.test_library_check import A, B, add_document
from tools.search import DocumentSearch


def as_local_mode(catalog: Catalog) -> int:
    """Rewrite the library's index as an earlier version left it: every collection in Qdrant
    local mode under LIBRARY/qdrant/, ``committed`` as JSON booleans, no Edge folder. Returns
    the number of points."""
    root = catalog.library.root
    index = catalog.index
    old = QdrantClient(path=str(root / LOCAL_DIR))
    total = 0
    for collection in index.client.get_collections().collections:
        index.create_hybrid_collection(old, collection.name)
        points = [
            models.PointStruct(
                id=record.id,
                vector=record.vector,  # type: ignore[arg-type]
                payload={**(record.payload or {}), "committed": bool(record.payload["committed"])},  # type: ignore[index]
            )
            for record in scroll_points(index.client, collection.name, None, True)
        ]
        old.upsert(collection.name, points)
        total += len(points)
    old.close()
    close_catalogs()
    clear_engines()
    shutil.rmtree(root / "edge")
    return total


@pytest.fixture
def old_library(library_dir: Path) -> tuple[Path, int]:
    catalog = open_catalog(library_dir)
    add_document(catalog, A, "Widget Reliability")
    add_document(catalog, B, "Gadget Pricing")
    before = DocumentSearch(catalog).search("widget reliability", gates=False)
    assert before[0].doc_id == A
    return library_dir, as_local_mode(catalog)


def test_first_use_converts_every_point_and_keeps_the_old_index(
    old_library: tuple[Path, int],
) -> None:
    root, points = old_library
    catalog = open_catalog(root)
    assert catalog.index.count() == points == 2 * catalog.index.count(A)
    assert catalog.index.migrated == {
        "collections": {"vectree_structure": points},
        "backup": str(root / BACKUP_DIR),
    }
    assert not (root / LOCAL_DIR).exists() and (root / BACKUP_DIR / "collection").is_dir()
    flags = {
        r.payload["committed"]
        for r in scroll_points(catalog.index.client, catalog.index.collection, None, False)
    }  # type: ignore[index]
    assert flags == {1}  # integers Edge can match, not booleans
    hits = DocumentSearch(catalog).search("widget reliability", gates=False)
    assert hits[0].doc_id == A and {h.doc_id for h in hits} == {A, B}


def test_check_migrate_reports_the_conversion(
    old_library: tuple[Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    root, points = old_library
    code = main(["--library", str(root), "check", "--migrate", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["damaged"] == []
    assert report["migrated"]["collections"] == {"vectree_structure": points}
    close_catalogs()
    main(["--library", str(root), "check", "--migrate", "--json"])  # nothing left to convert
    assert json.loads(capsys.readouterr().out)["migrated"] is None


def test_a_conversion_cut_short_is_redone_from_scratch(old_library: tuple[Path, int]) -> None:
    root, points = old_library
    partial = root / PARTIAL_DIR / "vectree_structure"
    partial.mkdir(parents=True)
    (partial / "leftover").write_text("half a shard")
    catalog = open_catalog(root)
    assert catalog.index.count() == points
    assert not (root / PARTIAL_DIR).exists()
