"""Integration tests for store.embeddings: offline MiniLM conversion, BM25 and token counting.

The parity test re-implements BERT in plain numpy (float64) from the packaged safetensors, so a
mistake in the hand-built ONNX graph (head split, mask, GELU, LayerNorm) shows up as a cosine
gap rather than passing silently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastembed import TextEmbedding
from numpy.typing import NDArray
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from store import embeddings as emb
from store.text import ENGLISH_STOPWORDS

pytestmark = pytest.mark.integration

Array = NDArray[np.float64]

SENTENCES = [
    "A man is eating food.",
    "Qdrant stores vectors and payloads for similarity search.",
    "Hi",
    "LangGraph wires retrieval, grading and generation nodes into one state machine, "
    "with conditional edges deciding whether to rewrite the query.",
    # Longer than the 256-token window, so truncation behaviour is compared as well.
    " ".join(f"token{i} appears in a long paragraph about retrieval" for i in range(60)),
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One converted model shared by the module's tests (conversion itself is tested apart)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def minilm(cache_dir: Path) -> Iterator[TextEmbedding]:
    yield emb.dense_embedder(emb.DEFAULT_DENSE_MODEL, cache_dir)


# ---------------------------------------------------------------- numpy reference


def _layer_norm(x: Array, w: Array, b: Array, eps: float) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _bert_reference(ids: list[int], weights: dict[str, Array], cfg: dict[str, object]) -> Array:
    """Unbatched BERT forward pass for one sequence -> last_hidden_state [seq, hidden]."""
    eps = float(cfg["layer_norm_eps"])  # type: ignore[arg-type]
    heads = int(cfg["num_attention_heads"])  # type: ignore[call-overload]
    seq = len(ids)
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:seq]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(
        x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"], eps
    )

    def lin(h: Array, name: str) -> Array:
        return h @ weights[f"{name}.weight"].T + weights[f"{name}.bias"]

    for i in range(int(cfg["num_hidden_layers"])):  # type: ignore[call-overload]
        p = f"encoder.layer.{i}"
        q, k, v = (lin(x, f"{p}.attention.self.{n}") for n in ("query", "key", "value"))
        d = q.shape[-1] // heads
        q, k, v = (t.reshape(seq, heads, d).transpose(1, 0, 2) for t in (q, k, v))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(seq, heads * d)
        x = _layer_norm(
            lin(ctx, f"{p}.attention.output.dense") + x,
            weights[f"{p}.attention.output.LayerNorm.weight"],
            weights[f"{p}.attention.output.LayerNorm.bias"],
            eps,
        )
        inter = lin(x, f"{p}.intermediate.dense")
        inter = 0.5 * inter * (1.0 + _erf(inter / math.sqrt(2.0)))
        x = _layer_norm(
            lin(inter, f"{p}.output.dense") + x,
            weights[f"{p}.output.LayerNorm.weight"],
            weights[f"{p}.output.LayerNorm.bias"],
            eps,
        )
    return x


def _reference_embeddings(texts: list[str]) -> Array:
    """sentence-transformers semantics: 256-token window, mean pooling, L2 normalisation."""
    model_dir = emb.packaged_model_dir()
    cfg = json.loads((model_dir / "config.json").read_text())
    weights = {
        k: v.astype(np.float64)
        for k, v in load_file(str(model_dir / "model.safetensors")).items()
        if v.dtype.kind == "f"
    }
    max_len = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_len)
    out = []
    for text in texts:
        hidden = _bert_reference(tokenizer.encode(text).ids, weights, cfg)
        pooled = hidden.mean(0)
        out.append(pooled / np.linalg.norm(pooled))
    return np.stack(out)


# ---------------------------------------------------------------- dense model


def test_onnx_matches_numpy_reference(minilm: TextEmbedding) -> None:
    # One batch of mixed lengths, so padding + attention mask are exercised too.
    got = np.stack(list(minilm.embed(SENTENCES, batch_size=len(SENTENCES)))).astype(np.float64)
    want = _reference_embeddings(SENTENCES)
    assert got.shape == (len(SENTENCES), 384)
    cosines = np.sum(got * want, axis=1) / np.linalg.norm(got, axis=1)
    assert np.all(cosines > 1 - 1e-4), cosines
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_semantic_similarity(minilm: TextEmbedding) -> None:
    anchor, similar, unrelated, similar2, unrelated2 = np.stack(
        list(
            minilm.embed(
                [
                    "A man is eating food.",
                    "A man is eating a piece of bread.",
                    "The stock market crashed after the interest rate announcement.",
                    "How do I reset my password?",
                    "Volcanoes erupt when magma pressure builds up.",
                ]
            )
        )
    )
    query = np.stack(list(minilm.query_embed("I forgot my login credentials")))[0]
    assert anchor @ similar > 0.6
    assert anchor @ similar > anchor @ unrelated + 0.3
    assert query @ similar2 > query @ unrelated2 + 0.2


def test_dense_embedder_is_cached_and_reregistration_is_safe(
    cache_dir: Path, tmp_path: Path
) -> None:
    first = emb.dense_embedder(emb.DEFAULT_DENSE_MODEL, cache_dir)
    assert emb.dense_embedder(emb.DEFAULT_DENSE_MODEL, cache_dir) is first
    emb._register_local_minilm()  # a second registration in the same process must not raise
    other = emb.dense_embedder(emb.DEFAULT_DENSE_MODEL, tmp_path)
    assert other is not first
    assert np.allclose(
        next(iter(other.embed(["hello"]))), next(iter(first.embed(["hello"]))), atol=1e-6
    )


def test_uncached_fastembed_model_raises_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HF_HUB_OFFLINE makes fastembed fail fast instead of retrying a download for ~12 s.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(emb.EmbeddingModelUnavailable, match=r"BAAI/bge-small-en-v1\.5"):
        emb.dense_embedder("BAAI/bge-small-en-v1.5", tmp_path)


# ---------------------------------------------------------------- conversion


def test_conversion_output_and_reuse(tmp_path: Path) -> None:
    model_dir = emb.ensure_minilm_onnx(tmp_path)
    assert model_dir == tmp_path / "all-MiniLM-L6-v2-onnx"
    expected = {
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "vocab.txt",
    }
    assert expected <= {p.name for p in model_dir.iterdir()}
    tok_config = json.loads((model_dir / "tokenizer_config.json").read_text())
    assert tok_config["model_max_length"] == 256
    before = (model_dir / "model.onnx").stat().st_mtime_ns

    assert emb.ensure_minilm_onnx(tmp_path) == model_dir
    assert (model_dir / "model.onnx").stat().st_mtime_ns == before
    assert [p.name for p in tmp_path.iterdir()] == ["all-MiniLM-L6-v2-onnx"]  # no temp debris


def test_conversion_replaces_incomplete_folder(tmp_path: Path) -> None:
    broken = tmp_path / "all-MiniLM-L6-v2-onnx"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{}")
    assert (emb.ensure_minilm_onnx(tmp_path) / "model.onnx").exists()


# ---------------------------------------------------------------- sparse model


def test_bm25_vectors(tmp_path: Path) -> None:
    bm25 = emb.sparse_embedder(tmp_path)
    assert emb.sparse_embedder(tmp_path) is bm25
    text, stops = list(
        bm25.embed(
            [
                "Qdrant hybrid search combines dense and sparse vectors",
                "The and of it is was were by to from",
            ]
        )
    )
    assert len(text.indices) >= 6
    assert np.all(text.values > 0)
    assert len(stops.indices) == 0
    query = next(iter(bm25.query_embed("sparse vectors")))
    assert set(query.indices.tolist()) <= set(text.indices.tolist())


def test_stopword_list_is_standard() -> None:
    words = ENGLISH_STOPWORDS
    assert 150 <= len(words) <= 180
    assert len(set(words)) == len(words)
    assert {"the", "and", "is", "of", "a"} <= set(words)


# ---------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("Hello world!", 3),
        ("hello", 1),
        ("word " * 300, 300),  # beyond tokenizer.json's 128-token truncation: must not truncate
    ],
)
def test_count_tokens(text: str, expected: int) -> None:
    assert emb.count_tokens(text) == expected


def test_truncate_to_tokens() -> None:
    text = "Retrieval augmented generation grounds answers in documents. " * 20
    cut = emb.truncate_to_tokens(text, 10)
    assert text.startswith(cut)
    assert emb.count_tokens(cut) <= 10
    assert emb.count_tokens(cut) >= 8
    assert emb.truncate_to_tokens("short text", 50) == "short text"
    assert emb.truncate_to_tokens("anything", 0) == ""
    for limit in range(1, 25):
        assert (
            emb.count_tokens(
                emb.truncate_to_tokens(
                    "Tokenization of hyperparameters unbelievably happens", limit
                )
            )
            <= limit
        )
