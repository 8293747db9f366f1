"""The seven agent tools over one library. Each handler returns a ``ToolResult``; misuse is
answered, not raised. Validation, budgets and recording are the tool engine's
(``graph.tool_engine``); ``Toolbox.tools`` hands it the handlers bound to one run's scope.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial, wraps
from typing import Any

import numpy as np

from store.catalog import Catalog
from store.library import DamagedFile
from store.locks import IndexLockedError
from store.search_engine import SearchFilters, engine_for
from store.settings import GateSettings
from store.types import MIN_PREFIX, InvalidDocId, checked_doc_id
from tools import formatting, schemas
from tools.filings import FilingFilter
from tools.pages import rank_pages, rank_sections, scores_of
from tools.results import Tool, ToolResult, failure
from tools.schemas import MAX_PAGES_PER_CALL, TOOL_SCHEMAS, TOOLS, ToolArgs
from tools.search import DocumentSearch

FILTER_KEYS = ("year_min", "year_max", "journal", "author")
IMAGE_MIME = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif"}


PAGE_HEADER = re.compile(r"^(=== .* ===)$", re.MULTILINE)


def quoted_page(text: str) -> str:
    """A page's text as the model reads it: a line of the page shaped like the page headers
    ("=== doc p.9 ===") is indented, so a page cannot pose as another page (or end its own)."""
    return PAGE_HEADER.sub(r"  \1", text.strip()) or "(no text on this page)"


@dataclass(frozen=True)
class SearchScope:
    """Limits a run's caller set (the graph input's doc_ids and filters): every document search
    of the run stays inside them, whatever the model asks for."""

    doc_ids: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None
    journal: str | None = None
    author: str | None = None

    @classmethod
    def from_input(cls, doc_ids: list[str] | None, filters: dict[str, Any] | None) -> SearchScope:
        known = {
            k: v for k, v in (filters or {}).items() if k in FILTER_KEYS and v not in ("", None)
        }
        return cls(doc_ids=tuple(doc_ids or ()), **known)

    def documents(self, catalog: Catalog) -> list[str]:
        """The documents a run in this scope may use: its doc_ids that exist, else every
        document passing its filters."""
        if self.doc_ids:
            return [d for d in self.doc_ids if catalog.library.has(d)]
        filters = SearchFilters(
            year_min=self.year_min, year_max=self.year_max, journal=self.journal, author=self.author
        )
        return [d.doc_id for d in engine_for(catalog).documents(filters)]


Handler = Callable[..., ToolResult]
HANDLERS: dict[str, Handler] = {}


def handles(schema: type[ToolArgs]) -> Callable[[Handler], Handler]:
    """Mark a Toolbox method as the handler of the tool ``schema`` declares.

    A tool that names a document gets it as a visible doc id (a unique prefix resolved), or the
    model gets an error saying how to find one, before the handler runs. A damaged document's
    file is answered as an error naming it, like any misuse, so the run goes on with the other
    documents.
    """

    names_a_document = "doc_id" in schema.model_fields

    def register(method: Handler) -> Handler:
        @wraps(method)
        def run(toolbox: Toolbox, **kwargs: Any) -> ToolResult:
            try:
                if names_a_document:
                    known = toolbox.known_doc(kwargs["doc_id"])
                    if isinstance(known, ToolResult):
                        return known
                    kwargs["doc_id"] = known
                return method(toolbox, **kwargs)
            except DamagedFile as exc:
                return failure(f"{exc}. Use another document.")

        HANDLERS[schema.__name__] = run
        return method

    return register


class Toolbox:
    """Tool implementations bound to a catalog (library + index)."""

    def __init__(
        self,
        catalog: Catalog,
        gates: GateSettings | None = None,
        gates_on: bool = True,
        page_cap: int = MAX_PAGES_PER_CALL,
        scope: SearchScope | None = None,
        disabled: frozenset[str] = frozenset(),
    ) -> None:
        self.catalog = catalog
        self.disabled = disabled
        self.library = catalog.library
        self.gates_on = gates_on
        self.page_cap = page_cap
        self.scope = scope or SearchScope()
        self._gates = gates

    @cached_property
    def search(self) -> DocumentSearch:
        return DocumentSearch(self.catalog, self._gates)

    def tools(self) -> list[Tool]:
        """The tools this run offers (every declared tool but the switched-off ones), bound to
        this toolbox, for the tool engine."""
        return [
            Tool(schema, partial(HANDLERS[schema.__name__], self))
            for schema in TOOLS
            if schema.__name__ not in self.disabled
        ]

    def run(self, name: str, **args: Any) -> ToolResult:
        """Run a tool with arguments the caller already knows are valid (a step the graph
        takes itself, not a model's call: those go through the tool engine)."""
        return HANDLERS[name](self, **args)

    def known_doc(self, doc_id: str) -> str | ToolResult:
        """A visible doc id, or an error naming how to get a valid one."""
        try:
            checked_doc_id(doc_id)
        except InvalidDocId as exc:
            return failure(f"{exc}.")
        if self.library.has(doc_id):
            return doc_id
        resolved = self.library.resolve(doc_id) if len(doc_id) >= MIN_PREFIX else None
        if resolved:
            return resolved
        return failure(
            f"unknown doc_id {doc_id!r}. Use a doc_id exactly as returned by search_documents."
        )

    # -- layer 0 ---------------------------------------------------------------------------
    @handles(schemas.search_documents)
    def _search_documents(
        self,
        query: str,
        year_min: int | None,
        year_max: int | None,
        journal: str | None,
        author: str | None,
        limit: int,
        issuer: str | None = None,
        form: str | None = None,
        fiscal_year: int | None = None,
        fiscal_quarter: int | None = None,
    ) -> ToolResult:
        scope = self.scope
        try:
            found = self.search.search(
                query.strip() or "*",
                limit=limit,
                year_min=year_min if year_min is not None else scope.year_min,
                year_max=year_max if year_max is not None else scope.year_max,
                journal=journal or scope.journal,
                author=author or scope.author,
                doc_ids=scope.doc_ids or None,
                gates=self.gates_on,
                filing=FilingFilter(issuer, form, fiscal_year, fiscal_quarter),
            )
        except IndexLockedError as exc:
            return failure(f"{exc}. Retry the search in a moment.")
        hits = [h.as_dict() for h in found]
        if not hits:
            return ToolResult(
                content=f'No documents match {query!r}. Try other words, fewer filters, or "*".',
                artifact={"results": []},
            )
        with_pages = "get_document_tree" in self.disabled  # pages come from search results
        lines = [
            formatting.search_line(rank, hit, section_pages=with_pages)
            for rank, hit in enumerate(hits, start=1)
        ]
        return ToolResult(content="\n".join(lines), artifact={"results": hits})

    @handles(schemas.get_paper_metadata)
    def _get_paper_metadata(self, doc_id: str) -> ToolResult:
        meta = self.library.metadata(doc_id)
        tree = self.library.tree(doc_id)
        pages = self.library.record(doc_id)["pages"]
        sections = [_node_ref(n) for n in tree]
        return ToolResult(
            content=formatting.metadata_text(doc_id, meta, tree, pages),
            artifact={
                "doc_id": doc_id,
                "metadata": dict(meta),
                "total_pages": pages,
                "sections": sections,
            },
            doc_id=doc_id,
        )

    # -- layer 1 ---------------------------------------------------------------------------
    @handles(schemas.get_document_tree)
    def _get_document_tree(self, doc_id: str) -> ToolResult:
        record = self.library.record(doc_id)
        tree = self.library.tree(doc_id)
        header = f"{record['title']} ({doc_id}, {record['pages']} pages)"
        lines = formatting.tree_lines(tree)
        return ToolResult(
            content="\n".join([header, *lines]),
            artifact={
                "doc_id": doc_id,
                "title": record["title"],
                "total_pages": record["pages"],
                "nodes": _flat_nodes(tree),
            },
            doc_id=doc_id,
        )

    @handles(schemas.search_within_paper)
    def _search_within_paper(self, doc_id: str, query: str, limit: int) -> ToolResult:
        tree, pages = self.library.tree(doc_id), self.library.pages(doc_id)
        embed = self.catalog.index.embed_dense
        sections_ranked = rank_sections(query, tree, pages, embed)
        best = [node for node, _ in sections_ranked[:limit]]
        ranked = rank_pages(query, tree, pages, embed, sections_ranked)
        scores = scores_of(ranked)
        order = np.lexsort((np.arange(len(ranked)), -scores))[:MAX_PAGES_PER_CALL]
        top_pages = [ranked[int(i)].as_dict(float(scores[i])) for i in order]
        sections = [{**_node_ref(n), "summary": n["summary"]} for n in best]
        lines = [
            f"{s['node_id']} {s['title']} [p.{s['start_page']}-{s['end_page']}] {s['summary']}"
            for s in sections
        ]
        if top_pages:
            listed = ", ".join(f"p.{p['page']} ({p['score']:.2f})" for p in top_pages)
            lines.append(f"Best pages (text, meaning and section): {listed}")
        return ToolResult(
            content="\n".join(lines) or "No sections.",
            artifact={"doc_id": doc_id, "sections": sections, "pages": top_pages},
            doc_id=doc_id,
        )

    # -- layer 2 ---------------------------------------------------------------------------
    @handles(schemas.get_page_content)
    def _get_page_content(self, doc_id: str, pages: list[int]) -> ToolResult:
        total = self.library.record(doc_id)["pages"]
        wanted = list(dict.fromkeys(pages))
        if not wanted:
            return failure("pages is empty; give 1-based page numbers such as [3, 4].")
        if len(wanted) > self.page_cap:
            return failure(
                f"at most {self.page_cap} pages per call; you asked for {len(wanted)}. "
                f"Request pages {wanted[0]}-{wanted[self.page_cap - 1]} first."
            )
        outside = [p for p in wanted if not 1 <= p <= total]
        if outside:
            return failure(
                f"document {doc_id} has pages 1-{total}; page(s) "
                f"{', '.join(map(str, outside))} do not exist."
            )
        records = self.library.page_records(doc_id)
        body = [
            f"=== {doc_id} p.{p}{formatting.ocr_mark(records[p - 1].get('ocr', False))} ===\n"
            f"{quoted_page(records[p - 1]['text'])}"
            for p in wanted
        ]
        return ToolResult(
            content="\n\n".join(body),
            artifact={"doc_id": doc_id, "pages": [dict(records[p - 1]) for p in wanted]},
            pages=wanted,
            doc_id=doc_id,
        )

    @handles(schemas.list_images)
    def _list_images(self, doc_id: str, pages: list[int] | None) -> ToolResult:
        images = [i for i in self.library.images(doc_id) if pages is None or i["page"] in pages]
        lines = [f"{i['name']} (p.{i['page']}, {i['width']}x{i['height']})" for i in images]
        return ToolResult(
            content="\n".join(lines) or "No images.",
            artifact={"doc_id": doc_id, "images": [dict(i) for i in images]},
            doc_id=doc_id,
        )

    @handles(schemas.get_page_image)
    def _get_page_image(self, doc_id: str, image: str) -> ToolResult:
        listed = {i["name"]: i for i in self.library.images(doc_id)}
        if image not in listed:
            names = ", ".join(list(listed)[:8]) or "none"
            return failure(
                f"no image {image!r} in document {doc_id}; use a name from list_images ({names})."
            )
        folder = (self.library.doc_dir(doc_id) / "images").resolve()
        path = (folder / image).resolve()
        if path.parent != folder or not path.is_file():
            return failure(f"image {image!r} is not inside document {doc_id}'s image folder.")
        entry = listed[image]
        mime = IMAGE_MIME.get(path.suffix.lower().lstrip("."), "application/octet-stream")
        data = base64.b64encode(path.read_bytes()).decode()
        caption = f"Image {image} from {doc_id}, page {entry['page']}."
        return ToolResult(
            content=[
                {"type": "text", "text": caption},
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}},
            ],
            artifact={"doc_id": doc_id, "image": image, "page": entry["page"]},
            pages=[entry["page"]],
            doc_id=doc_id,
        )


def _node_ref(node: Any) -> dict[str, Any]:
    return {
        "node_id": node["node_id"],
        "title": node["title"],
        "start_page": node["start_page"],
        "end_page": node["end_page"],
    }


def _flat_nodes(tree: list[Any], depth: int = 0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for node in tree:
        out.append({**_node_ref(node), "summary": node["summary"], "depth": depth})
        out.extend(_flat_nodes(node["nodes"], depth + 1))
    return out


if set(HANDLERS) != set(TOOL_SCHEMAS):  # a declared tool without a handler, or the reverse
    raise ImportError(f"tool handlers {sorted(HANDLERS)} != declared tools {sorted(TOOL_SCHEMAS)}")
