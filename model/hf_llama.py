"""Llama-family checkpoints (Llama, Qwen2, Mistral) from a local Hugging Face folder, as a `GPT` of this project:
RMSNorm (`norm_kind` "rms"), RoPE turned the half-split way (`rope_style` "half"), the gated MLP, grouped-query
attention (`n_kv_heads`), biases on q, k and v for Qwen2 and none for the others, W_U tied or untied; RoPE plain,
"linear" or Llama 3.1–3.3's "llama3" scaling (`rope_scaling` in `GPTConfig`).

    model.embed_tokens.weight                          → wte                       [vocab, d]
    model.layers.{i}.input_layernorm.weight            → blocks.{i}.ln1.g
    model.layers.{i}.self_attn.{q,k,v}_proj.weight     → blocks.{i}.attn.w_qkv     [d, (H + 2K) · d_head], q|k|v
    model.layers.{i}.self_attn.{q,k,v}_proj.bias       → blocks.{i}.attn.b_qkv     (Qwen2 only)
    model.layers.{i}.self_attn.o_proj.weight           → blocks.{i}.attn.w_out
    model.layers.{i}.post_attention_layernorm.weight   → blocks.{i}.ln2.g
    model.layers.{i}.mlp.{gate,up,down}_proj.weight    → blocks.{i}.mlp.w_{gate,in,out}   (TransformerLens' names)
    model.norm.weight                                  → ln_final.g
    lm_head.weight                                     → w_u  [d, vocab]   (absent, or skipped, when tied)

Hugging Face stores a linear map as `[out, in]`; ours are `[in, out]`, a transposed view. A sliding window
(Mistral; Qwen2 with `use_sliding_window`) caps the context at the window: within it every key is in reach, so
the window never cuts, and the pass is plain causal attention.

Memory: float32 tensors stay views over the memory-mapped file (q, k and v are joined into one copy); bf16 and
f16 become float32 copies, 2 bytes a parameter in the file and 4 in memory. A model that would not fit the
memory available is refused before anything is read. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from model.bpe import BPETokenizer
from model.config import MAX_SIZES, ConfigError, GPTConfig
from model.hf_gpt2 import holds_half, load_bpe_tokenizer, read_config, read_weights, weight_files
from model.params import Params, parameter_shapes
from model.weights import WeightsError, check_depth, check_params

ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM")
ROPE_SCALINGS = ("linear", "llama3")  # Hugging Face's rope_type; yarn, dynamic, longrope are refused


def is_llama_config(raw: dict[str, Any]) -> bool:
    architectures = raw.get("architectures")
    return isinstance(architectures, list) and any(a in ARCHITECTURES for a in architectures)


def load_hf_llama(folder: str | os.PathLike[str]) -> tuple[GPTConfig, Params, BPETokenizer]:
    """Config, float32 parameters and tokenizer of a Llama-family folder. Raises `WeightsError` with one line."""
    folder = Path(folder)
    raw = read_config(folder / "config.json")
    config = llama_config(folder / "config.json", raw)
    check_memory(folder, config)
    tensors, weights_path = read_weights(folder)
    params = llama_params(weights_path, tensors, config)
    tokenizer = load_bpe_tokenizer(folder, config.vocab_size, raw.get("eos_token_id"))
    return config, params, tokenizer


def llama_config(path: Path, raw: dict[str, Any]) -> GPTConfig:
    """The `GPTConfig` of a Llama-family `config.json`, or `WeightsError` naming what is not supported."""
    if not is_llama_config(raw):
        found = raw.get("architectures")
        raise WeightsError(f"{path}: architectures {found!r} is not supported (supported: {', '.join(ARCHITECTURES)})")
    if raw.get("hidden_act", "silu") != "silu":
        raise WeightsError(f"{path}: hidden_act {raw.get('hidden_act')!r} is not supported (the gated MLP's silu only)")
    qwen2 = "Qwen2ForCausalLM" in raw["architectures"]
    for key in ("attention_bias", "mlp_bias"):
        if raw.get(key, False):
            raise WeightsError(f"{path}: {key} = true is not supported yet")
    rope = raw.get("rope_parameters")  # newer transformers write rope_theta in here
    base: Any = rope["rope_theta"] if isinstance(rope, dict) and "rope_theta" in rope else raw.get("rope_theta", 1e4)
    try:
        scaling = rope_scaling(path, raw)
        d, n_heads = raw["hidden_size"], raw["num_attention_heads"]
        n_kv_heads = raw.get("num_key_value_heads") or n_heads
        if isinstance(d, int) and isinstance(n_heads, int) and n_heads > 0 and d % n_heads:
            raise WeightsError(f"{path}: hidden_size {d} does not divide into num_attention_heads {n_heads}")
        if isinstance(n_kv_heads, int) and isinstance(n_heads, int) and n_kv_heads > 0 and n_heads % n_kv_heads:
            raise WeightsError(
                f"{path}: num_attention_heads {n_heads} is not a multiple of num_key_value_heads {n_kv_heads}"
            )
        head_dim = raw.get("head_dim")
        if head_dim is not None and head_dim * n_heads != d:
            raise WeightsError(f"{path}: head_dim {head_dim} ≠ hidden_size / num_attention_heads is not supported")
        return GPTConfig(
            vocab_size=raw["vocab_size"],
            n_ctx=min(int(raw.get("max_position_embeddings", 2048)), _window(raw), MAX_SIZES["n_ctx"]),
            d_model=d,
            n_heads=n_heads,
            n_layers=raw["num_hidden_layers"],
            d_mlp=raw["intermediate_size"],
            positional="rope",
            pos_base=float(base),
            norm="pre",
            ln_eps=float(raw.get("rms_norm_eps", 1e-6)),
            norm_kind="rms",
            n_kv_heads=n_kv_heads if n_kv_heads != n_heads else None,
            mlp_kind="gated",
            rope_style="half",
            biases="qkv" if qwen2 else "none",
            tied=bool(raw.get("tie_word_embeddings", False)),
            **scaling,
        )
    except KeyError as error:
        raise WeightsError(f"{path}: missing key {error.args[0]!r}") from None
    except (ConfigError, TypeError, ValueError, OverflowError) as error:
        raise WeightsError(f"{path}: bad config: {error}") from None


def rope_scaling(path: Path, raw: dict[str, Any]) -> dict[str, Any]:
    """The `GPTConfig` fields of the RoPE scaling `config.json` asks for, under `rope_scaling` (older transformers)
    or `rope_parameters` (newer): none, "linear" (`factor`) or "llama3" (`factor`, `low_freq_factor`,
    `high_freq_factor`, `original_max_position_embeddings`). Any other kind: `WeightsError` naming it."""
    fields: dict[str, Any] = {}
    for key in ("rope_scaling", "rope_parameters"):
        scaling = raw.get(key)
        kind = scaling.get("rope_type", scaling.get("type", "default")) if isinstance(scaling, dict) else scaling
        if kind in (None, "default"):
            continue
        if not isinstance(scaling, dict) or kind not in ROPE_SCALINGS:
            raise WeightsError(
                f"{path}: {key} {json.dumps(scaling)} is not supported (RoPE plain, {' or '.join(ROPE_SCALINGS)} only)"
            )
        fields = {"rope_scaling": kind, "rope_factor": float(scaling["factor"])}
        if kind == "llama3":
            fields |= {
                "rope_low_freq_factor": float(scaling["low_freq_factor"]),
                "rope_high_freq_factor": float(scaling["high_freq_factor"]),
                "rope_original_ctx": int(scaling["original_max_position_embeddings"]),
            }
    return fields


def _window(raw: dict[str, Any]) -> int:
    """The sliding window's width when one is in use (Mistral's `sliding_window`; Qwen2's when
    `use_sliding_window`), else no bound."""
    window = raw.get("sliding_window")
    in_use = raw.get("use_sliding_window", True) if "Qwen2ForCausalLM" in raw["architectures"] else True
    return int(window) if in_use and window is not None else 1 << 30


def memory_needed(config: GPTConfig, files: list[Path]) -> tuple[int, int]:
    """Bytes the model takes in memory, and its parameter count: 4 bytes a parameter (float32), plus the files
    themselves when they hold bf16 or f16 (read through, then widened into float32 copies)."""
    n_params = sum(math.prod(shape) for shape in parameter_shapes(config).values())
    half = any(holds_half(f) for f in files)
    return 4 * n_params + (sum(f.stat().st_size for f in files) if half else 0), n_params


def available_memory() -> int | None:
    """Bytes of memory the machine can still give (Linux's MemAvailable), or None where it cannot say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(folder: Path, config: GPTConfig) -> None:
    """Refuse, before reading a tensor, a model that needs more memory than is available, with the figure."""
    needed, n_params = memory_needed(config, weight_files(folder))
    free = available_memory()
    if free is not None and needed > free:
        raise WeightsError(
            f"{folder}: too big for this machine: {n_params / 1e6:,.0f} M parameters need {needed / 2**30:.1f} GiB "
            f"(4 bytes each as float32, plus the file if it is bf16/f16), {free / 2**30:.1f} GiB is available"
        )


def llama_params(path: Path, tensors: dict[str, np.ndarray], config: GPTConfig) -> Params:
    """The folder's tensors under this project's names, checked, float32, matrices turned to `[in, out]`,
    q, k and v joined into one W_qkv (and b_qkv)."""
    check_depth(path, tensors, config.n_layers, "model.layers.")
    if config.tied:  # a tied checkpoint may still store lm_head: the same numbers as embed_tokens
        tensors = {name: array for name, array in tensors.items() if name != "lm_head.weight"}
    d, q, kv = config.d_model, config.n_heads * config.d_head, config.kv_heads * config.d_head
    expected: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (config.vocab_size, d),
        "model.norm.weight": (d,),
    }
    if not config.tied:
        expected["lm_head.weight"] = (config.vocab_size, d)
    for i in range(config.n_layers):
        hf = f"model.layers.{i}."
        expected |= {
            hf + "input_layernorm.weight": (d,),
            hf + "post_attention_layernorm.weight": (d,),
            hf + "self_attn.q_proj.weight": (q, d),
            hf + "self_attn.k_proj.weight": (kv, d),
            hf + "self_attn.v_proj.weight": (kv, d),
            hf + "self_attn.o_proj.weight": (d, q),
            hf + "mlp.gate_proj.weight": (config.d_mlp, d),
            hf + "mlp.up_proj.weight": (config.d_mlp, d),
            hf + "mlp.down_proj.weight": (d, config.d_mlp),
        }
        if config.biases == "qkv":
            expected |= {hf + "self_attn.q_proj.bias": (q,), hf + "self_attn.k_proj.bias": (kv,)}
            expected[hf + "self_attn.v_proj.bias"] = (kv,)
    t = check_params(path, tensors, expected)
    params: Params = {"wte": t["model.embed_tokens.weight"], "ln_final.g": t["model.norm.weight"]}
    for i in range(config.n_layers):
        hf, b = f"model.layers.{i}.", f"blocks.{i}."
        qkv = [t[f"{hf}self_attn.{x}_proj.weight"] for x in "qkv"]
        params |= {
            b + "ln1.g": t[hf + "input_layernorm.weight"],
            b + "attn.w_qkv": np.concatenate(qkv, axis=0).T,  # [d, q|k|v]: its transpose stays contiguous
            b + "attn.w_out": t[hf + "self_attn.o_proj.weight"].T,
            b + "ln2.g": t[hf + "post_attention_layernorm.weight"],
            b + "mlp.w_gate": t[hf + "mlp.gate_proj.weight"].T,
            b + "mlp.w_in": t[hf + "mlp.up_proj.weight"].T,
            b + "mlp.w_out": t[hf + "mlp.down_proj.weight"].T,
        }
        if config.biases == "qkv":
            params[b + "attn.b_qkv"] = np.concatenate([t[f"{hf}self_attn.{x}_proj.bias"] for x in "qkv"])
    if not config.tied:
        params["w_u"] = t["lm_head.weight"].T
    return params
