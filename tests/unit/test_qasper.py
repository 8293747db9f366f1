"""QASPER papers as supplied documents: one page per paragraph."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ingest.errors import BadInputError
from ingest.qasper import (
    FLOATS_TITLE,
    is_qasper_file,
    load_qasper,
    qasper_doc_id,
    qasper_document,
)


def paper() -> dict[str, Any]:
    return {
        "title": "Widgets in Context",
        "abstract": "An  abstract\n about widgets.",
        "full_text": [
            {"section_name": "Introduction", "paragraphs": ["P1 text.", "P2 text."]},
            {"section_name": "Method ::: Data", "paragraphs": ["P3 text."]},
            {"section_name": "Method ::: Model", "paragraphs": ["P4 text.", "   "]},
            {"section_name": "Method ::: Model ::: Encoder", "paragraphs": ["P5 text."]},
            {"section_name": "Conclusion", "paragraphs": ["P6 text."]},
        ],
        "figures_and_tables": [
            {"caption": "Figure 1: The widget.", "file": "a.png"},
            {"caption": "  ", "file": "b.png"},
            {"caption": "Table 1: Results.", "file": "c.png"},
        ],
        "qas": [{"question": "What?"}],
    }


def test_one_page_per_paragraph_abstract_first_captions_last() -> None:
    doc = qasper_document("1905.01234", paper())
    assert doc["pages"] == [
        "An abstract about widgets.",
        "P1 text.",
        "P2 text.",
        "P3 text.",
        "P4 text.",
        "P5 text.",
        "P6 text.",
        "Figure 1: The widget.",
        "Table 1: Results.",
    ]
    assert doc["abstract"] == "An abstract about widgets."
    assert doc["title"] == "Widgets in Context"
    assert doc["year"] == 2019
    assert doc["venue"] == "arXiv"


def test_nested_section_names_create_parent_entries() -> None:
    doc = qasper_document("1905.01234", paper())
    assert [(e["level"], e["title"], e["start_page"]) for e in doc["entries"]] == [
        (1, "Abstract", 1),
        (1, "Introduction", 2),
        (1, "Method", 4),
        (2, "Data", 4),
        (2, "Model", 5),
        (3, "Encoder", 6),
        (1, "Conclusion", 7),
        (1, FLOATS_TITLE, 8),
    ]
    assert all(e["verified"] and e["begins_page"] for e in doc["entries"])


def test_empty_trailing_section_is_clamped_to_last_page() -> None:
    data = {
        "title": "T",
        "abstract": "",
        "full_text": [
            {"section_name": "Intro", "paragraphs": ["Only paragraph."]},
            {"section_name": "Acknowledgments", "paragraphs": []},
        ],
    }
    doc = qasper_document("abc", data)
    assert doc["pages"] == ["(no abstract)", "Only paragraph."]
    assert [(e["title"], e["start_page"]) for e in doc["entries"]] == [
        ("Abstract", 1),
        ("Intro", 2),
        ("Acknowledgments", 2),
    ]
    assert doc["year"] is None


def test_missing_section_name_and_title() -> None:
    doc = qasper_document("2001.00001", {"full_text": [{"paragraphs": ["x"]}]})
    assert [e["title"] for e in doc["entries"]] == ["Abstract", "Untitled"]
    assert doc["title"] == "2001.00001"
    assert doc["year"] == 2020


def test_doc_id_is_stable_and_tracks_text() -> None:
    original = paper()
    first = qasper_doc_id("1905.01234", original)
    assert len(first) == 16 and int(first, 16) >= 0
    assert qasper_doc_id("1905.01234", copy.deepcopy(original)) == first
    questions_changed = copy.deepcopy(original)
    questions_changed["qas"] = []
    assert qasper_doc_id("1905.01234", questions_changed) == first
    text_changed = copy.deepcopy(original)
    text_changed["full_text"][0]["paragraphs"][0] = "P1 text, revised."
    assert qasper_doc_id("1905.01234", text_changed) != first
    assert qasper_doc_id("1905.99999", original) != first


def test_load_qasper_reads_papers(tmp_path: Path) -> None:
    path = tmp_path / "qasper.json"
    path.write_text(json.dumps({"1905.01234": paper()}), encoding="utf-8")
    assert is_qasper_file(path)
    assert list(load_qasper(path)) == ["1905.01234"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("[1, 2, 3]", "QASPER schema"),
        ('{"x": {"title": "no full text"}}', "QASPER schema"),
        ('{"x": 5}', "QASPER schema"),
        ("{not json", "not a readable QASPER JSON file"),
    ],
)
def test_load_qasper_rejects_other_json(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "other.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInputError, match=reason):
        load_qasper(path)


def test_load_qasper_rejects_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="not a readable QASPER JSON file"):
        load_qasper(tmp_path / "missing.json")


def test_is_qasper_file_by_suffix() -> None:
    assert is_qasper_file(Path("a.JSON")) is True
    assert is_qasper_file(Path("a.pdf")) is False
