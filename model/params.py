"""The model's parameters: their names, their shapes, and a seeded random start."""

from __future__ import annotations

import math

import numpy as np

from model.config import GPTConfig

Params = dict[str, np.ndarray]


def parameter_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape for `config`, in a stable order.

    The unembedding is tied to the token embedding (logits = x · W_Eᵀ), so it has no entry.
    A norm has γ (`.g`) and, for LayerNorm, β (`.b`); RMSNorm has no β.
    """
    d, d_mlp = config.d_model, config.d_mlp
    shapes: dict[str, tuple[int, ...]] = {"wte": (config.vocab_size, d)}
    if config.positional == "learned":
        shapes["wpe"] = (config.n_ctx, d)
    for i in range(config.n_layers):
        b = f"blocks.{i}."
        norm_shapes = _norm_shapes(config) if config.norm != "none" else {}
        shapes.update({b + "ln1." + k: s for k, s in norm_shapes.items()})
        shapes.update(
            {
                b + "attn.w_qkv": (d, 3 * d),
                b + "attn.b_qkv": (3 * d,),
                b + "attn.w_out": (d, d),
                b + "attn.b_out": (d,),
            }
        )
        shapes.update({b + "ln2." + k: s for k, s in norm_shapes.items()})
        shapes.update(
            {
                b + "mlp.w_in": (d, d_mlp),
                b + "mlp.b_in": (d_mlp,),
                b + "mlp.w_out": (d_mlp, d),
                b + "mlp.b_out": (d,),
            }
        )
    if config.has_final_norm:
        shapes.update({"ln_final." + k: s for k, s in _norm_shapes(config).items()})
    return shapes


def _norm_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    d = config.d_model
    return {"g": (d,)} if config.norm_kind == "rms" else {"g": (d,), "b": (d,)}


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
