"""A QASPER file with malformed papers: each bad paper fails alone, with the field that is
wrong; the good papers still become jobs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.errors import BadInputError
from ingest.pipeline import discover
from ingest.qasper import qasper_document
from tests.unit.test_qasper import paper


def test_malformed_papers_fail_one_by_one_and_the_good_ones_run(tmp_path: Path) -> None:
    good = paper()
    data = {
        "1801.00001": good,
        "1801.00002": {**good, "full_text": "one long string"},
        "1801.00003": {
            **good,
            "full_text": [{"section_name": "Intro", "paragraphs": ["fine", 42]}],
        },
    }
    source = tmp_path / "qasper.json"
    source.write_text(json.dumps(data))
    jobs, problems = discover([source])
    assert [job.source.rsplit("#", 1)[1] for job in jobs] == ["1801.00001"]
    reasons = {p.source.rsplit("#", 1)[1]: p.error for p in problems}
    assert reasons == {
        "1801.00002": "full_text is a string, expected a list of sections",
        "1801.00003": "full_text[0].paragraphs[1] is a number, expected a string",
    }
    assert all(p.status == "failed" for p in problems)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"title": ["a", "list"]}, "title is a list, expected a string"),
        ({"figures_and_tables": [{"caption": 3}]}, "figures_and_tables[0].caption is a number"),
        ({"full_text": [["not", "an", "object"]]}, "full_text[0] is a list, expected an object"),
    ],
)
def test_a_bad_field_is_named_with_its_path(change: dict[str, Any], expected: str) -> None:
    with pytest.raises(BadInputError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        qasper_document("1801.00009", {**paper(), **change})
