"""Page text as prose: the one markdown clean-up and the one sentence splitter of the project.

Pages are pymupdf4llm markdown, one string per PDF page; summaries, document descriptions,
the offline extractive answer (and the offline strategies built on it), citation quotes and the
offline eval reader all read sentences from them, so they all use ``split_sentences`` (and
``clean_text`` where they need prose without sentence structure). A regex that splits at ". "
over a page's flattened text glues headings, author and affiliation lines to the first body
sentence ("… University of Washington { kylel, lucyw } @allenai.org Abstract We introduce
S2ORC …"), so the splitter reads the markdown's block structure first and splits only body
prose.

Rules, per construct (a block ends at a blank line and at every structural line):

- ``#`` headings and whole-bold lines (``**Abstract**``, ``**1** **Introduction**``, bold author
  lines, a list item whose text is all bold) are headings: never part of a sentence. Consecutive
  bold lines that end like a sentence and hold over 12 words are a bold paragraph instead.
  A one-line block in italics that does not end like a sentence is a heading too.
- Table rows are not sentences: markdown rows (``|…|``) and rows that end in two or more
  numeric cells (``Revenue $ 9,583 $ 10,329``), as pymupdf4llm prints filings' tables.
  ``table_rows`` returns them as text for readers that need table evidence.
- Front matter is not sentences: e-mail lines (``{ kylel, lucyw } @allenai.org``), lines of
  bare URLs or one-word links (footnote URLs; links with prose in them stay), and short blocks
  (at most 30 words) that do not end like a sentence and name an institution, start with an
  affiliation mark (``† ‡ ∗``), or hold only capitalised words and numbers (author names,
  running headers, dates, page numbers). A line starting with such a mark or with a footnote
  number glued to its text (``2We exclude …``) starts a paragraph of its own.
- List items (``-``, ``*``, ``•``, ``1.``, ``1)``, ``(a)``, bold ``**(1)**``) are blocks of their
  own; their continuation lines belong to them.
- A bold or italic lead-in label that ends in ``.``, ``:`` or a dash (``**Results.** We find``,
  ``**Finding** : …``, ``_Selection of papers:_ …``, at most 6 words) is heading-like and is
  dropped: the sentence starts after it.
- Hard line breaks inside a block become spaces. A paragraph that does not end like a sentence
  continues into the next block when that is a paragraph starting in lower case or with a
  number followed by more text (a column or page break inside a paragraph), so every sentence
  is a contiguous run of the page's cleaned text.
- Line-end hyphenation is undone (``informa-\\ntion`` → ``information``) except where the hyphen
  is a real one: the part after the break starts with a capital or a digit (``COVID-\\n19``),
  the part before is already hyphenated (``state-of-the-\\nart``), or the part before is one of
  a few words that form hyphenated compounds (``COMPOUND_HEADS``: ``long-\\nterm``,
  ``self-\\nattention``).
- A sentence ends at ``.``, ``!`` or ``?`` (closing quotes and brackets included) followed by
  white space and a capital, a digit or an opening quote or bracket; never after an
  abbreviation (``e.g.``, ``i.e.``, ``et al.``, ``Fig.``, ``Eq.``, ``vs.``, ``Sec.``, …),
  ``No.``, ``pp.`` or a month (``Sept.``) before a number, a run of initials (``U.S.``) or a
  name's initial (``Daniel S. Weld``, but ``Appendix A.`` ends). Numbers (``81.1M``, ``3.5``)
  never end one, as no white space follows their point. ``etc.`` may end a sentence.

Plain text (no markdown) is one paragraph per blank-line block and splits the same way.

The word helpers every offline reader and strategy matches text with live here too: the stop
words, ``content_words``, the idf-weighted ``lexical_relevance`` and the headings of sections
that hold no answers (``SKIP_SECTIONS``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MARKDOWN = re.compile(r"(^#+\s*|\*\*|__|(?<!\w)_|_(?!\w)|`|^\s*[-*>]\s+|\|)", re.MULTILINE)
HTML_TAG = re.compile(r"<sup>.*?</sup>|<[^>]{1,40}>")
MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
HYPHEN_BREAK = re.compile(
    r"(?<![^\W_])"  # from a word's start only: a match inside a word would start at its start
    r"(?P<head>[^\W_]+(?:-[^\W_]+)*)-[*_]*[ \t]*\n(?:[ \t]*\n)*[ \t]*[*_]*(?P<tail>[^\W_]+)"
)
COMPOUND_HEADS = frozenset(
    ("long", "short", "well", "self", "non", "cross", "fine", "few", "zero", "one", "two", "three")
)
"""Words that, before a line-end hyphen, start a hyphenated compound rather than a split word."""

HEADING_LINE = re.compile(r"^\s*#{1,6}\s")
TABLE_LINE = re.compile(r"^\s*\|")
BOLD_LINE = re.compile(r"^\s*(?:(?:\*\*|__)[^*\n]+?(?:\*\*|__)[\s:.—–-]*)+$")
ITALIC_LINE = re.compile(r"^\s*(?:_[^_\n]+_|\*[^*\n]+\*)\s*$")
ITEM_MARK = re.compile(
    r"^\s*(?:\*\*|__)?(?:[-*+•▪◦·]|\d{1,3}[.)]|\((?:\d{1,3}|[a-z]|[ivx]{2,4})\))(?:\*\*|__)?\s+"
)
EMAIL_LINE = re.compile(
    r"^(?:[{(\[]?\s*[\w.+-]+(?:\s*,\s*[\w.+-]+)*\s*[})\]]?\s*@\s*[\w-]+(?:\.[\w-]+)+[\s,;]*)+$"
)
LINK_LINE = re.compile(r"^\s*(?:(?:\[[^\]\s]*\]\([^)]*\)|<?https?://\S+>?)\s*)+$")
"""A line of bare URLs or links whose text is one word (a footnote URL), not link prose."""
NUMERIC_CELL = re.compile(r"\(?[$€£]?-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?[kKMB]?%?\)?")
DASH_CELL = frozenset(("-", "—", "–", "$", "€", "£"))
LEAD_IN = re.compile(
    r"^\s*(?:\*\*(?P<bold>[^*\n]{1,80}?)\*\*|_(?P<italic>[^_\n]{1,80}?)_)"
    r"[ \t]*(?P<after>[.:—–])?[ \t]+(?=\S)"
)
LEAD_IN_WORDS = 6
INSTITUTION = re.compile(
    r"\b(?:universit\w*|institut\w*|department|dept|school|college|laborator\w*|labs?|"
    r"cent(?:er|re)|academy|inc|corp(?:oration)?|ltd|gmbh|research)\b",
    re.IGNORECASE,
)
AFFILIATION_MARK = re.compile(r"^[†‡∗*§¶♠♢♡♣♦⋆]")
NOTE_START = re.compile(r"^(?:[†‡∗*§¶♠♢♡♣♦⋆]|\d{1,2}[A-Z][a-z])")
"""A footnote or affiliation line: a mark, or a footnote number glued to its text ("2We …")."""
LABEL_WORD = re.compile(r"[A-Z0-9][\w'’.&-]*|&|and|of|for|the|in|on|at|de|van|von|der|du")
FRONT_MATTER_WORDS = 30
BOLD_PARAGRAPH_WORDS = 12
INITIALS = re.compile(r"(?:[A-Z]\.){2,}")
INITIAL = re.compile(r"[A-Z]\.")
ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)\]]*$")
CONTINUES = re.compile(r"^(?:[a-z]|\d\S*\s+\S)")
SENTENCE_BREAK = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9])")
ABBREVIATIONS = frozenset(
    [
        "e.g.",
        "i.e.",
        "al.",
        "cf.",
        "vs.",
        "viz.",
        "fig.",
        "figs.",
        "eq.",
        "eqs.",
        "sec.",
        "secs.",
        "tab.",
        "app.",
        "ch.",
        "approx.",
        "resp.",
        "incl.",
        "ref.",
        "refs.",
        "dr.",
        "mr.",
        "mrs.",
        "ms.",
        "prof.",
        "st.",
        "jr.",
        "sr.",
        "co.",
        "ca.",
    ]
)
"""Abbreviations after which a sentence never ends (compared in lower case)."""
BEFORE_NUMBER = frozenset(
    [
        "no.",
        "nos.",
        "p.",
        "pp.",
        "vol.",
        "jan.",
        "feb.",
        "mar.",
        "apr.",
        "jun.",
        "jul.",
        "aug.",
        "sep.",
        "sept.",
        "oct.",
        "nov.",
        "dec.",
    ]
)
"""Abbreviations that do not end a sentence when a number follows (``No. 5``, ``Sept. 20``)."""
LABEL_BEFORE_LETTER = frozenset(
    [
        "appendix",
        "section",
        "table",
        "figure",
        "part",
        "item",
        "exhibit",
        "schedule",
        "type",
        "class",
        "level",
        "option",
        "step",
        "phase",
        "group",
        "model",
        "plan",
        "note",
    ]
)
"""Words after which a single capital and a point (``Appendix A.``) may end a sentence."""


@dataclass
class Block:
    """One markdown block: its kind and its raw lines."""

    kind: str  # heading | paragraph | item | table | bold | drop
    lines: list[str]


def clean_text(text: str) -> str:
    """Plain prose: markdown syntax removed, whitespace collapsed, line-break hyphens joined
    (after tags and links are gone, so a word split across two links is joined too)."""
    text = HTML_TAG.sub("", text)
    text = MARKDOWN_LINK.sub(r"\1", text)
    text = undo_hyphenation(text)
    return " ".join(MARKDOWN.sub(" ", text).split())


def undo_hyphenation(text: str) -> str:
    """Join words hyphenated at a line end, keeping real hyphens (rule in the module doc).
    Most texts cleaned are single lines, which the pattern cannot match."""
    if "\n" not in text or "-" not in text:
        return text
    return HYPHEN_BREAK.sub(_join_hyphenated, text)


def _join_hyphenated(match: re.Match[str]) -> str:
    head, tail = match.group("head"), match.group("tail")
    real = not tail[0].islower() or "-" in head or head.lower() in COMPOUND_HEADS
    return f"{head}-{tail}" if real else head + tail


def split_sentences(text: str) -> list[str]:
    """The sentences of the body prose of ``text`` (markdown or plain), markup removed."""
    return [sentence for block in body_blocks(text) for sentence in _sentences_of(block)]


def body_blocks(text: str) -> list[str]:
    """The body paragraphs and list items of ``text`` as clean prose, in reading order.

    Headings, tables and front matter are left out (see the module doc); a paragraph broken
    by a column or page break is rejoined.
    """
    prose = []
    for block in _continued(_blocks(text)):
        body = _prose(block)
        if body and not (block.kind == "paragraph" and _is_front_matter(body)):
            prose.append(body)
    return prose


def table_rows(text: str) -> list[str]:
    """The table rows of ``text`` as clean text (cells separated by spaces)."""
    return [
        row
        for block in _blocks(text)
        if block.kind == "table"
        for row in (clean_text(line.replace("<br>", " ")) for line in block.lines)
        if row.strip(" -:")
    ]


def _blocks(text: str) -> list[Block]:
    """Group lines into blocks; every structural line starts a block of its own kind."""
    blocks: list[Block] = []
    current: Block | None = None
    for line in text.splitlines():
        kind = _line_kind(line)
        if kind == "blank":
            current = None
            continue
        if kind == "drop":  # a block of its own, so no paragraph continues across it
            current = None
            blocks.append(Block("drop", [line]))
            continue
        if current is not None and _continues_block(current, kind):
            current.lines.append(line)
            continue
        current = Block("paragraph" if kind in ("text", "note") else kind, [line])
        blocks.append(current)
    return [_settle(block) for block in blocks]


def _continues_block(block: Block, kind: str) -> bool:
    """Plain lines continue a paragraph or item; bold lines and table rows continue their run."""
    if kind == "text":
        return block.kind in ("paragraph", "item")
    return kind == block.kind and kind in ("bold", "table")


def _line_kind(line: str) -> str:
    """blank, drop (e-mail or link line), heading, table, bold, item, note (starts a
    paragraph: a footnote or affiliation line) or text."""
    if not line.strip():
        return "blank"
    if HEADING_LINE.match(line):
        return "heading"
    if TABLE_LINE.match(line) or _is_numeric_row(line):
        return "table"
    content = HTML_TAG.sub("", line)
    if EMAIL_LINE.match(clean_text(content)) or LINK_LINE.match(content):
        return "drop"
    item = ITEM_MARK.match(content)
    if BOLD_LINE.match(content) or (item and BOLD_LINE.match(content[item.end() :])):
        return "bold"
    if item:
        return "item"
    return "note" if NOTE_START.match(clean_text(content)) else "text"


def _is_numeric_row(line: str) -> bool:
    """A line that ends in two or more numeric cells ('$' and dash cells between them allowed)."""
    numbers = 0
    for token in reversed(clean_text(line).split()):
        if NUMERIC_CELL.fullmatch(token):
            numbers += 1
        elif token not in DASH_CELL:
            break
    return numbers >= 2


def _settle(block: Block) -> Block:
    """Decide what bold runs and one-line italic paragraphs are: headings or prose."""
    if block.kind == "bold":
        text = clean_text("\n".join(block.lines))
        prose = bool(ENDS_SENTENCE.search(text)) and len(text.split()) > BOLD_PARAGRAPH_WORDS
        return Block("paragraph" if prose else "heading", block.lines)
    if _is_italic_label(block):
        return Block("heading", block.lines)
    return block


def _is_italic_label(block: Block) -> bool:
    """A one-line paragraph all in italics that does not end like a sentence (a subheading)."""
    if block.kind != "paragraph" or len(block.lines) != 1:
        return False
    line = block.lines[0]
    return bool(ITALIC_LINE.match(line)) and not ENDS_SENTENCE.search(clean_text(line))


def _continued(blocks: list[Block]) -> list[Block]:
    """Rejoin a paragraph or item with the paragraph that continues it after a break."""
    joined: list[Block] = []
    for block in blocks:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and previous.kind in ("paragraph", "item")
            and block.kind == "paragraph"
            and not ENDS_SENTENCE.search(clean_text("\n".join(previous.lines)))
            and _continues_prose(clean_text(block.lines[0]))
        ):
            joined[-1] = Block(previous.kind, previous.lines + block.lines)
        else:
            joined.append(block)
    return joined


def _continues_prose(first_line: str) -> bool:
    """Lower case or a number in running text (not a footnote's number) continues prose."""
    return bool(CONTINUES.match(first_line)) and not NOTE_START.match(first_line)


def _prose(block: Block) -> str:
    """Clean prose of a paragraph or list item (marker and lead-in label dropped); else ''."""
    if block.kind not in ("paragraph", "item"):
        return ""
    text = "\n".join(block.lines)
    if block.kind == "item":
        text = ITEM_MARK.sub("", text, count=1)
    return clean_text(_without_lead_in(text))


def _without_lead_in(text: str) -> str:
    """Drop a heading-like bold or italic label that opens a paragraph ("**Results.** …")."""
    match = LEAD_IN.match(text)
    if not match:
        return text
    label = (match.group("bold") or match.group("italic") or "").strip()
    labelled = bool(match.group("after")) or label[-1:] in (".", ":", "—", "–")
    short = len(clean_text(label).split()) <= LEAD_IN_WORDS
    return text[match.end() :] if labelled and short else text


def _is_front_matter(prose: str) -> bool:
    """Author, affiliation, header and footnote-mark blocks: short, not ending as a sentence."""
    words = prose.split()
    if len(words) > FRONT_MATTER_WORDS or ENDS_SENTENCE.search(prose):
        return False
    return bool(
        INSTITUTION.search(prose)
        or AFFILIATION_MARK.match(prose)
        or all(LABEL_WORD.fullmatch(word.strip(",;:()")) for word in words)
    )


def _sentences_of(prose: str) -> list[str]:
    """Split one block of clean prose at the sentence ends the module doc describes."""
    sentences = []
    start = 0
    for match in SENTENCE_BREAK.finditer(prose):
        if _ends_sentence(prose, match):
            sentences.append(prose[start : match.end()].strip())
            start = match.end()
    sentences.append(prose[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _ends_sentence(prose: str, match: re.Match[str]) -> bool:
    """Whether the point at ``match`` ends a sentence, judged by the word it closes."""
    before = prose[: match.end()].rsplit(maxsplit=2)[-2:]
    word = before[-1].lstrip("\"'“‘([").rstrip("\"'”’)]")
    lower = word.lower()
    following = prose[match.end() :].lstrip()[:1]
    if lower in ABBREVIATIONS or (lower in BEFORE_NUMBER and following.isdigit()):
        return False
    if INITIALS.fullmatch(word):
        return False
    if INITIAL.fullmatch(word):
        previous = before[-2].strip(",;:()").lower() if len(before) > 1 else ""
        return previous in LABEL_BEFORE_LETTER
    return True


# -- words ------------------------------------------------------------------------------------
# NLTK's English stop-word list (179 words), the list Qdrant/bm25 ships as english.txt: the
# sparse vectors (fastembed lower-cases tokens and drops these before stemming) and the
# official QASPER answer score depend on exactly this list, so it is kept as published.
ENGLISH_STOPWORDS: tuple[str, ...] = (
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "you're", "you've",
    "you'll", "you'd", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself",
    "she", "she's", "her", "hers", "herself", "it", "it's", "its", "itself", "they", "them",
    "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "that'll",
    "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has",
    "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or",
    "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against",
    "between", "into", "through", "during", "before", "after", "above", "below", "to", "from",
    "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once",
    "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than",
    "too", "very", "s", "t", "can", "will", "just", "don", "don't", "should", "should've", "now",
    "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "aren't", "couldn", "couldn't", "didn",
    "didn't", "doesn", "doesn't", "hadn", "hadn't", "hasn", "hasn't", "haven", "haven't", "isn",
    "isn't", "ma", "mightn", "mightn't", "mustn", "mustn't", "needn", "needn't", "shan",
    "shan't", "shouldn", "shouldn't", "wasn", "wasn't", "weren", "weren't", "won", "won't",
    "wouldn", "wouldn't",
)  # fmt: skip

STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "are",
        "was",
        "were",
        "been",
        "have",
        "has",
        "had",
        "not",
        "but",
        "which",
        "their",
        "they",
        "them",
        "these",
        "those",
        "than",
        "then",
        "there",
        "into",
        "such",
        "also",
        "can",
        "may",
        "more",
        "most",
        "other",
        "some",
        "only",
        "our",
        "its",
        "over",
        "under",
        "between",
        "both",
        "each",
        "about",
        "after",
        "before",
        "when",
        "where",
        "while",
        "what",
        "who",
        "how",
        "all",
        "any",
        "one",
        "two",
        "use",
        "used",
        "using",
        "based",
        "show",
        "shows",
        "shown",
        "paper",
        "section",
        "we",
    ]
)
"""Words too common to say what a text is about (summaries, keywords, matching)."""
QUESTION_WORDS = frozenset(
    (
        "what",
        "which",
        "does",
        "did",
        "how",
        "why",
        "who",
        "whom",
        "whose",
        "is",
        "are",
        "was",
        "were",
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "for",
        "by",
        "with",
        "from",
        "do",
        "they",
        "their",
        "them",
        "this",
        "that",
        "paper",
        "authors",
    )
)
"""Words of a question that carry no content (question words, articles, "paper")."""
CONTENT_WORD = re.compile(r"[a-z0-9]+")
SKIP_SECTIONS = re.compile(r"^\W*(references|bibliography|acknowledge?ments?)\b", re.IGNORECASE)
"""Headings of sections that never hold an answer: readers and strategies skip them."""


UNICODE_WORD = re.compile(r"[^\W_]+")
"""A word in any script: letters and digits, no underscore (titles, bookmarks, answers)."""


def tokens(text: str) -> list[str]:
    """The lower-cased runs of ASCII letters and digits of a text, in order."""
    return CONTENT_WORD.findall(text.lower())


def words(text: str) -> list[str]:
    """The lower-cased words of a text of three or more letters or digits, in order."""
    return [w for w in tokens(text) if len(w) > 2]


def content_words(text: str) -> list[str]:
    """The lower-cased words of a text that say what it is about, in order."""
    return [w for w in words(text) if w not in STOP_WORDS and w not in QUESTION_WORDS]


def readable_sentences(page_text: str, min_words: int = 6) -> list[str]:
    """Readable sentences of a page (``split_sentences``: body prose only), ``min_words``–60
    words."""
    return [s for s in split_sentences(page_text) if min_words <= len(s.split()) <= 60]


def lexical_relevance(question: str, texts: Sequence[str]) -> np.ndarray:
    """Idf-weighted share of the question's content words each text contains (idf over the
    texts themselves), 0–1."""
    query = set(content_words(question))
    docs = [query & set(content_words(t)) for t in texts]
    df = Counter(w for d in docs for w in d)
    weight = {w: math.log(1 + len(texts) / (1 + df[w])) for w in query}
    total = sum(weight.values()) or 1.0
    return np.array([sum(weight[w] for w in d) / total for d in docs])
