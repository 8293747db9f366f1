"""The heading model: line features, bookmark labels, exported trees and candidate lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest

from evals.train_headings import (
    MAX_BODY_LINES,
    LabelledDocument,
    _training_rows,
    best_threshold,
    exported,
    family_folds,
    fit,
    label_lines,
    line_weights,
    page_texts,
    training_digest,
)
from ingest.structure.heading_features import FEATURES, could_be_heading, feature_matrix
from ingest.structure.heading_model import HeadingModel, candidates_from_scores, shipped_model
from ingest.structure.typography import Line, document_lines

HEADING_FONT, BODY_FONT = "hebo", "helv"  # PyMuPDF's built-in Helvetica Bold and Helvetica
BODY = "The quick brown fox jumps over the lazy dog while the text runs on and on."


def _pdf(path: Path, pages: list[list[tuple[str, float, str]]]) -> Path:
    """A PDF whose pages hold (text, size, font) lines from the top, one under another."""
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page()
        y = 72.0
        for text, size, font in lines:
            page.insert_text((72, y), text, fontsize=size, fontname=font)
            y += size * 1.6
        page.insert_text((72, 800), "Annual Report of Things", fontsize=8, fontname=BODY_FONT)
    doc.save(path)
    return path


def _body(count: int) -> list[tuple[str, float, str]]:
    return [(BODY, 10, BODY_FONT)] * count


@pytest.fixture
def sample(tmp_path: Path) -> tuple[list[Line], np.ndarray]:
    pdf = _pdf(
        tmp_path / "sample.pdf",
        [
            [("1 Introduction", 16, HEADING_FONT), *_body(12)],
            [("2.1", 12, HEADING_FONT), ("Methods of Study", 12, HEADING_FONT), *_body(12)],
        ],
    )
    lines = document_lines(page_texts(pdf))
    return lines, feature_matrix(lines, 2)


def _row(lines: list[Line], features: np.ndarray, text: str) -> dict[str, float]:
    index = next(i for i, line in enumerate(lines) if line.text == text)
    return dict(zip(FEATURES, features[index].tolist(), strict=True))


def test_features_are_relative_to_the_body_text(sample: tuple[list[Line], np.ndarray]) -> None:
    lines, features = sample
    assert features.shape == (len(lines), len(FEATURES))
    heading = _row(lines, features, "1 Introduction")
    body = next(_row(lines, features, line.text) for line in lines if line.text == BODY)
    assert heading["size_ratio"] == pytest.approx(1.6) and body["size_ratio"] == 1.0
    assert heading["bold"] == 1.0 and body["bold"] == 0.0
    assert heading["typographic_rule"] == 1.0 and body["typographic_rule"] == 0.0
    assert heading["scheme"] == 8.0 and heading["numbering_depth"] == 1.0  # arabic
    assert heading["first_on_page"] == 1.0 and body["body_font"] == 1.0


def test_a_font_used_only_for_headings_is_rare(sample: tuple[list[Line], np.ndarray]) -> None:
    """Small capitals or a bold face kept for headings carry a small share of the text, even
    where the headings are set at the body's size."""
    lines, features = sample
    heading = _row(lines, features, "1 Introduction")["font_char_share"]
    body = next(_row(lines, features, line.text) for line in lines if line.text == BODY)
    assert heading < 0.1 < 0.8 < body["font_char_share"]


def test_a_footer_on_every_page_is_running_text(sample: tuple[list[Line], np.ndarray]) -> None:
    lines, features = sample
    assert _row(lines, features, "Annual Report of Things")["running_share"] == 1.0
    assert _row(lines, features, "1 Introduction")["running_share"] == 0.5


def test_only_sentences_and_letterless_lines_escape_scoring() -> None:
    def line(text: str) -> Line:
        return Line(page=1, text=text, size=10, bold=False, y_frac=0.1, block_lines=1, chars=9)

    assert could_be_heading(line("2.1")) and could_be_heading(line("Chapter 3"))
    assert could_be_heading(line("Methods of Study"))
    assert not could_be_heading(line("13,224")) and not could_be_heading(line("$"))
    assert not could_be_heading(line(" ".join(["word"] * 31)))


def test_bookmarks_label_their_printed_lines(sample: tuple[list[Line], np.ndarray]) -> None:
    lines, _ = sample
    entries = [
        {"level": 1, "title": "1 Introduction", "start_page": 1},
        # Printed one page later than the bookmark says, with its number on a line of its own.
        {"level": 2, "title": "2.1 Methods of Study", "start_page": 1},
    ]
    labels = label_lines(lines, entries)
    positive = [line.text for line, label in zip(lines, labels, strict=True) if label]
    assert positive == ["1 Introduction", "2.1", "Methods of Study"]


def test_figures_never_complete_a_title(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "t.pdf", [[("$", 10, BODY_FONT), ("Revenue", 12, HEADING_FONT)]])
    lines = document_lines(page_texts(pdf))
    labels = label_lines(lines, [{"level": 1, "title": "Revenue", "start_page": 1}])
    assert [line.text for line, label in zip(lines, labels, strict=True) if label] == ["Revenue"]


def _labelled(name: str, rows: int, seed: int, family: str = "") -> LabelledDocument:
    generator = np.random.default_rng(seed)
    features = generator.normal(size=(rows, len(FEATURES))).astype(np.float32)
    labels = (features[:, 0] + 0.3 * features[:, 2] > 1.0).astype(np.int8)
    lines = [
        Line(
            page=1,
            text=f"line {i}",
            size=10 + float(labels[i]),
            bold=bool(labels[i]),
            y_frac=0.5,
            block_lines=1,
            chars=6,
        )
        for i in range(rows)
    ]
    return LabelledDocument(name, "report", lines, features, labels, family or name)


def test_exported_trees_give_scikit_learns_probabilities() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    document = _labelled("a", 600, 1)
    classifier = HistGradientBoostingClassifier(max_iter=20, random_state=0)
    classifier.fit(document.features, document.labels)
    model = exported(classifier, "digest")
    expected = classifier.predict_proba(document.features)[:, 1]
    assert np.allclose(model.probabilities(document.features), expected, atol=1e-9)


def test_training_is_reproducible_and_the_digest_names_its_data() -> None:
    documents = [_labelled("a", 400, 1), _labelled("b", 300, 2)]
    first, second = fit(documents), fit(documents)
    assert first.trees == second.trees and first.baseline == second.baseline
    assert first.training["digest"] == training_digest(documents)
    assert training_digest(documents[:1]) != training_digest(documents)


def test_folds_keep_each_family_whole_and_balance_lines() -> None:
    documents = [
        _labelled(f"{family}{index}", 100 * (index + 1), index, family)
        for family in "abcdefg"
        for index in range(2)
    ]
    folds = family_folds(documents)
    assert len(folds) == 5 and set().union(*folds) == set("abcdefg")
    assert sum(len(fold) for fold in folds) == 7  # each family in exactly one fold
    assert family_folds(list(reversed(documents))) == folds  # the same folds every run


def test_the_threshold_folds_into_the_baseline() -> None:
    documents = [_labelled("a", 400, 1), _labelled("b", 300, 2)]
    plain, strict = fit(documents), fit(documents, threshold=0.8)
    rows = documents[0].features
    # What scored 0.8 under the plain model scores one half under the strict one.
    logit = np.log(plain.probabilities(rows) / (1 - plain.probabilities(rows)))
    shifted = 1 / (1 + np.exp(-(logit - np.log(0.8 / 0.2))))
    assert np.allclose(strict.probabilities(rows), shifted)
    assert strict.training["threshold"] == 0.8 and plain.training["threshold"] == 0.5


def test_the_best_threshold_is_the_one_with_the_best_f1() -> None:
    document = _labelled("a", 10, 1)
    document.labels[:] = [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    scores = np.array([0.9, 0.8, 0.65, 0.6, 0.3, 0.2, 0.1, 0.1, 0.1, 0.1])
    assert best_threshold([document], {"a": scores}) == 0.65  # every heading, no body line
    # A body line now outscores a heading: taking it with all three (F1 6/7) beats leaving a
    # heading out (F1 4/5), and of the thresholds that do so the lowest wins.
    scores[3] = 0.7
    assert best_threshold([document], {"a": scores}) == 0.35


def test_long_documents_train_on_a_seeded_sample_of_their_body_lines() -> None:
    document = _labelled("long", MAX_BODY_LINES * 2, 4)
    rows = _training_rows(document)
    headings = int(document.labels.sum())
    assert len(rows) == MAX_BODY_LINES + headings
    assert np.array_equal(rows, _training_rows(document))  # the same rows every run


def test_each_document_weighs_the_same(tmp_path: Path) -> None:
    small, large = _labelled("a", 100, 1), _labelled("b", 1000, 2)
    assert line_weights(small).sum() == pytest.approx(line_weights(large).sum())


def test_a_saved_model_loads_and_refuses_other_features(tmp_path: Path) -> None:
    model = fit([_labelled("a", 300, 1)])
    model.save(tmp_path / "model.json")
    loaded = HeadingModel.load(tmp_path / "model.json")
    rows = _labelled("c", 50, 3).features
    assert np.array_equal(loaded.probabilities(rows), model.probabilities(rows))
    data: dict[str, Any] = json.loads((tmp_path / "model.json").read_text())
    data["features"] = data["features"][:-1]
    (tmp_path / "old.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"evals\.train_headings"):
        HeadingModel.load(tmp_path / "old.json")


def test_the_shipped_model_loads_offline() -> None:
    model = shipped_model()
    assert model.features == list(FEATURES) and len(model.trees) > 0
    assert model.training["digest"]


def test_a_number_printed_apart_and_a_wrapped_title_become_one_heading(tmp_path: Path) -> None:
    pdf = _pdf(
        tmp_path / "wrapped.pdf",
        [
            [
                ("2.1", 12, HEADING_FONT),
                ("Methods", 12, HEADING_FONT),
                *_body(2),
                ("The Best Interest Obligation and Its", 12, HEADING_FONT),
                ("Scope Under the Rule", 12, HEADING_FONT),
                *_body(2),
            ]
        ],
    )
    lines = document_lines(page_texts(pdf))
    scores = np.array([0.9 if line.size == 12 else 0.01 for line in lines])
    texts = [c["text"] for c in candidates_from_scores(lines, scores)]
    assert "2.1 Methods" in texts
    assert "The Best Interest Obligation and Its Scope Under the Rule" in texts
