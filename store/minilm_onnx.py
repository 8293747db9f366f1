"""all-MiniLM-L6-v2 as an ONNX BERT graph, built from the packaged safetensors without torch.

Kept apart from ``store.embeddings`` because importing ``onnx`` takes about a second, which
every process would pay although the conversion runs once per model cache
(``store.embeddings.ensure_minilm_onnx``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper

FloatArray = NDArray[np.float32]

_ONNX_OPSET = 17  # first opset with a native LayerNormalization op
_ONNX_IR_VERSION = 8  # old enough for any onnxruntime that supports opset 17
_TOKENIZER_FILES = (
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "vocab.txt",
)


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


def convert_minilm(source: Path, dest: Path) -> None:
    """Convert the packaged safetensors into `dest/model.onnx` and copy the tokenizer files."""
    cfg = json.loads((source / "config.json").read_text())
    model = _build_bert_onnx(_load_bert_weights(source), cfg)
    onnx.save_model(model, str(dest / "model.onnx"))
    _write_tokenizer_files(source, dest)
