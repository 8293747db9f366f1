"""A bounded load test of the served agent: concurrent runs while a CLI ingest writes.

Ingests the bundled demo corpus into ``--library`` (reused when present), starts `vectree serve`
on a free loopback port with one API key, asks one question alone (the baseline), then sends
``--runs`` questions at once through langgraph-sdk (each on its own thread, ``runs.wait``) while
`vectree ingest` adds ``--pdfs`` to the same library, and polls ``/ok`` throughout. With
``--supplied-pages N`` a served ingest of a supplied document of N pages (5,000 characters
each) starts three seconds before the questions: a large ingest must not make them wait.
Everything stops by itself at ``--deadline``.

It checks that every run ends with an answer or a clear status, that no thread is lost or
duplicated, and that ``/ok`` stayed healthy; it reports runs per second, p50/p95 latency, the
supplied ingest's time and the server's peak memory.

    python -m evals.bench_serve --library /tmp/vectree-bench-serve --runs 20 [--json]
    python -m evals.bench_serve --library /tmp/vectree-bench-serve --runs 4 --supplied-pages 5000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client

from evals.bench_ask import percentile
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "ingest" / "demo_corpus"
KEY = "bench-serve-key"
QUESTIONS = [
    "How many academic papers does the S2ORC corpus contain?",
    "Which parsing algorithm is used for labeled dependency parsing?",
    "What metadata does S2ORC provide for each paper?",
    "How is the parser evaluated?",
]
FINAL = {"answered", "budget", "fallback", "failed", "needs_llm", "invalid"}


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(library: Path, deadline: float) -> tuple[subprocess.Popen[bytes], str]:
    """`vectree serve` on a free loopback port with one API key; waits for ``/ok``."""
    port = free_port()
    env = {**os.environ, "VECTREE_SERVER_KEYS": KEY}
    command = [sys.executable, "-m", "graph.cli", "--library", str(library), "serve"]
    process = subprocess.Popen(
        [*command, "--port", str(port), "--host", "127.0.0.1"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline and process.poll() is None:
        if healthy(url):
            return process, url
        time.sleep(0.5)
    stop(process)
    raise RuntimeError(f"the server did not start; see {library / 'server' / 'server.log'}")


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process group we started (TERM, then KILL)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


async def one_run(client: Any, index: int) -> dict[str, Any]:
    """One question on a new thread; its latency and how it ended."""
    thread = await client.threads.create(metadata={"bench": "serve", "index": index})
    started = time.perf_counter()
    try:
        values = await client.runs.wait(
            thread["thread_id"], "agent", input={"question": QUESTIONS[index % len(QUESTIONS)]}
        )
        status = str((values or {}).get("status", "no status"))
        detail = str((values or {}).get("status_detail", ""))
    except Exception as exc:  # a run the server could not finish is a result, not a crash
        status, detail = "error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return {
        "thread_id": thread["thread_id"],
        "seconds": round(time.perf_counter() - started, 3),
        "status": status,
        "detail": detail,
    }


async def watch(url: str, stop_event: asyncio.Event, log: list[bool]) -> None:
    """Poll ``/ok`` every half second until told to stop."""
    while not stop_event.is_set():
        log.append(await asyncio.to_thread(healthy, url))
        await asyncio.sleep(0.5)


def supplied_document(pages: int) -> dict[str, Any]:
    """A supplied document of ``pages`` pages of about 5,000 characters, a section every five."""
    words = ["supply", "chain", "revenue", "growth", "margin", "segment", "quarterly", "outlook"]
    text = [
        " ".join(f"{words[(page + n) % len(words)]}{n % 97}" for n in range(555))
        for page in range(pages)
    ]
    entries = [{"level": 1, "title": f"Part {n}", "start_page": n + 1} for n in range(0, pages, 5)]
    return {"title": f"A supplied document of {pages} pages", "pages": text, "entries": entries}


async def supplied_ingest(client: Any, pages: int) -> dict[str, Any]:
    """One served ingest of a supplied document; its time and how it ended."""
    started = time.perf_counter()
    try:
        values = await client.runs.wait(
            None, "ingest", input={"supplied": supplied_document(pages)}
        )
        status = str((values or {}).get("status", "no status"))
    except Exception as exc:  # a refused or failed ingest is a result
        status = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return {"pages": pages, "seconds": round(time.perf_counter() - started, 2), "status": status}


async def load(url: str, runs: int, timeout: float, supplied_pages: int = 0) -> dict[str, Any]:
    """One question alone, then all runs at once (after a supplied ingest has started, with
    ``supplied_pages``), with the health poll alongside; bounded by ``timeout``."""
    client = get_client(url=url, api_key=KEY)
    alone = await one_run(client, 0)
    stop_event, health = asyncio.Event(), list[bool]()
    watcher = asyncio.create_task(watch(url, stop_event, health))
    ingest = None
    if supplied_pages:
        ingest = asyncio.create_task(supplied_ingest(client, supplied_pages))
        await asyncio.sleep(3)
    started = time.perf_counter()
    rows = await asyncio.wait_for(
        asyncio.gather(*(one_run(client, i) for i in range(runs))), timeout
    )
    wall = time.perf_counter() - started
    supplied = await asyncio.wait_for(ingest, timeout) if ingest is not None else None
    stop_event.set()
    await watcher
    threads = await client.threads.search(metadata={"bench": "serve"}, limit=runs * 2 + 2)
    return {
        "rows": list(rows),
        "alone": alone,
        "supplied": supplied,
        "wall": wall,
        "health": health,
        "threads": threads,
    }


def peak_memory_mib(pid: int) -> float | None:
    """The peak resident memory of a running process (Linux), in MiB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kib = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")), None)
    return None if kib is None else round(int(kib) / 1024, 1)


def run(
    library: Path, pdfs: list[Path], runs: int, deadline_s: float, supplied_pages: int = 0
) -> dict[str, Any]:
    """Prepare the library, serve it, load it while ingesting, and summarise."""
    deadline = time.monotonic() + deadline_s
    ingest_paths([DEMO], IngestContext(library=str(library)), workers=1, progress=False)
    close_catalogs()
    server, url = start_server(library, deadline)
    writer = subprocess.Popen(
        [sys.executable, "-m", "graph.cli", "--library", str(library), "ingest", *map(str, pdfs)],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        budget = max(1.0, deadline - time.monotonic())
        result = asyncio.run(load(url, runs, budget, supplied_pages))
        ingest_running = writer.poll() is None
        result["peak_memory_mib"] = peak_memory_mib(server.pid)
    finally:
        stop(writer)
        stop(server)
    return summary(result, runs, ingest_running)


def summary(result: dict[str, Any], runs: int, ingest_running: bool) -> dict[str, Any]:
    rows = result["rows"]
    seconds = [row["seconds"] for row in rows]
    ids = [row["thread_id"] for row in rows]
    found = [thread["thread_id"] for thread in result["threads"]]
    return {
        "runs": runs,
        "alone_s": result["alone"]["seconds"],
        "supplied_ingest": result["supplied"],
        "server_peak_memory_mib": result["peak_memory_mib"],
        "wall_s": round(result["wall"], 2),
        "runs_per_s": round(runs / result["wall"], 3),
        "p50_s": round(statistics.median(seconds), 2),
        "p95_s": round(percentile(seconds, 0.95), 2),
        "statuses": {
            s: sum(r["status"] == s for r in rows) for s in sorted({r["status"] for r in rows})
        },
        "all_ended_clearly": all(row["status"] in FINAL for row in rows),
        "threads_lost": sorted(set(ids) - set(found)),
        "threads_duplicated": len(found) - len(set(found)),
        "health_checks": len(result["health"]),
        "health_failures": result["health"].count(False),
        "ingest_still_running_at_end": ingest_running,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="/tmp/vectree-bench-serve")
    parser.add_argument(
        "--pdfs",
        nargs="+",
        default=[
            str(ROOT.parent / "shared/data/pdfs" / n) for n in ("map-reduce.pdf", "dyer12.pdf")
        ],
        help="PDFs the concurrent CLI ingest writes into the library",
    )
    parser.add_argument("--runs", type=int, default=20, help="concurrent runs (default 20)")
    parser.add_argument(
        "--supplied-pages",
        type=int,
        default=0,
        help="pages of a supplied document ingested through the server during the runs",
    )
    parser.add_argument("--deadline", type=float, default=900, help="stop after this many seconds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pdfs = [Path(p) for p in args.pdfs]
    result = run(Path(args.library), pdfs, args.runs, args.deadline, args.supplied_pages)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    main()
