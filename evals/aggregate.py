"""Per-question scores of several strategies and seeds, summarised with bootstrap intervals.

Questions, not runs, are the unit of sampling: a question's seeds are averaged first, so a
question answered under three seeds weighs as much as one answered under one, and the
interval reflects which questions were asked rather than generation noise. Seed-level means
are kept beside it so run-to-run spread stays visible.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from evals.metrics import bootstrap_ci

Record = Mapping[str, Any]


def aggregate(records: Iterable[Record], seed: int = 0) -> dict[str, dict[str, Any]]:
    """Summary per strategy, in the order strategies first appear.

    Each record is ``{"strategy", "seed", "qid", "scores": {metric: float | None},
    "judge_failures": {metric: reason}}``. Per strategy the result is::

        {"questions": distinct qids,
         "metrics": {metric: {"mean", "ci95": [low, high], "n"} or None},
         "per_seed": {seed (str): {metric: mean or None}},
         "judge_failures": {metric: count}}

    ``mean`` is the mean over questions of each question's seed-averaged value, ``n`` the
    number of questions with at least one value, ``ci95`` a 95% percentile bootstrap over
    those questions. A metric appears with None when it was named but never computed (e.g.
    every judgment failed). Seed keys are strings so the result survives a JSON round trip.
    """
    return {name: _summarise(rows, seed) for name, rows in _grouped(records, "strategy").items()}


def _summarise(records: Sequence[Record], seed: int) -> dict[str, Any]:
    names = _metric_names(records)
    questions = list(_grouped(records, "qid").values())
    failures = Counter(m for r in records for m in r.get("judge_failures") or {})
    return {
        "questions": len(questions),
        "metrics": {m: _interval(_question_means(questions, m), seed) for m in names},
        "per_seed": _seed_means(records, names),
        "judge_failures": {m: failures[m] for m in names if failures[m]},
    }


def _metric_names(records: Sequence[Record]) -> list[str]:
    """Every metric named in scores or failures, in first-seen order."""
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record.get("scores") or {}))
        names.update(dict.fromkeys(record.get("judge_failures") or {}))
    return list(names)


def _values(records: Iterable[Record], metric: str) -> list[float]:
    scores = (r.get("scores") or {} for r in records)
    return [float(s[metric]) for s in scores if s.get(metric) is not None]


def _grouped(records: Iterable[Record], key: str) -> dict[str, list[Record]]:
    """Records by ``str(record[key])``, groups in first-seen order."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[str(record[key])].append(record)
    return groups


def _question_means(questions: Iterable[Sequence[Record]], metric: str) -> list[float]:
    """Each question's mean over its seeds, for the questions with a value."""
    means = (_values(rows, metric) for rows in questions)
    return [fmean(values) for values in means if values]


def _interval(values: list[float], seed: int) -> dict[str, Any] | None:
    estimate = bootstrap_ci(values, seed=seed)
    if estimate is None:
        return None
    mean, low, high = estimate
    return {"mean": mean, "ci95": [low, high], "n": len(values)}


def _seed_means(records: Sequence[Record], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    by_seed = _grouped(records, "seed")
    return {
        seed: {m: fmean(v) if (v := _values(rows, m)) else None for m in names}
        for seed, rows in sorted(by_seed.items(), key=lambda item: _seed_order(item[0]))
    }


def _seed_order(seed: str) -> tuple[int, int | str]:
    """Numeric seeds in numeric order, any others after them by name."""
    return (0, int(seed)) if seed.lstrip("-").isdigit() else (1, seed)
