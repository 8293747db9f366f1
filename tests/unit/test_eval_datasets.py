"""Benchmark loaders on tiny files built in tmp_path (and the QASPER dev file when present)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from evals.datasets import (
    doi_file_name,
    load_financebench,
    load_litqa2,
    load_mosaic,
    load_qasper,
    normalize_doi,
    passage_pages,
    qasper_answer,
)
from ingest.errors import BadInputError
from tests.conftest import QASPER_FILE

# -- QASPER -----------------------------------------------------------------------------------


def annotation(**answer: Any) -> dict[str, Any]:
    base = {
        "unanswerable": False,
        "extractive_spans": [],
        "yes_no": None,
        "free_form_answer": "",
        "evidence": [],
        "highlighted_evidence": [],
    }
    return {"answer": {**base, **answer}, "annotation_id": "x", "worker_id": "w"}


def qasper_paper() -> dict[str, Any]:
    # pages: 1 abstract, 2 "First  paragraph", 3 "Second one", 4 "Third", 5-6 captions
    return {
        "title": "T",
        "abstract": "The abstract.",
        "full_text": [
            {"section_name": "Intro", "paragraphs": ["First\n paragraph.", "Second one."]},
            {"section_name": "Method", "paragraphs": ["", "Third."]},
        ],
        "figures_and_tables": [
            {"caption": "Figure 1: A  plot.", "file": "f.png"},
            {"caption": "Table 1: Results of the main experiment.", "file": "t.png"},
        ],
        "qas": [
            {
                "question": "Which?",
                "question_id": "q1",
                "answers": [
                    annotation(
                        extractive_spans=["alpha", "beta"],
                        evidence=["First paragraph.", "FLOAT SELECTED: Figure 1: A plot."],
                    ),
                    annotation(
                        free_form_answer="Alpha and beta.",
                        evidence=["Third.", "FLOAT SELECTED: Table 1: Results of the main"],
                    ),
                ],
            },
            {
                "question": "Is it?",
                "question_id": "q2",
                "answers": [
                    annotation(yes_no=True, evidence=["Second one.", "Method"]),
                    annotation(yes_no=False, evidence=["Second   one."]),
                    annotation(unanswerable=True, evidence=["ignored"]),
                ],
            },
            {"question": "Empty?", "question_id": "q3", "answers": [annotation()]},
        ],
    }


@pytest.fixture
def qasper_file(tmp_path: Path) -> Path:
    path = tmp_path / "qasper.json"
    path.write_text(json.dumps({"2001.00001": qasper_paper()}), encoding="utf-8")
    return path


def test_qasper_answers_follow_the_official_conventions() -> None:
    assert qasper_answer(annotation(extractive_spans=["a", "b"])) == {
        "type": "extractive",
        "text": "a, b",
        "evidence": [],
    }
    assert qasper_answer(annotation(yes_no=True)) == {
        "type": "boolean",
        "text": "Yes",
        "evidence": [],
    }
    assert qasper_answer(annotation(yes_no=False)) == {
        "type": "boolean",
        "text": "No",
        "evidence": [],
    }
    none = qasper_answer(annotation(unanswerable=True, evidence=["x"]))
    assert none == {"type": "none", "text": "Unanswerable", "evidence": []}
    assert qasper_answer(annotation()) is None


def test_qasper_evidence_maps_onto_paragraph_and_caption_pages(qasper_file: Path) -> None:
    loaded = load_qasper(qasper_file)
    q1 = loaded.questions[0]
    assert q1.doc_keys == ("2001.00001",)
    assert [a["type"] for a in q1.answers] == ["extractive", "abstractive"]
    assert q1.reference == "alpha, beta" and q1.qtype == "extractive"
    key = "2001.00001"
    # the figure caption differs in whitespace only; the table caption is a truncated prefix
    assert q1.evidence_sets == (frozenset({(key, 2), (key, 5)}), frozenset({(key, 4), (key, 6)}))
    assert q1.text_evidence_sets == (frozenset({(key, 2)}), frozenset({(key, 4)}))
    assert q1.unmapped_evidence == 0
    assert q1.answers[0]["evidence"][1].startswith("FLOAT SELECTED")


def test_qasper_unmapped_evidence_and_unanswerable_annotators(qasper_file: Path) -> None:
    q2 = load_qasper(qasper_file).questions[1]
    key = "2001.00001"
    assert [a["text"] for a in q2.answers] == ["Yes", "No", "Unanswerable"]
    assert q2.evidence_sets == (frozenset({(key, 3)}), frozenset({(key, 3)}), frozenset())
    assert q2.unmapped_evidence == 1  # "Method" is a section heading, not a page


def test_qasper_question_without_answers_is_excluded(qasper_file: Path) -> None:
    loaded = load_qasper(qasper_file)
    assert [q.qid for q in loaded.questions] == ["q1", "q2"]
    assert loaded.excluded == [{"qid": "q3", "reason": "no annotator gave an answer"}]
    assert loaded.sources == {"2001.00001": "2001.00001"}


def test_qasper_dev_file_loads_every_question() -> None:
    if not QASPER_FILE.is_file():
        pytest.skip(f"QASPER dev file not found at {QASPER_FILE}")
    loaded = load_qasper(QASPER_FILE)
    assert len(loaded.questions) == 331
    assert len(loaded.sources) == 100
    assert not loaded.excluded
    answerable = [q for q in loaded.questions if any(q.evidence_sets)]
    assert len(answerable) > 300


# -- LitQA2 -----------------------------------------------------------------------------------

DOI_PLAIN = "10.1101/2024.01.01.123456"
DOI_ODD = "10.1016/S0092-8674(20)30001-X"


def test_doi_file_names() -> None:
    assert normalize_doi("https://doi.org/10.1/x") == "10.1/x"
    assert normalize_doi("http://dx.doi.org/10.1/x") == "10.1/x"
    assert normalize_doi(" doi:10.1/x ") == "10.1/x"
    assert doi_file_name(DOI_PLAIN) == "10.1101%2F2024.01.01.123456.pdf"
    assert doi_file_name(f"https://doi.org/{DOI_ODD}") == "10.1016%2FS0092-8674%2820%2930001-X.pdf"


def litqa_row(qid: str, source: str) -> dict[str, Any]:
    return {
        "id": qid,
        "question": f"Question {qid}?",
        "ideal": "right",
        "distractors": ["wrong 1", "wrong 2", "wrong 3"],
        "sources": [source],
        "key-passage": "The key passage.",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture
def litqa_files(tmp_path: Path) -> tuple[Path, Path]:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / doi_file_name(DOI_PLAIN)).write_bytes(b"%PDF")
    # written lower-case ("%2f", "s0092"): found through the case-insensitive fallback
    (pdfs / (quote(DOI_ODD, safe="").lower() + ".pdf")).write_bytes(b"%PDF")
    rows = [
        litqa_row("a", DOI_PLAIN),
        litqa_row("b", f"https://doi.org/{DOI_ODD}"),
        litqa_row("c", "https://doi.org/10.9999/missing"),
    ]
    return write_jsonl(tmp_path / "litqa2.jsonl", rows), pdfs


def test_litqa2_finds_pdfs_by_encoded_doi_and_reports_missing_ones(
    litqa_files: tuple[Path, Path],
) -> None:
    path, pdfs = litqa_files
    loaded = load_litqa2(path, pdfs)
    assert [q.qid for q in loaded.questions] == ["a", "b"]
    assert loaded.questions[1].doc_keys == (DOI_ODD,)
    assert loaded.sources[DOI_PLAIN] == pdfs / doi_file_name(DOI_PLAIN)
    assert loaded.sources[DOI_ODD] == pdfs / (quote(DOI_ODD, safe="").lower() + ".pdf")
    assert loaded.excluded == [
        {"qid": "c", "reason": "missing PDF: 10.9999/missing (10.9999%2Fmissing.pdf)"}
    ]
    assert loaded.questions[0].evidence_sets == ()
    assert loaded.questions[0].evidence_texts == ("The key passage.",)


def test_litqa2_shuffle_is_seeded_and_tracks_the_correct_option(
    litqa_files: tuple[Path, Path],
) -> None:
    path, pdfs = litqa_files
    first = load_litqa2(path, pdfs, seed=3).questions
    assert load_litqa2(path, pdfs, seed=3).questions == first
    orders = {load_litqa2(path, pdfs, seed=s).questions[0].options for s in range(8)}
    assert len(orders) > 1  # different seeds give different orders
    for seed in range(8):
        for question in load_litqa2(path, pdfs, seed=seed).questions:
            assert sorted(question.options) == ["right", "wrong 1", "wrong 2", "wrong 3"]
            assert question.correct_option is not None
            assert question.options[question.correct_option] == "right"
            assert question.reference == "right"


def test_litqa2_without_a_pdf_folder_excludes_everything(litqa_files: tuple[Path, Path]) -> None:
    path, pdfs = litqa_files
    loaded = load_litqa2(path, pdfs / "absent")
    assert not loaded.questions and len(loaded.excluded) == 3


def test_passage_pages() -> None:
    pages = ["Intro text.", "The key\npassage starts here and", "continues here. End."]
    assert passage_pages("the key passage", pages) == frozenset({2})
    assert passage_pages("starts here and continues here", pages) == frozenset({2, 3})
    assert passage_pages("not in the paper", pages) == frozenset()
    assert passage_pages("  ", pages) == frozenset()


# -- FinanceBench -----------------------------------------------------------------------------


def test_financebench_pages_become_one_based_and_missing_filings_are_excluded(
    tmp_path: Path,
) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "3M_2018_10K.pdf").write_bytes(b"%PDF")
    (pdfs / "3M_2019_10K.pdf").write_bytes(b"%PDF")
    rows: list[dict[str, Any]] = [
        {
            "financebench_id": "fb1",
            "question": "Capex?",
            "answer": "$1,577 million",
            "doc_name": "3M_2018_10K",
            "question_type": "metrics-generated",
            "justification": "From the cash flow statement.",
            "evidence": [
                {"evidence_text": "Purchases of PP&E 1,577", "evidence_page_num": 0},
                {"evidence_text": "Prior year", "evidence_page_num": 59, "doc_name": "3M_2019_10K"},
                {"evidence_text": "No page"},
            ],
        },
        {"financebench_id": "fb2", "question": "Q?", "answer": "A", "doc_name": "ACME_10K"},
    ]
    loaded = load_financebench(write_jsonl(tmp_path / "fb.jsonl", rows), pdfs)
    (question,) = loaded.questions
    assert question.evidence_sets == (frozenset({("3M_2018_10K", 1), ("3M_2019_10K", 60)}),)
    assert question.doc_keys == ("3M_2018_10K", "3M_2019_10K")
    assert question.unmapped_evidence == 1
    assert question.reasoning == "From the cash flow statement."
    assert question.qtype == "metrics-generated"
    assert question.evidence_texts[0] == "Purchases of PP&E 1,577"
    assert set(loaded.sources) == {"3M_2018_10K", "3M_2019_10K"}
    assert loaded.excluded == [{"qid": "fb2", "reason": "missing PDF: ACME_10K (ACME_10K.pdf)"}]


# -- MOSAIC -----------------------------------------------------------------------------------


def mosaic_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "id": "m1",
            "question": "Compare?",
            "answer": "Reference.",
            "reasoning_chain": ["Step one.", "Step two."],
            "type": "comparison",
            "evidence": [
                {"document": "paper_a", "page": 3},
                {"document": "paper_b", "page": 1},
                {"document": "paper_a", "page": 3},
                {"document": "paper_b", "page": 0},
            ],
        },
        {
            "id": "m2",
            "question": "Infer?",
            "answer": "Ref.",
            "reasoning_chain": "One chain.",
            "type": "inference",
            "evidence": [{"document": "paper_c", "page": 2}],
        },
    ]
    return rows


def test_mosaic_without_pdf_folder_names_documents(tmp_path: Path) -> None:
    loaded = load_mosaic(write_jsonl(tmp_path / "mosaic.jsonl", mosaic_rows()))
    first, second = loaded.questions
    assert first.doc_keys == ("paper_a", "paper_b")
    assert first.evidence_sets == (frozenset({("paper_a", 3), ("paper_b", 1)}),)
    assert first.unmapped_evidence == 1  # page 0 is not a 1-based page
    assert first.reasoning == "Step one.\nStep two."
    assert first.qtype == "comparison" and first.reference == "Reference."
    assert second.reasoning == "One chain."
    assert loaded.sources == {"paper_a": "paper_a", "paper_b": "paper_b", "paper_c": "paper_c"}


def test_mosaic_with_pdf_folder_excludes_questions_missing_a_document(tmp_path: Path) -> None:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for name in ("paper_a", "paper_b"):
        (pdfs / f"{name}.pdf").write_bytes(b"%PDF")
    loaded = load_mosaic(write_jsonl(tmp_path / "mosaic.jsonl", mosaic_rows()), pdfs)
    assert [q.qid for q in loaded.questions] == ["m1"]
    assert loaded.sources == {"paper_a": pdfs / "paper_a.pdf", "paper_b": pdfs / "paper_b.pdf"}
    assert loaded.excluded == [{"qid": "m2", "reason": "missing PDF: paper_c (paper_c.pdf)"}]


def test_a_bad_jsonl_line_names_its_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\nnot json\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=":2:"):
        load_mosaic(path)
