"""The line labeller on real long documents: trees without bookmarks, and the shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.outlined import outlined_documents
from evals.structure_recall import compare, document_tree
from evals.train_labeller import main as train_main
from ingest.context import IngestContext
from ingest.parse import parse_pdf
from ingest.pipeline import ingest_paths
from ingest.structure.labeller import MODEL_FILE
from store.catalog import close_catalogs
from store.library import Library
from tests.conftest import SHARED_DATA, require_shared_data

pytestmark = pytest.mark.integration

OUTLINED = SHARED_DATA / "outlined"
# Three of the long documents of ``outlined/``: a book, a regulation and a manual.
DOCUMENTS = ("think_python.pdf", "nist_sp_800-66r1_hipaa.pdf", "menhir_manual.pdf")
# Four of the documents added with their families, of four other kinds and families: a paper,
# a regulation, a thesis and a specification, each >= 0.95 held out by family folds.
NEW_FAMILIES = (
    "pwl_crdt_study.pdf",
    "dummyres_sp800_63_3_identity.pdf",
    "akilan_thesis_year1.pdf",
    "pdfcpu_itu_t4.pdf",
)


def _reference(name: str) -> list[dict[str, object]]:
    path = OUTLINED / "outlines" / name.replace(".pdf", ".outline.json")
    entries: list[dict[str, object]] = json.loads(path.read_text())["entries"]
    return entries


@pytest.mark.parametrize("documents", [DOCUMENTS, NEW_FAMILIES], ids=["first", "new-families"])
def test_long_documents_get_their_sections_without_bookmarks(
    tmp_path: Path, documents: tuple[str, ...]
) -> None:
    """Ingested with the bookmarks hidden, each tree holds the authors' sections at their pages.

    These documents are among the model's training data, so this guards the shipped pipeline
    (fitted figures); the held-out figures are measured by ``evals.structure_recall --folds
    family``, where each of these reaches the same floors.
    """
    require_shared_data()
    context = IngestContext(library=str(tmp_path / "lib"), ignore_outline=True)
    pdfs = [OUTLINED / "pdfs" / name for name in documents]
    report = ingest_paths(pdfs, context, workers=2, progress=False)
    assert report.failed == []
    library = Library(tmp_path / "lib")
    results = {}
    for record in library.documents():
        name = Path(record["source"]).name
        results[name] = compare(_reference(name), library.tree(record["doc_id"]))
        assert record["structure"] in ("toc", "headings")
    print(
        json.dumps(
            {name: {k: v for k, v in r.items() if k != "missed"} for name, r in results.items()}
        )
    )
    assert set(results) == set(documents)
    for name, result in results.items():
        assert result["title_recall"] >= 0.9, (name, result)
        assert result["exact_start_page_accuracy"] >= 0.85, (name, result)
    close_catalogs()


def test_the_evaluation_builds_the_tree_ingestion_builds(tmp_path: Path) -> None:
    """``evals.structure_recall`` scores the very tree the ingest graph stores."""
    require_shared_data()
    pdf = OUTLINED / "pdfs" / "menhir_manual.pdf"
    context = IngestContext(library=str(tmp_path / "lib"), ignore_outline=True)
    ingest_paths([pdf], context, workers=1, progress=False)
    library = Library(tmp_path / "lib")
    (record,) = library.documents()
    stored = library.tree(record["doc_id"])
    tree, method = document_tree(parse_pdf(pdf, "pymupdf4llm", tmp_path / "img"), "auto", True)
    assert method == record["structure"]

    def shape(nodes: list[dict[str, object]]) -> list[object]:
        return [(n["title"], n["start_page"], n["end_page"], shape(n["nodes"])) for n in nodes]  # type: ignore[arg-type]

    assert shape(tree) == shape(stored)  # type: ignore[arg-type]
    close_catalogs()


def test_the_shipped_labeller_is_the_one_the_training_script_produces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The model file records a hash of its training data (features, labels and families of
    every outlined development PDF) and parameters; the data present gives that hash
    (``--check --retrain`` also refits, minutes, outside the tests)."""
    require_shared_data()
    documents = outlined_documents(SHARED_DATA)
    assert len(documents) >= 78 and len({d.family for d in documents}) >= 30
    code = train_main(["--data", str(SHARED_DATA), "--out", str(MODEL_FILE), "--check"])
    assert code == 0, capsys.readouterr().out


def test_form_instructions_in_three_columns_keep_and_nest_their_headings(tmp_path: Path) -> None:
    """The IRS instructions print "Line 4" beside the ends of paragraphs in two other columns
    (no table row) and have no contents list worth following: their headings are found and
    nest by size ("Filing Status" > "Line 1" > "Single")."""
    require_shared_data()
    pdf = OUTLINED / "pdfs" / "irs_i1040gi.pdf"
    tree, method = document_tree(parse_pdf(pdf, "pymupdf4llm", tmp_path / "img"), "auto", True)
    result = compare(_reference(pdf.name), tree)
    assert method == "headings"
    assert result["title_recall"] >= 0.9, result
    assert result["nesting"] >= 0.7, result
