"""The model's parameters: their names, their shapes, and a seeded random start."""

from __future__ import annotations

import math

import numpy as np

from model.config import GPTConfig

Params = dict[str, np.ndarray]


def parameter_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape for `config`, in a stable order.

    A tied unembedding is the token embedding itself (logits = x · W_Eᵀ) and has no entry; an untied one
    is `w_u` `[d, vocab]`. Grouped-query attention's W_qkv is `[d, (n_heads + 2 · n_kv_heads) · d_head]`:
    q's heads, then k's, then v's. The gated MLP has W_gate beside W_in (TransformerLens' names).
    A norm has γ (`.g`) and, for LayerNorm, β (`.b`); RMSNorm has no β.
    """
    d, d_mlp = config.d_model, config.d_mlp
    shapes: dict[str, tuple[int, ...]] = {"wte": (config.vocab_size, d)}
    if config.positional == "learned":
        shapes["wpe"] = (config.n_ctx, d)
    qkv = (config.n_heads + 2 * config.kv_heads) * config.d_head
    biased = config.biases == "all"
    for i in range(config.n_layers):
        b = f"blocks.{i}."
        norm_shapes = _norm_shapes(config) if config.norm != "none" else {}
        shapes.update({b + "ln1." + k: s for k, s in norm_shapes.items()})
        shapes[b + "attn.w_qkv"] = (d, qkv)
        if config.biases != "none":
            shapes[b + "attn.b_qkv"] = (qkv,)
        shapes[b + "attn.w_out"] = (d, d)
        if biased:
            shapes[b + "attn.b_out"] = (d,)
        shapes.update({b + "ln2." + k: s for k, s in norm_shapes.items()})
        if config.mlp_kind == "gated":
            shapes[b + "mlp.w_gate"] = (d, d_mlp)
        shapes[b + "mlp.w_in"] = (d, d_mlp)
        if biased:
            shapes[b + "mlp.b_in"] = (d_mlp,)
        shapes[b + "mlp.w_out"] = (d_mlp, d)
        if biased:
            shapes[b + "mlp.b_out"] = (d,)
    if config.has_final_norm:
        shapes.update({"ln_final." + k: s for k, s in _norm_shapes(config).items()})
    if not config.tied:
        shapes["w_u"] = (d, config.vocab_size)
    return shapes


def _norm_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    d = config.d_model
    return {"g": (d,)} if config.is_rms else {"g": (d,), "b": (d,)}


def init_params(config: GPTConfig, seed: int = 0) -> Params:
    """GPT-2's initialisation: weights ~ N(0, 0.02²), biases 0, LayerNorm γ = 1 and β = 0;
    the projections that write into the residual stream get 0.02/√(2·n_layers) so that
    the stream does not grow with depth at the start.
    """
    rng = np.random.default_rng(seed)
    out_std = 0.02 / math.sqrt(2 * config.n_layers)
    params: Params = {}
    for name, shape in parameter_shapes(config).items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "g":
            value = np.ones(shape)
        elif leaf.startswith("b"):
            value = np.zeros(shape)
        elif name.endswith(("attn.w_out", "mlp.w_out")):
            value = rng.normal(0.0, out_std, shape)
        else:
            value = rng.normal(0.0, 0.02, shape)
        params[name] = np.ascontiguousarray(value, dtype=np.float32)
    return params
