"""The ``vectree`` ingestion commands as users and scripts call them, including bad input,
a process killed mid-batch, QASPER input and the exported LangGraph graph."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from graph.cli import main
from store.catalog import close_catalogs, open_catalog
from store.library import Library
from store.types import walk
from tests.conftest import PDF_DIR, QASPER_FILE, ROOT, require_shared_data

pytestmark = pytest.mark.integration


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """Run the CLI in-process with --json and parse what it printed."""
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def _zero_page_pdf() -> bytes:
    return (
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
        b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
        b"trailer\n<< /Root 1 0 R /Size 3 >>\n%%EOF\n"
    )


def _image_only_pdf(path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    doc.save(path)


def _encrypted_pdf(path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Secret findings about encrypted documents.")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")


@pytest.fixture
def bad_batch(tmp_path: Path) -> Path:
    """One good PDF among every kind of bad input, made by the test."""
    require_shared_data()
    folder = tmp_path / "batch"
    folder.mkdir()
    shutil.copy(PDF_DIR / "bohnet09.pdf", folder / "good.pdf")
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "notes.pdf").write_text("These are plain-text notes, renamed to .pdf by mistake.\n")
    (folder / "truncated.pdf").write_bytes((PDF_DIR / "mooney05.pdf").read_bytes()[:4000])
    (folder / "zero-pages.pdf").write_bytes(_zero_page_pdf())
    _image_only_pdf(folder / "scanned.pdf")
    _encrypted_pdf(folder / "locked.pdf")
    return folder


EXPECTED_REASONS = {
    "empty.pdf": "empty file",
    "notes.pdf": "not a PDF",
    "truncated.pdf": "corrupt or truncated",
    "zero-pages.pdf": "zero pages",
    "scanned.pdf": "no text layer",
    "locked.pdf": "encrypted",
}


def test_bad_inputs_fail_one_by_one_and_the_batch_goes_on(
    capsys: pytest.CaptureFixture[str], bad_batch: Path, library_dir: Path
) -> None:
    code, report = run_cli(capsys, "--library", str(library_dir), "ingest", str(bad_batch))
    assert code == 2
    assert report["ingested"] == 1 and report["failed"] == len(EXPECTED_REASONS)
    reasons = {Path(o["source"]).name: o["error"] for o in report["outcomes"] if o["error"]}
    for name, reason in EXPECTED_REASONS.items():
        assert reason in reasons[name], (name, reasons[name])
        assert "\n" not in reasons[name]
    library = Library(library_dir)
    assert [Path(r["source"]).name for r in library.documents()] == ["good.pdf"]
    assert list(library.staging_dir.iterdir()) == []
    close_catalogs()
    code, again = run_cli(
        capsys, "--library", str(library_dir), "ingest", str(bad_batch / "good.pdf")
    )
    assert code == 0 and again["present"] == 1


def test_missing_path_is_reported_not_raised(
    capsys: pytest.CaptureFixture[str], library_dir: Path, tmp_path: Path
) -> None:
    code, report = run_cli(
        capsys, "--library", str(library_dir), "ingest", str(tmp_path / "nope.pdf")
    )
    assert code == 2 and report["outcomes"][0]["error"] == "no such file or folder"


def test_human_summary_lists_each_failure(
    capsys: pytest.CaptureFixture[str], bad_batch: Path, library_dir: Path
) -> None:
    assert main(["--library", str(library_dir), "ingest", str(bad_batch)]) == 2
    captured = capsys.readouterr()
    assert "ingested 1, already present 0, failed 6" in captured.out
    assert captured.out.count("FAILED") == 6
    assert "ingest" in captured.err  # the progress bar goes to stderr


def test_docs_and_tree_json_contract(capsys: pytest.CaptureFixture[str], library_dir: Path) -> None:
    require_shared_data()
    lib = str(library_dir)
    code, _ = run_cli(capsys, "--library", lib, "ingest", str(PDF_DIR / "2304.02623v1.pdf"))
    assert code == 0
    code, docs = run_cli(capsys, "--library", lib, "docs")
    assert code == 0 and len(docs) == 1
    record = docs[0]
    assert set(record) == {
        "doc_id",
        "title",
        "pages",
        "nodes",
        "structure",
        "verification_rate",
        "source",
        "filing",
    }
    assert record["filing"] is None  # a paper is no filing
    assert record["pages"] == 4 and record["verification_rate"] == 1.0
    assert record["structure"] == "outline"
    assert record["title"].startswith("Beyond Summarization")
    code, tree = run_cli(capsys, "--library", lib, "tree", record["doc_id"])
    assert code == 0
    assert set(tree) == {"doc_id", "title", "total_pages", "verification_rate", "nodes"}
    node = tree["nodes"][0]
    assert set(node) == {"node_id", "title", "start_page", "end_page", "summary", "nodes"}
    assert [n["title"] for n in tree["nodes"]][:2] == ["Abstract", "1 Introduction"]
    assert len(walk(tree["nodes"])) == record["nodes"]
    assert main(["--library", lib, "tree", "ffffffff"]) == 1


def test_marker_parser_fails_fast_with_a_clear_reason(
    capsys: pytest.CaptureFixture[str], library_dir: Path
) -> None:
    require_shared_data()
    started = time.perf_counter()
    code, report = run_cli(
        capsys,
        "--library",
        str(library_dir),
        "ingest",
        str(PDF_DIR / "bohnet09.pdf"),
        "--parser",
        "marker",
    )
    assert code == 2
    assert "marker" in report["outcomes"][0]["error"]
    assert time.perf_counter() - started < 30  # guards against marker's multi-minute wait


def test_kill_during_a_batch_then_rerun_leaves_each_document_once(tmp_path: Path) -> None:
    require_shared_data()
    folder = tmp_path / "pdfs"
    folder.mkdir()
    names = ["bohnet09.pdf", "mooney05.pdf", "P07-1088.pdf", "dyer12.pdf", "agarwal11.pdf"]
    for name in names:
        shutil.copy(PDF_DIR / name, folder / name)
    library = tmp_path / "library"
    command = [sys.executable, "-m", "graph.cli", "--library", str(library), "ingest", str(folder)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    docs = library / "docs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (docs.is_dir() and any(docs.iterdir())):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    killed_with = len(list(docs.iterdir())) if docs.is_dir() else 0
    assert 1 <= killed_with < len(names), "the kill must land in the middle of the batch"

    rerun = subprocess.run(
        [*command, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["present"] + report["ingested"] == len(names)
    records = Library(library).documents()
    assert sorted(Path(r["source"]).name for r in records) == sorted(names)
    assert list((library / "staging").iterdir()) == []
    index = open_catalog(library).index
    expected = sum(1 + len(Library(library).tree(r["doc_id"])) for r in records)
    assert index.count() == expected == index.count(committed_only=False)
    close_catalogs()


def test_qasper_papers_become_one_page_per_paragraph(tmp_path: Path, library_dir: Path) -> None:
    require_shared_data()
    papers = json.loads(QASPER_FILE.read_text())
    subset = dict(list(papers.items())[:3])
    source = tmp_path / "qasper-subset.json"
    source.write_text(json.dumps(subset))
    assert main(["--library", str(library_dir), "ingest", str(source)]) == 0
    library = Library(library_dir)
    records = {r["source"].split("#")[1]: r for r in library.documents()}
    assert set(records) == set(subset)
    for arxiv_id, paper in subset.items():
        record = records[arxiv_id]
        paragraphs = [p for s in paper["full_text"] for p in s["paragraphs"] if p.strip()]
        pages = library.pages(record["doc_id"])
        assert len(pages) == 1 + len(paragraphs) + len(paper["figures_and_tables"])
        assert record["verification_rate"] is None and record["title"] == paper["title"]
        evidence = next(
            e
            for q in paper["qas"]
            for a in q["answers"]
            for e in a["answer"]["evidence"]
            if e in paragraphs
        )
        assert " ".join(evidence.split()) in pages
    index = open_catalog(library_dir).index
    assert index.count() == sum(1 + len(library.tree(r["doc_id"])) for r in records.values())
    assert main(["--library", str(library_dir), "ingest", str(source)]) == 0


def test_langgraph_json_exports_the_ingest_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    module, attribute = config["graphs"]["ingest"].split(":")
    assert module == "./ingest/graph.py"
    from ingest import graph as ingest_graph

    compiled = getattr(ingest_graph, attribute)
    assert set(compiled.get_graph().nodes) >= {*ingest_graph.STEPS, "embed", "index"}


def test_langgraph_json_exports_the_agent_graph_without_a_checkpointer() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"]["agent"] == "./graph/agent.py:graph"
    from graph.agent import graph as agent_graph

    assert agent_graph.checkpointer is None
    assert set(agent_graph.get_graph().nodes) >= {
        "prepare",
        "model_turn",
        "layer0",
        "layer1",
        "layer2",
        "nudge",
        "finish",
    }
