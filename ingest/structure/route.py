"""Choose the structure source: outline → printed contents → headings → LLM.

In ``auto`` mode the PDF outline is used when it verifies, else the printed table of contents
when enough of its titles verify, else headings found in the pages, else (configured) the LLM.
Contents and outline trees are deepened with the headings found inside each of their sections.
Wherever a contents list was found, its lines are masked for everything that reads headings
or verifies titles, so the list is never mistaken for the body.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from ingest.errors import IngestError
from ingest.llm import llm_entries
from ingest.structure.contents import HEADING, ContentsStructure, entries_from_contents
from ingest.structure.contents_llm import llm_contents_reader
from ingest.structure.deepen import deepen
from ingest.structure.headings import entries_from_headings
from ingest.structure.layout import PageLayout
from ingest.structure.locate import mask_spans
from ingest.structure.verify import verify_entries
from store.chat import ModelCallError, ModelReplyError
from store.types import HeadingCandidate, SectionEntry, StructureSource

LOG = logging.getLogger(__name__)
# The outline is trusted in auto mode when at least this share of its titles verify unrepaired.
OUTLINE_MIN_RATE = 0.8
# The printed contents is trusted when this share of its entries verify (after relocation)...
CONTENTS_MIN_RATE = 0.6
# ...and it names at least this many sections.
MIN_CONTENTS_ENTRIES = 3
MIN_HEADINGS = 2
EMPTY_LAYOUT = PageLayout(rows=[], folios=[], labels=[], running=[])


@dataclass(frozen=True)
class Structure:
    """Flat entries, the source that produced them, and the contents-list spans to mask."""

    entries: list[SectionEntry]
    method: StructureSource
    listing_spans: list[list[int]] = field(default_factory=list)


def extract_structure(
    mode: str,
    pages: list[str],
    outline: list[SectionEntry],
    candidates: list[HeadingCandidate],
    model: BaseChatModel | None,
    layout: PageLayout = EMPTY_LAYOUT,
) -> Structure:
    """Flat entries from the source ``mode`` names (auto: the first that holds up)."""
    if mode == "outline":
        if not outline:
            raise IngestError("--structure outline: this PDF has no outline (bookmarks)")
        return Structure(outline, "outline")
    if mode == "llm":
        if model is None:
            raise IngestError("--structure llm needs an LLM: set VECTREE_MODEL and OPENAI_BASE_URL")
        return _from_model(
            model, pages, Structure(entries_from_headings(candidates, pages), "headings")
        )
    if mode == "auto" and outline and _initial_rate(outline, pages) >= OUTLINE_MIN_RATE:
        return Structure(outline, "outline")
    contents = _read_contents(layout, pages, model, strict=mode == "toc")
    spans = contents.listing_spans
    if mode == "toc":
        if not contents.entries:
            raise IngestError("--structure toc: no printed table of contents found in this PDF")
        return Structure(deepen(contents.entries, candidates, pages, spans), "toc", spans)
    if mode == "auto" and _contents_hold(contents.entries, pages, spans):
        return Structure(deepen(contents.entries, candidates, pages, spans), "toc", spans)
    headings = entries_from_headings(candidates, pages, spans)
    if mode == "headings" or len(headings) >= MIN_HEADINGS or model is None:
        return Structure(headings, "headings", spans)
    return _from_model(model, pages, Structure(headings, "headings", spans))


def _from_model(model: BaseChatModel, pages: list[str], offline: Structure) -> Structure:
    """The model's entries, or the offline ones when its reply is unusable (not JSON, or cut at
    its cap twice): a model that answers badly never costs the document its tree."""
    try:
        return Structure(llm_entries(model, pages), "llm", offline.listing_spans)
    except ModelReplyError as exc:
        LOG.warning("structure from the model failed (%s); using the offline tree", exc.reason)
        return offline


def _read_contents(
    layout: PageLayout, pages: list[str], model: BaseChatModel | None, strict: bool
) -> ContentsStructure:
    """The printed contents, read by the LLM when configured, else by the offline parser.

    A failed LLM read is an error when the contents were asked for (``--structure toc``);
    otherwise the offline parser reads the lists instead, and the failure is logged.
    """
    reader = llm_contents_reader(model) if model is not None else None
    try:
        return entries_from_contents(layout, pages, reader)
    except (IngestError, ModelCallError) as exc:
        if strict or reader is None:
            raise
        LOG.warning("LLM could not read the contents pages (%s); parsing them offline", exc)
        return entries_from_contents(layout, pages)


def _initial_rate(entries: list[SectionEntry], pages: list[str]) -> float:
    _, report = verify_entries(entries, pages, method="outline")
    return report["initial_verification_rate"] or 0.0


def _contents_hold(entries: list[SectionEntry], pages: list[str], spans: list[list[int]]) -> bool:
    """Enough listed sections, and enough of them printed where the list says."""
    listed = [entry for entry in entries if not HEADING.match(entry["title"])]
    if len(listed) < MIN_CONTENTS_ENTRIES:
        return False
    _, report = verify_entries(listed, mask_spans(pages, spans), method="toc")
    return (report["verification_rate"] or 0.0) >= CONTENTS_MIN_RATE
