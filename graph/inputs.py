"""What a caller may ask: the agent's input checked once, the same way for the API and the CLI.

A question that cannot be run (empty, oversized, ``doc_ids`` that are not a list of document
ids, filters of the wrong kind) is refused with one line naming the field and what is
expected, never a Python exception text: the ``prepare`` node ends such a run with status
``invalid`` and that line, and ``vectree ask`` prints it and exits 1.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from ingest.request import problem_line
from store.types import checked_doc_id

MAX_QUESTION_CHARS = 4000
"""A question is a question, not a document: longer input is refused."""
MAX_DOC_IDS = 200
YEARS = (1000, 3000)


class InvalidInput(ValueError):
    """The input cannot be run; the message is the one line a caller sees."""


class Filters(BaseModel):
    """Limits on which documents a run may use (every search of the run stays inside them)."""

    model_config = ConfigDict(extra="forbid", strict=False)

    year: int | None = Field(default=None, ge=YEARS[0], le=YEARS[1])
    year_min: int | None = Field(default=None, ge=YEARS[0], le=YEARS[1])
    year_max: int | None = Field(default=None, ge=YEARS[0], le=YEARS[1])
    journal: str | None = Field(default=None, max_length=200)
    author: str | None = Field(default=None, max_length=200)

    def scope(self) -> dict[str, Any]:
        """The filters as search limits (``year`` is the range of one year)."""
        limits = self.model_dump(exclude={"year"}, exclude_none=True)
        if self.year is not None:
            limits.setdefault("year_min", self.year)
            limits.setdefault("year_max", self.year)
        return {k: v for k, v in limits.items() if v != ""}


class AgentRequest(BaseModel):
    """The agent graph's input, validated."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(max_length=MAX_QUESTION_CHARS)
    doc_ids: list[str] = Field(default_factory=list, max_length=MAX_DOC_IDS)
    filters: Filters = Field(default_factory=Filters)

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value.strip()

    @field_validator("doc_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError('doc_ids must be a list of document ids, e.g. ["3f2a…"]')
        return [checked_doc_id(item) for item in value]


def checked_request(values: dict[str, Any]) -> AgentRequest:
    """``values`` (question, doc_ids, filters) validated, or :class:`InvalidInput`."""
    given = {k: v for k, v in values.items() if k in AgentRequest.model_fields and v is not None}
    try:
        return AgentRequest.model_validate(given)
    except ValidationError as exc:
        raise InvalidInput(problem_line(exc, _explain)) from None


def _explain(where: str, error: ErrorDetails) -> str | None:
    """Plain words for a misspelt field (with the filters one may give) and an overlong
    question."""
    if error["type"] == "extra_forbidden":
        if not where.startswith("filters."):
            return "is not a known field"
        return f"is not a known field (filters: {', '.join(Filters.model_fields)})"
    if error["type"] == "string_too_long" and where == "question":
        return f"the question is longer than {MAX_QUESTION_CHARS} characters"
    return None
