"""Aggregation over questions and seeds, and the markdown report with its plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.aggregate import aggregate
from evals.report import (
    ADHERENCE_PLOT,
    EVIDENCE_PLOT,
    MISSING,
    TOKENS_PLOT,
    format_stat,
    format_value,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def record(
    strategy: str,
    seed: int,
    qid: str,
    failures: dict[str, str] | None = None,
    **scores: float | None,
) -> dict[str, Any]:
    """One per-question record as the runner writes it."""
    return {
        "strategy": strategy,
        "seed": seed,
        "qid": qid,
        "scores": scores,
        "judge_failures": failures or {},
    }


def sample_records() -> list[dict[str, Any]]:
    return [
        # q1 has two seeds (0.0 and 1.0 → 0.5); q2 one seed (1.0); q3 a value only for seed 1
        record("vectree", 0, "q1", correct=0.0, tokens=1000.0, judge_only=None),
        record("vectree", 1, "q1", correct=1.0, tokens=3000.0, judge_only=None),
        record("vectree", 0, "q2", correct=1.0, tokens=2000.0),
        record("vectree", 0, "q3", failures={"correct": "no JSON"}, correct=None, tokens=500.0),
        record("vectree", 1, "q3", correct=1.0, tokens=500.0),
        record("dense", 0, "q1", correct=0.0, tokens=100.0),
    ]


def test_aggregate_averages_seeds_before_questions() -> None:
    result = aggregate(sample_records())
    assert list(result) == ["vectree", "dense"]
    vectree = result["vectree"]
    assert vectree["questions"] == 3
    correct = vectree["metrics"]["correct"]
    # question means 0.5, 1.0, 1.0
    assert correct["mean"] == pytest.approx(2.5 / 3)
    assert correct["n"] == 3
    low, high = correct["ci95"]
    assert low <= correct["mean"] <= high
    assert vectree["metrics"]["judge_only"] is None
    assert vectree["judge_failures"] == {"correct": 1}


def test_aggregate_keeps_per_seed_means() -> None:
    per_seed = aggregate(sample_records())["vectree"]["per_seed"]
    assert list(per_seed) == ["0", "1"]
    assert per_seed["0"]["correct"] == pytest.approx(0.5)  # q1 0.0, q2 1.0 (q3 failed)
    assert per_seed["1"]["correct"] == 1.0
    assert per_seed["0"]["tokens"] == pytest.approx(3500 / 3)
    assert per_seed["0"]["judge_only"] is None


def test_aggregate_is_deterministic_for_a_seed_and_json_safe() -> None:
    first = aggregate(sample_records(), seed=1)
    assert aggregate(sample_records(), seed=1) == first
    assert json.loads(json.dumps(first)) == first


def test_aggregate_of_a_single_value_has_zero_width() -> None:
    dense = aggregate(sample_records())["dense"]["metrics"]["correct"]
    assert dense == {"mean": 0.0, "ci95": [0.0, 0.0], "n": 1}


def test_formatting() -> None:
    assert format_value(None) == MISSING
    assert format_value(0.12345) == "0.123"
    assert format_value(127872.4) == "127,872"
    assert format_stat(None) == MISSING
    assert format_stat({"mean": 0.8, "ci95": [0.75, 0.85], "n": 300}) == (
        "0.800 [0.750, 0.850] (n=300)"
    )


def results(strategies: dict[str, Any]) -> dict[str, Any]:
    return {
        "dataset": "qasper",
        "setting": "gold paper",
        "command": "vectree eval qasper --seeds 0 1",
        "seeds": [0, 1],
        "created": "2025-01-01T00:00:00Z",
        "strategies": strategies,
        "excluded": [{"qid": "q9", "reason": "no annotator gave an answer"}],
        "notes": ["Judge: test-model."],
    }


def full_records() -> list[dict[str, Any]]:
    rows = []
    for strategy, base in (("vectree", 0.8), ("dense", 0.6)):
        for seed in (0, 1):
            for i in range(5):
                scores: dict[str, float | None] = {
                    "correct": float((i + seed) % 5 < 4 * base),
                    "evidence_precision": base / 2 + i / 50,
                    "evidence_recall": base + i / 50,
                    "payload_tokens": 1000.0 * (i + 1) * (2 if strategy == "vectree" else 1),
                    "layer_adherence": float(i % 2) if strategy == "vectree" else None,
                    "answer_f1": None,
                }
                rows.append(record(strategy, seed, f"q{i}", None, **scores))
    return rows


def test_report_writes_tables_and_plots(tmp_path: Path) -> None:
    path = write_report(tmp_path / "out", results(aggregate(full_records())))
    assert path == tmp_path / "out" / "report.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Evaluation: qasper (gold paper)")
    assert "`vectree eval qasper --seeds 0 1`" in text
    header = next(line for line in text.splitlines() if line.startswith("| strategy | questions"))
    assert "evidence_precision" in header and "answer_f1" in header
    assert "### Answers and evidence" in text and "### Trajectory" in text and "### Cost" in text
    dense_rows = [line for line in text.splitlines() if line.startswith("| dense | 5 |")]
    assert sum(row.count(MISSING) for row in dense_rows) == 2  # adherence, answer_f1 not computed
    assert "(n=" not in dense_rows[0]  # every question has a value: no count shown
    assert "## Per-seed means" in text and "| vectree | 1 |" in text
    assert "| q9 | no annotator gave an answer |" in text
    assert "- Judge: test-model." in text
    for name in (EVIDENCE_PLOT, TOKENS_PLOT, ADHERENCE_PLOT):
        assert f"]({name})" in text
        assert (tmp_path / "out" / name).read_bytes().startswith(PNG_MAGIC)


def test_report_without_plot_data_says_so(tmp_path: Path) -> None:
    records = [record("dense", 0, "q1", answer_f1=None), record("dense", 0, "q2", answer_f1=None)]
    text = write_report(tmp_path, results(aggregate(records))).read_text(encoding="utf-8")
    assert "| dense | 2 | — |" in text
    assert f"Evidence precision and recall: {MISSING} (no data)" in text
    assert not list(tmp_path.glob("*.png"))


def test_routing_baselines_are_rows_of_the_routing_table_only(tmp_path: Path) -> None:
    records = [
        record("vectree", 0, f"q{i}", **{"routing_recall@1": 1.0, "evidence_recall": 0.5})
        for i in range(2)
    ]
    summary = results(aggregate(records))
    summary["baselines"] = {
        "bm25-document": {
            "kind": "baseline",
            "description": "BM25 over each document's whole text",
            "questions": 2,
            "metrics": {"routing_recall@1": {"mean": 0.5, "ci95": [0.0, 1.0], "n": 2}},
        }
    }
    text = write_report(tmp_path, summary).read_text(encoding="utf-8")
    routing = text.split("### Routing")[1].split("###")[0]
    assert "| vectree | 2 | 1.000 [1.000, 1.000] |" in routing
    assert "| bm25-document (baseline) | 2 | 0.500 [0.000, 1.000] |" in routing
    assert "`bm25-document`: BM25 over each document's whole text" in routing
    assert text.count("bm25-document (baseline)") == 1  # no evidence, answer or cost rows
    assert "| bm25-document | 0 |" not in text  # nor a per-seed row
