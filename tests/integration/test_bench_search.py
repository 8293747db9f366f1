"""The layer-0 search benchmark at a tiny scale: real embeddings, a real Edge index, both engines,
and the records ``--json`` promises (the README's search table is made from them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import bench_search
from store.entry_map import MAP_DIR

pytestmark = pytest.mark.integration


def test_bench_search_prints_one_record_per_engine_and_keeps_its_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--docs", "60", "--queries", "6", "--content-words", "30", "--sparse-pool", "16"]
    assert bench_search.main([*argv, "--keep", str(tmp_path), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["engine"], r["docs"]) for r in records] == [("edge", 60), ("numpy", 60)]
    edge = records[0]
    for record in records:
        assert record["open_s"] > 0 and record["fused_p50_ms"] > 0
        assert record["fused_p95_ms"] >= record["fused_p50_ms"] > 0
        assert 0.95 <= record["recall_at_10"] <= 1.0
    assert edge["first_open_s"] > 0 and edge["search_p50_ms"] > 0
    assert edge["points"] == 60 * (1 + bench_search.SECTIONS_PER_DOC)
    kept = next(tmp_path.iterdir())
    assert list((kept / MAP_DIR).rglob("*.npz"))  # the second open read the map the first kept
    built = json.loads((kept / bench_search.BUILT_FILE).read_text())
    assert bench_search.main([*argv, "--keep", str(tmp_path), "--json"]) == 0
    assert json.loads((kept / bench_search.BUILT_FILE).read_text()) == built  # reused, not rebuilt
