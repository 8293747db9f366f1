"""State of the ingestion graph: JSON-native values only, so checkpoints stay readable."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ingest.parse import ParsedPDF
from store.entries import EmbeddedEntry
from store.types import (
    DocumentMetadata,
    SectionEntry,
    TreeNode,
    VerificationReport,
)

Status = Literal["ingested", "present", "failed", "invalid"]
"""``invalid``: a served request refused as sent (``ingest.request``), nothing read."""


class IngestInput(TypedDict, total=False):
    """What a caller provides: a PDF path, or a structured document (e.g. a QASPER paper).

    ``doc_id`` must be a plain document id (never a path). Through the server, ``source`` must
    lie in the inbox folder (a relative path is read from there); the CLI takes any path.
    """

    source: str
    doc_id: str
    supplied: dict[str, Any]


class IngestState(IngestInput, ParsedPDF, total=False):
    """Everything the nodes pass along for one document: what the caller gave, what parsing
    read (:class:`ingest.parse.ParsedPDF`), and what the later nodes make of it."""

    status: Status
    error: str
    staging: str
    entries: list[SectionEntry]
    structure_method: str
    listing_spans: list[list[int]]
    verification: VerificationReport
    tree: list[TreeNode]
    split_nodes: list[str]
    metadata: DocumentMetadata
    embedded: list[EmbeddedEntry]
    """The index entries with their vectors, until the ``index`` node has written them."""
    index_entries: int


class IngestOutput(TypedDict, total=False):
    """What a caller gets back."""

    doc_id: str
    source: str
    status: Status
    error: str
    verification: VerificationReport
    index_entries: int
