"""OCR without Tesseract: which pages are read, the one-line refusals when Tesseract or its
language data is missing, OCR lines made regular, and the OCR flag from the page store to the
tree, the page tool and the citations (a library written before OCR reads as not OCR'd)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from evals.metrics import word_recall
from graph.citations import citation_list
from ingest.context import IngestContext
from ingest.errors import OcrUnavailableError
from ingest.pdf import ocr
from ingest.tree import flag_ocr
from store.library import Library
from store.types import TreeNode
from tools.formatting import tree_lines

TEXT = "This page has a real text layer with more than enough characters to count."


def _document(*kinds: str) -> pymupdf.Document:
    """Pages of the given kinds: "text", "image" (a scan), "blank", "drawing"."""
    doc = pymupdf.open()
    for kind in kinds:
        page = doc.new_page()
        if kind == "text":
            page.insert_text((72, 72), TEXT)
        elif kind == "image":
            pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 40, 40), False)
            pixmap.clear_with(200)
            page.insert_image(page.rect, pixmap=pixmap)
        elif kind == "drawing":
            page.draw_rect(pymupdf.Rect(50, 50, 300, 300), color=(0, 0, 0))
    return doc


def test_auto_reads_only_pages_that_show_an_image_without_text() -> None:
    doc = _document("text", "image", "blank", "drawing")
    assert ocr.pages_to_read(doc, "auto") == [1]
    assert ocr.pages_to_read(doc, "always") == [0, 1, 2, 3]
    assert ocr.pages_to_read(doc, "never") == []


def test_text_pdfs_never_look_for_tesseract(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(language: str) -> None:
        raise AssertionError("Tesseract was looked for")

    monkeypatch.setattr(ocr, "require_tesseract", missing)
    assert ocr.read_pages(_document("text", "blank"), ocr.OcrOptions(), "text.pdf") == []


def test_missing_tesseract_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    with pytest.raises(OcrUnavailableError) as caught:
        ocr.read_pages(_document("image"), ocr.OcrOptions(), "scan.pdf")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("OCR needs Tesseract, which is not installed")
    assert "apt-get install tesseract-ocr" in message and "--ocr never" in message


def test_missing_language_data_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr.shutil, "which", lambda name: "/usr/bin/tesseract")
    monkeypatch.setattr(ocr, "installed_languages", lambda: ("/data/", {"eng", "osd"}))
    ocr.require_tesseract("eng")
    with pytest.raises(OcrUnavailableError) as caught:
        ocr.require_tesseract("eng+chi_sim")
    message = str(caught.value)
    assert message.startswith("Tesseract has no language data for chi_sim in /data/")
    assert "apt-get install tesseract-ocr-chi-sim" in message and "\n" not in message


def test_installed_languages_reads_the_folder_and_names(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = 'List of available languages in "/usr/share/tessdata/" (2):\neng\nosd\n'

    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 0, stdout=listed, stderr="")

    monkeypatch.setattr(ocr.subprocess, "run", run)
    assert ocr.installed_languages() == ("/usr/share/tessdata/", {"eng", "osd"})


@pytest.mark.parametrize("language", ["-l", "eng;rm", "eng deu", "", "eng+"])
def test_a_language_is_never_passed_to_tesseract_as_an_option(language: str) -> None:
    with pytest.raises(ValueError, match="not a Tesseract language"):
        ocr.checked_language(language)
    with pytest.raises(ValueError):
        IngestContext(library="lib", ocr_language=language)


def test_the_context_checks_the_mode_and_builds_the_options() -> None:
    with pytest.raises(ValueError, match="ocr must be one of auto, always, never"):
        IngestContext(library="lib", ocr="sometimes")
    context = IngestContext(library="lib", ocr="always", ocr_language="eng+deu", ocr_jobs=2)
    assert context.ocr_options() == ocr.OcrOptions("always", "eng+deu", 2)
    assert IngestContext(library="lib").ocr_options() == ocr.OcrOptions("auto", "eng", 1)


def _line(x0: float, x1: float, words: list[tuple[str, float]]) -> dict[str, Any]:
    spans = [{"text": text, "size": size} for text, size in words]
    return {"bbox": (x0, 100.0, x1, 110.0), "spans": spans}


def test_ocr_lines_on_one_baseline_are_joined_in_their_largest_size() -> None:
    number = _line(73, 77, [("2 ", 10.1)])
    title = _line(90, 160, [("Target ", 11.2), ("MRLs ", 9.7)])
    below = {"bbox": (73, 120, 200, 130), "spans": [{"text": "Body", "size": 9.0}]}
    text = {"blocks": [{"type": 0, "lines": [number, title, below]}, {"type": 1}]}
    (block, image) = ocr.regular_lines(text)["blocks"]
    first, second = block["lines"]
    assert [span["text"] for span in first["spans"]] == ["2 ", "Target ", "MRLs "]
    assert {span["size"] for span in first["spans"]} == {11.2}
    assert tuple(first["bbox"]) == (73, 100, 160, 110)
    assert second == below and image == {"type": 1}


def test_word_recall_counts_repeats_and_folds_ligatures() -> None:
    assert word_recall("the ﬁrst the last", "first the last") == 0.75
    assert word_recall("", "anything") == 1.0


NODE = TreeNode(node_id="0000", title="Intro", start_page=1, end_page=2, summary="", nodes=[])


def test_the_tree_flags_sections_holding_ocr_pages() -> None:
    child = TreeNode(node_id="0001", title="Scan", start_page=3, end_page=3, summary="", nodes=[])
    parent = TreeNode(**{**NODE, "end_page": 3, "nodes": [child]})  # type: ignore[typeddict-item]
    (flagged,) = flag_ocr([parent], {3})
    assert flagged["ocr"] is True and flagged["nodes"][0]["ocr"] is True
    (plain,) = flag_ocr([NODE], {3})
    assert "ocr" not in plain and "ocr" not in parent
    assert tree_lines([flagged])[0].startswith("0000 Intro [p.1-3] (OCR)")
    assert tree_lines([NODE])[0].startswith("0000 Intro [p.1-2]")
    assert "(OCR)" not in tree_lines([NODE])[0]


def _stored(tmp_path: Path, rows: list[dict[str, Any]]) -> Library:
    library = Library(tmp_path / "library").ensure()
    folder = library.docs_dir / "abcdef0123456789"
    folder.mkdir()
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    (folder / "pages.jsonl").write_text(lines, encoding="utf-8")
    return library


def test_the_page_store_keeps_the_flag_and_old_libraries_read_as_not_ocrd(
    tmp_path: Path,
) -> None:
    library = _stored(
        tmp_path, [{"page": 1, "text": "typed"}, {"page": 2, "text": "scanned", "ocr": True}]
    )
    assert library.pages("abcdef0123456789") == ["typed", "scanned"]
    assert library.ocr_pages("abcdef0123456789") == {2}
    old = _stored(tmp_path / "old", [{"page": 1, "text": "typed"}])
    assert old.ocr_pages("abcdef0123456789") == set()


def test_citations_of_ocr_pages_are_marked() -> None:
    answer = "It holds 81.1M papers (Lo et al., 2020, abcdef0123456789, p.1-2)."
    texts = {("abcdef0123456789", 1): "It holds 81.1M papers.", ("abcdef0123456789", 2): ""}
    first, second = citation_list(answer, texts, frozenset({("abcdef0123456789", 1)}))
    assert first["ocr"] is True and "ocr" not in second
    assert all("ocr" not in c for c in citation_list(answer, texts))
