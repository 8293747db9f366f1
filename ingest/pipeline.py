"""Batch ingestion: discover inputs, run the ingestion graph per document, report the outcome.

With ``workers > 1`` the CPU-heavy nodes (parse … embed) run in separate processes; the
``index`` node always runs in this process, which owns the library's single Qdrant client.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ingest.context import IngestContext
from ingest.errors import IngestError
from ingest.graph import build_index_graph, build_ingest_graph
from ingest.qasper import is_qasper_file, load_qasper, qasper_doc_id, qasper_document
from store.catalog import open_catalog

LOG = logging.getLogger(__name__)


@dataclass
class Job:
    """One document to ingest: a PDF path, or one paper of a QASPER file."""

    source: str
    graph_input: dict[str, Any]


@dataclass
class Outcome:
    """What happened to one input."""

    source: str
    status: str
    doc_id: str | None = None
    error: str | None = None
    pages: int = 0
    seconds: float = 0.0


@dataclass
class BatchReport:
    """Totals for a batch, printed by the CLI and used by the benchmark."""

    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def pages(self) -> int:
        return sum(o.pages for o in self.outcomes if o.status == "ingested")

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def as_dict(self) -> dict[str, Any]:
        seconds = max(self.seconds, 1e-9)
        ingested = self.count("ingested")
        return {
            "ingested": ingested,
            "present": self.count("present"),
            "failed": len(self.failed),
            "pages": self.pages,
            "seconds": round(self.seconds, 2),
            "pages_per_second": round(self.pages / seconds, 2),
            "documents_per_minute": round(60 * ingested / seconds, 2),
            "peak_memory_mb": peak_memory_mb(),
            "workers": self.workers,
            "outcomes": [asdict(o) for o in self.outcomes],
        }


def peak_memory_mb() -> float:
    """Peak resident memory of this process and its finished children (Linux reports KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round((own + children) / 1024, 1)


def discover(paths: list[Path]) -> tuple[list[Job], list[Outcome]]:
    """Expand folders into their PDFs and QASPER files; a missing path is reported, not raised."""
    jobs: list[Job] = []
    problems: list[Outcome] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".pdf", ".json"))
        elif path.exists():
            files = [path]
        else:
            problems.append(Outcome(str(path), "failed", error="no such file or folder"))
            continue
        for file in files:
            try:
                for job in _jobs_for(file.resolve()):
                    if isinstance(job, Outcome):
                        problems.append(job)
                    else:
                        jobs.append(job)
            except IngestError as exc:
                problems.append(Outcome(str(file), "failed", error=str(exc)))
    return jobs, problems


def _jobs_for(path: Path) -> Iterator[Job | Outcome]:
    """The job of a PDF, or one job per paper of a QASPER file (a malformed paper is a failed
    outcome of its own: the other papers still run)."""
    if not is_qasper_file(path):
        yield Job(str(path), {"source": str(path)})
        return
    for arxiv_id, paper in load_qasper(path).items():
        source = f"{path}#{arxiv_id}"
        try:
            document = qasper_document(arxiv_id, paper)
        except IngestError as exc:
            yield Outcome(source, "failed", error=str(exc))
            continue
        doc_id = qasper_doc_id(arxiv_id, paper)
        yield Job(source, {"source": source, "doc_id": doc_id, "supplied": dict(document)})


def _prepare(job_input: dict[str, Any], context: IngestContext) -> dict[str, Any]:
    """Worker-process entry: run every node but ``index`` and return the full state."""
    return dict(build_ingest_graph(with_index=False).invoke(job_input, context=context))


def ingest_paths(
    paths: list[Path], context: IngestContext, workers: int = 1, progress: bool = True
) -> BatchReport:
    """Ingest files and folders into ``context.library``; never raises for a bad input.

    The batch holds the library's write lock throughout (a second writer waits, then says
    who holds it). The embedded index stays open for the whole batch, is lent to any other
    process that waits for it between two operations (``store.edge``), is settled (optimised
    and flushed) when the batch ends, and is then released.
    """
    started = time.perf_counter()
    jobs, problems = discover(paths)
    workers = max(1, min(workers, len(jobs)))  # no worker processes for a single document
    # The cores the workers leave read one document's scanned pages side by side.
    context = replace(context, ocr_jobs=max(1, default_workers() // workers))
    report = BatchReport(outcomes=list(problems), workers=workers)
    catalog = open_catalog(Path(context.library))
    with catalog.writing("vectree ingest"):
        written = LIBRARY_BYTES_PER_PDF_BYTE * sum(expected_cost(job) for job in jobs)
        plural = "" if len(jobs) == 1 else "s"
        catalog.require_space(written, f"ingesting {len(jobs)} document{plural}")
        catalog.reconcile()
        bar = tqdm(
            total=len(jobs), unit="doc", desc="ingest", disable=not progress, file=sys.stderr
        )
        try:
            for outcome in _run_jobs(jobs, context, workers):
                report.outcomes.append(outcome)
                bar.set_postfix_str(f"{Path(outcome.source).name[:30]} {outcome.status}")
                bar.update(1)
        finally:
            bar.close()
    catalog.index.close()
    report.seconds = time.perf_counter() - started
    return report


LIBRARY_BYTES_PER_PDF_BYTE = 2
"""Library files written per byte of PDF, as a bound for the free-space check (page texts,
images and trees took 0.04 to 0.79 bytes per PDF byte on three development papers)."""
PARENT_POLL_S = 0.5
"""How often a worker checks that the batch that started it still runs."""


def _run_jobs(jobs: list[Job], context: IngestContext, workers: int) -> Iterator[Outcome]:
    index_graph = build_index_graph()
    if workers <= 1:
        for job in jobs:
            started = time.perf_counter()
            state = _prepare(job.graph_input, context)
            yield _finish(job, state, index_graph, context, started)
        return
    spawn = multiprocessing.get_context("spawn")  # no fork after ONNX/Qdrant threads started
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=spawn, initializer=watch_parent, initargs=(os.getpid(),)
    ) as pool:
        submitted: dict[Future[dict[str, Any]], tuple[Job, float]] = {
            pool.submit(_prepare, job.graph_input, context): (job, time.perf_counter())
            for job in sorted(jobs, key=expected_cost, reverse=True)
        }
        for future in as_completed(submitted):
            job, started = submitted[future]
            try:
                state = future.result()
            except Exception as exc:  # a crashed worker fails its document, not the batch
                yield Outcome(job.source, "failed", error=f"worker crashed: {exc}")
                continue
            yield _finish(job, state, index_graph, context, started)


def expected_cost(job: Job) -> int:
    """A cheap proxy of how long a job takes (its file's size): the pool starts the largest
    files first, so that the batch does not end with one worker parsing a big file alone."""
    try:
        return os.path.getsize(job.source.split("#", 1)[0])
    except OSError:
        return 0


def default_workers() -> int:
    """One worker process per core this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def watch_parent(parent: int) -> None:
    """Worker initializer: end this worker as soon as its parent is gone (killed with -9, the
    parent cannot tell it to stop), so no worker outlives a batch; the next batch removes the
    staging folders they left (``Catalog.reconcile``)."""

    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the kernel was asked to tell us
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """On Linux, ask the kernel to SIGKILL this process when its parent dies: a polling thread
    alone can be starved for seconds while a parser holds the GIL. Elsewhere the thread in
    ``watch_parent`` is the only guard."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        LOG.debug("prctl(PR_SET_PDEATHSIG) unavailable; relying on the parent watch thread")


def _finish(
    job: Job, state: dict[str, Any], index_graph: Any, context: IngestContext, started: float
) -> Outcome:
    """Run the index node for a prepared document and describe the result."""
    if state.get("status") is None:
        pages = len(state.get("pages", []))
        state = dict(index_graph.invoke(state, context=context))
    else:
        pages = 0
    if state.get("status") == "present" and state.get("doc_id"):
        open_catalog(Path(context.library)).replace_older_versions(state["doc_id"], job.source)
    return Outcome(
        source=job.source,
        status=str(state.get("status", "failed")),
        doc_id=state.get("doc_id"),
        error=state.get("error"),
        pages=pages,
        seconds=round(time.perf_counter() - started, 2),
    )
