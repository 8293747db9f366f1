"""The human-readable side of an evaluation run: ``report.md`` with tables and PNG plots.

The tables show every metric of every strategy with its question-bootstrap interval and the
number of questions behind it, so a difference can be read together with its uncertainty.
A metric that was not computed (no LLM, no trajectory, no gold evidence) shows as "—" rather
than 0, which would read as a measured failure. Plots are drawn with matplotlib's Agg canvas
directly, so no display and no global pyplot state are involved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from evals.metrics import (
    EVIDENCE_PRECISION,
    EVIDENCE_RECALL,
    HEADLINE_METRICS,
    LAYER_ADHERENCE,
    PAYLOAD_TOKENS,
)

MISSING = "—"
EVIDENCE_PLOT = "evidence_pr.png"
TOKENS_PLOT = "tokens_vs_headline.png"
ADHERENCE_PLOT = "layer_adherence.png"
ROUTING = "Routing"

Stat = Mapping[str, Any]
METRIC_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Answers and evidence",
        (
            "correct",
            "correct_or_partial",
            "accuracy",
            "mechanical_accuracy",
            "judge_mechanical_agreement",
            "offline_accuracy",
            "composite",
            "factuality_precision",
            "factuality_recall",
            "factuality_f1",
            "coverage",
            "faithfulness",
            "answer_cosine",
            "answer_f1",
            EVIDENCE_PRECISION,
            EVIDENCE_RECALL,
            "evidence_f1",
            "evidence_f1_official",
        ),
    ),
    (ROUTING, ("routing_recall@1", "routing_recall@5", "routing_recall@10")),
    ("Trajectory", (LAYER_ADHERENCE, "backward_jumps", "pages_without_tree", "tool_calls")),
    (
        "Cost",
        (
            "answered",
            "pages_read",
            PAYLOAD_TOKENS,
            "tokens",
            "prompt_tokens",
            "completion_tokens",
            "wall_s",
        ),
    ),
)
"""Report sections and their column order; a metric named nowhere goes to "Other"."""


def write_report(out_dir: Path, results: Mapping[str, Any]) -> Path:
    """Write ``report.md`` and its plots into ``out_dir``; returns the report's path.

    ``results`` is the run's machine-readable summary: ``dataset``, ``setting``,
    ``command``, ``seeds``, ``created``, ``strategies`` (name → ``{"questions", "metrics",
    "per_seed"}`` as ``evals.aggregate.aggregate`` returns them), ``excluded`` and ``notes``;
    optional ``baselines`` (name → ``{"description", "questions", "metrics"}``, corpus setting)
    are routing-only rankings, listed in the routing table alone and marked as baselines.
    An optional ``headline`` names the accuracy-like metric to plot against tokens; by default
    it is the first of ``HEADLINE_METRICS`` that any strategy has.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    strategies: Mapping[str, Mapping[str, Any]] = results.get("strategies") or {}
    baselines: Mapping[str, Mapping[str, Any]] = results.get("baselines") or {}
    headline = results.get("headline") or _headline(strategies)
    lines = [
        *_header(results),
        *_results_table(strategies, baselines),
        *_seed_table(strategies),
        *_failures_table(strategies),
        *_plots(out_dir, strategies, headline),
        *_excluded(results.get("excluded") or []),
        *_notes(results.get("notes") or []),
    ]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def format_value(value: float | None) -> str:
    """Three decimals for scores, thousands separators for large counts such as tokens."""
    if value is None:
        return MISSING
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3f}"


def format_stat(stat: Stat | None, questions: int | None = None) -> str:
    """``mean [low, high] (n=…)``, or "—" for a metric that was not computed; the n is left
    out when every question has a value (``questions``)."""
    if not stat:
        return MISSING
    low, high = stat["ci95"]
    count = "" if stat["n"] == questions else f" (n={stat['n']})"
    return f"{format_value(stat['mean'])} [{format_value(low)}, {format_value(high)}]{count}"


# -- sections ---------------------------------------------------------------------------------


def _header(results: Mapping[str, Any]) -> list[str]:
    seeds = ", ".join(str(s) for s in results.get("seeds") or []) or MISSING
    return [
        f"# Evaluation: {results.get('dataset', MISSING)} ({results.get('setting', MISSING)})",
        "",
        f"- Command: `{results.get('command', MISSING)}`",
        f"- Seeds: {seeds}",
        f"- Created: {results.get('created', MISSING)}",
        "",
    ]


def _metric_names(strategies: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for summary in strategies.values():
        names.update(dict.fromkeys(summary.get("metrics") or {}))
    return list(names)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), line(["---"] * len(header)), *(line(row) for row in rows), ""]


def _results_table(
    strategies: Mapping[str, Mapping[str, Any]], baselines: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    lines = [
        "## Results",
        "",
        "Mean over questions (each question's seeds averaged first), 95% percentile-bootstrap "
        "interval over questions; (n=…) = questions with a value when not all have one; "
        f"{MISSING} = not computed.",
        "",
    ]
    for title, names in _groups(_metric_names({**strategies, **baselines})):
        rows = [_row(name, summary, names) for name, summary in strategies.items()]
        if title == ROUTING:
            rows += [_row(f"{name} (baseline)", s, names) for name, s in baselines.items()]
        lines += [f"### {title}", "", *_table(["strategy", "questions", *names], rows)]
        if title == ROUTING:
            lines += _baseline_lines(baselines)
    return lines


def _row(name: str, summary: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    stats = [format_stat(_stat(summary, m), summary.get("questions")) for m in names]
    return [name, str(summary.get("questions", MISSING)), *stats]


def _baseline_lines(baselines: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What the baseline rows are: they rank documents and read nothing, so no other table
    lists them (they have no evidence, answer or cost to show)."""
    if not baselines:
        return []
    described = "; ".join(
        f"`{name}`: {summary.get('description', MISSING)}" for name, summary in baselines.items()
    )
    return [f"Baselines rank documents only (flat BM25, the question as query): {described}.", ""]


def _groups(names: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The report's sections with the metrics present, in the sections' order."""
    present = set(names)
    grouped = [(title, [m for m in order if m in present]) for title, order in METRIC_GROUPS]
    named = {m for _, order in METRIC_GROUPS for m in order}
    grouped.append(("Other", [m for m in names if m not in named]))
    return [(title, metrics) for title, metrics in grouped if metrics]


def _seed_table(strategies: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names = [m for _, metrics in _groups(_metric_names(strategies)) for m in metrics]
    rows = [
        [name, seed] + [format_value(means.get(m)) for m in names]
        for name, summary in strategies.items()
        for seed, means in (summary.get("per_seed") or {}).items()
    ]
    if not rows:
        return []
    return ["## Per-seed means", "", *_table(["strategy", "seed", *names], rows)]


def _failures_table(strategies: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = [
        [name, metric, str(count)]
        for name, summary in strategies.items()
        for metric, count in (summary.get("judge_failures") or {}).items()
    ]
    if not rows:
        return []
    return [
        "## Judge failures",
        "",
        "Judgments with no usable reply after retries; they are left out of the means above.",
        "",
        *_table(["strategy", "metric", "failures"], rows),
    ]


def _excluded(excluded: Sequence[Mapping[str, Any]]) -> list[str]:
    if not excluded:
        return []
    rows = [[str(e.get("qid", MISSING)), str(e.get("reason", MISSING))] for e in excluded]
    return [f"## Excluded questions ({len(excluded)})", "", *_table(["qid", "reason"], rows)]


def _notes(notes: Sequence[str]) -> list[str]:
    return ["## Notes", "", *(f"- {note}" for note in notes), ""] if notes else []


# -- plots ------------------------------------------------------------------------------------


def _plots(
    out_dir: Path, strategies: Mapping[str, Mapping[str, Any]], headline: str | None
) -> list[str]:
    lines = ["## Plots", ""]
    drawn = [
        ("Evidence precision and recall", _evidence_plot(out_dir / EVIDENCE_PLOT, strategies)),
        (
            f"Tool payload tokens per question vs {headline or MISSING}",
            _tokens_plot(out_dir / TOKENS_PLOT, strategies, headline),
        ),
        ("Layer-order adherence", _adherence_plot(out_dir / ADHERENCE_PLOT, strategies)),
    ]
    for title, path in drawn:
        lines += [f"![{title}]({path.name})" if path else f"{title}: {MISSING} (no data)", ""]
    return lines


def _headline(strategies: Mapping[str, Mapping[str, Any]]) -> str | None:
    present = {m for s in strategies.values() for m, v in (s.get("metrics") or {}).items() if v}
    return next((m for m in HEADLINE_METRICS if m in present), None)


def _stat(summary: Mapping[str, Any], metric: str) -> Stat | None:
    return (summary.get("metrics") or {}).get(metric) or None


def _error(stat: Stat) -> tuple[float, float]:
    """Distances from the mean to the interval ends, as matplotlib's error bars want them."""
    low, high = stat["ci95"]
    return max(0.0, stat["mean"] - low), max(0.0, high - stat["mean"])


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(str(path))
    return path


def _bars(
    path: Path,
    strategies: Mapping[str, Mapping[str, Any]],
    metrics: Sequence[str],
    ylabel: str,
) -> Path | None:
    """Grouped bars: one group per strategy, one bar per metric, bootstrap intervals on top.

    A strategy without the metric gets a "—" where its bar would be, not an empty gap.
    """
    if not any(_stat(s, m) for s in strategies.values() for m in metrics):
        return None
    width_inches = min(12.0, max(4.0, 0.6 * len(strategies) * len(metrics)))
    figure = Figure(figsize=(width_inches, 4.0))
    axes = figure.subplots()
    width = 0.8 / len(metrics)
    names = list(strategies)
    for offset, metric in enumerate(metrics):
        shift = (offset - (len(metrics) - 1) / 2) * width
        points = []
        for i, name in enumerate(names):
            if stat := _stat(strategies[name], metric):
                points.append((i, stat))
            else:
                axes.text(i + shift, 0.02, MISSING, ha="center", fontsize=14)
        if points:
            errors = list(zip(*(_error(st) for _, st in points), strict=True))
            heights = [st["mean"] for _, st in points]
            xs = [i + shift for i, _ in points]
            axes.bar(xs, heights, width, yerr=errors, capsize=3, label=metric)
    axes.set_xticks(range(len(names)), names, rotation=20, ha="right")
    axes.set_xlim(-0.5, len(names) - 0.5)
    axes.set_ylabel(ylabel)
    axes.set_ylim(0, 1.05)
    if len(metrics) > 1:
        axes.legend()
    return _save(figure, path)


def _evidence_plot(path: Path, strategies: Mapping[str, Mapping[str, Any]]) -> Path | None:
    return _bars(path, strategies, [EVIDENCE_PRECISION, EVIDENCE_RECALL], "evidence (set P/R)")


def _adherence_plot(path: Path, strategies: Mapping[str, Mapping[str, Any]]) -> Path | None:
    return _bars(path, strategies, [LAYER_ADHERENCE], "share of runs in find → tree → read order")


def _tokens_plot(
    path: Path, strategies: Mapping[str, Mapping[str, Any]], headline: str | None
) -> Path | None:
    """One point per strategy: what its tools returned per question (the tokens a model must
    read, comparable across strategies with or without a model) against the headline metric."""
    points = [
        (name, tokens, score)
        for name, summary in strategies.items()
        if headline
        and (tokens := _stat(summary, PAYLOAD_TOKENS))
        and (score := _stat(summary, headline))
    ]
    if not points:
        return None
    figure = Figure(figsize=(7.0, 4.5))
    axes = figure.subplots()
    axes.set_xscale("log")  # payloads differ by orders of magnitude between strategies
    for name, tokens, score in points:
        axes.errorbar(
            tokens["mean"],
            score["mean"],
            xerr=[[e] for e in _error(tokens)],
            yerr=[[e] for e in _error(score)],
            fmt="o",
            capsize=3,
        )
        axes.annotate(
            name, (tokens["mean"], score["mean"]), xytext=(4, 4), textcoords="offset points"
        )
    axes.set_xlabel("tool payload tokens per question")
    axes.set_ylabel(str(headline))
    return _save(figure, path)
