"""The development PDFs that carry their authors' bookmarks: structure ground truth for free.

Two folders of the development data hold them: ``reference-trees/author-outlines`` (four
papers and releases of ``pdfs/`` and the Nike 10-K of ``financebench/pdfs/``) and ``outlined/``
(20 long documents of every kind, with a ``kind`` in each outline file). Each reference names its
PDF by ``source_pdf``; the bookmarks are ``{level, title, start_page}`` with 1-based pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUTLINE_FOLDERS = (
    Path("reference-trees") / "author-outlines",
    Path("outlined") / "outlines",
)
# Where the PDFs live, relative to the data folder, searched in this order.
PDF_FOLDERS = (Path("pdfs"), Path("financebench") / "pdfs", Path("outlined") / "pdfs")
# The earlier outline files predate the ``kind`` field; what each of them is.
EARLIER_KINDS = {
    "NIKE_2023_10K.pdf": "filing",
    "regbi-interpretive-release.pdf": "regulation",
}


@dataclass(frozen=True)
class OutlinedDocument:
    """A PDF and the bookmarks its authors made."""

    name: str
    pdf: Path
    kind: str
    pages: int
    entries: list[dict[str, Any]]


def reference_outlines(data_dir: Path) -> list[Path]:
    """Every reference outline file of the development data, folder by folder, sorted by name."""
    return [
        path for folder in OUTLINE_FOLDERS for path in sorted((data_dir / folder).glob("*.json"))
    ]


def find_pdf(data_dir: Path, name: str) -> Path | None:
    """The development PDF called ``name``, from the first PDF folder that has it."""
    for folder in PDF_FOLDERS:
        candidate = data_dir / folder / name
        if candidate.is_file():
            return candidate
    return None


def outlined_documents(data_dir: Path) -> list[OutlinedDocument]:
    """The reference documents, in a stable order; a missing PDF is an error naming it."""
    documents: list[OutlinedDocument] = []
    missing: list[str] = []
    for path in reference_outlines(data_dir):
        reference = json.loads(path.read_text())
        name = reference["source_pdf"]
        pdf = find_pdf(data_dir, name)
        if pdf is None:
            missing.append(name)
            continue
        kind = reference.get("kind") or EARLIER_KINDS.get(name, "paper")
        pages = int(reference.get("page_count") or 0)
        documents.append(OutlinedDocument(name, pdf, kind, pages, reference["entries"]))
    if missing:
        folders = ", ".join(str(data_dir / folder) for folder in PDF_FOLDERS)
        raise FileNotFoundError(f"reference PDFs not found under {folders}: {', '.join(missing)}")
    if not documents:
        folders = ", ".join(str(data_dir / folder) for folder in OUTLINE_FOLDERS)
        raise FileNotFoundError(f"no reference outlines in {folders}")
    return documents
