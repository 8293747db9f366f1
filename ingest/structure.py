"""Choose the structure source: the PDF outline when it verifies, else headings, else the LLM."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from ingest.errors import IngestError
from ingest.headings import entries_from_headings
from ingest.llm import llm_entries
from ingest.types import HeadingCandidate, SectionEntry
from ingest.verify import verify_entries

# The outline is trusted in auto mode when at least this share of its titles verify unrepaired.
OUTLINE_MIN_RATE = 0.8
MIN_HEADINGS = 2


def extract_structure(
    mode: str,
    pages: list[str],
    outline: list[SectionEntry],
    candidates: list[HeadingCandidate],
    model: BaseChatModel | None,
) -> tuple[list[SectionEntry], str]:
    """Flat entries and the method that produced them ("outline", "headings" or "llm")."""
    if mode == "outline":
        if not outline:
            raise IngestError("--structure outline: this PDF has no outline (bookmarks)")
        return outline, "outline"
    if mode == "headings":
        return entries_from_headings(candidates, len(pages)), "headings"
    if mode == "llm":
        if model is None:
            raise IngestError("--structure llm needs an LLM: set VECTREE_MODEL and OPENAI_BASE_URL")
        return llm_entries(model, pages), "llm"
    return _auto(pages, outline, candidates, model)


def _auto(
    pages: list[str],
    outline: list[SectionEntry],
    candidates: list[HeadingCandidate],
    model: BaseChatModel | None,
) -> tuple[list[SectionEntry], str]:
    if outline and _initial_rate(outline, pages) >= OUTLINE_MIN_RATE:
        return outline, "outline"
    headings = entries_from_headings(candidates, len(pages))
    if len(headings) >= MIN_HEADINGS or model is None:
        return headings, "headings"
    return llm_entries(model, pages), "llm"


def _initial_rate(entries: list[SectionEntry], pages: list[str]) -> float:
    _, report = verify_entries(entries, pages, method="outline")
    return report["initial_verification_rate"] or 0.0
