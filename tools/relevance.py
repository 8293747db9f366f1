"""How well short texts (sentences, section titles and summaries) match a question: the offline
readers' and strategies' one relevance score, lexical overlap plus dense cosine."""

from __future__ import annotations

import numpy as np

from store.embeddings import default_cache_dir, dense_embedder
from store.settings import IndexSettings
from store.text import lexical_relevance

DENSE_POOL = 40
"""Only the lexically best texts get a dense score (embedding is the cost on a CPU)."""
DENSE_WORDS = 48
"""Words of each text that are embedded."""


def relevance(question: str, texts: list[str]) -> np.ndarray:
    """Lexical (idf-weighted overlap) plus dense cosine relevance of texts to the question.

    Dense scoring is the expensive part on a CPU, so only the lexically best DENSE_POOL texts
    (cut to DENSE_WORDS words, embedded in small length-sorted batches) get a dense score.
    """
    lexical = lexical_relevance(question, texts)
    pool = np.argsort(-lexical, kind="stable")[:DENSE_POOL]
    dense = np.zeros(len(texts), dtype=np.float32)
    dense[pool] = _dense_similarity(
        question, [" ".join(texts[i].split()[:DENSE_WORDS]) for i in pool]
    )
    return 0.5 * lexical + 0.5 * dense


def _dense_similarity(question: str, texts: list[str]) -> np.ndarray:
    settings = IndexSettings.from_env()
    model = dense_embedder(settings.embedding_model, settings.model_cache or default_cache_dir())
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.array(
        list(model.embed([question, *(texts[i] for i in order)], batch_size=16)), dtype=np.float32
    )
    scores = np.zeros(len(texts), dtype=np.float32)
    scores[order] = vectors[1:] @ vectors[0]
    return scores
