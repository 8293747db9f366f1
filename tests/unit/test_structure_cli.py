"""Structure sources on the command line: modes, --ignore-outline, `vectree docs`, recall totals."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evals.outlined import find_pdf
from evals.structure_recall import (
    by_field,
    compare,
    format_table,
    overall,
    summaries,
    unmatched_kind,
)
from graph.cli.commands import build_parser, main
from ingest.context import STRUCTURE_MODES, IngestContext
from ingest.structure.verify import verify_entries
from store.library import Library, write_json
from store.types import SectionEntry


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]  # type: ignore[no-any-return]


# -- IngestContext -----------------------------------------------------------------------------
def test_structure_modes_include_toc_in_auto_order() -> None:
    assert STRUCTURE_MODES == ("auto", "outline", "toc", "headings", "llm")


@pytest.mark.parametrize("mode", STRUCTURE_MODES)
def test_every_structure_mode_is_accepted(mode: str) -> None:
    context = IngestContext(library="lib", structure=mode)
    assert context.structure == mode and context.ignore_outline is False


@pytest.mark.parametrize("mode", [m for m in STRUCTURE_MODES if m != "outline"])
def test_ignore_outline_combines_with_every_mode_but_outline(mode: str) -> None:
    assert IngestContext(library="lib", structure=mode, ignore_outline=True).ignore_outline


def test_ignore_outline_with_structure_outline_is_refused() -> None:
    with pytest.raises(ValueError, match="--structure outline cannot be combined"):
        IngestContext(library="lib", structure="outline", ignore_outline=True)


def test_unknown_structure_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="structure must be one of"):
        IngestContext(library="lib", structure="bookmarks")


# -- vectree ingest ----------------------------------------------------------------------------
def test_ingest_structure_choices_come_from_the_modes() -> None:
    action = next(a for a in _subparser("ingest")._actions if a.dest == "structure")
    assert tuple(action.choices or ()) == STRUCTURE_MODES
    assert action.default == "auto"
    assert "printed contents" in (action.help or "")


def test_ingest_parses_toc_and_ignore_outline() -> None:
    args = build_parser().parse_args(["ingest", "a.pdf", "--structure", "toc", "--ignore-outline"])
    assert (args.structure, args.ignore_outline) == ("toc", True)
    args = build_parser().parse_args(["ingest", "a.pdf"])
    assert (args.structure, args.ignore_outline) == ("auto", False)


def test_ingest_rejects_an_unknown_structure(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ingest", "a.pdf", "--structure", "bookmarks"])
    assert "invalid choice" in capsys.readouterr().err


def test_ingest_refuses_outline_with_ignore_outline_before_ingesting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = tmp_path / "a.pdf"
    argv = ["--library", str(tmp_path / "lib"), "ingest", str(pdf), "--structure", "outline"]
    assert main([*argv, "--ignore-outline"]) == 1
    err = capsys.readouterr().err
    assert "--structure outline cannot be combined with --ignore-outline" in err
    assert not (tmp_path / "lib").exists()


# -- the structure node and the verification report --------------------------------------------
def test_structure_node_hides_the_outline_when_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest import nodes

    seen: list[list[SectionEntry]] = []

    class Seen(Exception):
        """Stops the node once the outline it passes on is recorded."""

    def fake_extract(mode: str, pages: Any, outline: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(outline)
        raise Seen

    monkeypatch.setattr(nodes, "extract_structure", fake_extract)
    monkeypatch.setattr(nodes, "_model", lambda runtime: None)
    bookmark = SectionEntry(level=1, title="1 Introduction", start_page=1)
    state: Any = {"pages": ["1 Introduction"], "outline": [bookmark], "candidates": []}
    for ignore in (False, True):
        runtime: Any = SimpleNamespace(
            context=IngestContext(library="lib", structure="auto", ignore_outline=ignore)
        )
        assert nodes.structure(state, runtime)["status"] == "failed"  # the Seen stop
    assert seen == [[bookmark], []]


def test_verification_report_records_the_toc_method() -> None:
    entries = [SectionEntry(level=1, title="1 Introduction", start_page=1)]
    _, report = verify_entries(entries, ["1 Introduction\nText."], "toc")
    assert report["method"] == "toc"


# -- vectree docs ------------------------------------------------------------------------------
def _publish(library: Library, doc_id: str, structure: str) -> None:
    staging = library.ensure().new_staging(doc_id)
    write_json(
        staging / "document.json",
        {
            "doc_id": doc_id,
            "title": f"Paper {doc_id}",
            "pages": 3,
            "nodes": 2,
            "verification_rate": 1.0,
            "source": f"{doc_id}.pdf",
            "structure": structure,
            "parser": "test",
            "ingested_at": "now",
        },
    )
    write_json(staging / "tree.json", [])
    library.commit(staging, doc_id)


def test_docs_shows_the_structure_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = Library(tmp_path / "lib")
    _publish(library, "a" * 16, "toc")
    _publish(library, "b" * 16, "headings")
    assert main(["--library", str(library.root), "docs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "structure" in lines[0].split()
    assert "toc" in lines[1].split() and "headings" in lines[2].split()
    assert main(["--library", str(library.root), "docs", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["structure"] for r in records] == ["toc", "headings"]


# -- evals.structure_recall ----------------------------------------------------------------------
def _result(entries: int, found: int, exact: int, seconds: float = 1.0) -> dict[str, Any]:
    return {
        "reference_entries": entries,
        "found": found,
        "exact_start_pages": exact,
        "title_recall": round(found / entries, 3),
        "exact_start_page_accuracy": round(exact / entries, 3),
        "missed": [],
        "method": "toc",
        "seconds": seconds,
    }


def test_overall_is_the_micro_average_and_the_lowest_recall() -> None:
    documents = {"small.pdf": _result(4, 1, 1, 0.5), "large.pdf": _result(36, 36, 30, 2.0)}
    total = overall(documents)
    assert total["reference_entries"] == 40
    assert total["found"] == 37 and total["exact_start_pages"] == 31
    assert total["title_recall"] == 0.925  # 37 / 40, not the macro mean (0.625)
    assert total["exact_start_page_accuracy"] == 0.775
    assert total["min_title_recall"] == 0.25
    assert total["documents"] == 2 and total["seconds"] == 2.5


def test_overall_of_nothing_has_no_rates() -> None:
    total = overall({})
    assert total["title_recall"] is None and total["min_title_recall"] is None


def test_table_has_method_column_and_summary_lines() -> None:
    documents = {"a.pdf": {**_result(4, 2, 1), "kind": "book", "pages": 80}}
    results = {
        "documents": documents,
        "overall": overall(documents),
        "kinds": by_field(documents, "kind"),
    }
    header, row, summary, printed, precision, kind = format_table(results).splitlines()
    assert "method" in header.split() and "toc" in row.split() and "book" in row.split()
    assert summary.startswith("FITTED: micro recall 0.500, exact start 0.250")
    assert printed.split()[:2] == ["PRINTED", "bookmarks:"]
    assert precision.split()[:2] == ["PRECISION:", "0.000"]  # the results carry no nodes
    assert kind.split()[:3] == ["book", "recall", "0.500"]


def test_left_out_columns_appear_with_folds() -> None:
    documents = {"a.pdf": {**_result(4, 2, 1), "kind": "book", "pages": 80}}
    left = {"a.pdf": {**_result(4, 1, 1), "kind": "book", "pages": 80}}
    results = {
        "documents": documents,
        "overall": overall(documents),
        "left_out": {"folds": "family", **summaries(left)},
    }
    lines = format_table(results).splitlines()
    assert "out rec" in lines[0] and lines[1].split()[-5] == "0.250"
    assert any(line.startswith("LEFT OUT: micro recall 0.250") for line in lines)


def test_macro_and_long_document_minimum() -> None:
    documents = {
        "short.pdf": {**_result(10, 2, 2), "pages": 20},
        "long.pdf": {**_result(30, 24, 20), "pages": 200},
    }
    total = overall(documents)
    assert total["macro_title_recall"] == 0.5  # (0.2 + 0.8) / 2
    assert total["min_title_recall"] == 0.2 and total["min_title_recall_long"] == 0.8


def _node(node_id: str, title: str, page: int, children: list[Any] | None = None) -> Any:
    return {
        "node_id": node_id,
        "title": title,
        "start_page": page,
        "end_page": page,
        "summary": "",
        "nodes": children or [],
    }


def test_compare_counts_titles_pages_and_nesting() -> None:
    reference = [
        {"level": 1, "title": "1 Intro", "start_page": 1},
        {"level": 2, "title": "1.1 Scope", "start_page": 2},
        {"level": 2, "title": "1.2 Terms", "start_page": 3},
        {"level": 1, "title": "2 Methods", "start_page": 4},
    ]
    tree = [
        _node("0000", "Intro", 1, [_node("0001", "Scope", 2)]),
        _node("0002", "Terms", 5),  # found, wrong page, nested at the top instead of under Intro
        _node("0003", "2. Methods", 4),
    ]
    result = compare(reference, tree)
    assert result["found"] == 4 and result["exact_start_pages"] == 3
    assert result["nested"] == 3 and result["nesting"] == 0.75
    assert result["missed"] == []


def test_compare_measures_precision_against_the_bookmarks() -> None:
    reference = [
        {"level": 1, "title": "1 Intro", "start_page": 1},
        {"level": 2, "title": "1.1 Scope", "start_page": 2},
        {"level": 3, "title": "1.1.1 Terms", "start_page": 2},
    ]
    tree = [
        _node("0000", "Front matter", 1),  # made by the tree builder: not counted
        _node("0001", "Intro", 1, [_node("0002", "Scope", 2), _node("0003", "NIST", 2)]),
        _node("0004", "Table 4.03B Staffing", 3),
    ]
    result = compare(reference, tree)
    assert result["nodes"] == 4 and result["matched_nodes"] == 2 and result["deep"]
    assert result["unmatched"] == ["NIST", "Table 4.03B Staffing"]
    total = overall({"a.pdf": result, "b.pdf": {**result, "deep": False, "nodes": 8}})
    assert total["nodes_per_bookmark"] == 2.0  # (4 + 8) / 6
    assert total["deep_documents"] == 1 and total["deep_node_precision"] == 0.5


def test_unmatched_node_titles_are_sorted_by_what_they_look_like() -> None:
    assert unmatched_kind("Table 4.03B Staffing") == "caption"
    assert unmatched_kind("CMS") == "acronym"
    assert unmatched_kind("Performance Indicators:") == "label"
    assert unmatched_kind("2022 2021 2020 $ 1,234") == "figures"
    assert (
        unmatched_kind("The agency reviews every plan it receives within ten days.") == "sentence"
    )
    assert unmatched_kind("New Mexico Field Office") == "other"


def test_summaries_group_by_kind_and_family() -> None:
    documents = {
        "a.pdf": {**_result(4, 2, 1), "kind": "book", "family": "x/books"},
        "b.pdf": {**_result(4, 4, 4), "kind": "book", "family": "y/books"},
    }
    result = summaries(documents)
    assert result["kinds"]["book"]["title_recall"] == 0.75
    assert result["families"]["x/books"]["title_recall"] == 0.5
    assert result["families"]["y/books"]["title_recall"] == 1.0


def test_printed_titles_bound_what_a_reader_of_the_pages_can_find() -> None:
    from evals.structure_recall import printed_titles
    from ingest.structure.typography import Line

    def line(page: int, text: str) -> Line:
        return Line(page=page, text=text, size=10, bold=False, y_frac=0.5, block_lines=1, chars=9)

    reference = [
        {"level": 1, "title": "1 Intro", "start_page": 1},
        {"level": 1, "title": "Summary of the evidence and linkage", "start_page": 3},
        {"level": 1, "title": "DCG Overview - Option 1", "start_page": 4},  # reworded
        {"level": 1, "title": "", "start_page": 4},  # no words
    ]
    lines = [
        line(1, "Intro"),
        line(2, "Summary of the evidence"),
        line(2, "and linkage"),
        line(4, "Data Center Group"),
    ]
    printed = printed_titles(reference, lines)
    assert printed == [True, True, False, False]
    result = compare(reference, [_node("0000", "Intro", 1)], printed)
    assert result["printed"] == 2 and result["printed_found"] == 1
    total = overall({"a.pdf": {**result, "pages": 4}})
    assert total["printed_share"] == 0.5 and total["printed_recall"] == 0.5


def test_numbering_is_ignored_when_titles_are_compared() -> None:
    from evals.structure_recall import title_key

    assert title_key("2.3.59.1.1  Background") == title_key("Background") == "background"
    assert title_key("Item 7. Management's Discussion") == "management s discussion"
    assert title_key("NOTE 3 – Revenue") == "revenue"


def test_reference_pdfs_are_found_in_either_pdf_folder(tmp_path: Path) -> None:
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "financebench" / "pdfs").mkdir(parents=True)
    (tmp_path / "pdfs" / "paper.pdf").write_bytes(b"%PDF")
    (tmp_path / "financebench" / "pdfs" / "NIKE_2023_10K.pdf").write_bytes(b"%PDF")
    assert find_pdf(tmp_path, "paper.pdf") == tmp_path / "pdfs" / "paper.pdf"
    assert find_pdf(tmp_path, "NIKE_2023_10K.pdf") == (
        tmp_path / "financebench" / "pdfs" / "NIKE_2023_10K.pdf"
    )
    assert find_pdf(tmp_path, "absent.pdf") is None
