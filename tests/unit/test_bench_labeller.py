"""The line labeller's share of the parse step, as evals.bench_ingest --labeller times it."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from evals.bench_ingest import labeller_seconds


def test_the_labellers_cost_is_timed_per_page(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for number in (1, 2):
        page = doc.new_page()
        page.insert_text((72, 72), f"{number} Section", fontsize=16, fontname="hebo")
        page.insert_text((72, 100), "Body text that runs on for a while here.", fontsize=10)
    doc.save(tmp_path / "two.pdf")
    timing = labeller_seconds(tmp_path)
    assert timing["pages"] == 2
    assert timing["labeller_seconds"] >= 0 and timing["rule_alone_seconds"] >= 0
    assert set(timing) == {
        "pages",
        "labeller_seconds",
        "rule_alone_seconds",
        "model_ms_per_page",
    }
