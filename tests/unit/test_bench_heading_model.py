"""The heading model's share of the parse step, as evals.bench_ingest --heading-model times it."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from evals.bench_ingest import heading_model_seconds


def test_the_heading_models_cost_is_timed_per_page(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for number in (1, 2):
        page = doc.new_page()
        page.insert_text((72, 72), f"{number} Section", fontsize=16, fontname="hebo")
        page.insert_text((72, 100), "Body text that runs on for a while here.", fontsize=10)
    doc.save(tmp_path / "two.pdf")
    timing = heading_model_seconds(tmp_path)
    assert timing["pages"] == 2
    assert timing["heading_model_seconds"] >= 0 and timing["rule_alone_seconds"] >= 0
    assert set(timing) == {
        "pages",
        "heading_model_seconds",
        "rule_alone_seconds",
        "model_ms_per_page",
    }
