"""Scores of one strategy run on one benchmark question.

Everything is computed from what the run recorded: the answer and the ordered trajectory. The
evidence a run "read" is every page a successful step disclosed (pages it opened, and the pages
of passages a passage search returned), as a set of (document key, page) pairs in the
dataset's own document names, so gold evidence and reads compare directly. Metrics that need a
judge are computed only when a judge is given; a failed judgment is recorded as a failure,
never as a score.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evals import metrics
from evals.datasets import EvalQuestion, passage_pages
from evals.judges import Judge, JudgeFailure, JudgeResult, answer_cosine
from graph.citations import CITATION
from graph.extractive import EXTRACTIVE_NOTE

Scores = dict[str, float | None]
BULLET = re.compile(r"^\s*[-*•]\s+", re.MULTILINE)
ROUTING_KS = (1, 5, 10)


@dataclass
class RunOutput:
    """What one strategy run produced (the agent graph's output plus wall time)."""

    answer: str
    status: str
    steps: list[dict[str, Any]]
    usage: dict[str, Any]
    wall_s: float
    status_detail: str = ""


@dataclass
class Scored:
    """Scores, judge failures (metric → reason) and the judge's token usage."""

    scores: Scores = field(default_factory=dict)
    judge_failures: dict[str, str] = field(default_factory=dict)
    judge_tokens: int = 0
    evidence_read: list[tuple[str, int]] = field(default_factory=list)  # dataset keys, in order


def pages_disclosed(steps: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """(doc_id, page) of every page the successful steps disclosed, first disclosure first."""
    seen: dict[tuple[str, int], None] = {}
    for step in steps:
        if not step.get("ok"):
            continue
        if step.get("doc_id") and step.get("pages"):
            seen.update(dict.fromkeys((str(step["doc_id"]), int(p)) for p in step["pages"]))
        for doc_id, pages in (step.get("disclosed") or {}).items():
            seen.update(dict.fromkeys((str(doc_id), int(p)) for p in pages))
    return list(seen)


def documents_in_order(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The routing ranking of a run: documents in the order it first met them, whether a
    document search ranked them (``found``), it opened them, or a passage search showed them."""
    order: dict[str, None] = {}
    for step in steps:
        if not step.get("ok"):
            continue
        order.update(dict.fromkeys(str(d) for d in step.get("found") or []))
        if step.get("doc_id") and step.get("doc_id") != "*":
            order.setdefault(str(step["doc_id"]))
        order.update(dict.fromkeys(str(d) for d in step.get("disclosed") or {}))
    return list(order)


def answer_text(answer: str) -> str:
    """The answer without the extractive reader's preamble, bullets and citations (what token
    F1 and judges should compare)."""
    text = answer.replace(EXTRACTIVE_NOTE, "")
    text = CITATION.sub("", text)
    return " ".join(BULLET.sub("", text).split())


def base_scores(run: RunOutput, pages_read: int) -> Scores:
    """Cost and trajectory scores every dataset reports. ``tokens`` are model tokens (none for
    an offline strategy that calls no model); ``payload_tokens`` are what its tools returned,
    i.e. what a model would have had to read, comparable across strategies offline."""
    prompt = int(run.usage.get("prompt_tokens") or 0)
    completion = int(run.usage.get("completion_tokens") or 0)
    return {
        "prompt_tokens": float(prompt),
        "completion_tokens": float(completion),
        metrics.TOKENS: float(prompt + completion),
        "wall_s": run.wall_s,
        "tool_calls": float(len(run.steps)),
        metrics.PAYLOAD_TOKENS: float(sum(int(s.get("payload_tokens") or 0) for s in run.steps)),
        "pages_read": float(pages_read),
        "answered": 1.0 if run.status == "answered" else 0.0,
        **metrics.adherence_scores(run.steps),
    }


def evidence_scores(read: set[tuple[str, int]], question: EvalQuestion) -> Scores:
    pr = metrics.evidence_pr(read, question.evidence_sets)
    return {
        metrics.EVIDENCE_PRECISION: pr.precision,
        metrics.EVIDENCE_RECALL: pr.recall,
        metrics.EVIDENCE_F1: pr.f1,
    }


def routing_scores(ranked: list[str], question: EvalQuestion) -> Scores:
    recall = metrics.routing_recall(ranked, question.doc_keys, ROUTING_KS)
    return {f"routing_recall@{k}": value for k, value in recall.items()}


@dataclass
class QuestionContext:
    """What scoring needs beyond the run: document keys of doc ids, page texts, the setting."""

    keys: Mapping[str, str]
    doc_pages: Callable[[str], list[str]]
    corpus_setting: bool
    judge: Judge | None = None

    def page_text(self, doc_id: str, page: int) -> str:
        pages = self.doc_pages(doc_id)
        return pages[page - 1] if 0 < page <= len(pages) else ""

    def doc_id(self, key: str) -> str | None:
        return next((doc for doc, known in self.keys.items() if known == key), None)


def score_run(question: EvalQuestion, run: RunOutput, ctx: QuestionContext) -> Scored:
    """Every metric of the question's dataset that can be computed here."""
    disclosed = pages_disclosed(run.steps)
    in_order = [(ctx.keys.get(doc, doc), page) for doc, page in disclosed]
    read = set(in_order)
    scored = Scored(scores=base_scores(run, len(disclosed)), evidence_read=in_order)
    scored.scores.update(evidence_scores(read, question))
    if ctx.corpus_setting:
        ranked = [ctx.keys.get(doc, doc) for doc in documents_in_order(run.steps)]
        scored.scores.update(routing_scores(ranked, question))
    texts = [ctx.page_text(doc, page) for doc, page in disclosed]
    SCORERS[question.dataset](Scoring(question, run, read, texts, ctx, scored))
    return scored


@dataclass
class Scoring:
    """One run being scored: the dataset scorers add their metrics to ``scored``."""

    question: EvalQuestion
    run: RunOutput
    read: set[tuple[str, int]]
    texts: list[str]
    ctx: QuestionContext
    scored: Scored


def _qasper(x: Scoring) -> None:
    question, run, ctx, scored = x.question, x.run, x.ctx, x.scored
    answer = answer_text(run.answer)
    scored.scores["answer_f1"] = metrics.qasper_answer_f1(answer, question.answers).f1
    scored.scores["evidence_f1_official"] = metrics.qasper_evidence_f1(
        x.read, question.evidence_sets
    )
    scored.scores["evidence_f1_official_text"] = metrics.qasper_evidence_f1(
        x.read, question.text_evidence_sets
    )
    if ctx.judge is not None:
        references = [str(a["text"]) for a in question.answers]
        verdict = _judged(
            scored, "correct", ctx.judge.qasper_correctness(question.question, references, answer)
        )
        if verdict is not None:
            scored.scores["correct"] = 1.0 if verdict.value == "correct" else 0.0
            scored.scores["correct_or_partial"] = 1.0 if verdict.value != "incorrect" else 0.0


def _litqa2(x: Scoring) -> None:
    question, run, ctx, scored = x.question, x.run, x.ctx, x.scored
    correct = question.correct_option
    offline = metrics.offline_option(question.question, question.options, x.texts)
    scored.scores["offline_accuracy"] = 1.0 if offline == correct else 0.0
    scored.scores["key_passage_page_recall"] = _key_passage_recall(x)
    if ctx.judge is None:
        return
    answer = answer_text(run.answer)
    mechanical = metrics.mechanical_option(answer, question.options)
    scored.scores["mechanical_accuracy"] = 1.0 if mechanical == correct else 0.0
    judged = _judged(
        scored, "accuracy", ctx.judge.litqa2_option(question.question, question.options, answer)
    )
    if judged is not None:
        scored.scores["accuracy"] = 1.0 if judged.value == correct else 0.0
        scored.scores["judge_mechanical_agreement"] = 1.0 if judged.value == mechanical else 0.0


def _key_passage_recall(x: Scoring) -> float | None:
    """LitQA2's mapped-page diagnostic: the share of the pages printing the key passage that
    the run read (None when the passage is not found in the PDF text, which is common)."""
    gold: set[tuple[str, int]] = set()
    for key in x.question.doc_keys:
        doc_id = x.ctx.doc_id(key)
        if doc_id is None:
            continue
        for passage in x.question.evidence_texts:
            gold |= {(key, page) for page in passage_pages(passage, x.ctx.doc_pages(doc_id))}
    return len(gold & x.read) / len(gold) if gold else None


def _financebench(x: Scoring) -> None:
    question, run, ctx, scored = x.question, x.run, x.ctx, x.scored
    if ctx.judge is None:
        return
    answer = answer_text(run.answer)
    verdict = _judged(
        scored,
        "correct",
        ctx.judge.financebench_correctness(question.question, question.reference, answer),
    )
    if verdict is not None:
        scored.scores["correct"] = 1.0 if verdict.value == "correct" else 0.0


def _mosaic(x: Scoring) -> None:
    question, run, ctx, scored = x.question, x.run, x.ctx, x.scored
    answer = answer_text(run.answer)
    similarity = answer_cosine(answer, question.reference)
    scored.scores["answer_cosine"] = similarity
    if ctx.judge is None:
        return
    judged = _judged(
        scored,
        "factuality_f1",
        ctx.judge.mosaic_statements(question.question, question.reference, answer, x.texts),
    )
    if judged is None:
        return
    result = judged.value
    scored.scores.update(
        {
            "factuality_precision": result.precision,
            "factuality_recall": result.recall,
            "factuality_f1": result.f1,
            "coverage": result.coverage,
            "faithfulness": result.faithfulness,
            "composite": metrics.composite(result.f1, similarity),
        }
    )


def _judged(
    scored: Scored, metric: str, outcome: JudgeResult[Any] | JudgeFailure
) -> JudgeResult[Any] | None:
    """The judgment, or None after recording the failure under ``metric``."""
    usage = outcome.usage
    scored.judge_tokens += (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
    if isinstance(outcome, JudgeFailure):
        scored.judge_failures[metric] = outcome.reason
        return None
    return outcome


SCORERS: dict[str, Callable[[Scoring], None]] = {
    "qasper": _qasper,
    "litqa2": _litqa2,
    "financebench": _financebench,
    "mosaic": _mosaic,
}
