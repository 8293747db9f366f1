"""Index footprint: what the structural index stores against the chunk stores of the baselines.

The structural index holds one entry per document plus one per top-level section; the
``dense`` baseline stores 800-token passages (400 overlap), ``rit`` node-aligned chunks of at
most 512 tokens, and RAPTOR its 250-token leaves plus cluster summaries (built offline here).
Each entry carries one 384-float MiniLM vector and (except RAPTOR's) one sparse BM25 vector;
bytes are the vectors' raw size (4 bytes per float, 8 per sparse non-zero: index + weight),
payloads not counted.

    python -m evals.footprint --pdfs ../shared/data/pdfs [--library DIR] [--json]

Without ``--library`` the PDFs are ingested into a temporary library first.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from graph.context import AgentContext
from graph.strategies import raptor
from graph.strategies.base import StrategyRequest
from ingest.context import IngestContext
from ingest.pipeline import ingest_paths
from store.catalog import Catalog, close_catalogs, open_catalog
from store.chunks import SCHEMES, ChunkStore
from store.raptor_tree import RaptorStore
from store.snapshot import Rows
from tools.toolbox import SearchScope

FLOAT_BYTES, SPARSE_BYTES = 4, 8


def structural_footprint(catalog: Catalog) -> dict[str, int]:
    """Points and vector sizes of the structural collection (committed entries)."""
    index = catalog.index
    rows = Rows.load(index.client, index.collection)
    return {
        "points": len(rows.payloads),
        "dense_floats": int(rows.dense.size),
        "sparse_nonzeros": sum(len(indices) for indices, _ in rows.sparse),
    }


def measure(library: Path) -> dict[str, Any]:
    """Footprint of every store of a library (chunk stores are built if missing)."""
    catalog = open_catalog(library)
    doc_ids = [record["doc_id"] for record in catalog.library.documents()]
    stores: dict[str, dict[str, int]] = {"structural": structural_footprint(catalog)}
    for scheme in SCHEMES:
        store = ChunkStore(catalog, scheme)
        store.ensure(doc_ids)
        footprint = store.footprint()
        stores[f"{scheme} chunks"] = {
            key: footprint[key] for key in ("points", "dense_floats", "sparse_nonzeros")
        }
    stores["raptor trees (offline)"] = raptor_footprint(catalog)
    for footprint in stores.values():
        footprint["vector_bytes"] = (
            footprint["dense_floats"] * FLOAT_BYTES + footprint["sparse_nonzeros"] * SPARSE_BYTES
        )
    pages = sum(record["pages"] for record in catalog.library.documents())
    return {"documents": len(doc_ids), "pages": pages, "stores": stores}


def raptor_footprint(catalog: Catalog) -> dict[str, int]:
    """RAPTOR's cached trees (dense vectors only), built offline for every document first."""
    request = StrategyRequest(
        "overview",
        SearchScope(),
        AgentContext(library=str(catalog.library.root), strategy="raptor"),
        catalog,
        None,
    )
    raptor.run(request)
    store = RaptorStore(catalog.library.root, raptor.summariser_variant(None), {})
    built = store.footprint()
    return {"points": built["nodes"], "dense_floats": built["dense_floats"], "sparse_nonzeros": 0}


def table(result: dict[str, Any]) -> str:
    """The Markdown table the README shows."""
    base = result["stores"]["structural"]["points"] or 1
    lines = [
        f"{result['documents']} documents, {result['pages']} pages",
        "",
        "| store | entries | dense floats | BM25 non-zeros | vector bytes | vs structural |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in result["stores"].items():
        lines.append(
            f"| {name} | {f['points']:,} | {f['dense_floats']:,} | {f['sparse_nonzeros']:,} | "
            f"{f['vector_bytes'] / 1e6:.2f} MB | {f['points'] / base:.1f}× |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", type=Path, required=True, help="folder of PDFs to measure")
    parser.add_argument("--library", type=Path, help="an existing library of those PDFs")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        library = args.library or Path(scratch) / "library"
        if args.library is None:
            ingest_paths([args.pdfs], IngestContext(library=str(library)), workers=2)
        result = measure(library)
        close_catalogs()
    print(json.dumps(result, indent=1) if args.json else table(result))


if __name__ == "__main__":
    main()
