"""Cross-validate the offline reader's constants on QASPER gold-paper questions.

The navigator reads the pages ``search_within_paper`` ranks best: their score is BM25 plus
``PAGE_DENSE_WEIGHT`` × dense (each scaled by the best candidate) plus ``PAGE_SECTION_WEIGHT`` ×
the score of the best section holding the page (``tools.pages``), and it reads those within
``READ_RATIO`` of the best, at most ``MAX_READ_PAGES`` (``graph.navigator``). This script scores
every page of the gold paper once per question with the product's own ranking and evaluates a
grid of the four constants by the official QASPER Evidence-F1 of the pages that would be read.
Folds are by paper (a paper's questions never appear on both sides), so the held-out figure is
what the constants give on papers they were not chosen on. It prints each fold's choice and
held-out score and the pooled held-out Evidence-F1; ``--json`` writes them.

    python -m evals.tune_reader --library DIR [--data QASPER.json] [--folds 5] [--json OUT]

The library must hold the QASPER papers (``vectree ingest QASPER.json --library DIR``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from evals.datasets import EvalQuestion, load_qasper
from evals.metrics import qasper_evidence_f1
from store.catalog import open_catalog
from tools.pages import page_score, pages_to_read, rank_pages
from tools.schemas import MAX_PAGES_PER_CALL

QASPER_FILE = Path("../shared/data/qasper/qasper-test-v0.3.dev100.json")
DENSE_WEIGHTS = (1.0, 1.5, 2.0, 3.0)
SECTION_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0)
MAX_PAGES = (1, 2, 3, 4)
RATIOS = (0.6, 0.7, 0.8, 0.9)
Setting = tuple[float, float, int, float]


@dataclass
class Scored:
    """One question's candidate pages with their raw signals."""

    question: EvalQuestion
    key: str
    pages: list[int]
    bm25: np.ndarray
    dense: np.ndarray
    section: np.ndarray


def score_questions(library: Path, data: Path, progress: bool) -> list[Scored]:
    """The product's within-paper ranking for every single-paper question of ``data``."""
    catalog = open_catalog(library)
    doc_of = {r["source"].split("#")[-1]: r["doc_id"] for r in catalog.library.documents()}
    questions = [
        q for q in load_qasper(data).questions if len(q.doc_keys) == 1 and q.doc_keys[0] in doc_of
    ]
    embed = catalog.index.embed_dense
    scored = []
    for question in tqdm(questions, desc="rank pages", disable=not progress, file=sys.stderr):
        doc_id = doc_of[question.doc_keys[0]]
        tree, pages = catalog.library.tree(doc_id), catalog.library.pages(doc_id)
        ranked = rank_pages(question.question, tree, pages, embed)
        scored.append(
            Scored(
                question,
                question.doc_keys[0],
                [r.page for r in ranked],
                np.array([r.bm25 for r in ranked]),
                np.array([r.dense for r in ranked]),
                np.array([r.section for r in ranked]),
            )
        )
    return scored


def read_pages(item: Scored, setting: Setting) -> set[tuple[str, int]]:
    """The pages the navigator would read under one setting of the constants."""
    dense_weight, section_weight, most, ratio = setting
    if not item.pages:
        return set()
    scores = page_score(item.bm25, item.dense, item.section, dense_weight, section_weight)
    chosen = pages_to_read(scores, min(most, MAX_PAGES_PER_CALL), ratio)
    return {(item.key, item.pages[i]) for i in chosen}


def grid_scores(scored: list[Scored]) -> dict[Setting, np.ndarray]:
    """Evidence-F1 of every question under every setting."""
    return {
        setting: np.array(
            [qasper_evidence_f1(read_pages(s, setting), s.question.evidence_sets) for s in scored]
        )
        for setting in itertools.product(DENSE_WEIGHTS, SECTION_WEIGHTS, MAX_PAGES, RATIOS)
    }


def paper_folds(scored: list[Scored], folds: int) -> np.ndarray:
    """A fold number per question; papers are dealt to folds in a seeded random order."""
    papers = sorted({s.key for s in scored})
    order = np.random.default_rng(0).permutation(len(papers))
    fold_of = {papers[p]: i % folds for i, p in enumerate(order)}
    return np.array([fold_of[s.key] for s in scored])


def cross_validate(grid: dict[Setting, np.ndarray], fold: np.ndarray) -> dict[str, Any]:
    """Per fold: the setting best on the other folds and its score on this one."""
    rows, held = [], []
    for f in sorted(set(fold.tolist())):
        train, test = fold != f, fold == f
        best = max(grid, key=lambda s: (grid[s][train].mean(), -s[2]))
        held.append(grid[best][test])
        rows.append(
            {
                "fold": f,
                "questions": int(test.sum()),
                "dense_weight": best[0],
                "section_weight": best[1],
                "max_pages": best[2],
                "ratio": best[3],
                "train_f1": round(float(grid[best][train].mean()), 4),
                "held_out_f1": round(float(grid[best][test].mean()), 4),
            }
        )
    whole = max(grid, key=lambda s: (grid[s].mean(), -s[2]))
    return {
        "folds": rows,
        "cross_validated_f1": round(float(np.concatenate(held).mean()), 4),
        "best_on_all": {"setting": list(whole), "f1": round(float(grid[whole].mean()), 4)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, required=True, help="library with the papers")
    parser.add_argument("--data", type=Path, default=QASPER_FILE, help="QASPER JSON file")
    parser.add_argument("--folds", type=int, default=5, help="folds by paper (default 5)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    scored = score_questions(args.library, args.data, progress=True)
    result = cross_validate(grid_scores(scored), paper_folds(scored, args.folds))
    result["questions"] = len(scored)
    for row in result["folds"]:
        print(
            f"fold {row['fold']} ({row['questions']} questions): dense weight "
            f"{row['dense_weight']}, section weight {row['section_weight']}, at most "
            f"{row['max_pages']} pages, ratio {row['ratio']} — "
            f"train {row['train_f1']:.3f}, held out {row['held_out_f1']:.3f}"
        )
    print(f"cross-validated Evidence-F1: {result['cross_validated_f1']:.3f}")
    print(f"best on all questions (not a held-out figure): {result['best_on_all']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
