"""A damaged library of real ingested PDFs: the rest keeps working, `vectree check` names the
damage, `vectree check --repair` quarantines a damaged document and re-indexes a lost one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from graph.cli import main
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from tests.conftest import PDF_DIR, require_shared_data

pytestmark = pytest.mark.integration

DAMAGED_PDF = "0908.0054.pdf"  # "Ultra light bosonic dark matter and CMB", 4 pages
OTHER_PDF = "2304.02623v1.pdf"  # "Beyond Summarization: … Expository Writing Tasks", 4 pages
OTHER_QUERY = "designing AI support for expository writing"


def run_cli(capsys: pytest.CaptureFixture[str], library: Path, *args: str) -> tuple[int, Any]:
    """Run `vectree --library LIBRARY ARGS... --json` in-process and parse what it printed."""
    code = main(["--library", str(library), *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two small papers ingested once; each test damages its own copy."""
    require_shared_data()
    library = tmp_path_factory.mktemp("check") / "library"
    code = main(
        ["--library", str(library), "ingest", str(PDF_DIR / DAMAGED_PDF), str(PDF_DIR / OTHER_PDF)]
    )
    assert code == 0
    return library


@pytest.fixture
def library(template: Path, library_dir: Path) -> Path:
    shutil.copytree(template, library_dir)
    return library_dir


def doc_id_of(library: Path, pdf: str) -> str:
    [doc_id] = [r["doc_id"] for r in Library(library).documents() if r["source"].endswith(pdf)]
    return doc_id


def found(capsys: pytest.CaptureFixture[str], library: Path, query: str) -> list[str]:
    code, hits = run_cli(capsys, library, "search", query)
    assert code == 0
    return [hit["doc_id"] for hit in hits["results"]]


def test_a_truncated_tree_is_named_then_quarantined(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged, other = doc_id_of(library, DAMAGED_PDF), doc_id_of(library, OTHER_PDF)
    tree = library / "docs" / damaged / "tree.json"
    truncated = tree.read_text()[:200]
    tree.write_text(truncated)

    code, records = run_cli(capsys, library, "docs")
    assert code == 0 and other in [r["doc_id"] for r in records]
    assert found(capsys, library, OTHER_QUERY)[0] == other
    code, answer = run_cli(capsys, library, "ask", "What AI support for expository writing?")
    assert code == 0 and answer["citations"]
    assert {c["doc_id"] for c in answer["citations"]} == {other}
    code, answer = run_cli(capsys, library, "tree", damaged)
    assert code == 1 and answer["error"].startswith(f"{tree} is damaged (JSON ends early at line")

    code, report = run_cli(capsys, library, "check")
    assert code == 2 and report["documents"] == 2 and report["repaired"] == []
    [problem] = report["damaged"]
    assert (problem["doc_id"], problem["file"]) == (damaged, str(tree))
    assert problem["problem"].startswith("JSON ends early at line")

    code, report = run_cli(capsys, library, "check", "--repair")
    assert (code, report["damaged"]) == (0, [])
    assert report["repaired"] == [{"doc_id": damaged, "action": "quarantined"}]
    assert (library / "quarantine" / damaged / "tree.json").read_text() == truncated
    code, records = run_cli(capsys, library, "docs")
    assert [r["doc_id"] for r in records] == [other]
    assert damaged not in found(capsys, library, "ultra light bosonic dark matter CMB")

    # Nothing blocks its file: ingested again, it is whole and the library sound.
    code, summary = run_cli(capsys, library, "ingest", str(PDF_DIR / DAMAGED_PDF))
    assert code == 0 and summary["ingested"] == 1
    assert run_cli(capsys, library, "check")[0] == 0


def test_a_damaged_manifest_blocks_no_ingest(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged, other = doc_id_of(library, DAMAGED_PDF), doc_id_of(library, OTHER_PDF)
    manifest = library / "docs" / damaged / "document.json"
    manifest.write_text(manifest.read_text()[:40])

    assert main(["--library", str(library), "ingest", str(PDF_DIR / "bohnet09.pdf"), "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["ingested"] == 1
    assert f"{manifest} is damaged (JSON ends early at line" in printed.err  # one warning line
    code, records = run_cli(capsys, library, "docs")
    assert code == 0 and other in {r["doc_id"] for r in records}
    assert damaged not in {r["doc_id"] for r in records} and len(records) == 2


def test_lost_index_entries_are_rebuilt_and_found_again(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = doc_id_of(library, OTHER_PDF)
    open_catalog(library).index.delete_document(other)
    close_catalogs()
    code, refused = run_cli(capsys, library, "search", OTHER_QUERY)
    assert (code, refused["error"]) == (1, incomplete(library, "for 1 of the 2 documents"))

    code, report = run_cli(capsys, library, "check")
    assert code == 2
    [problem] = report["damaged"]
    assert (problem["doc_id"], problem["file"]) == (
        other,
        str(library / "edge" / "vectree_structure"),
    )
    assert problem["problem"].startswith("the index holds 0 of its")

    code, report = run_cli(capsys, library, "check", "--repair")
    assert (code, report["damaged"], report["repaired"]) == (
        0,
        [],
        [{"doc_id": other, "action": "reindexed"}],
    )
    assert found(capsys, library, OTHER_QUERY)[0] == other


def incomplete(library: Path, held: str) -> str:
    """The line a command prints for an index that lost entries, no writer running."""
    return (
        f"the index in {library / 'edge' / 'vectree_structure'} holds entries {held} in the "
        "library; run `vectree check --repair` to rebuild the lost entries from the documents "
        "(nothing is lost)"
    )


def test_an_index_that_lost_its_segments_is_named_never_empty(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index opens and would answer "nothing matches"; every reader says what happened."""
    for segment in (library / "edge" / "vectree_structure" / "segments").iterdir():
        shutil.rmtree(segment)
    line = incomplete(library, "for 0 of the 2 documents")
    for command in (["search", OTHER_QUERY], ["ask", "What AI support for expository writing?"]):
        code, refused = run_cli(capsys, library, *command)
        assert code == 1 and refused["error"].endswith(line), command
    code, records = run_cli(capsys, library, "docs")  # the documents themselves are all there
    assert code == 0 and len(records) == 2
    code, report = run_cli(capsys, library, "check", "--repair")
    assert (code, report["damaged"]) == (0, [])
    assert found(capsys, library, OTHER_QUERY)[0] == doc_id_of(library, OTHER_PDF)


def test_a_rebuild_cut_short_is_named_until_it_is_finished(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a repair killed after its first document leaves: a new index with one of the two
    documents, its counts recorded as written."""
    catalog = open_catalog(library)
    catalog.move_index_aside()
    catalog.reindex(doc_id_of(library, OTHER_PDF))
    close_catalogs()
    code, refused = run_cli(capsys, library, "search", OTHER_QUERY)
    assert (code, refused["error"]) == (1, incomplete(library, "for 1 of the 2 documents"))
    code, report = run_cli(capsys, library, "check", "--repair")
    assert (code, report["damaged"]) == (0, [])
    assert found(capsys, library, "ultra light bosonic dark matter")[0] == doc_id_of(
        library, DAMAGED_PDF
    )


def test_search_leaves_out_what_docs_leaves_out(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged manifest hides its document from the listing and from every search alike."""
    damaged, other = doc_id_of(library, DAMAGED_PDF), doc_id_of(library, OTHER_PDF)
    assert damaged in found(capsys, library, "ultra light bosonic dark matter")
    manifest = library / "docs" / damaged / "document.json"
    manifest.write_text(manifest.read_text()[:30])
    code, records = run_cli(capsys, library, "docs")
    assert code == 0 and [r["doc_id"] for r in records] == [other]
    assert damaged not in found(capsys, library, "ultra light bosonic dark matter")
    assert found(capsys, library, "*") == [other]
    assert found(capsys, library, OTHER_QUERY)[0] == other
