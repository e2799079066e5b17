"""Llama-family checkpoints (Llama, Qwen2, Mistral) from a local Hugging Face folder, mapped onto
`model/llama.py`'s parameters.

    model.embed_tokens.weight                          → wte                       [vocab, d]
    model.layers.{i}.input_layernorm.weight            → blocks.{i}.ln1.g
    model.layers.{i}.self_attn.{q,k,v,o}_proj.weight   → blocks.{i}.attn.w_{q,k,v,o}   (turned: HF is [out, in])
    model.layers.{i}.post_attention_layernorm.weight   → blocks.{i}.ln2.g
    model.layers.{i}.mlp.{gate,up,down}_proj.weight    → blocks.{i}.mlp.w_{gate,up,down}
    model.norm.weight                                  → ln_final.g
    lm_head.weight                                     → w_u   (absent, or skipped, when tied)
    model.layers.{i}.self_attn.{q,k,v}_proj.bias       → blocks.{i}.attn.b_{q,k,v}     (Qwen2 only)

A sliding window (Mistral; Qwen2 with `use_sliding_window`) caps the context at the window: within it every
key is in reach, so the window never cuts, and the pass is plain causal attention.

float32 tensors stay views over the memory-mapped file (`.T` is a view); bf16 and f16 become float32 copies,
2 bytes a parameter in the file and 4 in memory. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from model.bpe import BPETokenizer
from model.config import ConfigError
from model.hf_gpt2 import _read_config, _read_weights, load_bpe_tokenizer
from model.llama import LlamaShape, llama_parameter_shapes
from model.params import Params
from model.weights import WeightsError, check_depth, check_params

ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM")
_TURNED = {
    "self_attn.q_proj": "attn.w_q",
    "self_attn.k_proj": "attn.w_k",
    "self_attn.v_proj": "attn.w_v",
    "self_attn.o_proj": "attn.w_o",
    "mlp.gate_proj": "mlp.w_gate",
    "mlp.up_proj": "mlp.w_up",
    "mlp.down_proj": "mlp.w_down",
}


def is_llama_config(raw: dict[str, Any]) -> bool:
    architectures = raw.get("architectures")
    return isinstance(architectures, list) and any(a in ARCHITECTURES for a in architectures)


def load_hf_llama(folder: str | os.PathLike[str]) -> tuple[LlamaShape, Params, BPETokenizer]:
    """Shape, float32 parameters and tokenizer of a Llama folder. Raises `WeightsError` with one line."""
    folder = Path(folder)
    raw = _read_config(folder / "config.json")
    shape = llama_shape(folder / "config.json", raw)
    tensors, weights_path = _read_weights(folder)
    params = llama_params(weights_path, tensors, shape)
    tokenizer = load_bpe_tokenizer(folder, shape.vocab_size, raw.get("eos_token_id"))
    return shape, params, tokenizer


def llama_shape(path: Path, raw: dict[str, Any]) -> LlamaShape:
    """The `LlamaShape` of a Llama `config.json`, or `WeightsError` naming what is not supported."""
    if not is_llama_config(raw):
        found = raw.get("architectures")
        raise WeightsError(f"{path}: architectures {found!r} is not supported (supported: {', '.join(ARCHITECTURES)})")
    if raw.get("hidden_act", "silu") != "silu":
        raise WeightsError(f"{path}: hidden_act {raw.get('hidden_act')!r} is not supported (the gated MLP's silu only)")
    qwen2 = "Qwen2ForCausalLM" in raw["architectures"]
    for key in ("attention_bias", "mlp_bias"):
        if raw.get(key, False):
            raise WeightsError(f"{path}: {key} = true is not supported yet")
    for key in ("rope_scaling", "rope_parameters"):  # older configs say rope_scaling, newer rope_parameters
        scaling = raw.get(key)
        kind = scaling.get("rope_type", scaling.get("type", "default")) if isinstance(scaling, dict) else scaling
        if kind not in (None, "default"):
            raise WeightsError(f"{path}: {key} {json.dumps(scaling)} is not supported yet (plain RoPE only)")
    rope = raw.get("rope_parameters")  # newer transformers write rope_theta in here
    base: Any = rope["rope_theta"] if isinstance(rope, dict) and "rope_theta" in rope else raw.get("rope_theta", 1e4)
    try:
        d, n_heads = raw["hidden_size"], raw["num_attention_heads"]
        head_dim = raw.get("head_dim") or (d // n_heads if isinstance(d, int) and isinstance(n_heads, int) else 0)
        return LlamaShape(
            vocab_size=raw["vocab_size"],
            d_model=d,
            n_layers=raw["num_hidden_layers"],
            n_heads=n_heads,
            n_kv_heads=raw.get("num_key_value_heads") or n_heads,
            d_head=head_dim,
            d_mlp=raw["intermediate_size"],
            n_ctx=min(int(raw.get("max_position_embeddings", 2048)), _window(raw), 8192),
            rms_eps=float(raw.get("rms_norm_eps", 1e-6)),
            rope_base=float(base),
            tied=bool(raw.get("tie_word_embeddings", False)),
            qkv_bias=qwen2,
        )
    except KeyError as error:
        raise WeightsError(f"{path}: missing key {error.args[0]!r}") from None
    except (ConfigError, TypeError, ValueError) as error:
        raise WeightsError(f"{path}: {error}") from None


def _window(raw: dict[str, Any]) -> int:
    """The sliding window's width when one is in use (Mistral's `sliding_window`; Qwen2's when
    `use_sliding_window`), else no bound."""
    window = raw.get("sliding_window")
    in_use = raw.get("use_sliding_window", True) if "Qwen2ForCausalLM" in raw["architectures"] else True
    return int(window) if in_use and window is not None else 1 << 30


def hf_llama_names(shape: LlamaShape) -> dict[str, str]:
    """This project's parameter name for every Hugging Face tensor name of a Llama model."""
    names = {"model.embed_tokens.weight": "wte", "model.norm.weight": "ln_final.g"}
    if not shape.tied:
        names["lm_head.weight"] = "w_u"
    for i in range(shape.n_layers):
        hf, ours = f"model.layers.{i}.", f"blocks.{i}."
        names[hf + "input_layernorm.weight"] = ours + "ln1.g"
        names[hf + "post_attention_layernorm.weight"] = ours + "ln2.g"
        for part, mine in _TURNED.items():
            names[f"{hf}{part}.weight"] = ours + mine
        if shape.qkv_bias:
            for x in "qkv":
                names[f"{hf}self_attn.{x}_proj.bias"] = f"{ours}attn.b_{x}"
    return names


def llama_params(path: Path, tensors: dict[str, np.ndarray], shape: LlamaShape) -> Params:
    """The folder's tensors under this project's names, checked, float32, matrices turned to `[in, out]`."""
    check_depth(path, tensors, shape.n_layers, "model.layers.")
    if shape.tied:  # a tied checkpoint may still store lm_head: the same numbers as embed_tokens
        tensors = {name: array for name, array in tensors.items() if name != "lm_head.weight"}
    names = hf_llama_names(shape)
    ours = llama_parameter_shapes(shape)
    turned = {mine for mine in ours if mine.rsplit(".", 1)[-1].startswith("w_") and mine != "w_u"}
    expected = {hf: ours[mine][::-1] if mine in turned else ours[mine] for hf, mine in names.items()}
    checked = check_params(path, tensors, expected)
    return {names[hf]: array.T if names[hf] in turned else array for hf, array in checked.items()}
