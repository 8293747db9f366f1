"""Scanned PDFs read by Tesseract: scanned copies of real papers (their pages rendered at 150 dpi
into image-only PDFs) are ingested with ``--ocr auto``, recover at least 90 % of the original
text layer's words, get a section tree and a cited answer marked as OCR'd; a mixed PDF has only
its image pages read; ``--ocr never`` and a missing Tesseract are refused in one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.bench_ocr import original_text, scanned_copy
from evals.metrics import word_recall
from graph.cli import main
from graph.cli.library import demo_corpus
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from store.types import walk
from tests.conftest import PDF_DIR, require_shared_data
from tools.toolbox import Toolbox

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True, scope="module")
def _tesseract() -> None:
    if shutil.which("tesseract") is None:
        pytest.fail("these tests need Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng")


S2ORC = "2020.acl-main.447.pdf"
SCANS = {"mooney05.pdf": 4, S2ORC: 2}
"""Scanned copies: a paper's first four pages, and the demo paper's first two (its abstract
states the corpus size a question below asks for)."""
NUMBERED = ("2 Target MRL’s", "3 Semantic Parsing Framework", "4 Corpus Annotation")
"""Section headings on the four scanned pages of mooney05."""
MIXED = ("bohnet09.pdf", 3, {1, 2})
"""A mixed PDF: three pages, the first two with their text layer, the third a scan."""
MIN_RECALL = 0.90


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()
    folder = tmp_path_factory.mktemp("scans")
    for name, pages in SCANS.items():
        source = demo_corpus() / name if name == S2ORC else PDF_DIR / name
        scanned_copy(source, folder / name, pages)
    name, pages, text_pages = MIXED
    scanned_copy(PDF_DIR / name, folder / f"mixed-{name}", pages, text_pages)
    return folder


@pytest.fixture(scope="module")
def ocr_library(scans: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    library = tmp_path_factory.mktemp("ocr") / "library"
    code = main(["--library", str(library), "ingest", str(scans), "--ocr", "auto", "--json"])
    assert code == 0
    yield library
    close_catalogs()


def _doc(library: Path, file_name: str) -> str:
    return next(
        r["doc_id"] for r in Library(library).documents() if Path(r["source"]).name == file_name
    )


def test_scanned_copies_recover_their_words(ocr_library: Path) -> None:
    library = Library(ocr_library)
    for name, pages in SCANS.items():
        source = demo_corpus() / name if name == S2ORC else PDF_DIR / name
        read = "\n".join(library.pages(_doc(ocr_library, name)))
        assert word_recall(original_text(source, pages), read) >= MIN_RECALL, name


def test_ocr_pages_are_flagged_in_the_page_store_and_the_tree(ocr_library: Path) -> None:
    library = Library(ocr_library)
    for name, pages in SCANS.items():
        doc_id = _doc(ocr_library, name)
        assert library.ocr_pages(doc_id) == set(range(1, pages + 1))
        tree = library.tree(doc_id)
        assert tree and all(node.get("ocr") for node in walk(tree))
    mooney = library.tree(_doc(ocr_library, "mooney05.pdf"))
    titles = {node["title"] for node in walk(mooney)}
    assert sum(heading in titles for heading in NUMBERED) >= 2, titles


def test_a_mixed_pdf_has_only_its_image_pages_read(ocr_library: Path) -> None:
    name, pages, text_pages = MIXED
    library = Library(ocr_library)
    doc_id = _doc(ocr_library, f"mixed-{name}")
    assert library.ocr_pages(doc_id) == set(range(1, pages + 1)) - text_pages
    texts = library.pages(doc_id)
    assert word_recall(original_text(PDF_DIR / name, pages), "\n".join(texts)) >= MIN_RECALL
    scanned = min(set(range(1, pages + 1)) - text_pages)
    for node in walk(library.tree(doc_id)):
        assert node.get("ocr", False) == (node["end_page"] >= scanned), node


def test_a_cited_answer_from_a_scan_says_its_page_was_read_by_ocr(
    capsys: pytest.CaptureFixture[str], ocr_library: Path
) -> None:
    doc_id = _doc(ocr_library, S2ORC)
    question = "How many academic papers does the S2ORC corpus contain?"
    args = ("--library", str(ocr_library), "ask", question, "--doc", doc_id)
    code, result = cli_json(capsys, *args)
    assert code == 0 and "81.1M" in result["answer"]
    assert result["citations"] and all(c["ocr"] for c in result["citations"])
    assert main(list(args)) == 0
    assert f"{doc_id} p.1 (OCR):" in capsys.readouterr().out
    code, tree = cli_json(capsys, "--library", str(ocr_library), "tree", doc_id)
    assert code == 0 and tree["nodes"][0]["ocr"] is True


def test_the_agent_tools_mark_pages_and_sections_read_by_ocr(ocr_library: Path) -> None:
    name, _, _ = MIXED
    doc_id = _doc(ocr_library, f"mixed-{name}")
    toolbox = Toolbox(open_catalog(ocr_library))
    pages = toolbox.run("get_page_content", doc_id=doc_id, pages=[2, 3])
    assert f"=== {doc_id} p.2 ===" in pages.content
    assert f"=== {doc_id} p.3 (OCR) ===" in pages.content
    assert [page.get("ocr", False) for page in pages.artifact["pages"]] == [False, True]
    tree = toolbox.run("get_document_tree", doc_id=doc_id).content
    assert "(OCR)" in tree


def test_ocr_never_refuses_a_scan_in_one_line(
    capsys: pytest.CaptureFixture[str], scans: Path, library_dir: Path
) -> None:
    scan = str(scans / S2ORC)
    code, report = cli_json(capsys, "--library", str(library_dir), "ingest", scan, "--ocr", "never")
    assert code == 2
    (outcome,) = report["outcomes"]
    assert outcome["error"].startswith("no text layer (scanned or image-only PDF); OCR is off")
    assert "\n" not in outcome["error"]


def test_missing_tesseract_is_named_in_one_line_and_the_batch_goes_on(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scans: Path,
    library_dir: Path,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder without tesseract
    lib = str(library_dir)
    assert main(["--library", lib, "ingest", str(scans / S2ORC), "--ocr", "always"]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: OCR needs Tesseract, which is not installed")
    assert "apt-get install tesseract-ocr" in error and "\n" not in error
    text_pdf = demo_corpus() / "2023.eacl-main.121.pdf"
    code, report = cli_json(capsys, "--library", lib, "ingest", str(scans / S2ORC), str(text_pdf))
    assert code == 2 and report["ingested"] == 1
    (failed,) = [o for o in report["outcomes"] if o["status"] == "failed"]
    assert failed["error"].startswith("OCR needs Tesseract")


def test_missing_language_data_is_named_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scans: Path,
    library_dir: Path,
    tmp_path: Path,
) -> None:
    lib = str(library_dir)
    scan = str(scans / S2ORC)
    assert main(["--library", lib, "ingest", scan, "--ocr", "always", "--ocr-language", "xyz"]) == 1
    error = capsys.readouterr().err.strip()
    assert "no language data for xyz" in error and "tesseract-ocr-xyz" in error
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))  # a folder without language data
    assert main(["--library", lib, "ingest", scan, "--ocr", "always"]) == 1
    error = capsys.readouterr().err.strip()
    assert f"no language data for eng in {tmp_path}" in error and "\n" not in error
