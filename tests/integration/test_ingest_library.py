"""Ingestion of the real development PDFs into a real library with a real Qdrant index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evals.outlined import find_pdf
from evals.structure_recall import compare, overall
from ingest.context import IngestContext
from ingest.pipeline import BatchReport, ingest_paths
from ingest.structure.locate import find_title
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from store.types import TreeNode, walk
from tests.conftest import OUTLINE_DIR, PDF_DIR, SHARED_DATA, require_shared_data

pytestmark = pytest.mark.integration


def _reference(name: str) -> dict[str, Any]:
    return json.loads((OUTLINE_DIR / f"{name}.outline.json").read_text())


def _doc_for(library: Path, pdf_name: str) -> str:
    matches = [r["doc_id"] for r in Library(library).documents() if r["source"].endswith(pdf_name)]
    assert len(matches) == 1, pdf_name
    return matches[0]


def test_every_development_pdf_is_ingested(corpus: tuple[Path, BatchReport]) -> None:
    library, report = corpus
    assert report.count("ingested") == len(list(PDF_DIR.glob("*.pdf"))) == 19
    assert report.failed == []
    records = Library(library).documents()
    assert len(records) == 19
    assert all(r["nodes"] >= 1 and r["pages"] >= 1 for r in records)


def _check_ranges(nodes: list[TreeNode], low: int, high: int) -> None:
    """Each node inside its parent, starts non-decreasing, a parent covers its children."""
    previous_start = low
    for node in nodes:
        assert low <= node["start_page"] <= node["end_page"] <= high, node
        assert node["start_page"] >= previous_start, node
        previous_start = node["start_page"]
        if node["nodes"]:
            assert node["end_page"] >= max(child["end_page"] for child in node["nodes"])
            _check_ranges(node["nodes"], node["start_page"], node["end_page"])


def test_page_ranges_are_monotonic_inside_and_cover_every_page(
    corpus: tuple[Path, BatchReport],
) -> None:
    library = Library(corpus[0])
    for record in library.documents():
        tree, total = library.tree(record["doc_id"]), record["pages"]
        _check_ranges(tree, 1, total)
        covered = {p for node in tree for p in range(node["start_page"], node["end_page"] + 1)}
        assert covered == set(range(1, total + 1)), record["title"]
        ids = [node["node_id"] for node in walk(tree)]
        assert ids == [f"{i:04d}" for i in range(len(ids))]


def test_no_section_text_is_stored_in_the_tree(corpus: tuple[Path, BatchReport]) -> None:
    library = Library(corpus[0])
    for record in library.documents():
        raw = (library.doc_dir(record["doc_id"]) / "tree.json").read_text()
        assert '"text"' not in raw
        assert all(node["summary"].strip() for node in walk(library.tree(record["doc_id"])))


@pytest.mark.parametrize(
    "pdf",
    ["0908.0054.pdf", "2206.10883v3.pdf", "2304.02623v1.pdf", "regbi-interpretive-release.pdf"],
)
def test_outline_trees_match_the_author_outlines_exactly(
    corpus: tuple[Path, BatchReport], pdf: str
) -> None:
    library = Library(corpus[0])
    doc_id = _doc_for(corpus[0], pdf)
    reference = _reference(pdf.removesuffix(".pdf"))["entries"]
    assert library.record(doc_id)["structure"] == "outline"
    flat = _flatten(library.tree(doc_id))
    # Nodes the pipeline adds by rule: front matter and an uncovered abstract.
    inserted = {"Front matter", "Abstract"} - {e["title"] for e in reference}
    ours = [entry for entry in flat if entry["title"] not in inserted]
    expected = [
        {"level": e["level"], "title": " ".join(e["title"].split()), "start_page": e["start_page"]}
        for e in reference
    ]
    assert ours == expected


def _flatten(nodes: list[TreeNode], level: int = 1) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for node in nodes:
        out.append({"level": level, "title": node["title"], "start_page": node["start_page"]})
        out.extend(_flatten(node["nodes"], level + 1))
    return out


def test_structure_without_bookmarks_recovers_author_start_pages(tmp_path: Path) -> None:
    """With the bookmarks ignored, printed contents and headings find the authors' sections."""
    require_shared_data()
    context = IngestContext(library=str(tmp_path / "lib"), ignore_outline=True)
    # Reference PDFs live under pdfs/ or financebench/pdfs/ (NIKE_2023_10K.pdf).
    names = [json.loads(p.read_text())["source_pdf"] for p in sorted(OUTLINE_DIR.glob("*.json"))]
    pdfs = [pdf for pdf in (find_pdf(SHARED_DATA, name) for name in names) if pdf is not None]
    assert len(pdfs) == len(names)
    ingest_paths(pdfs, context, progress=False)
    library = Library(tmp_path / "lib")
    results = {}
    for pdf in pdfs:
        doc_id = _doc_for(tmp_path / "lib", pdf.name)
        assert library.record(doc_id)["structure"] in ("toc", "headings")
        results[pdf.name] = compare(_reference(pdf.stem)["entries"], library.tree(doc_id))
    print(json.dumps(results, indent=1))
    totals = overall(results)
    assert totals["title_recall"] >= 0.9, totals
    assert totals["exact_start_page_accuracy"] >= 0.85, totals
    for name, result in results.items():
        assert result["title_recall"] >= 0.7, (name, result)
    for name in ("NIKE_2023_10K.pdf", "regbi-interpretive-release.pdf"):
        assert library.record(_doc_for(tmp_path / "lib", name))["structure"] == "toc"
    close_catalogs()


FILINGS = SHARED_DATA / "financebench" / "pdfs"


@pytest.mark.parametrize("name", ["BESTBUY_2019_10K.pdf", "MICROSOFT_2023_10K.pdf"])
def test_filings_without_bookmarks_get_their_parts_and_items_from_the_contents(
    tmp_path: Path, name: str
) -> None:
    """Every Item the printed contents lists is a node that starts where its heading is printed."""
    require_shared_data()
    ingest_paths([FILINGS / name], IngestContext(library=str(tmp_path / "lib")), progress=False)
    library = Library(tmp_path / "lib")
    doc_id = _doc_for(tmp_path / "lib", name)
    assert library.record(doc_id)["structure"] == "toc"
    nodes = walk(library.tree(doc_id))
    items = [n for n in nodes if n["title"].startswith("Item ")]
    parts = [n for n in nodes if n["title"].startswith("Part ")]
    assert len(parts) == 4 and len(items) >= 20, [n["title"] for n in nodes][:40]
    pages = library.pages(doc_id)
    for node in items:
        assert find_title(node["title"], pages[node["start_page"] - 1]) is not None, node
    item_8 = next(n for n in items if n["title"].startswith("Item 8."))
    assert item_8["nodes"], "Item 8 has sub-sections (statements, notes)"
    close_catalogs()


def test_index_holds_one_entry_per_document_and_top_level_section(
    corpus: tuple[Path, BatchReport],
) -> None:
    library = Library(corpus[0])
    expected = sum(1 + len(library.tree(r["doc_id"])) for r in library.documents())
    index = open_catalog(corpus[0]).index
    assert index.count() == expected
    assert index.count(committed_only=False) == expected
    for record in library.documents():
        assert index.count(record["doc_id"]) == 1 + len(library.tree(record["doc_id"]))


def test_structural_entries_find_the_right_document(corpus: tuple[Path, BatchReport]) -> None:
    from tools.search import DocumentSearch

    s2orc = _doc_for(corpus[0], "2020.acl-main.447.pdf")
    hits = DocumentSearch(open_catalog(corpus[0])).search(
        "large open corpus of academic papers from Semantic Scholar", limit=3
    )
    assert hits and hits[0].doc_id == s2orc


def test_reingesting_unchanged_files_does_nothing(corpus: tuple[Path, BatchReport]) -> None:
    library_dir = corpus[0]
    library = Library(library_dir)
    before = {r["doc_id"]: r["ingested_at"] for r in library.documents()}
    count_before = open_catalog(library_dir).index.count()
    report = ingest_paths([PDF_DIR], IngestContext(library=str(library_dir)), progress=False)
    assert report.count("present") == 19 and report.count("ingested") == 0
    assert {r["doc_id"]: r["ingested_at"] for r in library.documents()} == before
    assert open_catalog(library_dir).index.count() == count_before


def test_changed_file_replaces_its_old_entries(library_dir: Path, tmp_path: Path) -> None:
    require_shared_data()
    import pymupdf

    pdf = tmp_path / "paper.pdf"
    shutil.copy(PDF_DIR / "bohnet09.pdf", pdf)
    context = IngestContext(library=str(library_dir))
    ingest_paths([pdf], context, progress=False)
    (old,) = Library(library_dir).documents()
    doc = pymupdf.open(PDF_DIR / "bohnet09.pdf")
    doc[0].insert_text((72, 40), "Revised version with an added note.")
    doc.save(pdf)
    report = ingest_paths([pdf], context, progress=False)
    assert report.count("ingested") == 1
    (new,) = Library(library_dir).documents()
    assert new["doc_id"] != old["doc_id"] and new["source"] == old["source"]
    index = open_catalog(library_dir).index
    assert index.count(old["doc_id"], committed_only=False) == 0
    assert index.count() == 1 + len(Library(library_dir).tree(new["doc_id"]))


def test_remove_deletes_a_document_completely(library_dir: Path) -> None:
    require_shared_data()
    from graph.cli import main

    context = IngestContext(library=str(library_dir))
    ingest_paths([PDF_DIR / "bohnet09.pdf", PDF_DIR / "mooney05.pdf"], context, progress=False)
    library = Library(library_dir)
    victim = _doc_for(library_dir, "mooney05.pdf")
    keep = _doc_for(library_dir, "bohnet09.pdf")
    assert main(["--library", str(library_dir), "remove", victim[:8]]) == 0
    assert [r["doc_id"] for r in library.documents()] == [keep]
    assert not library.doc_dir(victim).exists() and not (library.trash_dir / victim).exists()
    index = open_catalog(library_dir).index
    assert index.count(victim, committed_only=False) == 0
    assert index.count() == 1 + len(library.tree(keep))
    assert main(["--library", str(library_dir), "remove", victim]) == 1


def test_page_images_are_stored_with_page_and_bounding_box(
    corpus: tuple[Path, BatchReport],
) -> None:
    library = Library(corpus[0])
    doc_id = _doc_for(corpus[0], "duplicate_media.pdf")
    images = library.images(doc_id)
    assert images, "duplicate_media.pdf has figures"
    folder = library.doc_dir(doc_id) / "images"
    for image in images:
        assert 1 <= image["page"] <= library.record(doc_id)["pages"]
        x0, y0, x1, y1 = image["bbox"]
        assert x1 > x0 and y1 > y0
        assert (folder / image["name"]).stat().st_size > 0
        assert image["name"].startswith(f"p{image['page']:04d}-")
