"""A damaged library: files that cannot be read are named, skipped and, by `vectree check
--repair`, quarantined; lost index entries are rebuilt; leftovers of interrupted runs finished."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph.cli import main
from store.catalog import Catalog, close_catalogs, open_catalog
from store.check import check_library
from store.entries import document_entries
from store.library import DamagedFile, Library, read_json, write_json
from store.types import DocumentMetadata, TreeNode

A, B = "a" * 16, "b" * 16


def _node(node_id: str, title: str, start: int, end: int) -> TreeNode:
    return TreeNode(
        node_id=node_id, title=title, start_page=start, end_page=end, summary=title, nodes=[]
    )


def add_document(catalog: Catalog, doc_id: str, title: str) -> None:
    """Publish a sound three-page document with one image, as ingestion would."""
    library = catalog.library.ensure()
    staging = library.new_staging(doc_id)
    tree = [_node("0000", "Introduction", 1, 2), _node("0001", "Results", 3, 3)]
    metadata = DocumentMetadata(
        title=title,
        authors=["Ada Lovelace"],
        year=2020,
        doi=None,
        venue="Widget Conference",
        volume=None,
        pages=None,
        description=f"A study of {title.lower()}.",
        keywords=[],
    )
    write_json(staging / "tree.json", tree)
    rows = [{"page": n, "text": f"Page {n} about {title}."} for n in (1, 2, 3)]
    (staging / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (staging / "images").mkdir()
    (staging / "images" / "p2-1.png").write_bytes(b"png")
    write_json(staging / "images.json", [{"name": "p2-1.png", "page": 2, "bbox": [0, 0, 1, 1]}])
    write_json(staging / "metadata.json", metadata)
    write_json(staging / "verification.json", {"method": "headings", "verification_rate": 1.0})
    record = {"doc_id": doc_id, "title": title, "pages": 3, "nodes": 2, "source": f"{doc_id}.pdf"}
    write_json(staging / "document.json", {**record, "verification_rate": 1.0})
    pages = [str(row["text"]) for row in rows]
    entries = catalog.index.embed_entries(document_entries(doc_id, metadata, tree, pages))
    catalog.publish(doc_id, staging, entries)


@pytest.fixture
def catalog(library_dir: Path) -> Catalog:
    """A library of two sound documents, A and B, indexed and committed."""
    catalog = open_catalog(library_dir)
    add_document(catalog, A, "Widget Reliability")
    add_document(catalog, B, "Gadget Pricing")
    return catalog


def cli(capsys: pytest.CaptureFixture[str], library: Path, *args: str) -> tuple[int, Any, str]:
    """Run `vectree --library LIBRARY ARGS... --json`: exit code, parsed stdout, stderr."""
    code = main(["--library", str(library), *args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def doc_file(catalog: Catalog, doc_id: str, name: str) -> Path:
    return catalog.library.doc_dir(doc_id) / name


def truncate(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")


# -- named, one-line errors ----------------------------------------------------------------------
def test_a_truncated_json_file_is_named_with_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "tree.json"
    path.write_text('[\n {"node_id": "0000",\n  "title": "Intro', encoding="utf-8")
    with pytest.raises(DamagedFile) as caught:
        read_json(path)
    assert str(caught.value) == (
        f"{path} is damaged (JSON ends early at line 3): run `vectree check --repair`"
    )
    path.write_text("", encoding="utf-8")
    with pytest.raises(DamagedFile, match="the file is empty"):
        read_json(path)
    path.write_bytes(b'{"title": "\xff"}')
    with pytest.raises(DamagedFile, match="not UTF-8 text at byte 11"):
        read_json(path)


def test_pages_name_the_line_that_is_damaged(catalog: Catalog) -> None:
    path = doc_file(catalog, A, "pages.jsonl")
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:10])
    with pytest.raises(DamagedFile, match=r"pages\.jsonl is damaged \(JSON ends early at line 2\)"):
        catalog.library.pages(A)
    path.write_text(lines[1] + "\n")
    with pytest.raises(DamagedFile, match="line 1 is not the record of page 1"):
        catalog.library.pages(A)


def test_a_missing_file_of_a_document_is_damage(catalog: Catalog) -> None:
    doc_file(catalog, A, "tree.json").unlink()
    with pytest.raises(DamagedFile, match="the file is missing"):
        catalog.library.tree(A)


def test_a_damaged_manifest_hides_only_its_document(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    truncate(doc_file(catalog, A, "document.json"))
    with caplog.at_level(logging.WARNING, logger="store.library"):
        assert [r["doc_id"] for r in catalog.library.documents()] == [B]
        assert catalog.library.by_source(f"{B}.pdf") == [B]  # what every ingest asks
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1  # once per file, not once per listing
    assert "document.json is damaged (JSON ends early" in warnings[0]


def test_docs_lists_the_other_documents_and_tree_names_the_file(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    root = catalog.library.root
    truncate(doc_file(catalog, A, "tree.json"))
    write_json(doc_file(catalog, B, "document.json"), {"doc_id": "other", "title": "x"})
    close_catalogs()
    code, records, _ = cli(capsys, root, "docs")
    assert code == 0 and [r["doc_id"] for r in records] == [A]
    code, out, _ = cli(capsys, root, "tree", A)
    assert code == 1
    assert out["error"].startswith(f"{doc_file(catalog, A, 'tree.json')} is damaged (JSON ends")
    assert out["error"].endswith("run `vectree check --repair`")


def test_a_tool_answers_a_damaged_document_as_an_error(catalog: Catalog) -> None:
    from tools.toolbox import Toolbox

    truncate(doc_file(catalog, A, "tree.json"))
    toolbox = Toolbox(catalog)
    damaged = toolbox.run("get_document_tree", doc_id=A)
    assert not damaged.ok and "tree.json is damaged" in str(damaged.error)
    assert toolbox.run("get_document_tree", doc_id=B).ok


# -- vectree check -------------------------------------------------------------------------------
def test_a_sound_library_checks_clean(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    root = catalog.library.root
    close_catalogs()
    clean = {"documents": 2, "damaged": [], "repaired": [], "migrated": None}
    assert cli(capsys, root, "check")[:2] == (0, clean)
    assert main(["--library", str(root), "check"]) == 0
    assert capsys.readouterr().out == "2 documents checked: 0 problems — sound\n"


def _drop_last_page(path: Path) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))


def _edit_json(change: Callable[[Any], None]) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        value = read_json(path)
        change(value)
        write_json(path, value)

    return edit


@pytest.mark.parametrize(
    ("name", "damage", "problem"),
    [
        ("tree.json", truncate, "JSON ends early at line"),
        ("document.json", truncate, "JSON ends early at line"),
        ("pages.jsonl", _drop_last_page, "2 pages, but document.json says 3"),
        ("tree.json", _edit_json(lambda t: t[1].update(end_page=7)), "0001 covers pages 3-7 of 3"),
        ("tree.json", _edit_json(lambda t: t.pop()), "1 nodes, but document.json says 2"),
        ("tree.json", _edit_json(lambda t: t[0].pop("summary")), "'summary' is missing"),
        ("document.json", _edit_json(lambda r: r.update(pages="3")), "'pages' is a str"),
        ("metadata.json", Path.unlink, "the file is missing"),
        ("verification.json", lambda p: p.write_text("{"), "JSON ends early at line 1"),
        ("images.json", _edit_json(lambda i: i[0].update(page=9)), "p2-1.png is on page 9 of 3"),
        ("images/p2-1.png", Path.unlink, "p2-1.png is not in the images folder"),
    ],
)
def test_each_damaged_file_is_named(
    catalog: Catalog, name: str, damage: Callable[[Path], None], problem: str
) -> None:
    damage(doc_file(catalog, A, name))
    report = check_library(catalog)
    assert not report.sound and report.documents == 2
    [found] = [d.as_dict() for d in report.damaged]
    named = "images.json" if name.startswith("images/") else name
    assert found["doc_id"] == A and found["file"] == str(doc_file(catalog, A, named))
    assert problem in str(found["problem"])


def test_repair_quarantines_a_damaged_document(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    root, folder = catalog.library.root, catalog.library.doc_dir(A)
    truncate(folder / "tree.json")
    truncate(folder / "pages.jsonl")
    close_catalogs()
    code, report, _ = cli(capsys, root, "check")
    assert code == 2 and report["repaired"] == []
    assert [(d["doc_id"], Path(d["file"]).name) for d in report["damaged"]] == [
        (A, "pages.jsonl"),
        (A, "tree.json"),
    ]
    code, report, _ = cli(capsys, root, "check", "--repair")
    assert (code, report) == (
        0,
        {
            "documents": 2,
            "damaged": [],
            "repaired": [{"doc_id": A, "action": "quarantined"}],
            "migrated": None,
        },
    )
    assert not folder.exists() and (root / "quarantine" / A / "tree.json").is_file()
    catalog = open_catalog(root)
    assert catalog.index.doc_ids() == {B}
    assert [r["doc_id"] for r in catalog.library.documents()] == [B]
    assert check_library(catalog).sound


def test_repair_reindexes_a_document_that_lost_its_entries(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog.index.delete_document(B)
    [damage] = check_library(catalog).damaged
    assert (damage.doc_id, damage.file) == (B, catalog.index.location)
    assert damage.problem == "the index holds 0 of its 3 entries"
    root = catalog.library.root
    close_catalogs()
    code, report, _ = cli(capsys, root, "check", "--repair")
    assert code == 0 and report["repaired"] == [{"doc_id": B, "action": "reindexed"}]
    assert open_catalog(root).index.count(B) == 3  # committed: searchable again


def test_repair_drops_entries_of_a_document_that_is_gone(catalog: Catalog) -> None:
    shutil.rmtree(catalog.library.doc_dir(B))
    [damage] = check_library(catalog).damaged
    assert damage.doc_id == B and "not in the library" in damage.problem
    report = check_library(catalog, repair=True)
    assert report.sound and [r.as_dict() for r in report.repaired] == [
        {"doc_id": B, "action": "dropped index entries"}
    ]
    assert catalog.index.doc_ids() == {A}


def test_leftovers_of_interrupted_runs_are_reported_then_finished(catalog: Catalog) -> None:
    library = catalog.library
    abandoned = library.staging_dir / f"{A}.999999999.0"  # its writer process is gone
    abandoned.mkdir()
    library.hide(B)  # a removal killed after hiding the folder
    _uncommit(catalog, A)
    found = {(d.doc_id, d.problem) for d in check_library(catalog).damaged}
    assert found == {
        (A, "left by an interrupted ingest"),
        (B, "a removal that did not finish"),
        (A, "index entries never made searchable"),
    }
    report = check_library(catalog, repair=True)
    assert report.sound
    assert {(r.doc_id, r.action) for r in report.repaired} == {
        (A, "removed abandoned staging"),
        (B, "finished removal"),
        (A, "made index entries searchable"),
    }
    assert not abandoned.exists() and library.trashed() == []
    assert catalog.index.doc_ids(committed=True) == {A}


def _uncommit(catalog: Catalog, doc_id: str) -> None:
    """Leave a document's points as an ingest killed between indexing and committing would."""
    from qdrant_client import models

    selector = models.Filter(
        must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]
    )
    catalog.index.client.set_payload(
        catalog.index.collection, {"committed": 0}, points=selector, wait=True
    )


# -- checkpoints.sqlite ----------------------------------------------------------------------------
@pytest.fixture
def damaged_checkpoints(library_dir: Path) -> Path:
    """A library whose checkpoints file is not a database (its content overwritten)."""
    Library(library_dir).ensure()
    path = library_dir / "checkpoints.sqlite"
    path.write_bytes(b"\x00garbage" * 100)
    return path


def test_threads_and_ask_name_a_damaged_checkpoints_file(
    damaged_checkpoints: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = f"{damaged_checkpoints} is damaged (file is not a database): run `vectree check"
    assert main(["--library", str(damaged_checkpoints.parent), "threads"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {expected}") and err.count("\n") == 1
    code, answer, _ = cli(capsys, damaged_checkpoints.parent, "ask", "What is a widget?")
    assert code == 1 and answer["error"].startswith(expected)


def test_check_reports_and_quarantines_damaged_checkpoints(
    damaged_checkpoints: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = damaged_checkpoints.parent
    code, report, _ = cli(capsys, root, "check")
    assert (code, report["damaged"]) == (
        2,
        [{"doc_id": None, "file": str(damaged_checkpoints), "problem": "file is not a database"}],
    )
    code, report, _ = cli(capsys, root, "check", "--repair")
    assert (code, report["repaired"]) == (0, [{"doc_id": None, "action": "quarantined"}])
    assert (root / "quarantine" / "checkpoints.sqlite").is_file()
    assert cli(capsys, root, "threads")[:2] == (0, [])
