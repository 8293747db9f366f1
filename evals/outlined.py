"""The development PDFs that carry their authors' bookmarks: structure ground truth for free.

Two folders of the development data hold them: ``reference-trees/author-outlines`` (four
papers and releases of ``pdfs/`` and the Nike 10-K of ``financebench/pdfs/``) and ``outlined/``
(long documents of every kind, with a ``kind`` in each outline file). Each reference names its
PDF by ``source_pdf``; the bookmarks are ``{level, title, start_page}`` with 1-based pages.

Every document belongs to a *family*: the repository it came from (``outlined/manifest.json``).
Documents of one family share producers, templates and fonts, so every fold that measures
generalisation holds out whole families, never single documents or lines.
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
# ...and the repository each comes from (the data README's sources), as the manifest names them.
EARLIER_FAMILIES = {
    "0908.0054.pdf": "kermitt2/grobid",
    "2206.10883v3.pdf": "allenai/papermage",
    "2304.02623v1.pdf": "allenai/papermage",
    "NIKE_2023_10K.pdf": "patronus-ai/financebench",
    "regbi-interpretive-release.pdf": "VectifyAI/PageIndex",
}
MANIFEST = Path("outlined") / "manifest.json"


@dataclass(frozen=True)
class OutlinedDocument:
    """A PDF and the bookmarks its authors made."""

    name: str
    pdf: Path
    kind: str
    pages: int
    entries: list[dict[str, Any]]
    family: str


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
    families = _families(data_dir)
    for path in reference_outlines(data_dir):
        reference = json.loads(path.read_text())
        name = reference["source_pdf"]
        pdf = find_pdf(data_dir, name)
        if pdf is None:
            missing.append(name)
            continue
        kind = reference.get("kind") or EARLIER_KINDS.get(name, "paper")
        pages = int(reference.get("page_count") or 0)
        family = families.get(name) or EARLIER_FAMILIES.get(name) or name
        documents.append(OutlinedDocument(name, pdf, kind, pages, reference["entries"], family))
    if missing:
        folders = ", ".join(str(data_dir / folder) for folder in PDF_FOLDERS)
        raise FileNotFoundError(f"reference PDFs not found under {folders}: {', '.join(missing)}")
    if not documents:
        folders = ", ".join(str(data_dir / folder) for folder in OUTLINE_FOLDERS)
        raise FileNotFoundError(f"no reference outlines in {folders}")
    return documents


def _families(data_dir: Path) -> dict[str, str]:
    """The manifest's family of each ``outlined/`` PDF, by file name (none without a manifest:
    every such document is then a family of its own)."""
    path = data_dir / MANIFEST
    if not path.is_file():
        return {}
    return {Path(record["file"]).name: record["family"] for record in json.loads(path.read_text())}
