"""Node summaries: extractive offline, LLM-written when an endpoint is configured.

Sections under 200 tokens keep their own text (a summary would not be shorter); every other
node gets a short summary that names the concrete facts it holds, and none is ever empty.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ingest.sections import node_bodies
from ingest.tree import Draft, iter_drafts
from store.embeddings import count_tokens, truncate_to_tokens
from store.text import STOP_WORDS, clean_text, split_sentences

KEEP_TEXT_TOKENS = 200
SUMMARY_TOKENS = 90
SUMMARY_SENTENCES = 3
WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
NUMBER = re.compile(r"\d+(?:[.,]\d+)?\s*%?")


def summarise_drafts(roots: list[Draft], pages: list[str]) -> list[str]:
    """Fill ``summary`` of every draft extractively; return the node bodies (document order)."""
    bodies = node_bodies(roots, pages)
    for draft, body in zip(iter_drafts(roots), bodies, strict=True):
        draft.summary = extractive_summary(draft, body)
    return bodies


def needs_summary(body: str) -> bool:
    """Only sections of 200 tokens or more are summarised; shorter ones keep their text."""
    return count_tokens(clean_text(body)) >= KEEP_TEXT_TOKENS


def extractive_summary(draft: Draft, body: str) -> str:
    """Salient sentences (content words, numbers, position), never empty."""
    text = _without_heading(clean_text(body), draft.title)
    if not text:
        return _structural_summary(draft)
    if not needs_summary(text):
        return text
    sentences = _body_sentences(body, draft.title) or [text]
    chosen = _top_sentences(sentences, SUMMARY_SENTENCES)
    return truncate_to_tokens(" ".join(chosen), SUMMARY_TOKENS)


def _body_sentences(body: str, title: str) -> list[str]:
    """Sentences of at least four words. A heading in markdown is no sentence; one printed as
    plain text opens the first sentence when that starts the body, so it is cut off there."""
    sentences = split_sentences(body)
    if sentences and clean_text(body).startswith(sentences[0]):
        sentences[0] = _without_heading(sentences[0], title)
    return [s for s in sentences if len(s.split()) >= 4]


def _without_heading(text: str, title: str) -> str:
    """Drop the heading itself from the start of the body."""
    head = clean_text(title)
    if text.lower().startswith(head.lower()):
        return text[len(head) :].lstrip(" .:-")
    return text


def _structural_summary(draft: Draft) -> str:
    """For a node without own text: what it contains."""
    if draft.children:
        titles = "; ".join(child.title for child in draft.children[:8])
        return f"Pages {draft.start_page}–{draft.end_page}. Subsections: {titles}."
    return f"{draft.title} (pages {draft.start_page}–{draft.end_page}); no extractable text."


def _top_sentences(sentences: list[str], count: int) -> list[str]:
    """Rank by mean content-word weight plus numbers; keep the best in reading order."""
    freq = Counter(w.lower() for s in sentences for w in WORD.findall(s))
    freq = Counter({w: c for w, c in freq.items() if w not in STOP_WORDS})

    def score(index: int) -> float:
        words = [w.lower() for w in WORD.findall(sentences[index]) if w.lower() not in STOP_WORDS]
        if not words:
            return 0.0
        salience = sum(math.log1p(freq[w]) for w in words) / math.sqrt(len(words))
        numbers = 0.5 * min(3, len(NUMBER.findall(sentences[index])))
        lead = 1.0 if index == 0 else 0.0
        too_long = 2.0 if len(sentences[index].split()) > 60 else 0.0
        return salience + numbers + lead - too_long

    ranked = sorted(range(len(sentences)), key=score, reverse=True)[:count]
    return [sentences[i] for i in sorted(ranked)]
