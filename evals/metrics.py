"""Scores for one answered question, and bootstrap intervals over many: pure functions, no I/O.

The QASPER functions reproduce the official evaluator's rules (answer normalisation, token F1,
paragraph-set Evidence-F1, best annotator wins) so numbers are comparable with published
results. The other set metrics follow the convention the evaluation reports use throughout:
evidence is a set of units, so reading the same page twice counts once.

Score names that the runner writes, the aggregation averages and the report plots are defined
here once, so the three agree on spelling.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from graph.trajectory.adherence import layer_adherence
from store.text import ENGLISH_STOPWORDS, UNICODE_WORD, split_sentences, table_rows

EVIDENCE_PRECISION = "evidence_precision"
EVIDENCE_RECALL = "evidence_recall"
EVIDENCE_F1 = "evidence_f1"
TOKENS = "tokens"
PAYLOAD_TOKENS = "payload_tokens"
LAYER_ADHERENCE = "layer_adherence"
BACKWARD_JUMPS = "backward_jumps"
PAGES_WITHOUT_TREE = "pages_without_tree"
HEADLINE_METRICS = (
    "correct",
    "accuracy",
    "composite",
    "answer_f1",
    "mechanical_accuracy",
    "offline_accuracy",
)
"""Accuracy-like scores in order of preference: the report's headline is the first present."""

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W_]+")
_STOPWORDS = frozenset(ENGLISH_STOPWORDS)
_LETTERS = string.ascii_uppercase


class AnswerF1(NamedTuple):
    """Best token F1 over annotators and the answer type of the annotator that gave it."""

    f1: float
    answer_type: str | None


class EvidenceScores(NamedTuple):
    """Set precision, recall and F1 of evidence read against the best-matching gold set.

    All three are None when no annotator gave any evidence (unanswerable questions have
    nothing to localise, so they do not enter evidence averages). Precision is None when
    nothing was read (no reads, no precision), while recall and F1 are then 0.0.
    """

    precision: float | None
    recall: float | None
    f1: float | None


# -- QASPER (official evaluator rules) --------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation, then articles, then collapse whitespace (official order)."""
    lowered = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def token_f1(prediction: str, gold: str) -> float:
    """F1 over the multisets of normalised tokens; no shared token (even both empty) gives 0."""
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def qasper_answer_f1(prediction: str, answers: Sequence[Mapping[str, Any]]) -> AnswerF1:
    """Max token F1 over annotator answers (``{"text", "type"}``); the first annotator wins ties.

    Unanswerable annotators have the text "Unanswerable", so a prediction must say exactly
    that to score on them, as in the official evaluator.
    """
    best = AnswerF1(0.0, None)
    for answer in answers:
        score = token_f1(prediction, str(answer["text"]))
        if best.answer_type is None or score > best.f1:
            best = AnswerF1(score, str(answer["type"]))
    return best


def paragraph_f1(predicted: Collection[Hashable], gold: Collection[Hashable]) -> float:
    """Official Evidence-F1 for one annotator: both empty is 1.0, no overlap is 0.0.

    Items are deduplicated on both sides (the official script divides by the prediction's list
    length; for a set of read pages the two agree).
    """
    predicted_set, gold_set = set(predicted), set(gold)
    if not predicted_set and not gold_set:
        return 1.0
    same = len(predicted_set & gold_set)
    if same == 0:
        return 0.0
    precision = same / len(predicted_set)
    recall = same / len(gold_set)
    return 2 * precision * recall / (precision + recall)


def qasper_evidence_f1(
    predicted_paragraphs: Collection[Hashable], evidence_sets: Sequence[Collection[Hashable]]
) -> float:
    """Max Evidence-F1 over annotators; the items of both sides must be in the same domain.

    With ``EvalQuestion.evidence_sets`` (or ``text_evidence_sets`` for the official
    text-only variant) the items are ``(arxiv_id, page)`` pairs, one page per paragraph.
    A question without annotators scores 0.0.
    """
    return max((paragraph_f1(predicted_paragraphs, gold) for gold in evidence_sets), default=0.0)


# -- evidence, routing ------------------------------------------------------------------------


def evidence_pr(
    read: Iterable[Hashable], evidence_sets: Sequence[Collection[Hashable]]
) -> EvidenceScores:
    """Set P/R/F1 of what was read against the annotator set it matches best.

    Best means highest F1, ties broken by higher recall, then by annotator order. Annotators
    without evidence are skipped; when none has any, every value is None. For page-level
    datasets the items are ``(doc_key, page)`` pairs, so both document and page must match.
    """
    seen = set(read)
    scored = [_set_scores(seen, set(gold)) for gold in evidence_sets if gold]
    if not scored:
        return EvidenceScores(None, None, None)
    return max(scored, key=lambda s: (s.f1 or 0.0, s.recall or 0.0))


def _set_scores(read: set[Hashable], gold: set[Hashable]) -> EvidenceScores:
    hits = len(read & gold)
    recall = hits / len(gold)
    if not read:
        return EvidenceScores(None, recall, 0.0)
    precision = hits / len(read)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return EvidenceScores(precision, recall, f1)


def routing_recall(
    ranked_doc_keys: Sequence[str], gold_doc_keys: Collection[str], ks: Iterable[int] = (1, 5, 10)
) -> dict[int, float | None]:
    """Share of gold documents among the first k distinct ranked documents, for each k.

    Repeated keys in the ranking count once (a document is found, or not). Without gold
    documents the recall is undefined: None for every k.
    """
    gold = set(gold_doc_keys)
    distinct = list(dict.fromkeys(ranked_doc_keys))
    return {k: len(gold & set(distinct[:k])) / len(gold) if gold else None for k in ks}


def adherence_scores(steps: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Layer-order scores of one recorded trajectory; None for a run that called no tool.

    ``layer_adherence`` is 1.0 when the run searched first, never went back a layer and read
    no page of a document whose tree it had not opened (see ``graph.trajectory.adherence``).
    """
    if not steps:
        return {LAYER_ADHERENCE: None, BACKWARD_JUMPS: None, PAGES_WITHOUT_TREE: None}
    result = layer_adherence(steps)
    return {
        LAYER_ADHERENCE: 1.0 if result.followed_order else 0.0,
        BACKWARD_JUMPS: float(result.backward_jumps),
        PAGES_WITHOUT_TREE: float(result.pages_without_tree),
    }


# -- multiple choice --------------------------------------------------------------------------

_WHOLE_LETTER = re.compile(r"^\W*([A-Z])\W*$")
_BRACKETED = re.compile(r"[(\[]([A-Z])[)\]]")
_KEYWORD = re.compile(
    r"(?i:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*\(?([A-Z])(?=\s*$|[).:,;])", re.MULTILINE
)
_LINE_START = re.compile(r"^\s*([A-Z])[):]\s", re.MULTILINE)
_LINE_START_DOT = re.compile(r"^\s*([A-Z])\.\s+(.*)$", re.MULTILINE)


def option_letter(index: int) -> str:
    """The letter an option is shown with: options are lettered A, B, C… in list order."""
    return _LETTERS[index]


def mechanical_option(answer_text: str, options: Sequence[str]) -> int | None:
    """The option an answer picks, by fixed rules only; None when absent or ambiguous.

    Letters come first ("B", "(B)", "B)", "Answer: B", "the answer is B.", or "B. <text of
    option B>" at the start of a line); two different letters are ambiguous. Without a letter,
    the answer must contain exactly one option's text (compared after QASPER normalisation, on
    word boundaries; an option found only inside a longer matching option does not count).
    """
    letters = _letters_in(answer_text, options)
    if letters:
        return letters.pop() if len(letters) == 1 else None
    return _option_by_text(answer_text, options)


def _letters_in(text: str, options: Sequence[str]) -> set[int]:
    found: set[str] = set()
    for pattern in (_WHOLE_LETTER, _BRACKETED, _KEYWORD, _LINE_START):
        found.update(m.group(1) for m in pattern.finditer(text))
    for match in _LINE_START_DOT.finditer(text):
        index = _LETTERS.find(match.group(1))
        if index < len(options) and _contains(match.group(2), options[index]):
            found.add(match.group(1))
    return {i for i in map(_LETTERS.find, found) if 0 <= i < len(options)}


def _contains(text: str, option: str) -> bool:
    needle = normalize_answer(option)
    return (
        bool(needle) and re.search(rf"\b{re.escape(needle)}\b", normalize_answer(text)) is not None
    )


def _option_by_text(text: str, options: Sequence[str]) -> int | None:
    haystack = normalize_answer(text)
    spans: dict[int, list[tuple[int, int]]] = {}
    for index, option in enumerate(options):
        needle = normalize_answer(option)
        if needle:
            found = [m.span() for m in re.finditer(rf"\b{re.escape(needle)}\b", haystack)]
            if found:
                spans[index] = found
    standalone = [
        index
        for index, own in spans.items()
        if not all(_inside(span, spans, index) for span in own)
    ]
    return standalone[0] if len(standalone) == 1 else None


def _inside(span: tuple[int, int], spans: dict[int, list[tuple[int, int]]], owner: int) -> bool:
    """True when ``span`` lies within a strictly longer match of another option."""
    start, end = span
    return any(
        other != owner and s <= start and end <= e and e - s > end - start
        for other, theirs in spans.items()
        for s, e in theirs
    )


def offline_option(
    question: str, options: Sequence[str], evidence_texts: Sequence[str]
) -> int | None:
    """The option best supported by the text a run read, without any language model.

    A fixed reader for runs without an LLM: evidence is split into sentences and table rows
    (``store.text``, so headings and front matter are no evidence); each option is
    scored by its best sentence, as the idf-weighted share of the option's distinguishing
    content words (words every option shares are dropped) that the sentence contains, scaled
    by how much of the question the sentence mentions (factor 0.5 to 1). The gold option is
    never an input. None when no option has support or the top score is tied.
    """
    units = [u for t in evidence_texts for u in (*split_sentences(t), *table_rows(t))]
    sentences = [set(_content_words(u)) for u in units]
    sentences = [s for s in sentences if s]
    if not sentences or not options:
        return None
    idf = _idf(sentences)
    words = [set(_content_words(option)) for option in options]
    shared = set.intersection(*words)
    on_question = _coverage(set(_content_words(question)), idf)
    lift = [1 + on_question(s) for s in sentences]
    scores = [
        max(covered(s) * up / 2 for s, up in zip(sentences, lift, strict=True))
        for covered in (_coverage(option - shared, idf) for option in words)
    ]
    best = max(scores)
    winners = [i for i, score in enumerate(scores) if math.isclose(score, best)]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _content_words(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in _STOPWORDS]


def _idf(sentences: list[set[str]]) -> dict[str, float]:
    """Smoothed idf over evidence sentences (``_coverage`` gives unseen words the top weight)."""
    df = Counter(word for sentence in sentences for word in sentence)
    total = len(sentences)
    return {word: math.log((total + 1) / (count + 1)) + 1 for word, count in df.items()}


def _coverage(words: set[str], idf: Mapping[str, float]) -> Callable[[set[str]], float]:
    """The idf-weighted share of ``words`` a sentence contains (0.0 for no words), as a
    function of the sentence; words unseen in the evidence weigh the most."""
    unseen = max(idf.values(), default=1.0)
    total = sum(idf.get(w, unseen) for w in words)
    return lambda sentence: sum(idf[w] for w in words & sentence) / total if total else 0.0


# -- MOSAIC composite, bootstrap --------------------------------------------------------------


def cosine(u: ArrayLike, v: ArrayLike) -> float:
    """Cosine similarity of two vectors; 0.0 when either is all zeros."""
    a, b = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else 0.0


def scaled_cosine(similarity: float) -> float:
    """Cosine similarity mapped from [-1, 1] onto [0, 1] as (cos + 1) / 2, clipped."""
    return min(1.0, max(0.0, (similarity + 1) / 2))


def composite(f1: float | None, cosine: float | None) -> float | None:
    """MOSAIC answer score 0.75·factuality F1 + 0.25·scaled cosine; None if either is missing."""
    if f1 is None or cosine is None:
        return None
    return 0.75 * f1 + 0.25 * scaled_cosine(cosine)


def bootstrap_ci(
    values: Iterable[float | None], n_resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float] | None:
    """(mean, low, high): percentile bootstrap of the mean; None values are left out.

    Each value is one question, so the interval reflects variation across questions. The
    interval is widened to include the sample mean if floating-point noise would put the mean
    just outside (constant samples then give a zero-width interval). None without values.
    """
    sample = np.array([v for v in values if v is not None], dtype=float)
    if sample.size == 0:
        return None
    mean = float(sample.mean())
    rng = np.random.default_rng(seed)
    means = sample[rng.integers(0, sample.size, size=(n_resamples, sample.size))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = (float(q) for q in np.quantile(means, [tail, 1 - tail]))
    return mean, min(low, mean), max(high, mean)


# -- OCR ----------------------------------------------------------------------------------------


def word_recall(reference: str, read: str) -> float:
    """The share of the reference's words (with repeats) that ``read`` also holds, compared
    lower-cased after Unicode compatibility folding (a text layer's "ﬁ" ligature is "fi" to
    OCR), in any order: how much of a page's text OCR recovered. 1.0 for an empty reference."""
    wanted, got = _word_counts(reference), _word_counts(read)
    total = sum(wanted.values())
    return sum((wanted & got).values()) / total if total else 1.0


def _word_counts(text: str) -> Counter[str]:
    return Counter(UNICODE_WORD.findall(unicodedata.normalize("NFKC", text).lower()))
