"""Layer-order adherence on hand-built trajectories."""

from __future__ import annotations

import json
from typing import Any

from graph.trajectory.adherence import layer_adherence, summary_line
from tools.schemas import TOOL_LAYERS

DOC, OTHER = "a1b2c3d4e5f6", "f6e5d4c3b2a1"


def trajectory(*calls: tuple[str, str | None, bool]) -> list[dict[str, Any]]:
    """Steps shaped as the agent records them, from (tool, doc_id, ok) triples."""
    steps = []
    for seq, (tool, doc_id, ok) in enumerate(calls, start=1):
        reads = tool in {"get_page_content", "get_page_image"}
        steps.append(
            {
                "seq": seq,
                "layer": TOOL_LAYERS[tool],
                "tool": tool,
                "args": {"doc_id": doc_id} if doc_id else {"query": "q"},
                "ok": ok,
                "error": None if ok else "failed",
                "payload_tokens": 10 if ok else 0,
                "pages": [3] if ok and reads else [],
                "doc_id": doc_id if ok else None,
            }
        )
    return steps


def test_perfect_order() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_document_tree", DOC, True),
        ("get_page_content", DOC, True),
        ("get_page_content", DOC, True),
    )
    result = layer_adherence(steps).as_dict()
    assert result["layers"] == [0, 1, 2, 2]
    assert result["backward_jumps"] == 0
    assert result["pages_without_tree"] == 0
    assert result["searched_first"] and result["followed_order"]
    assert result["calls_per_layer"] == {"0": 1, "1": 1, "2": 2}
    assert result["failed_calls"] == 0


def test_backward_jump_breaks_the_order() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("search_within_paper", DOC, True),
        ("get_page_content", DOC, True),
        ("search_documents", None, True),
        ("get_document_tree", OTHER, True),
        ("get_page_content", OTHER, True),
    )
    result = layer_adherence(steps)
    assert result.layers == [0, 1, 2, 0, 1, 2]
    assert result.backward_jumps == 1
    assert result.pages_without_tree == 0
    assert result.searched_first and not result.followed_order


def test_pages_read_without_opening_the_tree() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_document_tree", DOC, True),
        ("get_page_content", OTHER, True),  # another document's tree was never opened
        ("get_page_image", OTHER, True),
        ("get_page_content", DOC, True),
    )
    result = layer_adherence(steps)
    assert result.pages_without_tree == 2
    assert result.backward_jumps == 0
    assert not result.followed_order


def test_tree_opened_after_the_read_does_not_count() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_page_content", DOC, True),
        ("get_document_tree", DOC, True),
    )
    result = layer_adherence(steps)
    assert result.pages_without_tree == 1
    assert result.backward_jumps == 1


def test_failed_calls_are_ignored_for_order_but_counted() -> None:
    steps = trajectory(
        ("get_page_content", DOC, False),  # failed first call: not "did not search first"
        ("search_documents", None, True),
        ("get_document_tree", DOC, False),  # failed tree: opens nothing
        ("get_document_tree", DOC, True),
        ("get_page_content", DOC, True),
        ("search_documents", None, False),  # failed call after a read: not a backward jump
        ("get_page_content", DOC, True),
    )
    result = layer_adherence(steps)
    assert result.layers == [0, 1, 2, 2]
    assert result.backward_jumps == 0
    assert result.pages_without_tree == 0
    assert result.searched_first and result.followed_order
    assert result.failed_calls == 3
    assert result.calls_per_layer == {"0": 2, "1": 2, "2": 3}


def test_failed_tree_leaves_the_document_unopened() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_document_tree", DOC, False),
        ("get_page_content", DOC, True),
    )
    assert layer_adherence(steps).pages_without_tree == 1


def test_not_searching_first() -> None:
    steps = trajectory(("get_document_tree", DOC, True), ("get_page_content", DOC, True))
    result = layer_adherence(steps)
    assert not result.searched_first and not result.followed_order
    assert result.backward_jumps == 0 and result.pages_without_tree == 0


def test_steps_are_taken_in_seq_order() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_document_tree", DOC, True),
        ("get_page_content", DOC, True),
    )
    assert layer_adherence(list(reversed(steps))).followed_order


def test_empty_trajectory() -> None:
    result = layer_adherence([]).as_dict()
    assert result == {
        "layers": [],
        "backward_jumps": 0,
        "pages_without_tree": 0,
        "searched_first": False,
        "followed_order": False,
        "calls_per_layer": {"0": 0, "1": 0, "2": 0},
        "failed_calls": 0,
    }


def test_dict_is_json_native_and_summarised() -> None:
    steps = trajectory(
        ("search_documents", None, True),
        ("get_document_tree", DOC, True),
        ("get_page_content", DOC, True),
    )
    result = layer_adherence(steps)
    as_dict = result.as_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    line = result.summary()
    assert line == summary_line(as_dict)
    assert line.startswith("adherence: followed find → tree → read")
    assert "1 find, 1 tree, 1 read" in line
    assert "out of order" in layer_adherence(steps[1:]).summary()


def step(seq: int, layer: int, tool: str, **fields: Any) -> dict[str, Any]:
    """A step of another strategy (its own tool names), successful."""
    base = {"seq": seq, "layer": layer, "tool": tool, "args": {}, "ok": True, "error": None}
    return {**base, "payload_tokens": 5, "pages": [], "doc_id": None, **fields}


def test_passage_reads_without_a_tree_count_once_per_document() -> None:
    dense = [step(1, 0, "retrieve_passages", disclosed={DOC: [1, 2], OTHER: [5]})]
    result = layer_adherence(dense)
    assert result.pages_without_tree == 2
    assert not result.followed_order


def test_a_structure_view_of_every_document_opens_them_all() -> None:
    rit = [step(1, 1, "get_toc_structure"), step(2, 2, "get_content", doc_id=DOC, pages=[4])]
    assert layer_adherence(rit).pages_without_tree == 0
    no_vector = [
        step(1, 1, "get_document_tree", args={"doc_id": "*"}),
        step(2, 2, "get_page_content", doc_id=OTHER, pages=[2]),
    ]
    result = layer_adherence(no_vector)
    assert result.pages_without_tree == 0
    assert not result.searched_first  # no layer 0 by design
    pageindex = [
        step(1, 1, "pageindex_outline", doc_id=DOC),
        step(2, 2, "pageindex_read", doc_id=DOC, pages=[6]),
        step(3, 2, "pageindex_read", doc_id=OTHER, pages=[1]),
    ]
    assert layer_adherence(pageindex).pages_without_tree == 1
