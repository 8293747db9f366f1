"""The one sentence splitter: markdown blocks first, then sentences of body prose only."""

from __future__ import annotations

from store.text import body_blocks, clean_text, split_sentences, table_rows

# Shaped like pymupdf4llm's first page of the S2ORC paper (the demo's first answer sentence).
S2ORC_PAGE = """# **S2ORC: The Semantic Scholar Open Research Corpus**

**Kyle Lo** <sup>_†∗_</sup> **Lucy Lu Wang** <sup>_†∗_</sup> **Daniel S. Weld** <sup>_†‡_</sup>

_†_ Allen Institute for Artificial Intelligence

_‡_ Paul G. Allen School of Computer Science & Engineering, University of Washington

_{_ kylel, lucyw _}_ @allenai.org


**Abstract**



We introduce S2ORC, <sup>1</sup> a large corpus of
81.1M English-language academic papers
spanning many academic disciplines. The corpus consists of rich metadata, paper abstracts,
resolved bibliographic references, as well as
structured full text for 8.1M open access papers.


**1** **Introduction**


Academic papers are an increasingly important
textual domain for natural language processing
(NLP) research.


4969
"""


def test_s2orc_front_matter_and_abstract_heading_are_not_sentences() -> None:
    assert split_sentences(S2ORC_PAGE) == [
        "We introduce S2ORC, a large corpus of 81.1M English-language academic papers "
        "spanning many academic disciplines.",
        "The corpus consists of rich metadata, paper abstracts, resolved bibliographic "
        "references, as well as structured full text for 8.1M open access papers.",
        "Academic papers are an increasingly important textual domain for natural language "
        "processing (NLP) research.",
    ]


def test_headings_are_never_part_of_a_sentence() -> None:
    page = "## 2 Method\nWe train a small model.\n\n**2.1** **Data**\n\nThe data is public."
    assert split_sentences(page) == ["We train a small model.", "The data is public."]
    assert split_sentences("_Recurring Fair Value Measurements_\n\nAssets are at cost.") == [
        "Assets are at cost."
    ]


def test_a_bold_paragraph_that_reads_as_prose_is_kept() -> None:
    bold = "**All figures in this report are unaudited and may change before the annual filing.**"
    assert split_sentences(bold) == [
        "All figures in this report are unaudited and may change before the annual filing."
    ]


def test_a_bold_lead_in_label_is_dropped_from_its_sentence() -> None:
    assert split_sentences("**Results.** We find large gains. They hold.") == [
        "We find large gains.",
        "They hold.",
    ]
    assert split_sentences("**Finding** : Annotating clauses helps.") == [
        "Annotating clauses helps."
    ]
    assert split_sentences("_Selection of papers:_ We consider long datasets.") == [
        "We consider long datasets."
    ]
    # Bold words that are not a label stay.
    assert split_sentences("**Note** that this holds.") == ["Note that this holds."]


def test_list_items_are_blocks_of_their_own() -> None:
    page = (
        "Our contributions are:\n"
        "- a survey of current practice\n"
        "- a set of three guidelines that\n"
        "  wrap onto a second line\n"
        "1) Process PDFs and sources\n"
        "**(2)** LONGEVAL, a set of guidelines;\n"
        "- **A HEADING SET AS A BOLD ITEM**"
    )
    assert split_sentences(page) == [
        "Our contributions are:",
        "a survey of current practice",
        "a set of three guidelines that wrap onto a second line",
        "Process PDFs and sources",
        "LONGEVAL, a set of guidelines;",
    ]


def test_table_rows_are_not_sentences_but_can_be_read_as_rows() -> None:
    page = (
        "Revenue rose in the quarter.\n\n"
        "|Segment|Revenue|\n|---|---|\n|Parks|$ 9,583|\n\n"
        "**<mark>Total assets</mark>** <mark>$</mark> <mark>15,318</mark> <mark>15,803</mark>\n"
        "<mark>Gain on sale</mark> <mark>21</mark> <mark>-</mark> <mark>21</mark>\n\n"
        "Costs fell."
    )
    assert split_sentences(page) == ["Revenue rose in the quarter.", "Costs fell."]
    assert table_rows(page) == [
        "Segment Revenue",
        "Parks $ 9,583",
        "Total assets $ 15,318 15,803",
        "Gain on sale 21 - 21",
    ]


def test_line_end_hyphenation_is_undone_but_real_hyphens_stay() -> None:
    text = (
        "We need informa-\ntion about long-\nterm effects of state-of-the-\nart models on "
        "COVID-\n19 and self-\nattention, as _sum-_\n_maries_ show."
    )
    expected = (
        "We need information about long-term effects of state-of-the-art models on COVID-19 "
        "and self-attention, as summaries show."
    )
    assert split_sentences(text) == [expected]
    assert clean_text(text) == expected


def test_a_paragraph_broken_by_a_column_break_is_rejoined() -> None:
    page = "The model is evaluated on the\n\n\n\ntest split of both datasets. It wins."
    assert split_sentences(page) == [
        "The model is evaluated on the test split of both datasets.",
        "It wins.",
    ]
    # A footnote after an unfinished paragraph is no continuation of it.
    assert body_blocks("Most of the surveyed papers\n\n2We exclude five papers.") == [
        "Most of the surveyed papers",
        "2We exclude five papers.",
    ]


def test_abbreviations_never_end_a_sentence() -> None:
    text = (
        "Models differ, e.g. BERT and i.e. Large ones, as Lo et al. (2020) show in Fig. 3 and "
        "Eq. 2 of Sec. 4, Apple vs. Google. See No. 5 and pp. 4-5 of the U.S. Report by "
        "Daniel S. Weld (Sept. 20, 2004). Details are in Appendix A. The end."
    )
    assert split_sentences(text) == [
        "Models differ, e.g. BERT and i.e. Large ones, as Lo et al. (2020) show in Fig. 3 and "
        "Eq. 2 of Sec. 4, Apple vs. Google.",
        "See No. 5 and pp. 4-5 of the U.S. Report by Daniel S. Weld (Sept. 20, 2004).",
        "Details are in Appendix A.",
        "The end.",
    ]


def test_decimals_never_end_a_sentence() -> None:
    assert split_sentences("It holds 81.1M papers and 3.5 percent fail. 8.1M are open!") == [
        "It holds 81.1M papers and 3.5 percent fail.",
        "8.1M are open!",
    ]


def test_questions_quotes_and_brackets_close_sentences() -> None:
    text = 'Can we do it? (1) Yes. He said "it works." Then it did.'
    assert split_sentences(text) == [
        "Can we do it?",
        "(1) Yes.",
        'He said "it works."',
        "Then it did.",
    ]


def test_plain_text_splits_the_same_way() -> None:
    evidence = (
        "We grew the knockout strain for 48 hours. Knockout cells grew 40% slower than wild "
        "type.\nWild type cells were grown in rich medium."
    )
    assert split_sentences(evidence) == [
        "We grew the knockout strain for 48 hours.",
        "Knockout cells grew 40% slower than wild type.",
        "Wild type cells were grown in rich medium.",
    ]
    assert split_sentences("") == []
    assert split_sentences("A fragment without an end") == ["A fragment without an end"]


def test_email_and_footnote_url_lines_are_dropped_but_link_prose_stays() -> None:
    page = (
        "{kalpesh,miyyer}@cs.umass.edu\n\n"
        "[2https://arxiv.org](https://arxiv.org)\n[longeval-summarization](https://x.org/l)\n\n"
        "Write to us at team@example.org with questions.\n\n"
        "Multi-news: [A large-scale](https://doi.org/1)\n"
        "[multi-document dataset and abstrac-](https://doi.org/1)\n"
        "[tive hierarchical model.](https://doi.org/1)"
    )
    assert split_sentences(page) == [
        "Write to us at team@example.org with questions.",
        "Multi-news: A large-scale multi-document dataset and abstractive hierarchical model.",
    ]
