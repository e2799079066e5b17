"""A small, exact NumPy GPT whose forward pass records every activation.

    >>> import model
    >>> gpt = model.load("tiny")
    >>> trace = gpt.run("猫追狗")
    >>> trace["blocks.0.attn.hook_pattern"].shape   # [head, q_pos, k_pos]
    (4, 3, 3)

Imports NumPy only (and `safetensors` when writing weights): no Textual, no Rich.
"""

from __future__ import annotations

import os
from pathlib import Path

from model.attention import attention, causal_mask, multi_head_attention, softmax
from model.config import ConfigError, GPTConfig
from model.embedding import embed, unembed
from model.gpt import GPT, ContextError, KVCache, sample
from model.mlp import gelu, mlp
from model.norm import layer_norm
from model.params import init_params, parameter_shapes
from model.positions import rope, sinusoidal_positions
from model.tokenizer import CharTokenizer, TokenizerError
from model.trace import Step, Trace, build_steps
from model.weights import SHIPPED_DIR, WeightsError, load_checkpoint, save_checkpoint, shipped_models

DEFAULT_MODEL = "tiny"

__all__ = [
    "DEFAULT_MODEL",
    "GPT",
    "CharTokenizer",
    "ConfigError",
    "ContextError",
    "GPTConfig",
    "KVCache",
    "Step",
    "TokenizerError",
    "Trace",
    "WeightsError",
    "attention",
    "build_steps",
    "causal_mask",
    "embed",
    "gelu",
    "init_params",
    "layer_norm",
    "load",
    "load_checkpoint",
    "mlp",
    "multi_head_attention",
    "parameter_shapes",
    "rope",
    "sample",
    "save_checkpoint",
    "shipped_models",
    "sinusoidal_positions",
    "softmax",
    "unembed",
]


def load(name_or_path: str | os.PathLike[str] = DEFAULT_MODEL) -> GPT:
    """A shipped model by name (`"tiny"`, ...) or a tutor safetensors checkpoint by path."""
    text = os.fspath(name_or_path)
    shipped = SHIPPED_DIR / f"{text}.safetensors"
    if os.sep not in text and shipped.is_file():
        path, name = shipped, text
    else:
        path = Path(text).expanduser()
        if not path.is_file():
            names = ", ".join(shipped_models()) or "none"
            raise WeightsError(f"{text}: no such model file or shipped model (shipped: {names})")
        name = path.stem
    config, params, tokenizer, metadata = load_checkpoint(path)
    return GPT(config, params, tokenizer, name=metadata.get("name", name), trained=metadata.get("trained") == "true")
