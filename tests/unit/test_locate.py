"""Finding section titles in page text despite extraction artefacts."""

from __future__ import annotations

import pytest

from ingest.structure.locate import BEGIN_CHARS, begins_page, find_title, normalize, title_tokens


def test_title_tokens_are_lower_case_words_with_ligatures_unfolded() -> None:
    assert title_tokens("2.1 Deﬁning  the Task!") == ["2", "1", "defining", "the", "task"]
    assert title_tokens("--- ***") == []


@pytest.mark.parametrize(
    ("title", "page", "offset"),
    [
        ("Introduction", "Some text. INTRODUCTION here", 11),
        ("introduction", "# Introduction\nbody", 2),
        ("1 Introduction", "xx\n**1** **INTRODUCTION**\nbody", 5),
        ("3.2 Results and Discussion", "## 3.2 _Results_ and **Discussion**", 3),
        ("Refinement of results", "abc Refine-\nment of results", 4),
        ("Refinement of results", "abc Refine- ment of results", 4),
        ("I. Introduction", "I. I NTRODUCTION\nWe study", 0),
        ("Related   Work", "intro\nRelated\nWork\n", 6),
        ("Deﬁning the task", "Defining the task", 0),
    ],
)
def test_find_title_tolerates_extraction_artefacts(title: str, page: str, offset: int) -> None:
    assert find_title(title, page) == offset


def test_ligature_in_the_page_matches_once_page_is_normalised() -> None:
    page = "xx Deﬁning the task"
    assert normalize(page) == "xx Defining the task"
    assert find_title("Defining the task", normalize(page)) == 3


def test_find_title_returns_first_occurrence() -> None:
    assert find_title("Results", "Results first. Then Results again.") == 0


def test_find_title_misses() -> None:
    assert find_title("Results", "Nothing to see here") is None
    assert find_title("Method Overview", "Method\n\nSomething else Overview") is None
    assert find_title("---", "--- is here") is None
    assert find_title("", "anything") is None


def test_begins_page_after_running_header_only() -> None:
    page = "Journal of Things 12\n\n## 3 Method\nWe do things."
    assert begins_page(page, find_title("3 Method", page) or -1) is True


def test_begins_page_false_mid_page() -> None:
    page = "x" * (BEGIN_CHARS + 1) + "\n## 3 Method\nbody"
    offset = find_title("3 Method", page)
    assert offset == BEGIN_CHARS + 5
    assert begins_page(page, offset) is False


def test_begins_page_counts_only_alphanumerics() -> None:
    exactly = "x" * BEGIN_CHARS + " ---- *** ## "
    assert begins_page(exactly + "Heading", len(exactly)) is True
    assert begins_page("x" * (BEGIN_CHARS + 1) + " Heading", BEGIN_CHARS + 2) is False
    assert begins_page("Heading at top", 0) is True
