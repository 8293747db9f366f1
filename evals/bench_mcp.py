"""The MCP floor: a stdio client's first ``search_documents`` on a 10-document library.

Ingests ten development PDFs (``PDFS``, the ten shortest in ``--pdfs``) into ``--library``
(reused when present), takes the agent's own ``search_documents`` text for ``QUERIES`` in this
process, then ``--runs`` times starts `vectree mcp` over stdio with the MCP SDK's client and
times

- start-up: from starting the server process to the answered ``initialize``;
- first search: from the answered ``initialize`` to the first search result (floor: ≤ 1 s);
- later searches, one per further query;

and checks that every result's text is the agent's, byte for byte. Exits 1 when a first search
takes longer than the floor or a text differs.

    python -m evals.bench_mcp --pdfs ../shared/data/pdfs --library /tmp/vectree-bench-mcp [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from graph.recorder import Recorder
from graph.tool_engine import ToolEngine
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import close_catalogs, open_catalog
from tools.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[1]
PDFS = (
    "0908.0054.pdf",
    "2304.02623v1.pdf",
    "duplicate_media.pdf",
    "bohnet09.pdf",
    "mooney05.pdf",
    "bunescu-acl07.pdf",
    "P07-1088.pdf",
    "agarwal11.pdf",
    "P14-1059.pdf",
    "dyer12.pdf",
)
QUERIES = (
    "semantic parser that integrates syntax and semantics",
    "dependency parsing",
    "relation extraction from the web",
    "ultra light dark matter",
)
FLOOR_S = 1.0


def expected_texts(library: Path) -> list[str]:
    """The agent's own search_documents text for each query."""
    engine = ToolEngine(Toolbox(open_catalog(library)).tools(), len(QUERIES), Recorder())
    texts = [engine.call("search_documents", {"query": query}).text for query in QUERIES]
    close_catalogs()
    return texts


async def one_run(library: Path) -> dict[str, Any]:
    """Start `vectree mcp`, initialize, search every query; seconds and the texts received."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graph.cli", "--library", str(library), "mcp"],
        cwd=str(ROOT),
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ready = time.perf_counter()
        marks, texts = [ready], list[str]()
        for query in QUERIES:
            result = await session.call_tool("search_documents", {"query": query})
            marks.append(time.perf_counter())
            texts.extend(b.text for b in result.content if isinstance(b, types.TextContent))
    return {
        "startup_s": round(ready - started, 3),
        "first_search_s": round(marks[1] - marks[0], 3),
        "later_search_s": [round(b - a, 3) for a, b in pairwise(marks[1:])],
        "texts": texts,
    }


def run(pdfs: Path, library: Path, runs: int) -> dict[str, Any]:
    ingest_paths(
        [pdfs / name for name in PDFS], IngestContext(library=str(library)), progress=False
    )
    expected = expected_texts(library)
    rows = [anyio.run(one_run, library) for _ in range(runs)]
    first = [row["first_search_s"] for row in rows]
    later = [s for row in rows for s in row["later_search_s"]]
    return {
        "documents": len(PDFS),
        "runs": runs,
        "startup_median_s": round(statistics.median(r["startup_s"] for r in rows), 3),
        "startup_max_s": max(r["startup_s"] for r in rows),
        "first_search_median_s": round(statistics.median(first), 3),
        "first_search_max_s": max(first),
        "later_search_median_s": round(statistics.median(later), 3),
        "floor_s": FLOOR_S,
        "floor_met": max(first) <= FLOOR_S,
        "identical_text": all(row["texts"] == expected for row in rows),
        "rows": [{k: v for k, v in row.items() if k != "texts"} for row in rows],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", default="../shared/data/pdfs")
    parser.add_argument("--library", default="/tmp/vectree-bench-mcp")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(Path(args.pdfs), Path(args.library), args.runs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for row in result["rows"]:
            print(
                f"start-up {row['startup_s']:.2f}s  first search {row['first_search_s']:.3f}s  "
                f"later {row['later_search_s']}"
            )
        print({k: v for k, v in result.items() if k != "rows"})
    return 0 if result["floor_met"] and result["identical_text"] else 1


if __name__ == "__main__":
    sys.exit(main())
