"""Chunking for the passage strategies: flat overlapping windows and node-aligned chunks."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.chunks import (
    DENSE_CHUNK_TOKENS,
    RIT_CHUNK_TOKENS,
    _windows,
    ancestry,
    dense_chunks,
    node_chunks,
    page_owners,
)
from store.embeddings import count_tokens
from tests.trees import node

VOCABULARY = ("river", "stone", "cloud", "paper", "light", "music", "garden", "window")


def words(prefix: str, n: int) -> str:
    """n one-token words (the prefix word first), so token counts are known."""
    return " ".join([prefix] + [VOCABULARY[i % len(VOCABULARY)] for i in range(n - 1)])


def test_windows_advance_by_size_minus_overlap_and_end_at_the_last_token() -> None:
    every = [True] * 2000
    assert _windows(800, 400, every) == [(0, 800), (400, 1200), (800, 1600), (1200, 2000)]
    assert _windows(800, 400, every[:300]) == [(0, 300)]
    assert _windows(512, 0, every[:1100]) == [(0, 512), (512, 1024), (1024, 1100)]
    assert _windows(800, 400, []) == []


def test_windows_do_not_cut_words() -> None:
    starts = [i % 3 == 0 for i in range(20)]  # three-token words
    spans = _windows(8, 4, starts)
    assert all(starts[a] for a, _ in spans)
    assert all(b == 20 or starts[b] for _, b in spans)
    assert all(b - a <= 8 for a, b in spans)
    assert spans[-1][1] == 20


def test_windows_advance_through_runs_without_word_starts() -> None:
    """Table cells joined without spaces: a word, then 398 tokens with no word start, a word,
    then 500 more. The second window ends at the middle word, fewer than ``overlap`` tokens after
    its start, so snapping the overlap back lands on its own start; the next window must begin
    where this one ended instead of repeating it forever."""
    starts = [True] * 1584 + [True] + [False] * 398 + [True] + [False] * 500 + [True] * 100
    spans = _windows(800, 400, starts)
    assert len(spans) == len(set(spans))
    assert all(b > a for a, b in spans)
    assert [a for a, _ in spans] == sorted({a for a, _ in spans})
    assert spans[-1][1] == len(starts)


@settings(max_examples=300, deadline=None)
@given(
    starts=st.lists(st.booleans(), max_size=400)
    | st.builds(lambda n: [True] + [False] * n, st.integers(0, 400))
    | st.builds(
        lambda a, b: [True] * a + [False] * b + [True] * a, st.integers(0, 50), st.integers(0, 200)
    ),
    size=st.integers(1, 64),
    overlap_share=st.floats(0.0, 0.99),
)
def test_windows_always_end_cover_every_token_and_are_bounded_by_the_token_count(
    starts: list[bool], size: int, overlap_share: float
) -> None:
    overlap = min(size - 1, int(size * overlap_share))
    spans = _windows(size, overlap, starts)
    assert len(spans) <= len(starts)
    assert all(a < b <= a + size for a, b in spans)  # no window longer than its size
    assert all(a < c for (a, _), (c, _) in itertools.pairwise(spans))
    covered = {i for a, b in spans for i in range(a, b)}
    assert covered == set(range(len(starts)))


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_windows_refuse_sizes_that_cannot_advance(size: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="overlap"):
        _windows(size, overlap, [True] * 5)


def test_dense_chunks_end_on_a_table_joined_without_spaces() -> None:
    """pymupdf4llm joins a table's cells with <br> into one run with no space in it."""
    cells = "<br>".join(f"cell{i}value" for i in range(600))
    pages = [words("alpha", 500) + " " + cells + " " + words("omega", 300), ""]
    chunks = dense_chunks("d", pages)
    assert chunks and len(chunks) < 50
    assert chunks[-1].text.endswith(pages[0].split()[-1])
    assert max(c.tokens for c in chunks) <= DENSE_CHUNK_TOKENS  # the table is cut, not one passage
    tree = [
        {"node_id": "0", "title": "T", "start_page": 1, "end_page": 2, "summary": "", "nodes": []}
    ]
    assert max(c.tokens for c in node_chunks("d", pages, tree)) <= RIT_CHUNK_TOKENS


def test_dense_chunks_overlap_cross_pages_and_keep_page_segments() -> None:
    pages = [words("alpha", 300), words("beta", 300), words("gamma", 300)]
    chunks = dense_chunks("d", pages, size=400, overlap=200)
    assert all(c.tokens <= 400 for c in chunks)
    assert chunks[0].pages[0] == 1
    assert any(len(c.pages) > 1 for c in chunks)  # windows run across page boundaries
    assert chunks[-1].pages[-1] == 3
    for chunk in chunks:
        for page, text in chunk.segments:
            assert text in pages[page - 1]  # each segment is text of the page it is cited to
    first, second = chunks[0], chunks[1]
    assert first.segments[-1][1][-60:] in second.text  # consecutive windows overlap


def test_a_page_belongs_to_the_deepest_latest_node_holding_it() -> None:
    tree = [
        node("0001", "Intro", 1, 2, ""),
        node("0002", "Method", 2, 5, "", node("0003", "Data", 4, 5, "")),
    ]
    owners = {page: n["node_id"] for page, n in page_owners(tree, 5).items()}  # type: ignore[arg-type]
    assert owners == {1: "0001", 2: "0002", 3: "0002", 4: "0003", 5: "0003"}
    assert ancestry(tree)["0003"] == (("0002", "Method"),)  # type: ignore[arg-type]


def test_node_chunks_never_span_two_nodes_and_carry_their_ancestors() -> None:
    tree = [
        node("0001", "Intro", 1, 1, ""),
        node("0002", "Method", 2, 4, "", node("0003", "Data", 3, 4, "")),
    ]
    pages = [words("intro", 50), words("method", 700), words("data", 200), words("more", 200)]
    assert count_tokens(pages[1]) == 700
    chunks = node_chunks("d", pages, tree, size=512)  # type: ignore[arg-type]
    by_node: dict[str | None, list[Any]] = {}
    for chunk in chunks:
        by_node.setdefault(chunk.node_id, []).append(chunk)
        assert chunk.tokens <= 512
        assert count_tokens(chunk.text) <= 512 + 2
    assert [c.pages for c in by_node["0001"]] == [(1,)]
    assert all(c.pages == (2,) for c in by_node["0002"])  # 700 tokens of page 2 → two chunks
    assert len(by_node["0002"]) == 2
    assert {p for c in by_node["0003"] for p in c.pages} == {3, 4}
    assert by_node["0003"][0].ancestors == (("0002", "Method"),)
    assert by_node["0003"][0].title == "Data"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
