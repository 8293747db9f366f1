"""Calibrate the layer-0 relevance gates for the configured embedding model on QASPER dev100.

Every QASPER question belongs to one paper, so its gold document is known. The 100 papers
(plus, by default, the 19 development PDFs as extra distractors) are ingested into
``--library`` (reused when present: unchanged inputs are skipped), and for every question the
best dense cosine and the best BM25 score of *every* document are measured (max over its
structural entries, exactly what the search uses).

Rule (the thresholds in ``tools/search.py`` come from it):

* Pre-gate ``dense_min`` / ``bm25_min``: over a grid (dense in steps of 0.01, BM25 in steps of
  0.25), keep the pairs under which at least ``--gold-pass`` (99 %) of gold documents pass on at
  least one signal, and where each threshold on its own still admits at least
  ``--single-pass`` (50 %) of gold documents, so neither retriever is silently switched off
  (a paraphrased query with no shared words must still be able to pass on dense alone).
  Among those, choose the pair that rejects the largest share of (question, non-gold
  document) pairs; ties go to the higher gold pass rate.
* Strong thresholds ``dense_strong`` / ``bm25_strong``: the ``--strong-percentile`` (99th)
  percentile of the non-gold (question, document) scores of each signal, so in a corpus of
  ≤ 50 documents about one unrelated document per two queries passes on strength alone.

The script prints a table and writes JSON: the thresholds, the pass rates behind them, and
recall@1/@5/@10 of ``DocumentSearch`` with the calibrated gates (both corpus-size regimes), with
the paper's SPECTER2 values, and without gates.

    python -m evals.calibrate_gates [--library DIR] [--pdfs ../shared/data/pdfs | --pdfs ''] \
        [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evals.exact import ExactScorer
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from ingest.qasper import load_qasper, qasper_doc_id
from store.catalog import Catalog, close_catalogs, open_catalog
from store.settings import GateSettings
from store.vectors import SparseQuery
from tools.search import DocumentSearch

QASPER_FILE = Path("../shared/data/qasper/qasper-test-v0.3.dev100.json")
PDF_DIR = Path("../shared/data/pdfs")
DEFAULT_LIBRARY = Path("test-artifacts/calibrate-gates/library")
PAPER_GATES = GateSettings(dense_min=0.35, bm25_min=1.0, dense_strong=0.55, bm25_strong=4.0)
RECALL_AT = (1, 5, 10)
DENSE_STEP = 0.01
BM25_STEP = 0.25


@dataclass
class Question:
    """One QASPER question and the doc id of the paper it was asked about."""

    text: str
    gold: str


@dataclass
class ScoreTable:
    """Per question × document best scores; ``gold`` marks each question's gold document."""

    doc_ids: list[str]
    dense: NDArray[np.float64]
    bm25: NDArray[np.float64]
    gold: NDArray[np.bool_]

    def split(self) -> tuple[NDArray[np.float64], ...]:
        """Gold dense, gold BM25, and the flattened non-gold dense and BM25 scores."""
        return (
            self.dense[self.gold],
            self.bm25[self.gold],
            self.dense[~self.gold],
            self.bm25[~self.gold],
        )


# -- data ------------------------------------------------------------------------------------------
def build_library(library: Path, qasper: Path, pdfs: Path | None) -> Catalog:
    """Ingest QASPER (and the PDFs) once; later runs find every input already present."""
    inputs = [qasper] + ([pdfs] if pdfs else [])
    report = ingest_paths(inputs, IngestContext(library=str(library)), progress=False)
    if report.failed:
        print(f"warning: {len(report.failed)} inputs failed to ingest", file=sys.stderr)
    return open_catalog(library)


def load_questions(qasper: Path, catalog: Catalog) -> list[Question]:
    """Every question whose paper is in the library, with its gold doc id."""
    questions: list[Question] = []
    for arxiv_id, paper in load_qasper(qasper).items():
        gold = qasper_doc_id(arxiv_id, paper)
        if not catalog.library.has(gold):
            continue
        questions.extend(Question(str(qa["question"]).strip(), gold) for qa in paper["qas"])
    return [q for q in questions if q.text]


def score_table(catalog: Catalog, questions: list[Question]) -> ScoreTable:
    """Best dense and BM25 score of every document for every question (no depth cut)."""
    scorer = ExactScorer.load(catalog)
    index = catalog.index
    dense_queries = np.asarray(index.embed_dense([q.text for q in questions]), dtype=np.float32)
    doc_ids = scorer.doc_ids
    dense = np.zeros((len(questions), len(doc_ids)))
    bm25 = np.zeros((len(questions), len(doc_ids)))
    for i, question in enumerate(questions):
        dense[i] = scorer.per_document(scorer.dense(dense_queries[i]))
        sparse = SparseQuery.from_vector(index.embed_sparse_query(question.text))
        bm25[i] = scorer.per_document(scorer.bm25(sparse)[0])
    position = {doc_id: j for j, doc_id in enumerate(doc_ids)}
    gold = np.zeros_like(dense, dtype=bool)
    gold[np.arange(len(questions)), [position[q.gold] for q in questions]] = True
    return ScoreTable(doc_ids, dense, bm25, gold)


# -- the rule --------------------------------------------------------------------------------------
def choose_pre_gate(table: ScoreTable, gold_pass: float, single_pass: float) -> dict[str, float]:
    """The (dense_min, bm25_min) pair of the module docstring's rule, with its rates."""
    gold_dense, gold_bm25, other_dense, other_bm25 = table.split()
    dense_grid = np.round(np.arange(0.0, 1.0 + DENSE_STEP, DENSE_STEP), 4)
    bm25_grid = np.round(np.arange(0.0, float(table.bm25.max()) + BM25_STEP, BM25_STEP), 4)
    best: tuple[float, float, float, float] | None = None
    for d in dense_grid:
        if np.mean(gold_dense >= d) < single_pass:
            break
        gold_dense_ok = gold_dense >= d
        other_dense_low = other_dense < d
        for b in bm25_grid:
            if np.mean(gold_bm25 >= b) < single_pass:
                break
            passed = float(np.mean(gold_dense_ok | (gold_bm25 >= b)))
            if passed < gold_pass:
                continue
            rejected = float(np.mean(other_dense_low & (other_bm25 < b)))
            if best is None or (rejected, passed) > (best[2], best[3]):
                best = (float(d), float(b), rejected, passed)
    if best is None:
        raise RuntimeError("no threshold pair satisfies the gold pass constraints")
    return {
        "dense_min": best[0],
        "bm25_min": best[1],
        "non_gold_rejected": best[2],
        "gold_passed": best[3],
    }


def choose_strong(table: ScoreTable, percentile: float) -> dict[str, float]:
    """Strong thresholds at a high percentile of non-gold scores (rounded up to the grid)."""
    _, _, other_dense, other_bm25 = table.split()
    dense = float(np.ceil(np.percentile(other_dense, percentile) / DENSE_STEP) * DENSE_STEP)
    bm25 = float(np.ceil(np.percentile(other_bm25, percentile) / BM25_STEP) * BM25_STEP)
    return {"dense_strong": round(dense, 4), "bm25_strong": round(bm25, 4)}


def gate_rates(table: ScoreTable, gates: GateSettings) -> dict[str, float]:
    """Pass rates of gold and non-gold documents under each gate condition."""
    gd, gb, od, ob = table.split()

    def rates(dense: NDArray[np.float64], bm25: NDArray[np.float64]) -> dict[str, float]:
        dense_ok, bm25_ok = dense >= gates.dense_min, bm25 >= gates.bm25_min
        strong = (dense >= gates.dense_strong) | (bm25 >= gates.bm25_strong)
        return {
            "dense_only_pass": float(np.mean(dense_ok)),
            "bm25_only_pass": float(np.mean(bm25_ok)),
            "pre_gate_pass": float(np.mean(dense_ok | bm25_ok)),
            "agree_or_strong_pass": float(np.mean((dense_ok & bm25_ok) | strong)),
            "strong_pass": float(np.mean(strong)),
        }

    return {
        **{f"gold_{k}": v for k, v in rates(gd, gb).items()},
        **{f"non_gold_{k}": v for k, v in rates(od, ob).items()},
    }


def best_non_gold(table: ScoreTable) -> dict[str, float]:
    """How often the gold document out-scores every other document, per signal."""
    gold_dense, gold_bm25 = table.dense[table.gold], table.bm25[table.gold]
    other_dense = np.where(table.gold, -np.inf, table.dense).max(axis=1)
    other_bm25 = np.where(table.gold, -np.inf, table.bm25).max(axis=1)
    return {
        "gold_dense_median": float(np.median(gold_dense)),
        "gold_bm25_median": float(np.median(gold_bm25)),
        "best_non_gold_dense_median": float(np.median(other_dense)),
        "best_non_gold_bm25_median": float(np.median(other_bm25)),
        "gold_beats_best_non_gold_dense": float(np.mean(gold_dense > other_dense)),
        "gold_beats_best_non_gold_bm25": float(np.mean(gold_bm25 > other_bm25)),
    }


# -- end-to-end recall -----------------------------------------------------------------------------
def recall(
    catalog: Catalog, questions: list[Question], gates: GateSettings | None
) -> dict[str, float]:
    """recall@k of DocumentSearch (gates=None: raw fusion) and the share of empty answers."""
    search = DocumentSearch(catalog, gates=gates or GateSettings())
    found = {k: 0 for k in RECALL_AT}
    empty = 0
    lengths = []
    for question in questions:
        hits = search.search(question.text, limit=max(RECALL_AT), gates=gates is not None)
        ids = [hit.doc_id for hit in hits]
        empty += not ids
        lengths.append(len(ids))
        for k in RECALL_AT:
            found[k] += question.gold in ids[:k]
    n = max(len(questions), 1)
    return {
        **{f"recall@{k}": found[k] / n for k in RECALL_AT},
        "empty_results": empty / n,
        "mean_results": float(np.mean(lengths)) if lengths else 0.0,
    }


def calibrate(args: argparse.Namespace) -> dict[str, Any]:
    pdfs = Path(args.pdfs) if args.pdfs else None
    catalog = build_library(Path(args.library), Path(args.qasper), pdfs)
    questions = load_questions(Path(args.qasper), catalog)
    table = score_table(catalog, questions)
    pre = choose_pre_gate(table, args.gold_pass, args.single_pass)
    strong = choose_strong(table, args.strong_percentile)
    gates = GateSettings(
        dense_min=pre["dense_min"],
        bm25_min=pre["bm25_min"],
        dense_strong=strong["dense_strong"],
        bm25_strong=strong["bm25_strong"],
    )
    small_regime = replace(gates, large_corpus=10**9)
    return {
        "embedding_model": catalog.index.settings.embedding_model,
        "documents": len(table.doc_ids),
        "inputs": [str(args.qasper)] + ([str(pdfs)] if pdfs else []),
        "questions": len(questions),
        "rule": {
            "gold_pass": args.gold_pass,
            "single_pass": args.single_pass,
            "strong_percentile": args.strong_percentile,
        },
        "thresholds": {k: v for k, v in asdict(gates).items() if k != "enabled"},
        "pre_gate_choice": pre,
        "separation": best_non_gold(table),
        "rates": {"calibrated": gate_rates(table, gates), "paper": gate_rates(table, PAPER_GATES)},
        "recall": {
            "calibrated": recall(catalog, questions, gates),
            "calibrated_small_corpus_rule": recall(catalog, questions, small_regime),
            "paper_specter2_values": recall(catalog, questions, PAPER_GATES),
            "no_gates": recall(catalog, questions, None),
        },
    }


def print_report(result: dict[str, Any]) -> None:
    print(
        f"{result['embedding_model']}: {result['documents']} documents, "
        f"{result['questions']} questions"
    )
    print("\nthreshold       value")
    for name, value in result["thresholds"].items():
        print(f"{name:<15} {value}")
    print("\nrate                          calibrated   paper")
    cal, paper = result["rates"]["calibrated"], result["rates"]["paper"]
    for name in cal:
        print(f"{name:<30} {cal[name]:>8.3f} {paper[name]:>8.3f}")
    print("\nseparation")
    for name, value in result["separation"].items():
        print(f"{name:<32} {value:.3f}")
    print("\nsearch                          " + "  ".join(f"{k:>9}" for k in _recall_keys(result)))
    for name, row in result["recall"].items():
        print(f"{name:<31} " + "  ".join(f"{row[k]:>9.3f}" for k in _recall_keys(result)))


def _recall_keys(result: dict[str, Any]) -> list[str]:
    return list(next(iter(result["recall"].values())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default=str(DEFAULT_LIBRARY), help="cache library folder")
    parser.add_argument("--qasper", default=str(QASPER_FILE), help="QASPER JSON file")
    parser.add_argument(
        "--pdfs",
        default=str(PDF_DIR),
        help="PDF folder added as distractors ('' to leave out)",
    )
    parser.add_argument("--gold-pass", type=float, default=0.99)
    parser.add_argument("--single-pass", type=float, default=0.5)
    parser.add_argument("--strong-percentile", type=float, default=99.0)
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args(argv)
    try:
        result = calibrate(args)
    finally:
        close_catalogs()
    print_report(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
