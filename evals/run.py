"""`vectree eval`: run benchmark questions through strategies, score them, write the results.

One evaluation = one dataset × one setting × some strategies × some seeds. It ingests the
documents the questions need (an existing library is reused: re-ingesting a known document
changes nothing), runs every (strategy, seed, question) through the agent graph in process,
scores the run from its answer and recorded trajectory, and appends one line per run to
``questions.jsonl`` straight away, so an interrupted evaluation resumes where it stopped
(finished runs are read back, not re-run). At the end it writes ``results.json`` (per strategy
every metric with a bootstrap interval, null where not computed) and ``report.md`` with plots.

Settings: ``gold-paper`` gives each question its document(s) as the run's ``doc_ids`` (the
VecTree paper's QASPER protocol); ``corpus`` gives none, so the run must first find the
document among everything ingested, and routing recall@k is scored, next to flat BM25 routing
baselines over the same library (``evals.baselines``).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from evals.aggregate import aggregate
from evals.baselines import BASELINES_FILE, baseline_summaries, cached_rankings
from evals.datasets import (
    EvalQuestion,
    LoadedDataset,
    load_financebench,
    load_litqa2,
    load_mosaic,
    load_qasper,
)
from evals.judges import Judge
from evals.metrics import option_letter
from evals.report import write_report
from evals.scoring import QuestionContext, RunOutput, score_run
from graph.agent import compile_agent
from graph.context import AgentContext
from graph.registry import STRATEGIES
from ingest.context import IngestContext
from ingest.pipeline import default_workers, ingest_paths
from store.catalog import open_catalog
from store.chat import chat_model
from store.chunks import ChunkStore
from store.settings import JudgeSettings

DATASETS = ("qasper", "litqa2", "financebench", "mosaic")
SETTINGS = ("gold-paper", "corpus")
QUESTIONS_FILE = "questions.jsonl"
RESULTS_FILE = "results.json"


@dataclass
class EvalConfig:
    """One evaluation run (the `vectree eval` arguments)."""

    dataset: str
    data: Path
    out: Path
    library: Path
    strategies: list[str] = field(default_factory=lambda: ["vectree"])
    pdfs: Path | None = None
    limit: int | None = None
    seeds: int = 1
    setting: str = "gold-paper"
    workers: int = field(default_factory=default_workers)
    command: str = ""

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {', '.join(DATASETS)}")
        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {', '.join(SETTINGS)}")
        if self.dataset in ("litqa2", "financebench") and self.pdfs is None:
            raise ValueError(f"{self.dataset} needs --pdfs (the folder of its PDFs)")
        for strategy in self.strategies:
            AgentContext(library=str(self.library), strategy=strategy)  # validates the name


def load_dataset(config: EvalConfig, seed: int = 0) -> LoadedDataset:
    """The dataset's questions (LitQA2 options shuffled with ``seed``)."""
    if config.dataset == "qasper":
        return load_qasper(config.data)
    if config.dataset == "litqa2":
        assert config.pdfs is not None
        return load_litqa2(config.data, config.pdfs, seed=seed)
    if config.dataset == "financebench":
        assert config.pdfs is not None
        return load_financebench(config.data, config.pdfs)
    return load_mosaic(config.data, config.pdfs)


# -- ingestion ------------------------------------------------------------------------------------
def ensure_documents(
    config: EvalConfig, loaded: LoadedDataset, questions: list[EvalQuestion], progress: bool
) -> dict[str, str]:
    """Ingest what the questions need; returns document key → doc_id for what is present."""
    wanted = (
        {key for q in questions for key in q.doc_keys}
        if config.setting == "gold-paper"
        else set(loaded.sources)
    )
    sources = {key: loaded.sources[key] for key in wanted if key in loaded.sources}
    inputs = _ingest_inputs(config, sources)
    context = IngestContext(library=str(config.library))
    report = ingest_paths(inputs, context, workers=config.workers, progress=progress)
    by_source = {o.source: o.doc_id for o in report.outcomes if o.doc_id}
    keys: dict[str, str] = {}
    for key, source in sources.items():
        ingested = by_source.get(_source_name(config, source))
        if ingested:
            keys[key] = ingested
    keys.update(_already_in_library(config, set(sources) - set(keys)))
    return keys


def _ingest_inputs(config: EvalConfig, sources: dict[str, Path | str]) -> list[Path]:
    """QASPER papers come from the JSON file itself; other datasets ingest their PDFs."""
    if config.dataset == "qasper":
        return [config.data] if sources else []
    return sorted({s for s in sources.values() if isinstance(s, Path)})


def _source_name(config: EvalConfig, source: Path | str) -> str:
    """How the ingestion pipeline names a source (QASPER papers are ``file#arxiv_id``)."""
    if config.dataset == "qasper":
        return f"{config.data.resolve()}#{source}"
    return str(Path(source).resolve()) if isinstance(source, Path) else str(source)


def _already_in_library(config: EvalConfig, keys: set[str]) -> dict[str, str]:
    """Documents named by title or source stem that are already ingested (MOSAIC without PDFs)."""
    found: dict[str, str] = {}
    for record in open_catalog(config.library).library.documents():
        stem = Path(record["source"].split("#")[0]).stem
        for key in keys:
            if key in (stem, record["title"]):
                found[key] = record["doc_id"]
    return found


# -- running --------------------------------------------------------------------------------------
def question_text(question: EvalQuestion) -> str:
    """What the strategy is asked: multiple-choice questions list their options."""
    if not question.options:
        return question.question
    listing = "\n".join(f"{option_letter(i)}. {o}" for i, o in enumerate(question.options))
    return f"{question.question}\n\nOptions:\n{listing}\nAnswer with the letter of one option."


def _prepare_chunk_stores(config: EvalConfig, doc_ids: list[str], progress: bool) -> None:
    """Chunk and embed up front what the chunk-based strategies will search (with a progress
    bar), instead of inside the first runs that touch each document."""
    catalog = open_catalog(config.library)
    schemes = {STRATEGIES[s].chunk_scheme for s in config.strategies}
    for scheme in sorted(scheme for scheme in schemes if scheme is not None):
        store = ChunkStore(catalog, scheme)
        missing = store.missing(doc_ids)
        with tqdm(
            total=len(missing),
            desc=f"{scheme} chunks",
            unit="doc",
            disable=not progress or not missing,
            file=sys.stderr,
        ) as bar:
            store.ensure(missing, progress=bar.update)


def run_question(
    graph: Any, question: EvalQuestion, doc_ids: list[str], context: AgentContext
) -> RunOutput:
    """One run through the agent graph (no checkpointer: the record is the output)."""
    started = time.perf_counter()
    output = graph.invoke(
        {"question": question_text(question), "doc_ids": doc_ids}, context=context
    )
    return RunOutput(
        answer=str(output.get("answer") or ""),
        status=str(output.get("status") or ""),
        status_detail=str(output.get("status_detail") or ""),
        steps=[dict(s) for s in output.get("trajectory") or []],
        usage=dict(output.get("usage") or {}),
        wall_s=time.perf_counter() - started,
    )


def finished_runs(path: Path) -> Iterator[dict[str, Any]]:
    """Records already written (a torn last line from a crash is skipped)."""
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def _drop_torn_lines(path: Path) -> None:
    """Rewrite the records file without a line a crash left half written, so appending
    resumes on a clean line."""
    if not path.is_file():
        return
    raw = path.read_text(encoding="utf-8")
    kept = [json.dumps(record, ensure_ascii=False) for record in finished_runs(path)]
    clean = "".join(line + "\n" for line in kept)
    if clean != raw:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(clean, encoding="utf-8")
        tmp.replace(path)


def _run_key(strategy: str, seed: int, qid: str) -> tuple[str, int, str]:
    return (strategy, seed, qid)


def run_eval(config: EvalConfig, progress: bool = True) -> dict[str, Any]:
    """Run (or resume) an evaluation and write its files; returns the results summary."""
    config.out.mkdir(parents=True, exist_ok=True)
    loaded = load_dataset(config)
    questions = loaded.questions[: config.limit] if config.limit else loaded.questions
    keys = ensure_documents(config, loaded, questions, progress)
    runnable = [q for q in questions if all(k in keys for k in q.doc_keys)]
    excluded = list(loaded.excluded) + [
        {"qid": q.qid, "reason": "document not in the library after ingestion"}
        for q in questions
        if q not in runnable
    ]
    _prepare_chunk_stores(config, sorted(set(keys.values())), progress)
    records_path = config.out / QUESTIONS_FILE
    _drop_torn_lines(records_path)
    done = {_run_key(r["strategy"], r["seed"], r["qid"]) for r in finished_runs(records_path)}
    judge = _judge()
    scoring = QuestionContext(
        keys={doc_id: key for key, doc_id in keys.items()},
        doc_pages=_page_reader(config.library),
        corpus_setting=config.setting == "corpus",
        judge=judge,
    )
    graph = compile_agent()
    todo = [(strategy, seed) for strategy in config.strategies for seed in range(config.seeds)]
    total = len(todo) * len(runnable)
    bar = tqdm(total=total, desc="eval", unit="run", disable=not progress, file=sys.stderr)
    with records_path.open("a", encoding="utf-8") as sink:
        for strategy, seed in todo:
            seeded = _seeded_questions(config, seed, runnable)
            context = AgentContext(library=str(config.library), strategy=strategy)
            for question in seeded:
                bar.set_postfix_str(strategy)
                if _run_key(strategy, seed, question.qid) not in done:
                    record = _evaluate(graph, question, keys, context, scoring, config, seed)
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                    sink.flush()
                bar.update(1)
    bar.close()
    baselines = _routing_baselines(config, runnable, scoring)
    return write_results(config, excluded, judge is not None, baselines)


def _seeded_questions(
    config: EvalConfig, seed: int, questions: list[EvalQuestion]
) -> list[EvalQuestion]:
    """LitQA2 options are shuffled per seed; other datasets do not depend on the seed."""
    if config.dataset != "litqa2" or seed == 0:
        return questions
    wanted = {q.qid for q in questions}
    return [q for q in load_dataset(config, seed).questions if q.qid in wanted]


def _evaluate(
    graph: Any,
    question: EvalQuestion,
    keys: dict[str, str],
    context: AgentContext,
    scoring: QuestionContext,
    config: EvalConfig,
    seed: int,
) -> dict[str, Any]:
    doc_ids = [keys[k] for k in question.doc_keys] if config.setting == "gold-paper" else []
    run = run_question(graph, question, doc_ids, context)
    scored = score_run(question, run, scoring)
    return {
        "strategy": context.strategy,
        "seed": seed,
        "qid": question.qid,
        "question": question.question,
        "doc_keys": list(question.doc_keys),
        "type": question.qtype,
        "unmapped_evidence": question.unmapped_evidence,
        "answer": run.answer,
        "status": run.status,
        "status_detail": run.status_detail,
        "evidence_read": [list(pair) for pair in scored.evidence_read],
        "trajectory": run.steps,
        "usage": run.usage,
        "wall_s": round(run.wall_s, 4),
        "scores": scored.scores,
        "judge_failures": scored.judge_failures,
        "judge_tokens": scored.judge_tokens,
    }


def _judge() -> Judge | None:
    """The LLM judge when a judge endpoint is configured (VECTREE_JUDGE_*), else None."""
    settings = JudgeSettings.from_env()
    model = chat_model(settings.llm_settings()) if settings.configured else None
    return Judge(model) if model is not None else None


def _page_reader(library_root: Path) -> Callable[[str], list[str]]:
    """A document's page texts, read once per evaluation."""
    library = open_catalog(library_root).library
    cache: dict[str, list[str]] = {}

    def doc_pages(doc_id: str) -> list[str]:
        if doc_id not in cache:
            cache[doc_id] = library.pages(doc_id) if library.has(doc_id) else []
        return cache[doc_id]

    return doc_pages


def _routing_baselines(
    config: EvalConfig, questions: list[EvalQuestion], scoring: QuestionContext
) -> dict[str, dict[str, Any]]:
    """Corpus setting only: flat BM25 routing over every document of the library (distractors
    included, as the strategies search them), asked what the strategies were asked."""
    if config.setting != "corpus":
        return {}
    doc_ids = [r["doc_id"] for r in open_catalog(config.library).library.documents()]
    queries = {q.qid: question_text(q) for q in questions}
    path = config.out / BASELINES_FILE
    rankings = cached_rankings(path, sorted(doc_ids), scoring.doc_pages, queries)
    return baseline_summaries(rankings, questions, scoring.keys)


# -- results --------------------------------------------------------------------------------------
def write_results(
    config: EvalConfig,
    excluded: list[dict[str, str]],
    judged: bool,
    baselines: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Aggregate every finished run of the selected strategies into results.json + report.md,
    with the routing baselines (corpus setting) beside them."""
    records = [
        r
        for r in finished_runs(config.out / QUESTIONS_FILE)
        if r["strategy"] in config.strategies and r["seed"] < config.seeds
    ]
    summary = aggregate(records)
    results = {
        "dataset": config.dataset,
        "setting": config.setting,
        "command": config.command,
        "seeds": list(range(config.seeds)),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "library": str(config.library),
        "strategies": {s: summary[s] for s in config.strategies if s in summary},
        "baselines": baselines or {},
        "excluded": excluded,
        "notes": _notes(config, judged),
    }
    (config.out / RESULTS_FILE).write_text(json.dumps(results, indent=1), encoding="utf-8")
    write_report(config.out, results)
    return results


def _notes(config: EvalConfig, judged: bool) -> list[str]:
    notes = [
        "Evidence read = every page a successful step disclosed (opened pages, and the pages "
        "of passages returned by a passage search); repeats count once.",
        "Tokens: reported by the model endpoint, or counted with the MiniLM tokenizer for the "
        "offline models (flagged estimated in each run's usage).",
    ]
    if not judged:
        notes.append(
            "No judge endpoint configured (VECTREE_JUDGE_BASE_URL / VECTREE_JUDGE_MODEL): "
            "judge-based metrics are null; offline metrics only."
        )
    if config.setting == "gold-paper":
        notes.append("Setting gold-paper: each run was restricted to the question's document(s).")
    return notes


def command_line(argv: list[str]) -> str:
    return "vectree " + " ".join(shlex.quote(a) for a in argv)
