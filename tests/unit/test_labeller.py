"""The line labeller: line features, exported trees, training and candidate lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest

from evals.train_labeller import (
    HEADING,
    MAX_BODY_LINES,
    PARAMETERS,
    LabelledDocument,
    _training_rows,
    best_threshold,
    exported,
    family_folds,
    fit,
    fit_with_threshold,
    line_weights,
    page_texts,
    training_digest,
)
from ingest.structure.features import FEATURES, could_be_heading, feature_matrix
from ingest.structure.labeller import (
    LABELS,
    LineLabeller,
    candidates_from_scores,
    line_labels,
    shipped_labeller,
)
from ingest.structure.typography import Line, document_lines

BODY_LABEL, CAPTION_LABEL = LABELS.index("body"), LABELS.index("caption")
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


def test_only_sentences_and_letterless_lines_escape_scoring() -> None:
    def line(text: str) -> Line:
        return Line(page=1, text=text, size=10, bold=False, y_frac=0.1, block_lines=1, chars=9)

    assert could_be_heading(line("2.1")) and could_be_heading(line("Chapter 3"))
    assert could_be_heading(line("Methods of Study"))
    assert not could_be_heading(line("13,224")) and not could_be_heading(line("$"))
    assert not could_be_heading(line(" ".join(["word"] * 31)))


def _labelled(name: str, rows: int, seed: int, family: str = "") -> LabelledDocument:
    generator = np.random.default_rng(seed)
    features = generator.normal(size=(rows, len(FEATURES))).astype(np.float32)
    heading = features[:, 0] + 0.3 * features[:, 2] > 1.0
    labels = np.where(heading, HEADING, BODY_LABEL).astype(np.int8)
    labels[~heading & (features[:, 1] > 1.0)] = CAPTION_LABEL
    lines = [
        Line(
            page=1,
            text=f"line {i}",
            size=10 + float(heading[i]),
            bold=bool(heading[i]),
            y_frac=0.5,
            block_lines=1,
            chars=6,
        )
        for i in range(rows)
    ]
    return LabelledDocument(name, "report", lines, features, labels, family or name)


@pytest.mark.parametrize("labels", [3, 2], ids=["three labels", "two labels"])
def test_exported_trees_give_scikit_learns_probabilities(labels: int) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    document = _labelled("a", 600, 1)
    if labels == 2:
        document.labels[document.labels == CAPTION_LABEL] = BODY_LABEL
    classifier = HistGradientBoostingClassifier(max_iter=20, random_state=0)
    classifier.fit(document.features, document.labels)
    model = exported(classifier, "digest")
    probabilities = model.probabilities(document.features)
    expected = classifier.predict_proba(document.features)
    present = classifier.classes_.tolist()
    assert np.allclose(probabilities[:, present], expected, atol=1e-9)
    absent = [label for label in range(len(LABELS)) if label not in present]
    assert np.all(probabilities[:, absent] < 1e-12)  # a label never seen never wins


def test_training_is_reproducible_and_the_digest_names_its_data() -> None:
    documents = [_labelled("a", 400, 1), _labelled("b", 300, 2)]
    first, second = fit(documents), fit(documents)
    assert first.trees == second.trees and first.baseline == second.baseline
    assert first.training["digest"] == training_digest(documents)
    assert training_digest(documents[:1]) != training_digest(documents)


def test_a_kept_fold_labeller_is_read_back_not_fitted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PARAMETERS, "max_iter", 5)  # three small fits, not three long ones
    documents = [_labelled(family, 120, index, family) for index, family in enumerate("ab")]
    fitted = fit_with_threshold(documents, tmp_path)
    assert [p.suffix for p in tmp_path.iterdir()] == [".json"]  # no partial file left behind

    def no_fitting(*args: object, **kwargs: object) -> None:
        raise AssertionError("fitted again")

    monkeypatch.setattr("evals.train_labeller.fit", no_fitting)
    kept = fit_with_threshold(documents, tmp_path)
    assert (kept.trees, kept.baseline, kept.training) == (
        fitted.trees,
        fitted.baseline,
        fitted.training,
    )
    with pytest.raises(AssertionError, match="fitted again"):  # other data: another labeller
        fit_with_threshold(documents[::-1], tmp_path)


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
    heading = plain.probabilities(rows)[:, HEADING]
    logit = np.log(heading / (1 - heading))
    shifted = 1 / (1 + np.exp(-(logit - np.log(0.8 / 0.2))))
    assert np.allclose(strict.probabilities(rows)[:, HEADING], shifted)
    assert strict.training["threshold"] == 0.8 and plain.training["threshold"] == 0.5


def test_the_best_threshold_is_the_one_with_the_best_f1() -> None:
    document = _labelled("a", 10, 1)
    document.labels[:] = [HEADING] * 3 + [BODY_LABEL] * 7
    scores = np.array([0.9, 0.8, 0.65, 0.6, 0.3, 0.2, 0.1, 0.1, 0.1, 0.1])
    assert best_threshold([document], {"a": scores}) == 0.65  # every heading, no body line
    # A body line now outscores a heading: taking it with all three (F1 6/7) beats leaving a
    # heading out (F1 4/5), and of the thresholds that do so the lowest wins.
    scores[3] = 0.7
    assert best_threshold([document], {"a": scores}) == 0.35


def test_long_documents_train_on_a_seeded_sample_of_their_body_lines() -> None:
    document = _labelled("long", MAX_BODY_LINES * 2, 4)
    rows = _training_rows(document)
    headings = int((document.labels == HEADING).sum())
    assert len(rows) == MAX_BODY_LINES + headings
    assert np.array_equal(rows, _training_rows(document))  # the same rows every run


def test_each_document_weighs_the_same(tmp_path: Path) -> None:
    small, large = _labelled("a", 100, 1), _labelled("b", 1000, 2)
    assert line_weights(small).sum() == pytest.approx(line_weights(large).sum())


def test_a_saved_model_loads_and_refuses_other_features(tmp_path: Path) -> None:
    model = fit([_labelled("a", 300, 1)])
    model.save(tmp_path / "model.json")
    loaded = LineLabeller.load(tmp_path / "model.json")
    rows = _labelled("c", 50, 3).features
    assert np.array_equal(loaded.probabilities(rows), model.probabilities(rows))
    data: dict[str, Any] = json.loads((tmp_path / "model.json").read_text())
    data["features"] = data["features"][:-1]
    (tmp_path / "old.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"evals\.train_labeller"):
        LineLabeller.load(tmp_path / "old.json")


def test_the_shipped_labeller_loads_offline() -> None:
    model = shipped_labeller()
    assert model.features == list(FEATURES) and len(model.trees) == len(LABELS)
    assert all(model.trees) and model.training["digest"]


def test_every_line_gets_one_label(sample: tuple[list[Line], np.ndarray]) -> None:
    lines, _ = sample
    model = fit([_labelled("a", 400, 1)], threshold=0.5)
    labels = line_labels(model, lines, 2)
    assert len(labels) == len(lines) and set(labels) <= set(LABELS)
    # A line no heading could be (a sentence) is never labelled one, whatever it scores.
    sentence = next(i for i, line in enumerate(lines) if line.text == BODY)
    assert labels[sentence] != "heading"


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
