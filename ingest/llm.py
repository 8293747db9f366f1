"""The optional LLM stages of ingestion, through any OpenAI-compatible endpoint.

Every function takes a LangChain chat model and calls it through ``store.chat`` (the client,
the retry policy, the JSON repair round), so tests can drive them with scripted fake models and,
end to end, with the real ``langchain-openai`` client against a local HTTP stub.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.language_models import BaseChatModel

from ingest import prompts
from ingest.errors import IngestError
from store.chat import (
    ModelCallError,
    ModelReplyError,
    ask_json,
    ask_text,
    json_value,
    prompt_budget,
)
from store.embeddings import count_tokens, truncate_to_tokens
from store.types import SectionEntry

GROUP_TOKENS = 20_000
SUMMARY_BODY_TOKENS = 6_000
METADATA_PAGE_TOKENS = 4_000
PROMPT_FRAME_TOKENS = 100
"""Page tags, labels and the chat template's own tokens around a request's text."""
REPAIR_CONTEXT_PAGES = 2
REPAIR_PAGE_TOKENS = 1_500


class LLMOutputError(IngestError):
    """The model's reply was JSON, but not the shape a stage needs."""


def page_groups(pages: list[str], max_tokens: int = GROUP_TOKENS) -> list[list[int]]:
    """1-based page groups of at most ``max_tokens`` tokens, consecutive groups sharing one page."""
    sizes = [count_tokens(page) for page in pages]
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0
    for page, size in enumerate(sizes, start=1):
        if current and used + size > max_tokens:
            groups.append(current)
            overlap = current[-1]
            # Share the last page only when it fits beside the new one: the bound comes first.
            if sizes[overlap - 1] + size <= max_tokens:
                current, used = [overlap], sizes[overlap - 1]
            else:
                current, used = [], 0
        current.append(page)
        used += size
    if current and (not groups or current != groups[-1][-1:]):
        groups.append(current)
    return groups


def _tagged_pages(pages: list[str], numbers: list[int], page_tokens: int | None = None) -> str:
    def body(n: int) -> str:
        text = pages[n - 1]
        return truncate_to_tokens(text, page_tokens) if page_tokens else text

    return "\n".join(f"<page {n}>\n{body(n)}\n</page {n}>" for n in numbers)


def room(model: BaseChatModel, default: int, system: str) -> int:
    """Tokens of document text a request may carry beside ``system``: ``default``, or less when
    the model's context window would not hold it (``store.chat.prompt_budget``)."""
    overhead = count_tokens(system) + PROMPT_FRAME_TOKENS
    return min(default, prompt_budget(model, default + overhead) - overhead)


def llm_entries(model: BaseChatModel, pages: list[str]) -> list[SectionEntry]:
    """Structure entries proposed by the LLM over overlapping page groups."""
    entries: list[SectionEntry] = []
    seen: set[tuple[str, int]] = set()
    for group in page_groups(pages, room(model, GROUP_TOKENS, prompts.STRUCTURE_SYSTEM)):
        for item in _as_list(
            ask_json(
                model,
                prompts.STRUCTURE_SYSTEM,
                _tagged_pages(pages, group),
                json_value,
                purpose="structure",
            )
        ):
            entry = _entry_from(item, len(pages))
            if entry is None or (key := (entry["title"].lower(), entry["start_page"])) in seen:
                continue
            seen.add(key)
            entries.append(entry)
    return entries


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, dict):
        for key in ("entries", "headings", "sections", "items"):
            if isinstance(value.get(key), list):
                return list(value[key])
    return value if isinstance(value, list) else []


def _entry_from(item: Any, total_pages: int) -> SectionEntry | None:
    """Validate one proposed entry; malformed ones are skipped."""
    if not isinstance(item, dict):
        return None
    title = str(item.get("title", "")).strip()
    try:
        page = int(item.get("start_page", 0))
    except (TypeError, ValueError):
        return None
    if not title or not 1 <= page <= total_pages:
        return None
    index = str(item.get("index", "1")).strip().strip(".")
    return SectionEntry(level=index.count(".") + 1, title=title, start_page=page)


def llm_repairer(model: BaseChatModel):  # type: ignore[no-untyped-def]
    """A verify.Repairer that shows the model the pages around each failed entry."""

    def repair(failed: list[SectionEntry], pages: list[str]) -> list[SectionEntry]:
        numbers = sorted(
            {
                p
                for entry in failed
                for p in range(
                    entry["start_page"] - REPAIR_CONTEXT_PAGES,
                    entry["start_page"] + REPAIR_CONTEXT_PAGES + 1,
                )
                if 1 <= p <= len(pages)
            }
        )
        listing = "\n".join(f'- "{e["title"]}" (claimed page {e["start_page"]})' for e in failed)
        user = (
            f"Headings:\n{listing}\n\nPages:\n{_tagged_pages(pages, numbers, REPAIR_PAGE_TOKENS)}"
        )
        try:
            proposals = _as_list(ask_json(model, prompts.REPAIR_SYSTEM, user, json_value))
        except ModelReplyError:  # logged once; the entries stay as they were, unrepaired
            return failed
        out = []
        for entry, item in zip(failed, proposals, strict=False):
            proposal = _entry_from(item, len(pages))
            out.append(proposal if proposal is not None else entry)
        return out

    return repair


def llm_summaries(
    model: BaseChatModel, items: list[tuple[str, str]], concurrency: int
) -> list[str]:
    """Summaries of (title, body) pairs, requested concurrently under a bound; a section whose
    call fails gets "" (its extractive summary stays)."""

    def one(item: tuple[str, str]) -> str:
        title, body = item
        text = truncate_to_tokens(body, room(model, SUMMARY_BODY_TOKENS, prompts.SUMMARY_SYSTEM))
        user = f"Section: {title}\n\n{text}"
        try:
            return ask_text(model, prompts.SUMMARY_SYSTEM, user)
        except ModelCallError:  # logged once; the section keeps its extractive summary
            return ""

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, items))


def llm_metadata(model: BaseChatModel, hints: dict[str, Any], first_pages: str) -> dict[str, Any]:
    """Refined bibliographic fields, description and keywords (a dict; validated by the caller)."""
    system = f"{prompts.METADATA_SYSTEM}\n{json.dumps(hints)}"
    opening = truncate_to_tokens(first_pages, room(model, METADATA_PAGE_TOKENS, system))
    user = f"Hints: {json.dumps(hints)}\n\nFirst pages:\n{opening}"
    reply = ask_json(model, prompts.METADATA_SYSTEM, user, json_value)
    if not isinstance(reply, dict):
        raise LLMOutputError("metadata reply was not a JSON object")
    return reply
