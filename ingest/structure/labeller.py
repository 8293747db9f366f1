"""The line labeller: what each line of a document is, learned from bookmarked PDFs.

Every line the labeller scores gets exactly one of :data:`LABELS`: heading, body text, running
header or footer, page number, contents entry, table cell, caption, list item or title-page
line. The model is a gradient-boosted ensemble of decision trees, one tree per label at each
round, trained by ``evals.train_labeller`` (headings from the authors' bookmarks, the other
labels from ``evals.line_labels``) and shipped as plain JSON next to this module. It is
evaluated here with numpy and one compiled loop (numba; no scikit-learn, no pickle), so it
loads offline in milliseconds and reads the same on every installation.

A line is a heading when its heading probability reaches :data:`HEADING_THRESHOLD` (the
decision point chosen by family folds, folded into the model); otherwise its label is the
likeliest of the others. Heading candidates are the lines labelled headings and the lines the
typographic rule takes (``ingest.structure.typography.looks_like_heading``), each with its
heading probability as score. ``ingest.structure.headings`` then applies the hard exclusions
and gives the levels.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numba
import numpy as np

from ingest.structure.features import FEATURES, could_be_heading, feature_matrix
from ingest.structure.headings import HEADING_THRESHOLD
from ingest.structure.numbering import clean_title, parse_numbering
from ingest.structure.typography import (
    NUMBER_ONLY,
    Line,
    PageText,
    body_line_height,
    body_size,
    document_lines,
    looks_like_heading,
    merge_lines,
)
from store.types import HeadingCandidate

LABELS = (
    "heading",
    "body",
    "running",
    "page_number",
    "contents_entry",
    "table_cell",
    "caption",
    "list_item",
    "title_page",
)
MODEL_FILE = Path(__file__).parent / "models" / "line_labeller.json"
NUMBER_GAP_LINES = 1.5
# Two heading lines this close (line heights) in one style, the second unnumbered, are one
# title wrapped over lines.
WRAP_GAP_LINES = 0.8
Tree = dict[str, list[Any]]


@dataclass
class LineLabeller:
    """Boosted trees over :data:`ingest.structure.features.FEATURES`: for each label a
    log-odds baseline and one tree per round (``trees[label]``), a softmax over their sums."""

    features: list[str]
    baseline: list[float]
    trees: list[list[Tree]]
    training: dict[str, Any] = field(default_factory=dict)
    _forest_cache: _Forest | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def load(cls, path: Path) -> LineLabeller:
        data = json.loads(path.read_text())
        model = cls(data["features"], data["baseline"], data["trees"], data.get("training", {}))
        if model.features != list(FEATURES) or data.get("labels") != list(LABELS):
            raise ValueError(
                f"{path} was trained on other features or labels than this version uses: "
                "run python -m evals.train_labeller"
            )
        return model

    def save(self, path: Path) -> None:
        """Write the labeller whole or not at all (a temporary file renamed over ``path``): a
        run killed while writing leaves the previous file, never half of one."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "features": self.features,
            "labels": list(LABELS),
            "baseline": self.baseline,
            "training": self.training,
            "trees": self.trees,
        }
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        os.replace(partial, path)

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """P(label) for each row of features: one column per label of :data:`LABELS`."""
        raw = self._forest().raw(rows) + np.asarray(self.baseline)
        raw -= raw.max(axis=1, keepdims=True)
        odds = np.exp(raw)
        return odds / odds.sum(axis=1, keepdims=True)

    def _forest(self) -> _Forest:
        """The trees as one set of numpy arrays, built once."""
        if self._forest_cache is None:
            self._forest_cache = _Forest.of(self.trees)
        return self._forest_cache


@dataclass(frozen=True)
class _Forest:
    """Every tree's nodes in shared arrays, walked by one compiled loop. ``nodes`` holds a
    node's feature (-1 for a leaf) and its children's positions, side by side, so a step down
    a tree reads one place in memory."""

    nodes: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    label_of_tree: np.ndarray
    labels: int

    @classmethod
    def of(cls, trees: list[list[Tree]]) -> _Forest:
        parts: dict[str, list[np.ndarray]] = {key: [] for key in ("nodes", "t", "v")}
        roots, owners, offset = [], [], 0
        for label, label_trees in enumerate(trees):
            for tree in label_trees:
                roots.append(offset)
                owners.append(label)
                leaf = np.asarray(tree["leaf"], dtype=bool)
                feature = np.where(leaf, -1, np.asarray(tree["feature"], dtype=np.int64))
                left = np.asarray(tree["left"], dtype=np.int64) + offset
                right = np.asarray(tree["right"], dtype=np.int64) + offset
                parts["nodes"].append(np.stack([feature, left, right], axis=1))
                parts["t"].append(np.asarray(tree["threshold"], dtype=np.float64))
                parts["v"].append(np.asarray(tree["value"], dtype=np.float64))
                offset += len(leaf)
        return cls(
            nodes=np.ascontiguousarray(np.concatenate(parts["nodes"])),
            threshold=np.concatenate(parts["t"]),
            value=np.concatenate(parts["v"]),
            roots=np.asarray(roots, dtype=np.int64),
            label_of_tree=np.asarray(owners, dtype=np.int64),
            labels=len(trees),
        )

    def raw(self, rows: np.ndarray) -> np.ndarray:
        """Each label's summed leaf values for each row (before the baseline)."""
        return _summed_leaves(
            np.ascontiguousarray(rows, dtype=np.float64),
            self.nodes,
            self.threshold,
            self.value,
            self.roots,
            self.label_of_tree,
            self.labels,
        )


@numba.njit(cache=True, nogil=True)
def _summed_leaves(
    rows: np.ndarray,
    nodes: np.ndarray,
    threshold: np.ndarray,
    value: np.ndarray,
    roots: np.ndarray,
    label_of_tree: np.ndarray,
    labels: int,
) -> np.ndarray:  # pragma: no cover - compiled; its results are tested against scikit-learn's
    """Each row's leaf values summed per label, compiled: nine labels' trees walked in numpy
    would cost ingestion more than the parse itself. Tree by tree, so that one tree's nodes
    stay in the cache while every row goes down it (twice as fast as row by row)."""
    out = np.zeros((rows.shape[0], labels), dtype=np.float64)
    for tree in range(roots.shape[0]):
        label = label_of_tree[tree]
        for row in range(rows.shape[0]):
            node = roots[tree]
            feature = nodes[node, 0]
            while feature >= 0:
                side = 1 if rows[row, feature] <= threshold[node] else 2
                node = nodes[node, side]
                feature = nodes[node, 0]
            out[row, label] += value[node]
    return out


@lru_cache(maxsize=1)
def shipped_labeller() -> LineLabeller:
    """The labeller trained on the development data, as shipped with the package."""
    return LineLabeller.load(MODEL_FILE)


def heading_candidates(
    pages: list[PageText], model: LineLabeller | None = None
) -> list[HeadingCandidate]:
    """Lines labelled headings (or taken by the typographic rule), in reading order, each with
    its heading probability as ``score``."""
    lines = document_lines(pages)
    scores = line_scores(model or shipped_labeller(), lines, len(pages))
    return candidates_from_scores(lines, scores)


def line_scores(model: LineLabeller, lines: list[Line], total_pages: int) -> np.ndarray:
    """P(heading) of every line; lines that cannot be headings score 0 unscored."""
    return scores_of(model, feature_matrix(lines, total_pages), scorable(lines))


def scorable(lines: list[Line]) -> np.ndarray:
    """Which lines the model scores (:func:`ingest.structure.features.could_be_heading`)."""
    return np.array([could_be_heading(line) for line in lines], dtype=bool)


def scores_of(model: LineLabeller, features: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """P(heading) of the rows ``mask`` selects, 0 for the others."""
    scores = np.zeros(len(features), dtype=np.float64)
    if mask.any():
        scores[mask] = model.probabilities(features[mask])[:, LABELS.index("heading")]
    return scores


def line_labels(model: LineLabeller, lines: list[Line], total_pages: int) -> list[str]:
    """One label of :data:`LABELS` per line: heading where its probability reaches
    :data:`HEADING_THRESHOLD` (never for a line that cannot be a heading), otherwise the
    likeliest other label."""
    if not lines:
        return []
    probabilities = model.probabilities(feature_matrix(lines, total_pages))
    heading = LABELS.index("heading")
    headings = (probabilities[:, heading] >= HEADING_THRESHOLD) & scorable(lines)
    probabilities[:, heading] = -1.0
    others = probabilities.argmax(axis=1)
    chosen = np.where(headings, heading, others)
    return [LABELS[label] for label in chosen.tolist()]


def rule_candidates(lines: list[Line]) -> list[HeadingCandidate]:
    """The typographic rule's candidates alone (every line scored 0): the model's ablation."""
    return candidates_from_scores(lines, np.zeros(len(lines)))


def candidates_from_scores(lines: list[Line], scores: np.ndarray) -> list[HeadingCandidate]:
    """Heading candidates from scored lines: a number printed apart and a title wrapped over
    lines are joined to the heading they belong to."""
    body = body_size(lines)
    height = body_line_height(lines, body)
    kept: list[tuple[Line, float]] = []
    for line, score in zip(lines, scores.tolist(), strict=True):
        heading = score >= HEADING_THRESHOLD
        if kept and heading and _continues(kept[-1], line, height):
            previous, previous_score = kept.pop()
            line, score = merge_lines([previous, line]), max(previous_score, score)
        if heading or looks_like_heading(line, body):
            kept.append((line, score))
    return [
        HeadingCandidate(
            page=line.page,
            text=line.text,
            size=round(line.size, 2),
            bold=line.bold,
            y_frac=round(line.y_frac, 3),
            score=round(score, 4),
        )
        for line, score in kept
    ]


def _continues(previous: tuple[Line, float], line: Line, height: float) -> bool:
    """Whether ``line`` finishes the heading kept just before it on the same page."""
    first, score = previous
    if first.page != line.page:
        return False
    gap = line.box[1] - first.box[3]
    if NUMBER_ONLY.match(first.text.strip()):  # kept by the model or the rule alike
        beside = abs(line.box[1] - first.box[1]) < height
        return beside or -height < gap < NUMBER_GAP_LINES * height
    if score < HEADING_THRESHOLD:
        return False
    own_number = parse_numbering(clean_title(line.text)) is not None
    same_look = abs(first.size - line.size) < 0.3 and first.bold == line.bold
    return same_look and not own_number and -height < gap < WRAP_GAP_LINES * height
