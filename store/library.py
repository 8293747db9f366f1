"""The library folder: per-document artefacts, written atomically, plus the visible-document list.

Layout (all under the library root)::

    docs/<doc_id>/document.json   manifest (title, source, pages, nodes, verification rate)
    docs/<doc_id>/tree.json       section tree, no body text
    docs/<doc_id>/pages.jsonl     one {"page": n, "text": ...} per physical page ("ocr": true
                                  on pages whose text OCR read)
    docs/<doc_id>/images/ + images.json
    docs/<doc_id>/metadata.json, verification.json
    staging/<doc_id>.<pid>.<n>/   a document being written (never visible)
    trash/<doc_id>/               a document being removed (never visible)
    quarantine/<doc_id>/          a damaged document moved aside by ``vectree check --repair``
    quarantine/index.N/           an unreadable index moved aside before it was rebuilt
    edge/<collection>/            the embedded index (Qdrant Edge shards)
    .index.lock                   held by the process that owns the embedded index
    checkpoints.sqlite            the agent's recorded threads

A document becomes visible by one atomic rename of its finished staging folder into ``docs/``.
A file that cannot be read raises :class:`DamagedFile`, which names the file and the remedy.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from store.completeness import IndexCounts
from store.locks import process_alive
from store.types import (
    DOC_ID_PATTERN,
    MIN_PREFIX,
    DocumentMetadata,
    PageImage,
    PageRecord,
    TreeNode,
    VerificationReport,
    checked_doc_id,
)

LOG = logging.getLogger(__name__)
CHECKPOINT_FILE = "checkpoints.sqlite"
_STAGING_COUNTER = itertools.count()
_VERSION_COUNTER = itertools.count()
_WARNED: set[Path] = set()


class DamagedFile(ValueError):
    """A library file that exists but cannot be used (truncated, not JSON, not the shape its
    readers need). The message names the file and what to do, so a user never has to map a
    bare ``JSONDecodeError`` back to one of thousands of files."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path} is damaged ({problem}): run `vectree check --repair`")
        self.path = path
        self.problem = problem


class DocumentRecord(TypedDict):
    """The manifest of one visible document (what ``vectree docs`` lists)."""

    doc_id: str
    title: str
    pages: int
    nodes: int
    verification_rate: float | None
    source: str
    structure: str
    parser: str
    ingested_at: str


def write_json(path: Path, value: Any) -> None:
    """Write JSON via a temporary file and rename, so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    text = json.dumps(value, ensure_ascii=False, indent=1)
    if not text.isascii() and _has_surrogates(text):
        # A file name that is not UTF-8 reaches us with surrogates; \u escapes keep it exact.
        text = json.dumps(value, indent=1)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_json(path: Path) -> Any:
    """Parse a JSON file; a file that is not UTF-8 JSON raises :class:`DamagedFile`."""
    return _parse_json(path, _read_text(path))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedFile(path, f"not UTF-8 text at byte {exc.start}") from None


def _parse_json(path: Path, text: str, line: int | None = None) -> Any:
    """``text`` (the whole file, or its ``line``-th line) as JSON, or DamagedFile saying where."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DamagedFile(path, _json_problem(exc, line)) from None


def _json_problem(exc: json.JSONDecodeError, line: int | None) -> str:
    """Why a text is not JSON, in words: truncation (the usual damage: a write cut short) is
    told apart from other corruption, with the line where it shows."""
    if not exc.doc.strip():
        return "the file is empty"
    where = f"line {line if line is not None else exc.lineno}"
    if exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated"):
        return f"JSON ends early at {where}"
    return f"not valid JSON at {where}: {exc.msg}"


@dataclass(frozen=True)
class Library:
    """A library folder on disk."""

    root: Path

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"

    @property
    def staging_dir(self) -> Path:
        return self.root / "staging"

    @property
    def trash_dir(self) -> Path:
        return self.root / "trash"

    @property
    def index_dir(self) -> Path:
        """The embedded index (Qdrant Edge shards, one folder per collection)."""
        return self.root / "edge"

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "quarantine"

    @property
    def checkpoints_file(self) -> Path:
        return self.root / CHECKPOINT_FILE

    @property
    def index_version_file(self) -> Path:
        return self.root / "index_version"

    def ensure(self) -> Library:
        for folder in (self.docs_dir, self.staging_dir, self.trash_dir):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    # -- reading -------------------------------------------------------------------------
    def doc_dir(self, doc_id: str) -> Path:
        """The folder of a document: always directly inside ``docs`` (an id that is not a plain
        document id, such as a path, raises ``InvalidDocId``)."""
        return self.docs_dir / checked_doc_id(doc_id)

    def has(self, doc_id: str) -> bool:
        """Visible means the committed folder exists with its manifest."""
        if not DOC_ID_PATTERN.fullmatch(doc_id):
            return False
        return (self.doc_dir(doc_id) / "document.json").is_file()

    def listed(self, doc_id: str) -> bool:
        """Visible with a manifest that can be read: what listings and searches show alike (a
        damaged manifest is warned about once, and the document left out of both)."""
        if not self.has(doc_id):
            return False
        try:
            self.record(doc_id)
        except DamagedFile as exc:
            _warn_once(exc)
            return False
        return True

    def documents(self) -> list[DocumentRecord]:
        """Manifests of every visible document, sorted by title.

        A document whose manifest cannot be read is left out with one warning naming the file,
        so one damaged document never blocks listing, search or ingestion of the others.
        """
        if not self.docs_dir.is_dir():
            return []
        records = []
        for folder in self.docs_dir.iterdir():
            if not self.has(folder.name):
                continue
            try:
                records.append(self.record(folder.name))
            except DamagedFile as exc:
                _warn_once(exc)
        return sorted(records, key=lambda r: (r["title"].lower(), r["doc_id"]))

    def record(self, doc_id: str) -> DocumentRecord:
        """The manifest; it must name this document and have a title, which every listing
        sorts and shows."""
        record = self._doc_json(doc_id, "document.json")
        if not (
            isinstance(record, dict)
            and record.get("doc_id") == doc_id
            and isinstance(record.get("title"), str)
        ):
            raise DamagedFile(
                self.doc_dir(doc_id) / "document.json",
                "not this document's manifest: it needs its doc_id and a title",
            )
        return record  # type: ignore[return-value]

    def tree(self, doc_id: str) -> list[TreeNode]:
        return self._doc_json(doc_id, "tree.json")  # type: ignore[no-any-return]

    def metadata(self, doc_id: str) -> DocumentMetadata:
        return self._doc_json(doc_id, "metadata.json")  # type: ignore[no-any-return]

    def verification(self, doc_id: str) -> VerificationReport:
        return self._doc_json(doc_id, "verification.json")  # type: ignore[no-any-return]

    def images(self, doc_id: str) -> list[PageImage]:
        return self._doc_json(doc_id, "images.json")  # type: ignore[no-any-return]

    def pages(self, doc_id: str) -> list[str]:
        """Page texts in page order."""
        return [row["text"] for row in self.page_records(doc_id)]

    def ocr_pages(self, doc_id: str) -> set[int]:
        """The pages whose text OCR read (none in a library written before OCR)."""
        return {row["page"] for row in self.page_records(doc_id) if row.get("ocr") is True}

    def page_records(self, doc_id: str) -> list[PageRecord]:
        """Page records in page order; line n must be page n's record, so a truncated or edited
        file is named as damaged rather than silently shifting every later page."""
        path = self._doc_file(doc_id, "pages.jsonl")
        rows: list[PageRecord] = []
        for number, line in enumerate(_read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            row = _parse_json(path, line, number)
            if not (
                isinstance(row, dict)
                and row.get("page") == len(rows) + 1
                and isinstance(row.get("text"), str)
            ):
                raise DamagedFile(path, f"line {number} is not the record of page {len(rows) + 1}")
            rows.append(row)  # type: ignore[arg-type]
        return rows

    def _doc_file(self, doc_id: str, name: str) -> Path:
        """A file of a visible document; missing from its folder counts as damage."""
        path = self.doc_dir(doc_id) / name
        if not path.is_file() and path.parent.is_dir():
            raise DamagedFile(path, "the file is missing")
        return path

    def _doc_json(self, doc_id: str, name: str) -> Any:
        return read_json(self._doc_file(doc_id, name))

    def resolve(self, prefix: str) -> str | None:
        """A full doc id from a unique prefix of at least ``MIN_PREFIX`` characters (users
        type the first few characters; a shorter one could name a document by accident)."""
        if len(prefix) < MIN_PREFIX or not DOC_ID_PATTERN.fullmatch(prefix):
            return None
        matches = [r["doc_id"] for r in self.documents() if r["doc_id"].startswith(prefix)]
        return matches[0] if len(matches) == 1 else None

    def by_source(self, source: str) -> list[str]:
        """Ids of visible documents ingested from ``source`` (for replacing changed files)."""
        return [r["doc_id"] for r in self.documents() if r["source"] == source]

    def index_version(self) -> str:
        """A token that changes whenever the searchable documents change ("" before any).

        In-memory search engines cache the index and compare this token (one small file read)
        to know when to reload; a file works across processes, unlike an in-process counter.
        """
        return self._version_lines()[0]

    def recorded_counts(self) -> IndexCounts | None:
        """What the index held when the current version was written (``store.completeness``;
        None for a library written before counts were recorded)."""
        return IndexCounts.from_json(self._version_lines()[1])

    def _version_lines(self) -> tuple[str, str]:
        """The version file's token and counts lines ("" for each that is absent)."""
        try:
            text = self.index_version_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return "", ""
        token, _, counts = text.partition("\n")
        return token.strip(), counts.strip()

    def visible_count(self) -> int:
        """How many documents are visible (folders with a manifest): one directory listing and
        a stat per folder, cheap enough to compare with the index before each process's first
        search."""
        if not self.docs_dir.is_dir():
            return 0
        with os.scandir(self.docs_dir) as entries:
            return sum(1 for entry in entries if entry.is_dir() and self.has(entry.name))

    # -- writing -------------------------------------------------------------------------
    def bump_index_version(self, counts: IndexCounts) -> str:
        """Write a fresh version token atomically (after a publish or a removal), with what
        the index now holds (``counts``), so readers can tell a later loss.

        A unique token rather than an incremented counter, so two writers never need a
        read-modify-write race to produce distinct versions.
        """
        token = f"{time.time_ns()}-{os.getpid()}-{next(_VERSION_COUNTER)}"
        tmp = self.root / f".index_version.{os.getpid()}.{next(_VERSION_COUNTER)}.tmp"
        tmp.write_text(f"{token}\n{counts.as_json()}\n", encoding="utf-8")
        os.replace(tmp, self.index_version_file)
        return token

    def new_staging(self, doc_id: str) -> Path:
        """A fresh private folder for one ingestion attempt of ``doc_id``."""
        folder = self.staging_dir / f"{doc_id}.{os.getpid()}.{next(_STAGING_COUNTER)}"
        folder.mkdir(parents=True, exist_ok=False)
        return folder

    def commit(self, staging: Path, doc_id: str) -> None:
        """Make a finished staging folder visible in one rename."""
        target = self.doc_dir(doc_id)
        if target.exists():  # an identical document won a race; keep the committed one
            shutil.rmtree(staging, ignore_errors=True)
            return
        os.replace(staging, target)

    def hide(self, doc_id: str) -> Path | None:
        """Move a visible document into the trash (first step of removal)."""
        source = self.doc_dir(doc_id)
        if not source.exists():
            return None
        target = self.trash_dir / doc_id
        shutil.rmtree(target, ignore_errors=True)
        os.replace(source, target)
        return target

    def trashed(self) -> list[str]:
        return [p.name for p in self.trash_dir.iterdir()] if self.trash_dir.is_dir() else []

    def purge_trash(self, doc_id: str) -> None:
        shutil.rmtree(self.trash_dir / doc_id, ignore_errors=True)
        self.forget_derived(doc_id)

    def forget_derived(self, doc_id: str) -> None:
        """Drop what the baseline strategies derived from a removed document: its entry in the
        chunk stores' manifests (``chunks/*.json``) and its cached RAPTOR trees."""
        for manifest in sorted((self.root / "chunks").glob("*.json")):
            built = read_json(manifest)
            if built.pop(doc_id, None) is not None:
                write_json(manifest, built)
        for cached in (self.root / "raptor").glob(f"*/{doc_id}.*"):
            cached.unlink(missing_ok=True)

    def quarantine(self, path: Path) -> Path:
        """Move a damaged document folder or library file into ``quarantine/`` under its own
        name (numbered when that is taken): out of sight of every reader, yet nothing lost."""
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / path.name
        for n in itertools.count(1):
            if not target.exists():
                break
            target = self.quarantine_dir / f"{path.name}.{n}"
        os.replace(path, target)
        return target

    def move_index_aside(self) -> Path:
        """Move the embedded index and what was derived from it (chunk stores' manifests, the
        entry map) into ``quarantine/index.N/``: the documents stay, the index starts empty.
        The index folder moves last, so a move cut short is finished by the next repair."""
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = self.quarantine_dir / "index"
        for n in itertools.count(1):
            if not target.exists():
                break
            target = self.quarantine_dir / f"index.{n}"
        target.mkdir()
        for name in ("chunks", "entry-map", self.index_dir.name):
            if (self.root / name).exists():
                os.replace(self.root / name, target / name)
        return target

    def abandoned_staging(self) -> list[Path]:
        """Staging folders whose writer process is gone (killed mid-ingest)."""
        if not self.staging_dir.is_dir():
            return []
        return [p for p in self.staging_dir.iterdir() if not process_alive(_writer_pid(p))]


def _warn_once(exc: DamagedFile) -> None:
    """Warn about a damaged file once per process: a batch lists documents once per file."""
    if exc.path not in _WARNED:
        _WARNED.add(exc.path)
        LOG.warning("%s; skipping that document", exc)


def _writer_pid(folder: Path) -> int:
    parts = folder.name.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else -1
