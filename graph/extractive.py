"""The offline reader: without a language model, an answer is the sentences of the pages read
that best match the question, each cited to its page. The offline navigator and every strategy
with an offline path answer this way."""

from __future__ import annotations

import numpy as np

from store.text import readable_sentences
from tools.formatting import format_citation
from tools.relevance import relevance

EXTRACTIVE_NOTE = (
    "Extractive answer (offline reader: no language model is configured, so these are the "
    "sentences from the pages read that best match the question, quoted as printed):"
)


def extractive_answer(
    question: str,
    pages: list[tuple[str, int, str]],
    labels: dict[str, str],
    sentences_wanted: int = 3,
) -> str:
    """The sentences of the read pages that best match the question, each cited to its page.

    ``pages`` are (doc_id, page, text) in reading order; ``labels`` give 'Author et al., Year'.
    Every offline reader (the navigator and the other strategies) answers this way.
    """
    candidates = [
        (doc_id, page, sentence)
        for doc_id, page, text in pages
        for sentence in readable_sentences(text)
    ]
    if not candidates:
        return f"{EXTRACTIVE_NOTE}\nNothing relevant was found in the pages that could be read."
    scores = relevance(question, [s for _, _, s in candidates])
    picked: list[str] = []
    for index in np.argsort(-scores, kind="stable"):
        doc_id, page, sentence = candidates[int(index)]
        if any(sentence == p.split(" (")[0] for p in picked):
            continue
        label = labels.get(doc_id, "Anon., n.d.")
        picked.append(f"{sentence} {format_citation(label, doc_id, page)}")
        if len(picked) == sentences_wanted:
            break
    return EXTRACTIVE_NOTE + "\n" + "\n".join(f"- {p}" for p in picked)
