"""The completeness check's rule: what the index holds against the visible documents and the
counts the last change recorded (``store.completeness``)."""

from __future__ import annotations

from pathlib import Path

from store.completeness import IndexCounts, shortfall
from store.library import Library
from store.locks import Holder

WHOLE = IndexCounts(entries=20, documents=2, document_entries=2)
WRITER = Holder(pid=1, command="vectree ingest")


def test_an_index_that_holds_what_was_recorded_is_complete() -> None:
    assert shortfall(WHOLE, folders=2, recorded=WHOLE, writer=None) is None


def test_lost_segments_are_a_shortfall_of_documents() -> None:
    empty = IndexCounts(0, 0, 0)
    problem = shortfall(empty, folders=2, recorded=WHOLE, writer=None)
    assert problem == "holds entries for 0 of the 2 documents in the library"


def test_a_repair_killed_half_way_is_a_shortfall_even_with_its_own_record() -> None:
    """A rebuild records each document it rewrites: its record agrees with the index, the
    folders do not."""
    partial = IndexCounts(entries=10, documents=1, document_entries=1)
    assert shortfall(partial, folders=2, recorded=partial, writer=None) == (
        "holds entries for 1 of the 2 documents in the library"
    )


def test_lost_section_entries_are_a_shortfall_of_entries() -> None:
    partial = IndexCounts(entries=14, documents=2, document_entries=2)
    assert shortfall(partial, folders=2, recorded=WHOLE, writer=None) == (
        "holds 14 of the 20 entries it was last written with"
    )


def test_lost_commit_flags_are_a_shortfall_of_searchable_documents() -> None:
    hidden = IndexCounts(entries=20, documents=1, document_entries=2)
    recorded = IndexCounts(entries=18, documents=2, document_entries=2)
    assert shortfall(hidden, folders=2, recorded=recorded, writer=None) == (
        "holds 1 of the 2 searchable documents it was last written with"
    )


def test_a_live_writer_half_way_is_not_a_loss_of_entries() -> None:
    """A removal drops entries before it records the new counts; the documents still agree."""
    removing = IndexCounts(entries=10, documents=1, document_entries=1)
    assert shortfall(removing, folders=1, recorded=WHOLE, writer=WRITER) is None
    assert shortfall(removing, folders=2, recorded=WHOLE, writer=WRITER) is not None


def test_a_library_without_recorded_counts_compares_documents_only() -> None:
    assert shortfall(IndexCounts(3, 2, 2), folders=2, recorded=None, writer=None) is None


def test_the_version_file_keeps_its_token_and_the_counts(tmp_path: Path) -> None:
    library = Library(tmp_path).ensure()
    assert (library.index_version(), library.recorded_counts()) == ("", None)
    token = library.bump_index_version(WHOLE)
    assert (library.index_version(), library.recorded_counts()) == (token, WHOLE)
    library.index_version_file.write_text("old-token\n")  # written before counts were kept
    assert (library.index_version(), library.recorded_counts()) == ("old-token", None)


def test_only_folders_with_a_manifest_count_as_documents(tmp_path: Path) -> None:
    library = Library(tmp_path).ensure()
    for doc_id, manifest in (("a" * 16, True), ("b" * 16, False)):
        (library.docs_dir / doc_id).mkdir()
        if manifest:
            (library.docs_dir / doc_id / "document.json").write_text("{}")
    assert library.visible_count() == 1
