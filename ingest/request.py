"""What a caller of the served ``ingest`` graph may send, checked before anything is read.

The graph's input is JSON from any key holder: a PDF's path in the inbox, or a ``supplied``
document (pages and section entries, as a QASPER paper is). Nothing in it is trusted: every
field is checked for its type, without coercion (``"pages": "abc"`` is not three pages), and
against the operator's limits (``ServerSettings``: pages, characters per page, bytes), so no
request can fill the shared library with junk or hold the server for minutes. A refused request
ends with status ``invalid`` and one line naming the field, as the agent's input does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from ingest.errors import IngestError
from store.settings import ServerSettings

MAX_TITLE_CHARS = 500
MAX_SOURCE_CHARS = 1024
MAX_ABSTRACT_CHARS = 20_000
MAX_LEVEL = 9
YEARS = (1000, 3000)


class InvalidIngestInput(IngestError):
    """A served request that cannot be ingested as sent; the message is its one line."""


def _printable(value: str) -> str:
    """Text without NUL bytes (they cut file names and JSON readers short)."""
    if "\x00" in value:
        raise ValueError("contains a NUL byte")
    return value


class SuppliedEntry(BaseModel):
    """One section of a supplied document: its level (1 = top), title and first page."""

    model_config = ConfigDict(extra="forbid", strict=True)

    level: int = Field(ge=1, le=MAX_LEVEL)
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    start_page: int = Field(ge=1)

    _title = field_validator("title")(_printable)


class SuppliedDocument(BaseModel):
    """A document whose pages and sections the caller gives instead of a PDF."""

    model_config = ConfigDict(extra="forbid", strict=True)

    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    pages: list[str] = Field(min_length=1)
    entries: list[SuppliedEntry] = Field(default_factory=list)
    year: int | None = Field(default=None, ge=YEARS[0], le=YEARS[1])
    venue: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    abstract: str = Field(default="", max_length=MAX_ABSTRACT_CHARS)

    @field_validator("title", "venue", "abstract")
    @classmethod
    def _text(cls, value: str | None) -> str | None:
        return None if value is None else _printable(value)

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the title is blank")
        return value.strip()

    @field_validator("pages")
    @classmethod
    def _pages(cls, pages: list[str]) -> list[str]:
        for number, text in enumerate(pages, start=1):
            if "\x00" in text:
                raise ValueError(f"page {number} contains a NUL byte")
        if not any(text.strip() for text in pages):
            raise ValueError("every page is empty")
        return pages


class IngestRequest(BaseModel):
    """The served graph's input: ``source`` (a PDF in the inbox) or ``supplied``, and an
    optional ``doc_id`` (checked where it names a folder)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    source: str | None = Field(default=None, min_length=1, max_length=MAX_SOURCE_CHARS)
    doc_id: str | None = Field(default=None, min_length=1, max_length=64)
    supplied: SuppliedDocument | None = None

    _source = field_validator("source", "doc_id")(
        lambda value: None if value is None else _printable(value)
    )


def checked_ingest_request(values: dict[str, Any], limits: ServerSettings) -> IngestRequest:
    """The request validated and within the operator's limits, or :class:`InvalidIngestInput`
    with one line naming the field."""
    given = {k: v for k, v in values.items() if k in IngestRequest.model_fields and v is not None}
    _within_bytes(given.get("supplied"), limits)
    try:
        request = IngestRequest.model_validate(given)
    except ValidationError as exc:
        raise InvalidIngestInput(problem_line(exc, _explain)) from None
    if request.supplied is not None:
        _within_limits(request.supplied, limits)
    elif request.source is None:
        raise InvalidIngestInput(
            "invalid input: source: give the path of a PDF in the inbox, or a supplied document"
        )
    return request


def _within_bytes(supplied: Any, limits: ServerSettings) -> None:
    """A supplied document no larger than the byte limit, judged before it is parsed."""
    if supplied is None:
        return
    size = len(json.dumps(supplied, ensure_ascii=False, default=str).encode())
    if size > limits.max_bytes:
        raise InvalidIngestInput(
            f"invalid input: supplied: {size} bytes, more than the limit of {limits.max_bytes} "
            "(VECTREE_INGEST_MAX_BYTES)"
        )


def _within_limits(document: SuppliedDocument, limits: ServerSettings) -> None:
    """Pages, characters per page, and entries that start on one of the pages."""
    if len(document.pages) > limits.max_pages:
        raise InvalidIngestInput(
            f"invalid input: supplied.pages: {len(document.pages)} pages, more than the limit "
            f"of {limits.max_pages} (VECTREE_INGEST_MAX_PAGES)"
        )
    for number, text in enumerate(document.pages, start=1):
        if len(text) > limits.max_page_chars:
            raise InvalidIngestInput(
                f"invalid input: supplied.pages.{number - 1}: {len(text)} characters, more than "
                f"the limit of {limits.max_page_chars} (VECTREE_INGEST_MAX_PAGE_CHARS)"
            )
    for index, entry in enumerate(document.entries):
        if entry.start_page > len(document.pages):
            raise InvalidIngestInput(
                f"invalid input: supplied.entries.{index}.start_page: page {entry.start_page} "
                f"of a document of {len(document.pages)} pages"
            )


KNOWN_FIELDS = {
    1: tuple(IngestRequest.model_fields),
    2: tuple(SuppliedDocument.model_fields),
    4: tuple(SuppliedEntry.model_fields),
}
"""The fields a caller may give, by depth of the misspelt one (``supplied.entries.0.x``)."""


def _explain(where: str, error: ErrorDetails) -> str | None:
    """A misspelt field is answered with the fields known at its depth."""
    if error["type"] != "extra_forbidden":
        return None
    known = KNOWN_FIELDS.get(len(error["loc"]), ())
    return "is not a known field" + (f" (known: {', '.join(known)})" if known else "")


def problem_line(exc: ValidationError, explain: Callable[[str, ErrorDetails], str | None]) -> str:
    """A validation failure as the one line a caller sees: where the first problem is, and
    what is wrong (in ``explain``'s words where it has some), and how many more there are."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "input"
    message = explain(where, error) or str(error["msg"]).removeprefix("Value error, ")
    more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
    return f"invalid input: {where}: {message}{more}"
