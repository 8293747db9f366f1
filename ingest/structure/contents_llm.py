"""The model's reading of a printed contents list: the ``llm`` structure mode's contents reader.

``ingest.structure.contents`` finds the contents pages and verifies what is read from them;
with a model configured, this reader reads the entries instead of the offline line parser. It
sits in the structure package, above ``ingest.llm``'s model calls, so that module never imports
the structure it serves.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel

from ingest import prompts
from ingest.llm import LLMOutputError
from ingest.structure.contents import ContentsEntry, ContentsReader
from ingest.structure.numbering import clean_title, parse_numbering
from store.chat import ask_json, json_value

# Dot leaders a model may copy after a contents title ("Risk Factors ........").
LEADER_TAIL = re.compile(r"\s*(?:[.·…_]\s*){3,}$")


def llm_contents_reader(model: BaseChatModel) -> ContentsReader:
    """A contents reader that asks the model for the entries of printed contents pages.

    The reader gets one run of contents pages (``{physical page: text}``) and returns its
    entries with levels and printed page numbers; mapping printed pages to physical ones and
    verifying the titles is left to ``ingest.structure.contents``, as for the offline parser.
    """

    def read(run: dict[int, str]) -> list[ContentsEntry]:
        numbers = sorted(run)
        if not numbers:
            return []
        user = "\n".join(f"<page {n}>\n{run[n]}\n</page {n}>" for n in numbers)
        reply = ask_json(model, prompts.CONTENTS_SYSTEM, user, json_value, purpose="structure")
        items = _json_list(reply)
        if items is None:
            raise LLMOutputError("contents reply was not a JSON list of entries")
        entries = [_contents_entry(item, numbers) for item in items]
        return [entry for entry in entries if entry is not None]

    return read


def _json_list(value: Any) -> list[Any] | None:
    """A reply's list: the list itself, or one wrapped in an object; None when there is none."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("entries", "contents", "items", "sections"):
            if isinstance(value.get(key), list):
                return list(value[key])
    return None


def _contents_entry(item: Any, pages: list[int]) -> ContentsEntry | None:
    """Validate one contents entry leniently; an item without a title is skipped."""
    if not isinstance(item, dict):
        return None
    title = LEADER_TAIL.sub("", clean_title(str(item.get("title") or "")))
    if not title:
        return None
    try:
        level = max(1, int(item.get("level") or 1))
    except (TypeError, ValueError):
        level = 1
    try:
        list_page = int(item.get("contents_page") or 0)
    except (TypeError, ValueError):
        list_page = 0
    return ContentsEntry(
        title=title,
        printed=_printed_page(item.get("printed_page")),
        x=0.0,
        numbering=parse_numbering(title),
        list_page=list_page if list_page in pages else pages[0],
        level=level,
    )


def _printed_page(value: Any) -> str | None:
    """The printed page as text ("12", "iv", "F-3"); None when missing or blank."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None
