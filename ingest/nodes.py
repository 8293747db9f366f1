"""The ingestion nodes: parse → structure → verify → tree → split → summarise → describe → embed
→ index.

Each node takes the state and the run context and returns a state update. A node that fails
sets ``status="failed"`` with a one-line reason and removes the document's staging folder; the
graph then ends the run, so one bad file never stops a batch and never leaves a half document.
The served graph runs ``check_input`` first: a caller of the server may only name files in the
inbox and write into the server's own library.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from ingest import describe, llm, summarise
from ingest.context import IngestContext
from ingest.errors import BadInputError, IngestError
from ingest.filing import filing_facts, filing_title
from ingest.parse import parse_pdf, pdf_page_count
from ingest.request import InvalidIngestInput, checked_ingest_request
from ingest.split import headings_within, split_oversized
from ingest.state import IngestState
from ingest.structure.locate import mask_spans
from ingest.structure.route import EMPTY_LAYOUT, extract_structure
from ingest.structure.verify import insert_abstract, verify_entries
from ingest.tree import build_tree, flag_ocr, from_tree_nodes, iter_drafts, to_tree_nodes
from store.chat import ModelCallError, ModelReplyError, chat_model
from store.faults import StorageError, storage_error
from store.library import DocumentRecord, Library, write_json
from store.settings import ServerSettings, default_library_dir
from store.types import (
    InvalidDocId,
    PageRecord,
    SectionEntry,
    VerificationReport,
    checked_doc_id,
    walk,
)

LOG = logging.getLogger(__name__)
Update = dict[str, Any]
Node = Callable[[IngestState, Runtime[IngestContext]], Update]


def file_doc_id(path: Path) -> str:
    """Content hash of a file: the same bytes always give the same document id."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def guarded(name: str) -> Callable[[Node], Node]:
    """Turn any failure inside a node into a clean 'failed' end of the run."""

    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        def run(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
            try:
                return node(state, runtime)
            except Exception as exc:  # one document's failure must not escape into the batch
                LOG.debug("%s failed for %s", name, state.get("source", "?"), exc_info=True)
                if state.get("staging"):
                    shutil.rmtree(state["staging"], ignore_errors=True)
                reason = failure_reason(name, exc, Path(runtime.context.library))
                status = "invalid" if isinstance(exc, InvalidIngestInput) else "failed"
                return {"status": status, "error": reason.splitlines()[0]}

        return run

    return wrap


def failure_reason(node: str, exc: Exception, library: Path) -> str:
    """One line for a document's failure: ours and the disk's say it in their own words."""
    if isinstance(exc, OSError):
        fault = storage_error(exc, library, "write the document")
        if fault is not None:
            return str(fault)
    if isinstance(exc, IngestError | StorageError):
        return str(exc)
    if isinstance(exc, ModelCallError):
        return f"{node}: {exc.reason}"
    return f"{node} failed: {type(exc).__name__}: {exc}"


def _model(runtime: Runtime[IngestContext]) -> BaseChatModel | None:
    return chat_model(runtime.context.llm_settings())


def input_doc_id(value: object) -> str:
    """A caller's document id, refused in one line unless it is a plain id (never a path)."""
    try:
        return checked_doc_id(value)
    except InvalidDocId as exc:
        raise BadInputError(f"doc_id {exc}") from None


@guarded("input")
def check_input(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Confine a request to the served graph (the CLI, whose user names any file, skips this).

    The library must be the server's own (``parse`` checks ids), and a ``source`` — a PDF path,
    or a supplied document's label, which later replaces documents ingested from the same
    source — must resolve inside the inbox; a relative one is taken relative to the inbox.
    Links are resolved first, so one pointing out of the inbox is refused, and ``parse`` reads
    the resolved path.
    """
    library, own = Path(runtime.context.library).resolve(), default_library_dir()
    if library != own:
        raise BadInputError(f"library {library} is not this server's library {own}")
    settings = ServerSettings.from_env()
    request = checked_ingest_request(dict(state), settings)
    if request.supplied is not None:
        return {"supplied": request.supplied.model_dump()}
    source = str(request.source)
    inbox = settings.inbox_dir(library)
    path = (inbox / source).resolve()
    if not path.is_relative_to(inbox):
        raise BadInputError(
            f"source {source!r} is outside the inbox {inbox}: put the PDF into the inbox first"
        )
    within_file_limits(path, settings)
    return {"source": str(path)}


def within_file_limits(path: Path, limits: ServerSettings) -> None:
    """A PDF in the inbox no larger than the operator's byte and page limits (one that cannot
    be opened is left for ``parse`` to name)."""
    if not path.is_file():
        return
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise InvalidIngestInput(
            f"invalid input: source: {size} bytes, more than the limit of {limits.max_bytes} "
            "(VECTREE_INGEST_MAX_BYTES)"
        )
    pages = pdf_page_count(path)
    if pages is not None and pages > limits.max_pages:
        raise InvalidIngestInput(
            f"invalid input: source: {pages} pages, more than the limit of {limits.max_pages} "
            "(VECTREE_INGEST_MAX_PAGES)"
        )


@guarded("parse")
def parse(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Hash the input, skip it if already in the library, else parse it into a staging folder.

    A given ``doc_id`` must be a plain id: it names the document's folder in the library.
    """
    requested = input_doc_id(state["doc_id"]) if state.get("doc_id") else None
    library = Library(Path(runtime.context.library)).ensure()
    supplied = state.get("supplied")
    if supplied:
        doc_id = requested or _supplied_id(supplied)
    else:
        path = Path(state.get("source", ""))
        if not path.is_file():
            raise BadInputError(f"no such file: {path}")
        doc_id = file_doc_id(path)
    if library.has(doc_id):
        return {"doc_id": doc_id, "status": "present"}
    staging = library.new_staging(doc_id)
    update: dict[str, Any] = {"doc_id": doc_id, "staging": str(staging)}
    if supplied:
        update.update(
            pages=supplied["pages"],
            images=[],
            outline=[],
            candidates=[],
            layout=EMPTY_LAYOUT,
            pdf_metadata={},
            ocr_pages=[],
        )
    else:
        try:
            update.update(
                parse_pdf(
                    Path(state["source"]),
                    runtime.context.parser,
                    staging / "images",
                    runtime.context.ocr_options(),
                )
            )
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return update


def _supplied_id(supplied: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(supplied, sort_keys=True).encode()).hexdigest()[:16]


@guarded("structure")
def structure(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Flat (level, title, start page) entries from the outline, printed contents, headings or
    the LLM; with ``ignore_outline`` the bookmarks are hidden from every source."""
    if state.get("supplied"):
        entries = list(state["supplied"]["entries"])
        return {"entries": entries, "structure_method": "supplied"}
    found = extract_structure(
        runtime.context.structure,
        state["pages"],
        [] if runtime.context.ignore_outline else state["outline"],
        state["candidates"],
        _model(runtime),
        state.get("layout", EMPTY_LAYOUT),
    )
    return {
        "entries": found.entries,
        "structure_method": found.method,
        "listing_spans": found.listing_spans,
    }


@guarded("verify")
def verify(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Check titles against pages (±1), repair up to 3 rounds, decide shared pages, add Abstract.

    Printed contents lists are masked first: a title must be found in the body, not in a list.
    """
    pages, method = state["pages"], state["structure_method"]
    if method == "supplied":
        report = VerificationReport(
            method="supplied",
            entries=len(state["entries"]),
            initial_verification_rate=None,
            verification_rate=None,
            repair_rounds=0,
            repaired=[],
            dropped=[],
            flagged=[],
        )
        return {"verification": report}
    model = _model(runtime)
    repairer = llm.llm_repairer(model) if model is not None else None
    body = mask_spans(pages, state.get("listing_spans", []))
    entries, report = verify_entries(state["entries"], body, method, repairer)  # type: ignore[arg-type]
    entries = insert_abstract(entries, pages)
    return {"entries": entries, "verification": report}


@guarded("tree")
def tree(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Fold entries into a tree with inclusive page ranges covering the whole document."""
    roots = build_tree(state["entries"], len(state["pages"]))
    return {"tree": to_tree_nodes(roots)}


@guarded("split")
def split(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Split nodes over 20,000 tokens and 10 pages; re-number ids depth-first."""
    roots = from_tree_nodes(state["tree"])
    model = _model(runtime)
    offline = headings_within(state["candidates"])
    extract = _llm_within(model, offline) if model is not None else offline
    split_titles = split_oversized(roots, state["pages"], extract)
    return {"tree": to_tree_nodes(roots), "split_nodes": split_titles}


def _llm_within(
    model: BaseChatModel, offline: Callable[[list[str], int, int], list[SectionEntry]]
) -> Callable[[list[str], int, int], list[SectionEntry]]:
    """Sections inside an oversized node from the model; from the headings found in its pages
    when the model's reply is unusable (not JSON, or cut at its cap twice)."""

    def extract(pages: list[str], first: int, last: int) -> list[SectionEntry]:
        window = [text if first <= n <= last else "" for n, text in enumerate(pages, start=1)]
        try:
            return llm.llm_entries(model, window)
        except ModelReplyError:  # logged once where it happened
            return offline(pages, first, last)

    return extract


@guarded("summarise")
def summarise_node(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Extractive summaries always; LLM summaries replace them when an LLM is configured."""
    roots = from_tree_nodes(state["tree"])
    bodies = summarise.summarise_drafts(roots, state["pages"])
    model = _model(runtime)
    if model is not None:
        drafts = iter_drafts(roots)
        todo = [i for i, body in enumerate(bodies) if summarise.needs_summary(body)]
        written = llm.llm_summaries(
            model,
            [(drafts[i].title, bodies[i]) for i in todo],
            runtime.context.llm_settings().max_concurrency,
        )
        for i, text in zip(todo, written, strict=True):
            if text.strip():
                drafts[i].summary = text.strip()
    return {"tree": to_tree_nodes(roots)}


@guarded("describe")
def describe_node(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Bibliographic metadata, a one-sentence description and keywords, and for an SEC
    filing its issuer, form and fiscal period (``ingest.filing``), which also give its year."""
    pages = state["pages"]
    supplied = state.get("supplied")
    fallback = supplied["title"] if supplied else Path(state.get("source", "document")).stem
    meta = describe.regex_metadata(pages, state["candidates"], state["pdf_metadata"], fallback)
    if supplied:
        meta["title"], meta["year"] = supplied["title"], supplied.get("year")
        meta["venue"] = supplied.get("venue")
    meta["description"] = describe.one_sentence(_opening_text(state))
    meta["filing"] = filing_facts(pages)
    if meta["filing"]["fiscal_year"] is not None:
        meta["year"] = meta["filing"]["fiscal_year"]  # a filing's year is its fiscal year
    meta["printed_title"] = meta["title"]
    model = _model(runtime)
    if model is not None:
        hints = {k: v for k, v in meta.items() if k not in ("description", "keywords")}
        try:
            refined = llm.llm_metadata(model, hints, "\n".join(pages[:2]))
        except (ModelCallError, llm.LLMOutputError):  # enrichment: the page metadata stands
            LOG.info("keeping the metadata read from the pages: the model's was unusable")
        else:
            meta = describe.merge_llm_metadata(meta, refined)
    if not supplied:  # a filing is named by its facts, not by "FORM 10-K"
        meta["title"] = filing_title(meta["filing"]) or meta["title"]
    return {"metadata": meta}


def _opening_text(state: IngestState) -> str:
    """The abstract's summary when there is one, else the first node with prose."""
    nodes = walk(state["tree"])
    for node in nodes:
        if "abstract" in node["title"].lower():
            return node["summary"]
    return next((n["summary"] for n in nodes if len(n["summary"].split()) > 8), state["pages"][0])


def write_artefacts(state: IngestState, runtime: Runtime[IngestContext]) -> Path:
    """Write every per-document file into the staging folder (not yet visible)."""
    staging = Path(state["staging"])
    ocr_pages = set(state.get("ocr_pages", []))
    write_json(staging / "tree.json", flag_ocr(state["tree"], ocr_pages))
    with (staging / "pages.jsonl").open("w", encoding="utf-8") as handle:
        for number, text in enumerate(state["pages"], start=1):
            row = PageRecord(page=number, text=text)
            if number in ocr_pages:
                row["ocr"] = True
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    write_json(staging / "images.json", state["images"])
    write_json(staging / "metadata.json", state["metadata"])
    write_json(
        staging / "verification.json",
        {**state["verification"], "split_nodes": state.get("split_nodes", [])},
    )
    record = DocumentRecord(
        doc_id=state["doc_id"],
        title=state["metadata"]["title"],
        pages=len(state["pages"]),
        nodes=len(walk(state["tree"])),
        verification_rate=state["verification"]["verification_rate"],
        source=state.get("source", ""),
        structure=state["structure_method"],
        parser="supplied" if state.get("supplied") else runtime.context.parser,
        ingested_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    write_json(staging / "document.json", record)
    return staging


@guarded("embed")
def embed(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """The index entries (``store.entries``) with their dense and BM25 vectors.

    Embedding is the costliest step after parsing (BM25 reads every page twice: for the
    document entry and for its section's entry), so it runs here, in the process that prepared
    the document, and never in the one process that owns the index and writes it.
    """
    from store.catalog import open_catalog
    from store.entries import document_entries

    entries = document_entries(state["doc_id"], state["metadata"], state["tree"], state["pages"])
    index = open_catalog(Path(runtime.context.library)).index
    return {"embedded": index.embed_entries(entries)}


@guarded("index")
def index(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Write artefacts, index the embedded entries, then publish the document atomically.

    Publishing holds the library's write lock (at no cost inside a CLI batch, which holds it
    already), so a served ingestion and a CLI writer never change the library at once.
    """
    from store.catalog import open_catalog

    staging = write_artefacts(state, runtime)
    catalog = open_catalog(Path(runtime.context.library))
    entries = state["embedded"]
    with catalog.writing("ingest graph"):
        catalog.publish(state["doc_id"], staging, entries)
        if state.get("source"):
            catalog.replace_older_versions(state["doc_id"], state["source"])
    return {"status": "ingested", "index_entries": len(entries), "embedded": []}
