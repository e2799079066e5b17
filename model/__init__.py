"""A small, exact NumPy GPT whose forward pass records every activation.

    >>> import model
    >>> gpt = model.load("tiny")
    >>> trace = gpt.run("猫追狗")
    >>> trace["blocks.0.attn.hook_pattern"].shape   # [head, q_pos, k_pos]
    (4, 3, 3)

Imports NumPy only (`safetensors` when writing weights, `tokenizers` for GPT-2's BPE): no Textual, no Rich.
"""

from __future__ import annotations

import os
from pathlib import Path

from model.attention import attention, causal_mask, multi_head_attention, softmax
from model.bpe import BPETokenizer
from model.config import ConfigError, GPTConfig
from model.embedding import embed, unembed
from model.gpt import GPT, ContextError, KVCache, NoTargetError
from model.hooks import Stopped
from model.interventions import AblateHead, BypassNorm, DropResidual, Edit, EditError, Patch, ScaleHead, SkipSublayer
from model.lens import logit_lens
from model.mlp import gelu, mlp
from model.norm import batch_norm, layer_norm, rms_norm
from model.params import init_params, parameter_shapes
from model.positions import (
    angle_table,
    model_rope_frequencies,
    ntk_by_parts_frequencies,
    pe_distance,
    pe_dot_by_distance,
    pe_wavelengths,
    rope,
    rope_frequencies,
    sinusoidal_positions,
)
from model.sampling import sample, sample_rng, sampling_probs, top_k_mask, top_order
from model.tokenizer import CharTokenizer, Tokenizer, TokenizerError
from model.trace import Step, Trace, build_steps
from model.weights import SHIPPED_DIR, WeightsError, load_checkpoint, save_checkpoint, shipped_models

DEFAULT_MODEL = "tiny"

__all__ = [
    "DEFAULT_MODEL",
    "GPT",
    "AblateHead",
    "BPETokenizer",
    "BypassNorm",
    "CharTokenizer",
    "ConfigError",
    "ContextError",
    "DropResidual",
    "Edit",
    "EditError",
    "GPTConfig",
    "KVCache",
    "NoTargetError",
    "Patch",
    "ScaleHead",
    "SkipSublayer",
    "Step",
    "Stopped",
    "Tokenizer",
    "TokenizerError",
    "Trace",
    "WeightsError",
    "angle_table",
    "attention",
    "batch_norm",
    "build_steps",
    "causal_mask",
    "embed",
    "gelu",
    "hf_family",
    "init_params",
    "layer_norm",
    "load",
    "load_checkpoint",
    "logit_lens",
    "mlp",
    "model_rope_frequencies",
    "multi_head_attention",
    "ntk_by_parts_frequencies",
    "parameter_shapes",
    "pe_distance",
    "pe_dot_by_distance",
    "pe_wavelengths",
    "rms_norm",
    "rope",
    "rope_frequencies",
    "sample",
    "sample_rng",
    "sampling_probs",
    "save_checkpoint",
    "shipped_models",
    "sinusoidal_positions",
    "softmax",
    "top_k_mask",
    "top_order",
    "unembed",
]


def load(name_or_path: str | os.PathLike[str] = DEFAULT_MODEL) -> GPT:
    """A model by name or path, looked for in this order:

    1. a shipped model (`"tiny"`, ...);
    2. a path: a tutor safetensors checkpoint, or a Hugging Face folder (`config.json`, `model.safetensors`
       or its shards, `tokenizer.json`) of GPT-2 or of the Llama family (`LlamaForCausalLM`,
       `Qwen2ForCausalLM`, `MistralForCausalLM`), or the `model.safetensors` inside one;
    3. a GPT-2 model in the local Hugging Face cache by name (`"gpt2"`, `"distilgpt2"`,
       `"openai-community/gpt2-medium"`), under `HF_HUB_CACHE`, `HF_HOME/hub` or
       `~/.cache/huggingface/hub`. Nothing is ever downloaded.

    Raises `WeightsError` with one line naming the file and what is wrong, or where it looked.
    """
    from model import hf_gpt2

    text = os.fspath(name_or_path)
    shipped = SHIPPED_DIR / f"{text}.safetensors"
    if text and os.sep not in text and shipped.is_file():
        return _load_tutor_checkpoint(shipped, text)
    path = Path(text).expanduser()
    if path.is_file() and path.name == "model.safetensors" and hf_gpt2.is_hf_folder(path.parent):
        path = path.parent
    if path.is_file():
        return _load_tutor_checkpoint(path, path.stem)
    if path.is_dir():
        return _load_hf(path, path.name)
    snapshot = hf_gpt2.find_in_hf_cache(text)
    if snapshot is not None:
        return _load_hf(snapshot, text)
    names = ", ".join(shipped_models()) or "none"
    looked = ", ".join(str(d) for d in hf_gpt2.hf_cache_dirs())
    raise WeightsError(
        f"{text}: no such model file or shipped model (shipped: {names}), "
        f"nor a Hugging Face model folder or cached model (looked in {looked})"
    )


def _load_tutor_checkpoint(path: Path, name: str) -> GPT:
    config, params, tokenizer, metadata = load_checkpoint(path)
    return GPT(config, params, tokenizer, name=metadata.get("name", name), trained=metadata.get("trained") == "true")


def _load_hf(folder: Path, name: str) -> GPT:
    """A Hugging Face folder: GPT-2, or the Llama family (Llama, Qwen2, Mistral) by config.json's `architectures`."""
    from model.hf_gpt2 import load_hf_gpt2
    from model.hf_llama import load_hf_llama

    load = load_hf_llama if hf_family(folder) == "llama" else load_hf_gpt2
    config, params, tokenizer = load(folder)
    return GPT(config, params, tokenizer, name=name, trained=True)


def hf_family(folder: Path) -> str:
    """The family a folder's config.json names, "llama" or "gpt2", its config checked and no weight read;
    `WeightsError` with one line naming the supported architectures for any other."""
    from model.hf_gpt2 import gpt2_config, read_config
    from model.hf_llama import ARCHITECTURES, is_llama_config, llama_config

    path = folder / "config.json"
    raw = read_config(path)
    if is_llama_config(raw):
        llama_config(path, raw)
        return "llama"
    if raw.get("model_type") == "gpt2" or "GPT2LMHeadModel" in (raw.get("architectures") or []):
        gpt2_config(path, raw)
        return "gpt2"
    found = raw.get("architectures") or raw.get("model_type")
    supported = ", ".join(("GPT2LMHeadModel", *ARCHITECTURES))
    raise WeightsError(f"{path}: architecture {found!r} is not supported (supported: {supported})")
