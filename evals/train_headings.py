"""Train the heading model from the authors' bookmarks of the development PDFs.

Every PDF with bookmarks is labelled data: a bookmark's title matched to the printed line(s) on
its page (or a page either side) marks those lines as headings, every other line as body. A
gradient-boosted classifier (scikit-learn's ``HistGradientBoostingClassifier``, fixed seed)
learns which lines are headings from ``ingest.structure.heading_features``; its trees are
written as plain JSON (``ingest/structure/models/heading_model.json``) that
``ingest.structure.heading_model`` evaluates with numpy, so ingestion needs neither
scikit-learn nor a pickle.

Each document weighs the same in training whatever its length, so a 400-page manual does not
teach its own layout to every other document. The decision threshold is no constant set by eye:
it is chosen on held-out families of the training data (:func:`fit_with_threshold`) and folded
into the model's baseline, so a score of one half is the decision point the rest of ingestion
reads. Generalisation is measured with folds by family (``evals.structure_recall --folds
family``): a fold's model, threshold included, never saw a document of the families it scores.

    python -m evals.train_headings --data ../shared/data            # write the shipped model
    python -m evals.train_headings --data ../shared/data --check    # trained on this data?
    python -m evals.train_headings --data ../shared/data --check --retrain  # ...and refit
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
from tqdm import tqdm

from evals.outlined import OutlinedDocument, outlined_documents
from ingest.structure.heading_features import FEATURES, feature_matrix
from ingest.structure.heading_model import MODEL_FILE, HeadingModel, scorable, scores_of
from ingest.structure.locate import title_tokens
from ingest.structure.numbering import clean_title
from ingest.structure.typography import NUMBER_ONLY, Line, document_lines

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
# A title printed over this many consecutive lines at most is matched as one heading.
MAX_TITLE_LINES = 3
# A single line whose words overlap a bookmark's this much (Jaccard) is that heading.
FUZZY_OVERLAP = 0.8
# Body lines kept per document for training (a seeded sample; weights make up for the rest):
# a 400-page manual's 20,000 body lines teach nothing 2,000 of them do not.
MAX_BODY_LINES = 2000
# Families are spread over this many folds: to choose the threshold inside the training data,
# and to measure generalisation (``evals.structure_recall --folds family``).
FAMILY_FOLDS = 5
# The decision thresholds tried; the one with the best F1 on held-out training families wins.
THRESHOLDS = tuple(round(0.05 * step, 2) for step in range(2, 19))
NUMBER_TOKEN = {
    "part",
    "item",
    "chapter",
    "section",
    "note",
    "appendix",
    "article",
    "exhibit",
    "annex",
    "schedule",
}


@dataclass
class LabelledDocument:
    """A document's lines, their features and their labels (1 heading, 0 body)."""

    name: str
    kind: str
    lines: list[Line]
    features: np.ndarray
    labels: np.ndarray
    family: str = ""


def page_texts(pdf: Path) -> list[tuple[int, dict[str, Any], float]]:
    """PyMuPDF text dictionaries of every page, as the parse step reads them."""
    with pymupdf.open(pdf) as doc:
        return [(page.number + 1, page.get_text("dict"), page.rect.height) for page in doc]


def labelled(document: OutlinedDocument) -> LabelledDocument:
    """Lines, features and bookmark labels of one reference document."""
    texts = page_texts(document.pdf)
    lines = document_lines(texts)
    features = feature_matrix(lines, len(texts))
    labels = label_lines(lines, document.entries)
    return LabelledDocument(
        document.name, document.kind, lines, features, labels, document.family or document.name
    )


def label_lines(lines: list[Line], entries: list[dict[str, Any]]) -> np.ndarray:
    """1 for the lines that print a bookmark's title, 0 for every other line."""
    labels = np.zeros(len(lines), dtype=np.int8)
    by_page: dict[int, list[int]] = {}
    for index, line in enumerate(lines):
        by_page.setdefault(line.page, []).append(index)
    tokens = [_key(title_tokens(clean_title(line.text))) for line in lines]
    for entry in entries:
        wanted = _key(title_tokens(clean_title(entry["title"])))
        if not wanted:
            continue
        for page in (entry["start_page"], entry["start_page"] + 1, entry["start_page"] - 1):
            found = _match(wanted, by_page.get(page, []), tokens, lines)
            if found:
                labels[found] = 1
                break
    return labels


def _key(tokens: list[str]) -> list[str]:
    """Title words without a leading numbering ("1.1", "iv", "a", "Item 7") so that a number
    printed apart from its title, or not at all, still matches."""
    words = list(tokens)
    while words and (words[0].isdigit() or len(words[0]) <= 2 or words[0] in NUMBER_TOKEN):
        if len(words) == 1:
            break
        words = words[1:]
    return words


def _may_hold(line: Line, position: int) -> bool:
    """A line may print part of a title: it has letters, or it is the title's number first."""
    return any(ch.isalpha() for ch in line.text) or (
        position == 1 and bool(NUMBER_ONLY.match(line.text))
    )


def _match(
    wanted: list[str], indices: list[int], tokens: list[list[str]], lines: list[Line]
) -> list[int]:
    """The first run of one to three consecutive lines that prints ``wanted``."""
    for start in range(len(indices)):
        joined: list[str] = []
        for length in range(1, MAX_TITLE_LINES + 1):
            if start + length > len(indices) or not _may_hold(
                lines[indices[start + length - 1]], length
            ):
                break
            joined = _key([*joined, *tokens[indices[start + length - 1]]])
            if joined == wanted:
                return indices[start : start + length]
            if len(joined) >= len(wanted):
                break
    for index in indices:
        if _may_hold(lines[index], 2) and _overlap(wanted, tokens[index]) >= FUZZY_OVERLAP:
            return [index]
    return []


def _overlap(a: list[str], b: list[str]) -> float:
    left, right = set(a), set(b)
    return len(left & right) / len(left | right) if left and right else 0.0


def line_weights(document: LabelledDocument) -> np.ndarray:
    """Training weights of one document's lines: the document weighs as much as any other,
    a heading as much as :data:`HEADING_WEIGHT` body lines, and unbookmarked lines in the
    style of its bookmarked headings nothing (they are unknown, not body)."""
    styles = [(line.font, round(line.size, 1), line.bold) for line in document.lines]
    total = Counter(styles)
    headings = Counter(style for style, label in zip(styles, document.labels, strict=True) if label)
    unknown = np.array(
        [
            not label and headings[style] >= HEADING_STYLE_SHARE * total[style]
            for style, label in zip(styles, document.labels, strict=True)
        ],
        dtype=bool,
    )
    weights = np.where(document.labels == 1, HEADING_WEIGHT, 1.0)
    weights[unknown] = 0.0
    return weights * (1000.0 / max(float(weights.sum()), 1.0))


def fit(documents: list[LabelledDocument], threshold: float = 0.5) -> HeadingModel:
    """A heading model trained on ``documents`` (fixed seed and parameters), its decision
    ``threshold`` folded into the baseline so that it scores one half there."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rows = [_training_rows(d) for d in documents]
    features = np.concatenate([d.features[r] for d, r in zip(documents, rows, strict=True)])
    labels = np.concatenate([d.labels[r] for d, r in zip(documents, rows, strict=True)])
    weights = np.concatenate([_row_weights(d, r) for d, r in zip(documents, rows, strict=True)])
    classifier = HistGradientBoostingClassifier(**PARAMETERS)
    classifier.fit(features, labels, sample_weight=weights)
    model = exported(classifier, training_digest(documents))
    model.baseline -= float(np.log(threshold / (1.0 - threshold)))
    model.training["threshold"] = threshold
    return model


def fit_with_threshold(documents: list[LabelledDocument]) -> HeadingModel:
    """A heading model whose threshold is chosen on families it was not fitted on: inner folds
    by family score the training documents out of fold, the threshold with the best F1 over
    their lines wins, and the model is then fitted on all of ``documents`` with it."""
    scores = out_of_fold_scores(documents)
    return fit(documents, best_threshold(documents, scores))


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
            truth = document.labels == 1
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
    body = rows[document.labels[rows] == 0]
    if len(body) <= MAX_BODY_LINES:
        return rows
    seed = int(hashlib.sha256(document.name.encode()).hexdigest()[:8], 16)
    drawn = np.random.default_rng(seed).choice(body, MAX_BODY_LINES, replace=False)
    return np.sort(np.concatenate([rows[document.labels[rows] == 1], drawn]))


def _row_weights(document: LabelledDocument, rows: np.ndarray) -> np.ndarray:
    """:func:`line_weights` of the rows trained on, the body lines drawn standing in for all."""
    weights = line_weights(document)
    mask = scorable(document.lines)
    body = int((mask & (document.labels == 0)).sum())
    drawn = weights[rows].copy()
    drawn[document.labels[rows] == 0] *= body / max(int((document.labels[rows] == 0).sum()), 1)
    return drawn


def exported(classifier: Any, digest: str) -> HeadingModel:
    """The fitted trees as plain arrays (what ``HeadingModel`` evaluates)."""
    trees = []
    for (predictor,) in classifier._predictors:
        nodes = predictor.nodes
        trees.append(
            {
                "feature": nodes["feature_idx"].astype(int).tolist(),
                "threshold": nodes["num_threshold"].astype(float).tolist(),
                "left": nodes["left"].astype(int).tolist(),
                "right": nodes["right"].astype(int).tolist(),
                "leaf": nodes["is_leaf"].astype(int).tolist(),
                "value": nodes["value"].astype(float).tolist(),
            }
        )
    return HeadingModel(
        features=list(FEATURES),
        baseline=float(np.ravel(classifier._baseline_prediction)[0]),
        trees=trees,
        training={"digest": digest, "parameters": PARAMETERS},
    )


def training_digest(documents: Iterable[LabelledDocument]) -> str:
    """A hash of the training data (features and labels, document by document) and the
    parameters: the shipped model records it, so a changed input shows."""
    settings = [
        list(FEATURES),
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
    shipped: HeadingModel, documents: list[LabelledDocument], where: str, retrain: bool
) -> int:
    """0 when ``shipped`` is what training on ``documents`` produces: the recorded hash of the
    training data and parameters matches and, with ``retrain``, refitting gives the same trees
    (minutes: every family fold is fitted again to choose the threshold)."""
    if shipped.training.get("digest") != training_digest(documents):
        print(f"{where}: NOT trained on this data (run python -m evals.train_headings)")
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
        return check(HeadingModel.load(Path(args.out)), documents, args.out, args.retrain)
    model = fit_with_threshold(documents)
    model.save(Path(args.out))
    positives = sum(int(d.labels.sum()) for d in documents)
    lines = sum(len(d.labels) for d in documents)
    families = len({d.family for d in documents})
    print(
        f"wrote {args.out}: {len(documents)} documents of {families} families, {lines} lines, "
        f"{positives} headings, threshold {model.training['threshold']} (chosen by family folds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
