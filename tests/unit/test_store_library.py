"""The library folder: staging, atomic commit, listing, hiding and abandoned staging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from store.library import Library, read_json, write_json

_OUT: dict[str, Any] = {"capture_output": True, "text": True, "check": True}


def record(doc_id: str, title: str, source: str = "a.pdf") -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "title": title,
        "pages": 2,
        "nodes": 1,
        "verification_rate": 1.0,
        "source": source,
        "structure": "headings",
        "parser": "pymupdf",
        "ingested_at": "2024-01-01T00:00:00+00:00",
    }


def stage(library: Library, doc_id: str, title: str, source: str = "a.pdf") -> Path:
    folder = library.new_staging(doc_id)
    write_json(folder / "document.json", record(doc_id, title, source))
    write_json(folder / "tree.json", [{"node_id": "0000", "title": title}])
    lines = [json.dumps({"page": n, "text": f"page {n} of {title}"}) for n in (1, 2)]
    (folder / "pages.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_write_json_is_atomic_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "value.json"
    write_json(path, {"title": "Ünïcode ✓", "n": [1, 2]})
    assert read_json(path) == {"title": "Ünïcode ✓", "n": [1, 2]}
    assert "Ünïcode ✓" in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["value.json"]


def test_ensure_creates_folders(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    assert library.docs_dir.is_dir() and library.staging_dir.is_dir()
    assert library.trash_dir.is_dir()
    assert library.index_dir == tmp_path / "lib" / "edge"


def test_empty_or_missing_library_lists_nothing(tmp_path: Path) -> None:
    missing = Library(tmp_path / "nowhere")
    assert missing.documents() == []
    assert missing.abandoned_staging() == []
    assert missing.trashed() == []
    assert missing.has("abc") is False


def test_staged_document_is_invisible_until_commit(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    staging = stage(library, "d1", "Zebra Paper")
    assert staging.parent == library.staging_dir
    assert staging.name.startswith(f"d1.{os.getpid()}.")
    assert library.has("d1") is False
    assert library.documents() == []
    library.commit(staging, "d1")
    assert not staging.exists()
    assert library.has("d1") is True
    assert library.record("d1")["title"] == "Zebra Paper"
    assert library.tree("d1") == [{"node_id": "0000", "title": "Zebra Paper"}]
    assert library.pages("d1") == ["page 1 of Zebra Paper", "page 2 of Zebra Paper"]


def test_documents_sorted_by_title_case_insensitively(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    for doc_id, title in (("d1", "zebra"), ("d2", "Apple"), ("d3", "mango")):
        library.commit(stage(library, doc_id, title), doc_id)
    (library.docs_dir / "incomplete").mkdir()  # no manifest: not visible
    assert [r["title"] for r in library.documents()] == ["Apple", "mango", "zebra"]
    assert library.has("incomplete") is False


def test_commit_keeps_the_already_committed_copy(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    library.commit(stage(library, "d1", "First"), "d1")
    second = stage(library, "d1", "Second")
    library.commit(second, "d1")
    assert not second.exists()
    assert library.record("d1")["title"] == "First"
    assert list(library.staging_dir.iterdir()) == []


def test_new_staging_folders_are_unique(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    assert library.new_staging("d1") != library.new_staging("d1")


def test_hide_moves_document_to_trash(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    library.commit(stage(library, "d1", "Paper"), "d1")
    target = library.hide("d1")
    assert target == library.trash_dir / "d1"
    assert (target / "document.json").is_file()
    assert library.has("d1") is False
    assert library.documents() == []
    assert library.trashed() == ["d1"]
    library.purge_trash("d1")
    assert library.trashed() == []
    assert library.hide("d1") is None


def test_hide_replaces_an_older_trashed_copy(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    (library.trash_dir / "d1").mkdir()
    (library.trash_dir / "d1" / "stale.txt").write_text("old", encoding="utf-8")
    library.commit(stage(library, "d1", "Paper"), "d1")
    target = library.hide("d1")
    assert target is not None
    assert sorted(p.name for p in target.iterdir()) == ["document.json", "pages.jsonl", "tree.json"]


def test_resolve_and_by_source(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    library.commit(stage(library, "abc111aa", "One", source="x.pdf"), "abc111aa")
    library.commit(stage(library, "abc111bb", "Two", source="y.pdf"), "abc111bb")
    assert library.resolve("abc111a") == "abc111aa"
    assert library.resolve("abc111") is None  # ambiguous
    assert library.resolve("abc11") is None  # shorter than MIN_PREFIX
    assert library.resolve("zzzzzz") is None
    assert library.by_source("y.pdf") == ["abc111bb"]
    assert library.by_source("nope.pdf") == []


def test_abandoned_staging_lists_folders_of_dead_writers(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib").ensure()
    live = library.new_staging("d1")
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_OUT)
    dead_pid = int(finished.stdout)
    dead = library.staging_dir / f"d2.{dead_pid}.0"
    dead.mkdir()
    odd = library.staging_dir / "not-a-staging-name"
    odd.mkdir()
    abandoned = sorted(library.abandoned_staging())
    assert live not in abandoned
    assert abandoned == sorted([dead, odd])
