"""Train the line labeller from the authors' bookmarks of the development PDFs.

Every PDF with bookmarks is labelled data: a bookmark's title matched to the printed line(s) on
its page (or a page either side) marks those lines as headings, and every other line takes the
label print conventions give it (``evals.line_labels``: running header, page number, contents
entry, table cell, caption, list item, title-page line, body). A gradient-boosted classifier
(scikit-learn's ``HistGradientBoostingClassifier``, fixed seed) learns every label from
``ingest.structure.features``; its trees are written as plain JSON
(``ingest/structure/models/line_labeller.json``) that ``ingest.structure.labeller`` evaluates
with numpy, so ingestion needs neither scikit-learn nor a pickle.

Each document weighs the same in training whatever its length, so a 400-page manual does not
teach its own layout to every other document. The heading decision threshold is no constant set
by eye: it is chosen on held-out families of the training data (:func:`fit_with_threshold`) and
folded into the heading label's baseline, so a heading probability of one half is the decision
point the rest of ingestion reads. Generalisation is measured with folds by family
(``evals.structure_recall --folds family``): a fold's labeller, threshold included, never saw a
document of the families it scores.

    python -m evals.train_labeller --data ../shared/data            # write the shipped model
    python -m evals.train_labeller --data ../shared/data --check    # trained on this data?
    python -m evals.train_labeller --data ../shared/data --check --retrain  # ...and refit
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
from tqdm import tqdm

from evals.line_labels import line_labels
from evals.outlined import OutlinedDocument, outlined_documents
from ingest.parse import page_text
from ingest.structure.features import FEATURES, feature_matrix
from ingest.structure.labeller import LABELS, MODEL_FILE, LineLabeller, scorable, scores_of
from ingest.structure.typography import Line, PageText, document_lines

LOG = logging.getLogger(__name__)
SEED = 0
PARAMETERS: dict[str, Any] = {
    "max_iter": 200,
    "learning_rate": 0.1,
    "max_leaf_nodes": 31,
    "min_samples_leaf": 20,
    "l2_regularization": 1.0,
    "early_stopping": False,
    "random_state": SEED,
}
# Headings are rarer than body lines: each heading line weighs this many body lines.
HEADING_WEIGHT = 5.0
# Bookmarks stop at some depth; an unbookmarked line set in the very style (font, size,
# weight) of the document's bookmarked headings, where at least this share of that style's
# lines are bookmarked, is probably a deeper heading: it is left out of training, not body.
HEADING_STYLE_SHARE = 0.3
# Body lines kept per document for training (a seeded sample; weights make up for the rest):
# a 400-page manual's 20,000 body lines teach nothing 2,000 of them do not.
MAX_BODY_LINES = 2000
# Families are spread over this many folds: to choose the threshold inside the training data,
# and to measure generalisation (``evals.structure_recall --folds family``).
FAMILY_FOLDS = 5
# The decision thresholds tried; the one with the best F1 on held-out training families wins.
THRESHOLDS = tuple(round(0.05 * step, 2) for step in range(2, 19))
HEADING = LABELS.index("heading")
# The log-odds of a label the training data never shows: it never wins.
ABSENT = -50.0


@dataclass
class LabelledDocument:
    """A document's lines, their features and their labels (indices into ``LABELS``)."""

    name: str
    kind: str
    lines: list[Line]
    features: np.ndarray
    labels: np.ndarray
    family: str = ""


def page_texts(pdf: Path) -> list[PageText]:
    """PyMuPDF text dictionaries of every page, as the parse step reads them."""
    with pymupdf.open(pdf) as doc:
        return [page_text(page) for page in doc]


def labelled(document: OutlinedDocument) -> LabelledDocument:
    """Lines, features and labels of one reference document."""
    texts = page_texts(document.pdf)
    lines = document_lines(texts)
    features = feature_matrix(lines, len(texts))
    labels = line_labels(lines, document.entries, len(texts))
    return LabelledDocument(
        document.name, document.kind, lines, features, labels, document.family or document.name
    )


def line_weights(document: LabelledDocument) -> np.ndarray:
    """Training weights of one document's lines: the document weighs as much as any other,
    a heading as much as :data:`HEADING_WEIGHT` body lines, and unbookmarked lines in the
    style of its bookmarked headings nothing (they are unknown, not body)."""
    styles = [(line.font, round(line.size, 1), line.bold) for line in document.lines]
    total = Counter(styles)
    heading = document.labels == HEADING
    headings = Counter(style for style, taken in zip(styles, heading, strict=True) if taken)
    unknown = np.array(
        [
            not taken and headings[style] >= HEADING_STYLE_SHARE * total[style]
            for style, taken in zip(styles, heading, strict=True)
        ],
        dtype=bool,
    )
    weights = np.where(heading, HEADING_WEIGHT, 1.0)
    weights[unknown] = 0.0
    return weights * (1000.0 / max(float(weights.sum()), 1.0))


def fit(documents: list[LabelledDocument], threshold: float = 0.5) -> LineLabeller:
    """A labeller trained on ``documents`` (fixed seed and parameters), its heading decision
    ``threshold`` folded into the heading label's baseline so that it scores one half there."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rows = [_training_rows(d) for d in documents]
    features = np.concatenate([d.features[r] for d, r in zip(documents, rows, strict=True)])
    labels = np.concatenate([d.labels[r] for d, r in zip(documents, rows, strict=True)])
    weights = np.concatenate([_row_weights(d, r) for d, r in zip(documents, rows, strict=True)])
    classifier = HistGradientBoostingClassifier(**PARAMETERS)
    classifier.fit(features, labels, sample_weight=weights)
    model = exported(classifier, training_digest(documents))
    model.baseline[HEADING] -= float(np.log(threshold / (1.0 - threshold)))
    model.training["threshold"] = threshold
    return model


def fit_with_threshold(
    documents: list[LabelledDocument], cache: Path | None = None
) -> LineLabeller:
    """A labeller whose heading threshold is chosen on families it was not fitted on: inner folds
    by family score the training documents out of fold, the threshold with the best F1 over
    their lines wins, and the model is then fitted on all of ``documents`` with it.

    With ``cache`` (a folder), a labeller fitted before on the same data by the same training
    code (:func:`fit_key`) is read back instead: one fit takes minutes, and a change to how trees
    are built from the labels leaves every fold's labeller as it was."""
    path = cache / f"{fit_key(documents)}.json" if cache is not None else None
    if path is not None and path.exists():
        try:
            return LineLabeller.load(path)
        except (ValueError, OSError) as exc:  # unreadable: fitted again and written over
            LOG.warning("refitting %s: %s", path.name, exc)
    scores = out_of_fold_scores(documents)
    model = fit(documents, best_threshold(documents, scores))
    if path is not None:
        model.save(path)
    return model


def fit_key(documents: Iterable[LabelledDocument]) -> str:
    """What a fit depends on: the training data and parameters (:func:`training_digest`) and
    this module's code (the row weights and samples, the threshold search)."""
    code = Path(__file__).read_bytes()
    return hashlib.sha256(training_digest(documents).encode() + code).hexdigest()[:32]


def out_of_fold_scores(documents: list[LabelledDocument]) -> dict[str, np.ndarray]:
    """Each document's P(heading) from a model fitted without its family (threshold one half)."""
    scores: dict[str, np.ndarray] = {}
    for held_out in family_folds(documents):
        model = fit([d for d in documents if d.family not in held_out])
        for document in documents:
            if document.family in held_out:
                scores[document.name] = scores_of(
                    model, document.features, scorable(document.lines)
                )
    return scores


def best_threshold(documents: list[LabelledDocument], scores: dict[str, np.ndarray]) -> float:
    """The threshold of :data:`THRESHOLDS` with the best F1 over the documents' heading lines,
    every document weighing the same (ties go to the lower threshold)."""

    def f1(threshold: float) -> float:
        found = wrong = missed = 0.0
        for document in documents:
            taken = scores[document.name] >= threshold
            truth = document.labels == HEADING
            share = 1.0 / max(int(truth.sum()) + int(taken.sum()), 1)
            found += share * float((taken & truth).sum())
            wrong += share * float((taken & ~truth).sum())
            missed += share * float((~taken & truth).sum())
        return 2 * found / max(2 * found + wrong + missed, 1e-9)

    return max(THRESHOLDS, key=lambda threshold: (f1(threshold), -threshold))


def family_folds(documents: Sequence[LabelledDocument]) -> list[set[str]]:
    """The families spread over :data:`FAMILY_FOLDS` folds of about equal line counts (the
    largest family first into the lightest fold; ties by name): the same folds every run."""
    sizes: dict[str, int] = defaultdict(int)
    for document in documents:
        sizes[document.family] += len(document.lines)
    folds: list[set[str]] = [set() for _ in range(min(FAMILY_FOLDS, len(sizes)))]
    loads = [0] * len(folds)
    for family in sorted(sizes, key=lambda name: (-sizes[name], name)):
        lightest = loads.index(min(loads))
        folds[lightest].add(family)
        loads[lightest] += sizes[family]
    return folds


def _training_rows(document: LabelledDocument) -> np.ndarray:
    """The scorable lines trained on: every heading, and at most :data:`MAX_BODY_LINES` others
    drawn with a seed of the document's own (the same rows every run)."""
    rows = np.flatnonzero(scorable(document.lines))
    body = rows[document.labels[rows] != HEADING]
    if len(body) <= MAX_BODY_LINES:
        return rows
    seed = int(hashlib.sha256(document.name.encode()).hexdigest()[:8], 16)
    drawn = np.random.default_rng(seed).choice(body, MAX_BODY_LINES, replace=False)
    return np.sort(np.concatenate([rows[document.labels[rows] == HEADING], drawn]))


def _row_weights(document: LabelledDocument, rows: np.ndarray) -> np.ndarray:
    """:func:`line_weights` of the rows trained on, the body lines drawn standing in for all."""
    weights = line_weights(document)
    mask = scorable(document.lines)
    others = document.labels[rows] != HEADING
    body = int((mask & (document.labels != HEADING)).sum())
    drawn = weights[rows].copy()
    drawn[others] *= body / max(int(others.sum()), 1)
    return drawn


def exported(classifier: Any, digest: str) -> LineLabeller:
    """The fitted trees as plain arrays, one list per label of ``LABELS`` (what
    ``LineLabeller`` evaluates). A label absent from the training data never wins (a baseline
    of :data:`ABSENT`, no trees); with two labels present scikit-learn fits one tree per round,
    the log-odds of the second, which is the softmax of the first at zero."""
    present = [int(label) for label in classifier.classes_]
    baseline = np.ravel(classifier._baseline_prediction).tolist()
    rounds = [[_tree(tree) for tree in predictors] for predictors in classifier._predictors]
    trees: list[list[dict[str, list[Any]]]] = [[] for _ in LABELS]
    baselines = [ABSENT] * len(LABELS)
    if len(present) == 2:
        baselines[present[0]] = 0.0
        present = present[1:]
    for position, label in enumerate(present):
        baselines[label] = float(baseline[position])
        trees[label] = [round_trees[position] for round_trees in rounds]
    return LineLabeller(
        features=list(FEATURES),
        baseline=baselines,
        trees=trees,
        training={"digest": digest, "parameters": PARAMETERS},
    )


def _tree(predictor: Any) -> dict[str, list[Any]]:
    nodes = predictor.nodes
    return {
        "feature": nodes["feature_idx"].astype(int).tolist(),
        "threshold": nodes["num_threshold"].astype(float).tolist(),
        "left": nodes["left"].astype(int).tolist(),
        "right": nodes["right"].astype(int).tolist(),
        "leaf": nodes["is_leaf"].astype(int).tolist(),
        "value": nodes["value"].astype(float).tolist(),
    }


def training_digest(documents: Iterable[LabelledDocument]) -> str:
    """A hash of the training data (features and labels, document by document) and the
    parameters: the shipped model records it, so a changed input shows."""
    settings = [
        list(FEATURES),
        list(LABELS),
        PARAMETERS,
        HEADING_WEIGHT,
        HEADING_STYLE_SHARE,
        MAX_BODY_LINES,
        FAMILY_FOLDS,
        THRESHOLDS,
    ]
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for document in documents:
        digest.update(document.name.encode())
        digest.update(document.family.encode())
        digest.update(np.ascontiguousarray(document.features, dtype=np.float32).tobytes())
        digest.update(np.ascontiguousarray(document.labels, dtype=np.int8).tobytes())
    return digest.hexdigest()


def load_training(data_dir: Path, progress: bool = True) -> list[LabelledDocument]:
    """Every reference document, labelled (a few seconds per hundred pages)."""
    documents = outlined_documents(data_dir)
    bar = tqdm(documents, unit="doc", desc="features", disable=not progress, file=sys.stderr)
    return [labelled(document) for document in bar]


def check(
    shipped: LineLabeller, documents: list[LabelledDocument], where: str, retrain: bool
) -> int:
    """0 when ``shipped`` is what training on ``documents`` produces: the recorded hash of the
    training data and parameters matches and, with ``retrain``, refitting gives the same trees
    (minutes: every family fold is fitted again to choose the threshold)."""
    if shipped.training.get("digest") != training_digest(documents):
        print(f"{where}: NOT trained on this data (run python -m evals.train_labeller)")
        return 1
    if not retrain:
        print(f"{where}: trained on this data and these parameters (recorded hash)")
        return 0
    retrained = fit_with_threshold(documents)
    if (retrained.baseline, retrained.trees) != (shipped.baseline, shipped.trees):
        print(f"{where}: trained on this data, but retraining gives other trees")
        return 1
    print(f"{where}: trained on this data; retraining gives the same trees")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="development data folder")
    parser.add_argument("--out", default=str(MODEL_FILE), help="where to write the model")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 unless the model at --out was trained on this data and "
        "these parameters (its recorded hash)",
    )
    parser.add_argument(
        "--retrain",
        action="store_true",
        help="with --check: also refit and compare the trees (minutes)",
    )
    args = parser.parse_args(argv)
    try:
        documents = load_training(Path(args.data))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        return check(LineLabeller.load(Path(args.out)), documents, args.out, args.retrain)
    model = fit_with_threshold(documents)
    model.save(Path(args.out))
    positives = sum(int((d.labels == HEADING).sum()) for d in documents)
    lines = sum(len(d.labels) for d in documents)
    families = len({d.family for d in documents})
    print(
        f"wrote {args.out}: {len(documents)} documents of {families} families, {lines} lines, "
        f"{positives} headings, threshold {model.training['threshold']} (chosen by family folds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
