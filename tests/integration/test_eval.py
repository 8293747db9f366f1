"""`vectree eval` end to end: real QASPER papers and real PDFs, real index, offline strategies,
and a judge reached through langchain-openai on a local stub."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from evals.run import EvalConfig, run_eval
from tests.conftest import PDF_DIR, QASPER_FILE, ROOT, require_shared_data
from tests.llm_stub import LLMStub

pytestmark = pytest.mark.integration


def qasper_subset(tmp_path: Path, papers: int) -> tuple[Path, int]:
    """The first papers of the development file, and how many questions they have."""
    require_shared_data()
    data = json.loads(QASPER_FILE.read_text(encoding="utf-8"))
    subset = dict(list(data.items())[:papers])
    path = tmp_path / "qasper-subset.json"
    path.write_text(json.dumps(subset), encoding="utf-8")
    return path, sum(len(p["qas"]) for p in subset.values())


def vectree_eval(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "graph.cli", "eval", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_qasper_gold_paper_run_writes_results_report_and_resumes(
    tmp_path: Path, library_dir: Path
) -> None:
    data, questions = qasper_subset(tmp_path, papers=3)
    out = tmp_path / "out"
    args = ["qasper", "--data", str(data), "--out", str(out), "--library", str(library_dir)]
    args += ["--strategy", "vectree", "--strategy", "dense", "--json"]
    first = vectree_eval(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    results = json.loads(first.stdout)
    records = lines(out / "questions.jsonl")
    assert len(records) == 2 * questions
    assert {r["strategy"] for r in records} == {"vectree", "dense"}
    for record in records:
        assert record["evidence_read"], record["qid"]  # every run read something
        assert all(len(pair) == 2 for pair in record["evidence_read"])
        assert record["trajectory"] and record["status"] == "answered"
        assert 0.0 <= record["scores"]["answer_f1"] <= 1.0
    for name in ("vectree", "dense"):
        metrics = results["strategies"][name]["metrics"]
        for metric in ("evidence_precision", "evidence_recall", "answer_f1", "tokens", "wall_s"):
            stat = metrics[metric]
            assert stat["n"] > 0
            low, high = stat["ci95"]
            assert low <= stat["mean"] <= high
        assert metrics["correct"] is None if "correct" in metrics else True  # no judge
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["strategies"].keys() == results["strategies"].keys()
    assert results["baselines"] == {}  # routing baselines belong to the corpus setting
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| vectree" in report and "| dense" in report
    assert list(out.glob("*.png"))
    # Resume: a finished evaluation re-runs nothing; a torn run is redone, once.
    kept = (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    (out / "questions.jsonl").write_text("\n".join(kept[:-1]) + "\n" + kept[-1][:40])
    second = vectree_eval(*args)
    assert second.returncode == 0, second.stderr[-2000:]
    again = lines_skipping_torn(out / "questions.jsonl")
    assert len(again) == 2 * questions
    assert [r["qid"] for r in again[:-1]] == [json.loads(k)["qid"] for k in kept[:-1]]


def lines_skipping_torn(path: Path) -> list[dict[str, Any]]:
    parsed = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return parsed


def pdf_folder(tmp_path: Path, names: dict[str, str]) -> Path:
    """A folder with copies of development PDFs under the names a dataset expects."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for target, source in names.items():
        shutil.copy(PDF_DIR / source, folder / target)
    return folder


def test_mosaic_corpus_run_scores_pages_by_document_and_routing(
    tmp_path: Path, library_dir: Path
) -> None:
    require_shared_data()
    folder = pdf_folder(
        tmp_path, {"grobid-letter.pdf": "0908.0054.pdf", "short-paper.pdf": "2304.02623v1.pdf"}
    )
    rows = [
        {
            "id": "m1",
            "question": "What does the short paper propose?",
            "answer": "A method described in the paper.",
            "reasoning_chain": ["Read the abstract.", "Summarise the contribution."],
            "type": "summary",
            "evidence": [{"document": "short-paper", "page": 1}],
        },
        {
            "id": "m2",
            "question": "Which physical system does the letter study?",
            "answer": "A physical system.",
            "reasoning_chain": "Read the first page.",
            "type": "factoid",
            "evidence": [{"document": "grobid-letter", "page": 1}],
        },
    ]
    data = tmp_path / "mosaic.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = EvalConfig(
        dataset="mosaic",
        data=data,
        pdfs=folder,
        out=tmp_path / "out",
        library=library_dir,
        strategies=["vectree"],
        setting="corpus",
    )
    results = run_eval(config, progress=False)
    metrics = results["strategies"]["vectree"]["metrics"]
    assert metrics["routing_recall@10"]["n"] == 2
    assert metrics["routing_recall@1"]["mean"] <= metrics["routing_recall@10"]["mean"]
    assert metrics["evidence_recall"]["n"] == 2
    assert metrics["answer_cosine"]["n"] == 2
    assert metrics.get("factuality_f1") is None  # needs a judge
    records = lines(config.out / "questions.jsonl")
    read = {tuple(pair) for r in records for pair in r["evidence_read"]}
    assert {doc for doc, _ in read} <= {"short-paper", "grobid-letter"}  # dataset names
    assert_routing_baselines(config, results)


def assert_routing_baselines(config: EvalConfig, results: dict[str, Any]) -> None:
    """Both flat BM25 baselines are scored over the same questions, written to results.json
    and the report's routing table, and read back from their cache on a resumed run."""
    assert list(results["baselines"]) == ["bm25-document", "bm25-chunks"]
    for baseline in results["baselines"].values():
        assert baseline["kind"] == "baseline" and baseline["questions"] == 2
        assert set(baseline["metrics"]) == {f"routing_recall@{k}" for k in (1, 5, 10)}
        assert baseline["metrics"]["routing_recall@10"] == {"mean": 1.0, "ci95": [1.0, 1.0], "n": 2}
    saved = json.loads((config.out / "results.json").read_text(encoding="utf-8"))
    assert saved["baselines"] == results["baselines"]
    routing = (config.out / "report.md").read_text(encoding="utf-8").split("### Routing")[1]
    assert "| bm25-document (baseline) | 2 |" in routing
    assert "| bm25-chunks (baseline) | 2 |" in routing
    cache = config.out / "routing_baselines.json"
    written = cache.stat().st_mtime_ns
    assert run_eval(config, progress=False)["baselines"] == results["baselines"]
    assert cache.stat().st_mtime_ns == written  # resumed: rankings read back, not recomputed


def test_litqa2_with_a_judge_endpoint_and_missing_pdfs_reported(
    tmp_path: Path, library_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_shared_data()
    present, missing = "10.1234/short(2023)", "10.9999/absent"
    folder = pdf_folder(tmp_path, {quote(present, safe="") + ".pdf": "2304.02623v1.pdf"})
    rows = [
        {
            "id": "l1",
            "question": "What kind of document is this?",
            "ideal": "a short paper",
            "distractors": ["a novel", "a patent", "a recipe"],
            "sources": [f"https://doi.org/{present}"],
            "key-passage": "",
        },
        {
            "id": "l2",
            "question": "Which year?",
            "ideal": "2001",
            "distractors": ["1999"],
            "sources": [missing],
            "key-passage": "",
        },
    ]
    data = tmp_path / "litqa2.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replies = iter(["not json at all", "still not json", "nope"])

    def judge(messages: list[dict[str, Any]]) -> str:
        return next(replies, '{"selected": "none"}')

    with LLMStub(judge) as stub:
        monkeypatch.setenv("VECTREE_JUDGE_BASE_URL", stub.base_url)
        monkeypatch.setenv("VECTREE_JUDGE_MODEL", "judge-stub")
        monkeypatch.setenv("VECTREE_JUDGE_API_KEY", "test")
        config = EvalConfig(
            dataset="litqa2",
            data=data,
            pdfs=folder,
            out=tmp_path / "out",
            library=library_dir,
            strategies=["vectree"],
            seeds=2,
        )
        results = run_eval(config, progress=False)
    assert {e["qid"] for e in results["excluded"]} == {"l2"}
    summary = results["strategies"]["vectree"]
    records = lines(config.out / "questions.jsonl")
    assert len(records) == 2  # one question, two seeds
    first, second = sorted(records, key=lambda r: r["seed"])
    # Seed 0: three malformed judge replies → a recorded failure, not a score.
    assert "accuracy" in first["judge_failures"]
    assert "accuracy" not in first["scores"]
    # Seed 1: the judge answered "none" → judged wrong, never mixed with offline accuracy.
    assert second["scores"]["accuracy"] == 0.0
    assert "offline_accuracy" in second["scores"]
    assert summary["judge_failures"] == {"accuracy": 1}
    assert len(stub.requests) == 4  # three malformed replies for seed 0, one for seed 1
    assert all(r.model == "judge-stub" for r in stub.requests)
    assert all(r.body.get("temperature") == 0 for r in stub.requests)
