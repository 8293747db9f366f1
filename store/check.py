"""Checking a library against its files and its index, and repairing what can be repaired.

``vectree check`` runs :func:`check_library`. A document is sound when every file of its folder
parses, has the shape its readers need and agrees with the others (page count, node count, page
ranges, listed images), and when the index holds all its entries. Repairs never delete what
cannot be rebuilt: a damaged document moves to ``quarantine/`` (out of sight, nothing lost),
lost index entries are rebuilt from the document's files, index entries of a missing document
are dropped, and what interrupted runs left behind is finished by ``Catalog.reconcile``. A
damaged ``checkpoints.sqlite`` is quarantined too, so the next question starts a fresh one.

The index is derived data. Every shard is read through by a child process first
(``store.shard_probe``: some damage aborts the process that opens it); one that cannot be read
is moved aside into ``quarantine/index.N/`` and the index is rebuilt from the documents' own
files, with a progress bar. A repair killed at any moment leaves either the unreadable index
(moved aside by the next repair) or a partial new one, whose missing and unpublished entries the
next ``check --repair`` finds and writes like any others.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import closing, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from store.catalog import Catalog, Unfinished
from store.entries import stored_entries
from store.faults import IndexUnreadable, writable
from store.library import DamagedFile, DocumentRecord, Library
from store.types import DOC_ID_PATTERN, walk

LOG = logging.getLogger(__name__)
T = TypeVar("T")
Fields = dict[str, type | tuple[type, ...]]
"""Required fields of a JSON object and the types each may have."""

RECORD_FIELDS: Fields = {"doc_id": str, "title": str, "pages": int, "nodes": int, "source": str}
NODE_FIELDS: Fields = {
    "node_id": str,
    "title": str,
    "start_page": int,
    "end_page": int,
    "summary": str,
    "nodes": list,
}
METADATA_FIELDS: Fields = {  # what the index entries are built from (store.entries)
    "title": str,
    "authors": list,
    "year": (int, type(None)),
    "venue": (str, type(None)),
    "description": str,
}
REPORT_FIELDS: Fields = {"method": str}  # verification.json
IMAGE_FIELDS: Fields = {"name": str, "page": int}


@dataclass(frozen=True)
class Damage:
    """One problem: the document (None for a library-wide file), the file, what is wrong, and
    the repair that fixes it."""

    doc_id: str | None
    file: str
    problem: str
    fix: Fix

    def as_dict(self) -> dict[str, str | None]:
        return {"doc_id": self.doc_id, "file": self.file, "problem": self.problem}


@dataclass(frozen=True)
class Fix:
    """A repair: what it does (``run``), how it is reported (``action``), and whether one run
    repairs every problem of its kind at once (``whole_library``) rather than one target."""

    run: Callable[[Catalog, Damage], object]
    action: str
    whole_library: bool = False

    def target(self, damage: Damage) -> str | None:
        """What one run of this repair acts on, so it runs once per document or file."""
        return None if self.whole_library else damage.doc_id or damage.file


@dataclass(frozen=True)
class Repaired:
    """One repair that was carried out."""

    doc_id: str | None
    action: str

    def as_dict(self) -> dict[str, str | None]:
        return {"doc_id": self.doc_id, "action": self.action}


@dataclass
class CheckReport:
    """``documents``: document folders checked; ``damaged``: what is wrong now (after the
    repairs, when repairing); ``repaired``: what was done."""

    documents: int
    damaged: list[Damage]
    repaired: list[Repaired] = field(default_factory=list)
    migrated: dict[str, Any] | None = None
    """What ``migrate`` converted from an earlier index version (None: nothing to do)."""

    @property
    def sound(self) -> bool:
        return not self.damaged

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "damaged": [d.as_dict() for d in self.damaged],
            "repaired": [r.as_dict() for r in self.repaired],
            "migrated": self.migrated,
        }


def check_library(catalog: Catalog, repair: bool = False, migrate: bool = False) -> CheckReport:
    """Find every problem of the library; with ``repair``, fix what can be fixed and report
    what remains; with ``migrate``, first bring an index of an earlier version up to date
    (``StructuralIndex.migrate``) and report what was converted.

    The library's write lock is held throughout: a writer half way through publishing would
    look damaged, and a repair must not race it. A library on a read-only filesystem has no
    writer to wait for, so it is checked without the lock (and refuses repairs).
    """
    command = "vectree check --repair" if repair else "vectree check"
    read_only = not (repair or migrate or writable(catalog.library.root))
    with nullcontext() if read_only else catalog.writing(command):
        if repair:
            catalog.require_space(0, "repairing it")
        migrated = catalog.index.migrate() if migrate else None
        folders = document_folders(catalog.library)
        found = find_damage(catalog, folders)
        if not repair:
            return CheckReport(len(folders), found, migrated=migrated)
        repaired, remaining = repair_damage(catalog, found)
        return CheckReport(len(folders), remaining, repaired, migrated)


def document_folders(library: Library) -> list[str]:
    """Ids of every document folder in ``docs/``, visible or not: a folder that lost its
    manifest is invisible, yet it blocks re-ingesting its file."""
    if not library.docs_dir.is_dir():
        return []
    return sorted(
        p.name
        for p in library.docs_dir.iterdir()
        if p.is_dir() and DOC_ID_PATTERN.fullmatch(p.name)
    )


def find_damage(catalog: Catalog, folders: list[str]) -> list[Damage]:
    """Every problem, changing nothing: unfinished runs, each document's files and index
    entries, index entries without a document, the checkpoints file. An index that cannot be
    read is one problem, listed first: it is rebuilt from the sound documents before anything
    else is repaired (each other repair needs a readable index). Its entries are not compared
    with the documents."""
    try:
        unreadable = [Damage(None, f, p, REBUILD) for f, p in catalog.index.verify().items()]
        if not unreadable:
            return readable_index_damage(catalog, folders)
    except IndexUnreadable as exc:
        unreadable = [Damage(None, exc.folder, exc.problem, REBUILD)]
    damage = unreadable + [
        Damage(doc_id, str(p.path), p.problem, QUARANTINE)
        for doc_id in folders
        for p in file_problems(catalog.library, doc_id)
    ]
    damage.extend(
        Damage(p.name.split(".")[0], str(p), "left by an interrupted ingest", CLEAR_STAGING)
        for p in catalog.library.abandoned_staging()
    )
    return [*damage, *checkpoints_damage(catalog.library.checkpoints_file)]


def readable_index_damage(catalog: Catalog, folders: list[str]) -> list[Damage]:
    """Every problem of a library whose index can be read."""
    left = catalog.unfinished()
    where = catalog.index.location
    damage = unfinished_damage(left, catalog.library, where)
    counts = catalog.index.point_counts()
    outdated = catalog.index.outdated()
    for doc_id in folders:
        damage.extend(document_damage(catalog, doc_id, counts[doc_id], doc_id in outdated))
    lost = catalog.index.doc_ids(committed=True) - set(folders) - set(left.trash)
    damage.extend(
        Damage(doc_id, where, "index entries of a document that is not in the library", DROP)
        for doc_id in sorted(lost)
    )
    damage.extend(checkpoints_damage(catalog.library.checkpoints_file))
    return damage


def unfinished_damage(left: Unfinished, library: Library, where: str) -> list[Damage]:
    """What interrupted runs left behind; ``Catalog.reconcile`` repairs all of it."""
    return [
        *(
            Damage(p.name.split(".")[0], str(p), "left by an interrupted ingest", CLEAR_STAGING)
            for p in left.staging
        ),
        *(
            Damage(d, str(library.trash_dir / d), "a removal that did not finish", FINISH_REMOVAL)
            for d in left.trash
        ),
        *(
            Damage(d, where, "index entries never made searchable", PUBLISH)
            for d in left.unpublished
        ),
        *(
            Damage(d, where, "index entries of a document never published", UNDO_PUBLISH)
            for d in left.orphaned
        ),
    ]


def document_damage(
    catalog: Catalog, doc_id: str, points: int, outdated: bool = False
) -> list[Damage]:
    """A document's damaged files (repaired by quarantine) or, when its files are sound,
    index entries it lacks or that an older version wrote (repaired by re-indexing from
    those files)."""
    problems = file_problems(catalog.library, doc_id)
    if problems:
        return [Damage(doc_id, str(p.path), p.problem, QUARANTINE) for p in problems]
    expected = len(stored_entries(catalog.library, doc_id))
    if points < expected:
        problem = f"the index holds {points} of its {expected} entries"
    elif outdated:
        problem = "index entries of an older version (BM25 without the sections' text)"
    else:
        return []
    return [Damage(doc_id, catalog.index.location, problem, REINDEX)]


def file_problems(library: Library, doc_id: str) -> list[DamagedFile]:
    """One problem per damaged file of a document folder; files are compared with each other
    only where both could be read."""
    metadata = library.docs_dir / doc_id / "metadata.json"
    verification = library.docs_dir / doc_id / "verification.json"
    problems: list[DamagedFile] = []
    record = _collect(problems, lambda: checked_record(library, doc_id))
    pages = _collect(problems, lambda: checked_pages(library, doc_id, record))
    _collect(problems, lambda: checked_tree(library, doc_id, record, pages))
    _collect(problems, lambda: _require(metadata, library.metadata(doc_id), METADATA_FIELDS))
    _collect(problems, lambda: _require(verification, library.verification(doc_id), REPORT_FIELDS))
    _collect(problems, lambda: checked_images(library, doc_id, pages))
    return problems


def _collect(problems: list[DamagedFile], read: Callable[[], T]) -> T | None:
    """``read()``, or None with its damage added to ``problems``."""
    try:
        return read()
    except DamagedFile as exc:
        problems.append(exc)
        return None


def checked_record(library: Library, doc_id: str) -> DocumentRecord:
    """The manifest, with every field the listings and the other files' checks read."""
    record = library.record(doc_id)
    _require(library.doc_dir(doc_id) / "document.json", record, RECORD_FIELDS)
    return record


def checked_pages(library: Library, doc_id: str, record: DocumentRecord | None) -> int:
    """The number of pages, which must be the manifest's."""
    count = len(library.pages(doc_id))
    if record is not None and count != record["pages"]:
        raise DamagedFile(
            library.doc_dir(doc_id) / "pages.jsonl",
            f"{count} pages, but document.json says {record['pages']}",
        )
    return count


def checked_tree(
    library: Library, doc_id: str, record: DocumentRecord | None, pages: int | None
) -> None:
    """Well-formed nodes, each within the document's pages, as many as the manifest says."""
    tree = library.tree(doc_id)
    problem = nodes_problem(tree, pages)
    if problem is None and record is not None and len(walk(tree)) != record["nodes"]:
        problem = f"{len(walk(tree))} nodes, but document.json says {record['nodes']}"
    if problem is not None:
        raise DamagedFile(library.doc_dir(doc_id) / "tree.json", problem)


def nodes_problem(nodes: Any, pages: int | None) -> str | None:
    """The first malformed node, or one outside pages 1..``pages``, in words."""
    if not isinstance(nodes, list):
        return "expected a list of section nodes"
    for node in nodes:
        problem = fields_problem(node, NODE_FIELDS)
        if problem is not None:
            return f"a section node: {problem}"
        start, end = node["start_page"], node["end_page"]
        if not 1 <= start <= end <= (end if pages is None else pages):
            return f"node {node['node_id']} covers pages {start}-{end} of {pages} pages"
        problem = nodes_problem(node["nodes"], pages)
        if problem is not None:
            return problem
    return None


def checked_images(library: Library, doc_id: str, pages: int | None) -> None:
    """The image list, checked against the pages and the images folder."""
    folder = library.doc_dir(doc_id)
    problem = images_problem(library.images(doc_id), folder / "images", pages)
    if problem is not None:
        raise DamagedFile(folder / "images.json", problem)


def images_problem(images: Any, folder: Path, pages: int | None) -> str | None:
    """The first listed image that is malformed, not on a page of the document, or not in
    ``folder`` (the tools would fail on it), in words."""
    if not isinstance(images, list):
        return "expected a list of images"
    for image in images:
        problem = fields_problem(image, IMAGE_FIELDS)
        if problem is not None:
            return f"an image: {problem}"
        if not 1 <= image["page"] <= (image["page"] if pages is None else pages):
            return f"{image['name']} is on page {image['page']} of {pages} pages"
        if not (folder / image["name"]).is_file():
            return f"{image['name']} is not in the images folder"
    return None


def _require(path: Path, value: Any, fields: Fields) -> None:
    """DamagedFile naming ``path`` unless ``value`` is an object with ``fields``."""
    problem = fields_problem(value, fields)
    if problem is not None:
        raise DamagedFile(path, problem)


def fields_problem(value: Any, fields: Fields) -> str | None:
    """Why ``value`` is not a JSON object with ``fields`` of their types, or None."""
    if not isinstance(value, dict):
        return "expected a JSON object"
    for name, kind in fields.items():
        if name not in value:
            return f"{name!r} is missing"
        if not isinstance(value[name], kind):
            return f"{name!r} is a {type(value[name]).__name__}"
    return None


def checkpoints_damage(path: Path) -> list[Damage]:
    """The checkpoints file, when SQLite cannot read it (every question would fail on it)."""
    problem = sqlite_problem(path) if path.exists() else None
    return [] if problem is None else [Damage(None, str(path), problem, QUARANTINE)]


def sqlite_problem(path: Path) -> str | None:
    """What SQLite's own quick check finds wrong with a database file (opened read-only). On
    a read-only filesystem it is opened as immutable: SQLite cannot create the shared-memory
    file a read of a write-ahead-logged database needs there, and nothing can change it."""
    options = "mode=ro" if writable(path.parent) else "mode=ro&immutable=1"
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    found = "; ".join(str(row[0]) for row in rows)
    return None if found == "ok" else found


# -- repairing --------------------------------------------------------------------------
def repair_damage(catalog: Catalog, damage: list[Damage]) -> tuple[list[Repaired], list[Damage]]:
    """Run each needed repair once; returns what was done and the damage that remains (the
    repair failed, with a warning saying why)."""
    outcome: dict[tuple[object, str | None], bool] = {}
    repaired: list[Repaired] = []
    remaining: list[Damage] = []
    for item in damage:
        key = (item.fix.run, item.fix.target(item))
        if key not in outcome:
            outcome[key] = _attempt(catalog, item)
        if outcome[key]:
            repaired.append(Repaired(item.doc_id, item.fix.action))
        else:
            remaining.append(item)
    return list(dict.fromkeys(repaired)), remaining


def _attempt(catalog: Catalog, item: Damage) -> bool:
    """Run one repair; whether it worked."""
    try:
        item.fix.run(catalog, item)
    except Exception as exc:  # one failed repair must not stop the others; it stays reported
        LOG.warning("could not repair %s (%s): %s", item.file, item.fix.action, exc)
        return False
    return True


def _reconcile(catalog: Catalog, damage: Damage) -> None:
    """One reconcile finishes or undoes every leftover of interrupted runs at once."""
    catalog.reconcile()


def _quarantine(catalog: Catalog, damage: Damage) -> None:
    """A damaged document's folder, or a damaged library file such as the checkpoints."""
    if damage.doc_id is None:
        catalog.library.quarantine(Path(damage.file))
    else:
        catalog.quarantine(damage.doc_id)


def _reindex(catalog: Catalog, damage: Damage) -> None:
    """Sound files, lost entries: rebuild the entries from the files."""
    catalog.reindex(_doc_id(damage))


def _drop(catalog: Catalog, damage: Damage) -> None:
    """Entries whose document is gone: remove what is left of it (its entries, its caches)."""
    catalog.remove(_doc_id(damage))


def _rebuild(catalog: Catalog, damage: Damage) -> None:
    """An unreadable index: move it aside, then write every sound document's entries again."""
    aside = catalog.move_index_aside()
    LOG.warning("moved the unreadable index aside to %s; rebuilding it from the documents", aside)
    library = catalog.library
    sound = [d for d in document_folders(library) if not file_problems(library, d)]
    for doc_id in tqdm(sound, desc="rebuilding the index", unit="doc", disable=None):
        catalog.reindex(doc_id)


def _doc_id(damage: Damage) -> str:
    """The document a per-document repair acts on (every such problem names one)."""
    if damage.doc_id is None:
        raise ValueError(f"{damage.file} names no document")
    return damage.doc_id


QUARANTINE = Fix(_quarantine, "quarantined")
REINDEX = Fix(_reindex, "reindexed")
DROP = Fix(_drop, "dropped index entries")
CLEAR_STAGING = Fix(_reconcile, "removed abandoned staging", whole_library=True)
FINISH_REMOVAL = Fix(_reconcile, "finished removal", whole_library=True)
PUBLISH = Fix(_reconcile, "made index entries searchable", whole_library=True)
UNDO_PUBLISH = Fix(_reconcile, "dropped index entries", whole_library=True)
REBUILD = Fix(_rebuild, "rebuilt the index from the documents", whole_library=True)
