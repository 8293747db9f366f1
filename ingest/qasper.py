"""QASPER papers as structured non-PDF input: one synthetic page per paragraph.

Gold evidence in QASPER is whole paragraphs (and "FLOAT SELECTED: <caption>" strings), so giving
every paragraph its own page makes evidence map one-to-one onto page numbers. The abstract is
page 1; figure and table captions become pages after the body.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypedDict

from ingest.errors import BadInputError
from store.types import SectionEntry

NEST = " ::: "
FLOATS_TITLE = "Figures and tables"


class SuppliedDocument(TypedDict):
    """A document whose pages and structure come from the source instead of a PDF parser."""

    title: str
    pages: list[str]
    entries: list[SectionEntry]
    year: int | None
    venue: str | None
    abstract: str


def load_qasper(path: Path) -> dict[str, Any]:
    """The papers of a QASPER JSON file, keyed by arXiv id.

    Only the file's shape is checked here; each paper is checked when its document is built
    (``qasper_document``), so one malformed paper fails alone instead of the whole file.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(f"not a readable QASPER JSON file: {exc}") from exc
    if not isinstance(data, dict) or not any(
        isinstance(p, dict) and "full_text" in p for p in data.values()
    ):
        raise BadInputError("JSON is not in the QASPER schema ({arxiv_id: {title, full_text}})")
    return data


def is_qasper_file(path: Path) -> bool:
    return path.suffix.lower() == ".json"


def qasper_doc_id(arxiv_id: str, paper: dict[str, Any]) -> str:
    """Content hash of the paper's text (questions excluded: they are not document content)."""
    content = {k: paper.get(k) for k in ("title", "abstract", "full_text", "figures_and_tables")}
    blob = json.dumps([arxiv_id, content], sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def qasper_document(arxiv_id: str, paper: dict[str, Any]) -> SuppliedDocument:
    """Pages (abstract, paragraphs, captions) and section entries for one paper.

    Raises BadInputError naming the first malformed field, so that paper alone fails.
    """
    check_paper(paper)
    pages = [" ".join((paper.get("abstract") or "").split()) or "(no abstract)"]
    entries = [SectionEntry(level=1, title="Abstract", start_page=1)]
    open_path: list[str] = []
    for section in paper.get("full_text") or []:
        path = [p.strip() for p in (section.get("section_name") or "Untitled").split(NEST)]
        start = len(pages) + 1
        for depth, title in enumerate(path):
            if open_path[: depth + 1] != path[: depth + 1]:
                entries.append(
                    SectionEntry(level=depth + 1, title=title or "Untitled", start_page=start)
                )
        open_path = path
        pages.extend(" ".join(p.split()) for p in section.get("paragraphs") or [] if p.strip())
    captions = [(f.get("caption") or "").strip() for f in paper.get("figures_and_tables") or []]
    captions = [c for c in captions if c]
    if captions:
        entries.append(SectionEntry(level=1, title=FLOATS_TITLE, start_page=len(pages) + 1))
        pages.extend(captions)
    return SuppliedDocument(
        title=paper.get("title") or arxiv_id,
        pages=pages,
        entries=_clamp(entries, len(pages)),
        year=_arxiv_year(arxiv_id),
        venue="arXiv",
        abstract=pages[0],
    )


def check_paper(paper: Any) -> None:
    """Refuse a paper whose fields do not have QASPER's types, with the path of the first bad one.

    Text fields are taken as they are, never converted with ``str``: a number or a list where a
    paragraph belongs would otherwise become a page of Python syntax.
    """
    if not isinstance(paper, dict):
        raise BadInputError(f"not a QASPER paper: {_kind(paper)}, expected an object")
    for key in ("title", "abstract"):
        _expect(paper.get(key), str, key, "a string")
    if "full_text" not in paper:
        raise BadInputError("no full_text")
    sections = _expect(paper["full_text"], list, "full_text", "a list of sections") or []
    for number, section in enumerate(sections):
        where = f"full_text[{number}]"
        _expect(section, dict, where, "an object {section_name, paragraphs}", optional=False)
        _expect(section.get("section_name"), str, f"{where}.section_name", "a string")
        paragraphs = section.get("paragraphs")
        for at, paragraph in enumerate(
            _expect(paragraphs, list, f"{where}.paragraphs", "a list of strings") or []
        ):
            _expect(paragraph, str, f"{where}.paragraphs[{at}]", "a string", optional=False)
    floats = paper.get("figures_and_tables")
    for number, figure in enumerate(
        _expect(floats, list, "figures_and_tables", "a list of objects") or []
    ):
        where = f"figures_and_tables[{number}]"
        _expect(figure, dict, where, "an object {caption, file}", optional=False)
        _expect(figure.get("caption"), str, f"{where}.caption", "a string")


def _expect(value: Any, kind: type, where: str, expected: str, optional: bool = True) -> Any:
    """``value`` when it has type ``kind`` (or is null and ``optional``), else BadInputError."""
    if isinstance(value, kind) or (optional and value is None):
        return value
    raise BadInputError(f"{where} is {_kind(value)}, expected {expected}")


def _kind(value: Any) -> str:
    """JSON's name for a value's type, as the user wrote it."""
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    names |= {list: "a list", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _clamp(entries: list[SectionEntry], total: int) -> list[SectionEntry]:
    """Sections without paragraphs at the very end still point at a real page."""
    for entry in entries:
        entry["start_page"] = min(entry["start_page"], total)
        entry["verified"] = True
        entry["begins_page"] = True
    return entries


def _arxiv_year(arxiv_id: str) -> int | None:
    """New-style arXiv ids start with YYMM."""
    head = arxiv_id.split(".")[0]
    return 2000 + int(head[:2]) if len(head) == 4 and head.isdigit() else None
