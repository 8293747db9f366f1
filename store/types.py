"""JSON-native record shapes shared by every layer, and the walk over a stored section tree.

They are TypedDicts rather than classes so that graph state and checkpoints stay plain JSON.
Ingestion produces them, the stores keep them, the tools and the agent read them.
"""

from __future__ import annotations

import re
from typing import Literal, NotRequired, TypedDict

StructureSource = Literal["outline", "toc", "headings", "llm", "supplied"]


class PageImage(TypedDict):
    """An image found on a page, stored as a file in the document's image folder."""

    name: str
    page: int
    bbox: list[float]
    width: int
    height: int


class HeadingCandidate(TypedDict):
    """A line that typography or numbering marks as a possible heading."""

    page: int
    text: str
    size: float
    bold: bool
    y_frac: float
    score: NotRequired[float]
    """The line labeller's probability that the line is a heading (absent: taken as one)."""


class SectionEntry(TypedDict):
    """One flat structure entry before folding: level 1 is top level, pages are 1-based."""

    level: int
    title: str
    start_page: int
    verified: NotRequired[bool]
    begins_page: NotRequired[bool]
    repaired: NotRequired[bool]


class TreeNode(TypedDict):
    """A section-tree node; the tree never holds body text, only titles and summaries."""

    node_id: str
    title: str
    start_page: int
    end_page: int
    summary: str
    nodes: list[TreeNode]
    ocr: NotRequired[bool]
    """Some of its pages were read by OCR (absent: none were, or the library predates OCR)."""


class PageRecord(TypedDict):
    """One line of a document's ``pages.jsonl``: a physical page's text."""

    page: int
    text: str
    ocr: NotRequired[bool]
    """The text was read by OCR from the page's image (absent: from its text layer)."""


class FilingFacts(TypedDict):
    """What an SEC filing's cover says about it (``ingest.filing``); None where it does not
    say, and every field None for a document that is not a filing."""

    issuer: str | None
    ticker: str | None
    form: str | None
    period_end: str | None
    """ISO date: the end of the fiscal year or quarter covered (an 8-K: its date of report)."""
    fiscal_year: int | None
    fiscal_quarter: int | None


class DocumentMetadata(TypedDict):
    """Bibliographic fields and the short texts the document-level index entry is built from."""

    title: str
    authors: list[str]
    year: int | None
    doi: str | None
    venue: str | None
    volume: str | None
    pages: str | None
    description: str
    keywords: list[str]
    filing: NotRequired[FilingFacts]
    """Issuer, form and fiscal period of a filing (absent in libraries built before them)."""
    printed_title: NotRequired[str]
    """The title as the first page prints it, where ``title`` names a filing by its facts
    ("FORM 10-K" → "3M Company — 10-K, fiscal 2022")."""


class VerificationReport(TypedDict):
    """How well the structure entries were confirmed against the page text."""

    method: StructureSource
    entries: int
    initial_verification_rate: float | None
    verification_rate: float | None
    repair_rounds: int
    repaired: list[str]
    dropped: list[str]
    flagged: list[str]


def walk(nodes: list[TreeNode]) -> list[TreeNode]:
    """All stored nodes depth-first."""
    out: list[TreeNode] = []
    for node in nodes:
        out.append(node)
        out.extend(walk(node["nodes"]))
    return out


DOC_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""A document id: letters, digits, ``_`` and ``-``, at most 64 characters. Ingestion makes
16 hex digits; nothing with a path separator or a dot can name a document, so an id always
resolves to a folder directly inside the library's ``docs`` folder."""
MIN_PREFIX = 6
"""The shortest id prefix a user may type for a document."""


class InvalidDocId(ValueError):
    """A string that cannot be a document id (the message says what a valid one looks like)."""


def checked_doc_id(value: object) -> str:
    """``value`` as a document id, or :class:`InvalidDocId` naming what is wrong with it."""
    if not isinstance(value, str) or not DOC_ID_PATTERN.fullmatch(value):
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise InvalidDocId(
            f"{shown} is not a document id: ids are 1-64 letters, digits, '_' or '-' "
            "(no paths); use an id exactly as `vectree docs` or search_documents shows it"
        )
    return value
