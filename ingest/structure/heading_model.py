"""The heading model: which lines of a document are section headings, learned from bookmarks.

The model is a gradient-boosted ensemble of decision trees trained by ``evals.train_headings``
on the development PDFs' bookmarks and shipped as plain JSON next to this module. It is
evaluated here with numpy (no scikit-learn, no pickle), so it loads offline in milliseconds and
reads the same on every installation.

Heading candidates are the lines the model scores at :data:`HEADING_THRESHOLD` or more and the
lines the typographic rule takes (``ingest.structure.typography.looks_like_heading``), each
with the model's score: measured leave-one-document-out, the model alone finds fewer of the
authors' sections than the rule, and the two together slightly more than the rule alone
(README, Benchmarks).
``ingest.structure.headings`` then applies the hard exclusions and gives the levels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ingest.structure.heading_features import FEATURES, could_be_heading, feature_matrix
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

MODEL_FILE = Path(__file__).parent / "models" / "heading_model.json"
NUMBER_GAP_LINES = 1.5
# Two heading lines this close (line heights) in one style, the second unnumbered, are one
# title wrapped over lines.
WRAP_GAP_LINES = 0.8


@dataclass
class HeadingModel:
    """Boosted trees over :data:`ingest.structure.heading_features.FEATURES` (a log-odds sum)."""

    features: list[str]
    baseline: float
    trees: list[dict[str, list[Any]]]
    training: dict[str, Any] = field(default_factory=dict)
    _arrays_cache: list[dict[str, np.ndarray]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def load(cls, path: Path) -> HeadingModel:
        data = json.loads(path.read_text())
        model = cls(data["features"], data["baseline"], data["trees"], data.get("training", {}))
        if model.features != list(FEATURES):
            raise ValueError(
                f"{path} was trained on other features than this version computes: "
                "run python -m evals.train_headings"
            )
        return model

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "features": self.features,
            "baseline": self.baseline,
            "training": self.training,
            "trees": self.trees,
        }
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """P(heading) for each row of features."""
        raw = np.full(len(rows), self.baseline, dtype=np.float64)
        for tree in self._arrays():
            raw += _tree_values(tree, rows)
        return 1.0 / (1.0 + np.exp(-raw))

    def _arrays(self) -> list[dict[str, np.ndarray]]:
        """The trees as numpy arrays, converted once."""
        if self._arrays_cache is None:
            self._arrays_cache = [
                {key: np.asarray(values) for key, values in tree.items()} for tree in self.trees
            ]
        return self._arrays_cache


def _tree_values(tree: dict[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
    """Walk every row down one tree at once; each step moves the rows not yet at a leaf."""
    node = np.zeros(len(rows), dtype=np.int64)
    positions = np.arange(len(rows))
    while True:
        inner = tree["leaf"][node] == 0
        if not inner.any():
            return tree["value"][node]
        at = node[inner]
        goes_left = rows[positions[inner], tree["feature"][at]] <= tree["threshold"][at]
        node[inner] = np.where(goes_left, tree["left"][at], tree["right"][at])


@lru_cache(maxsize=1)
def shipped_model() -> HeadingModel:
    """The model trained on the development data, as shipped with the package."""
    return HeadingModel.load(MODEL_FILE)


def heading_candidates(
    pages: list[PageText], model: HeadingModel | None = None
) -> list[HeadingCandidate]:
    """Lines the model (or the typographic rule) takes for headings, in reading order, each with
    the model's probability as ``score``."""
    lines = document_lines(pages)
    return candidates_from_scores(lines, line_scores(model or shipped_model(), lines, len(pages)))


def line_scores(model: HeadingModel, lines: list[Line], total_pages: int) -> np.ndarray:
    """P(heading) of every line; lines that cannot be headings score 0 unscored."""
    return scores_of(model, feature_matrix(lines, total_pages), scorable(lines))


def scorable(lines: list[Line]) -> np.ndarray:
    """Which lines the model scores (:func:`ingest.structure.heading_features.could_be_heading`)."""
    return np.array([could_be_heading(line) for line in lines], dtype=bool)


def scores_of(model: HeadingModel, features: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """P(heading) of the rows ``mask`` selects, 0 for the others."""
    scores = np.zeros(len(features), dtype=np.float64)
    if mask.any():
        scores[mask] = model.probabilities(features[mask])
    return scores


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
