"""Qdrant Edge under kill -9: an optimisation killed half way leaves builder folders behind
(often hundreds of MB); the next process that owns the index removes them, and every point
acknowledged before the kill is still there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.catalog import close_catalogs, open_catalog
from store.edge import stale_builders
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

POINTS = 30_000
"""Enough 384-dimensional points that building their HNSW graph takes seconds here."""
WRITER = r"""
import sys, uuid
from pathlib import Path

import numpy as np
from qdrant_client import models

from store.catalog import open_catalog

catalog = open_catalog(Path(sys.argv[1]))
index = catalog.index
index.ensure_collection()
rng = np.random.default_rng(0)
for start in range(0, int(sys.argv[2]), 1000):
    vectors = rng.standard_normal((1000, 384))
    points = [
        models.PointStruct(
            id=str(uuid.uuid4()),
            vector={
                "dense": vectors[i].tolist(),
                "bm25": models.SparseVector(indices=[i % 97, 100 + i % 13], values=[1.0, 1.0]),
            },
            payload={"doc_id": f"synthetic{start + i}", "entry_type": "section", "committed": 1},
        )
        for i in range(1000)
    ]
    index.client.upsert(index.collection, points)
print("written", flush=True)
index.settle()  # the optimisation the test kills
print("settled", flush=True)
"""


def test_a_kill_during_optimisation_leaves_a_library_that_opens_clean(tmp_path: Path) -> None:
    root = tmp_path / "library"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(POINTS)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "written"
    deadline = time.monotonic() + 120
    while not stale_builders(root / "edge") and time.monotonic() < deadline:
        time.sleep(0.05)
    leftovers = stale_builders(root / "edge")
    assert leftovers, "the optimisation did not start building segments"
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    assert all(path.exists() for path in leftovers)  # the kill left them behind

    catalog = open_catalog(root)
    assert catalog.index.count() == POINTS  # every acknowledged point survived
    assert stale_builders(root / "edge") == []  # removed by the new owner
    catalog.index.settle()  # and the optimisation now completes
    assert catalog.index.count(committed_only=False) == POINTS
    close_catalogs()
