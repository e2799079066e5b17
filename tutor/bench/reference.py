"""The PyTorch references: the same GPT as `model.GPT`, running the same float32 weights.

Written the way a PyTorch user would (fused scaled-dot-product attention, `F.layer_norm`, `addmm`),
so that the ratio says how the NumPy pass compares with idiomatic PyTorch on the CPU.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from model import GPT, GPTConfig
from model.params import Params


def torch_forward(gpt: GPT) -> Callable[[np.ndarray], Any]:
    """A function tokens → logits computing what `gpt.forward` computes (pre-norm, causal, added positions)."""
    import torch
    import torch.nn.functional as F

    cfg = gpt.config
    if cfg.norm != "pre" or not cfg.residual or not cfg.causal or cfg.positional not in ("sinusoidal", "learned"):
        raise ValueError("the PyTorch reference covers pre-norm causal models with added positions")
    with warnings.catch_warnings():  # read-only mmap'd weights: PyTorch warns, but nothing here writes to them
        warnings.simplefilter("ignore", UserWarning)
        p = {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in gpt.params.items()}
    positions = torch.from_numpy(np.ascontiguousarray(gpt._position_table))
    d, heads = cfg.d_model, cfg.n_heads

    def linear(x: Any, name: str) -> Any:
        return torch.addmm(p[name.replace(".w_", ".b_")], x, p[name])

    def norm(x: Any, name: str) -> Any:
        return F.layer_norm(x, (d,), p[name + ".g"], p[name + ".b"], cfg.ln_eps)

    def forward(tokens: np.ndarray) -> Any:
        with torch.inference_mode():
            ids = torch.from_numpy(tokens)
            n = len(tokens)
            x = p["wte"][ids] + positions[:n]
            for i in range(cfg.n_layers):
                b = f"blocks.{i}."
                q, k, v = linear(norm(x, b + "ln1"), b + "attn.w_qkv").split(d, dim=-1)
                q, k, v = (t.view(n, heads, d // heads).transpose(0, 1) for t in (q, k, v))
                z = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(0, 1).reshape(n, d)
                x = x + linear(z, b + "attn.w_out")
                h = F.gelu(linear(norm(x, b + "ln2"), b + "mlp.w_in"), approximate="tanh")
                x = x + linear(h, b + "mlp.w_out")
            return norm(x, "ln_final") @ p["wte"].T

    return forward


def torch_training_model(config: GPTConfig, params: Params) -> Any:
    """The same pre-norm, sinusoidal, tied-embedding GPT as an `nn.Module`, starting from `params`."""
    import torch
    from torch import nn

    from model.positions import sinusoidal_positions

    cfg = config

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
            self.qkv, self.out = nn.Linear(cfg.d_model, 3 * cfg.d_model), nn.Linear(cfg.d_model, cfg.d_model)
            self.fc_in, self.fc_out = nn.Linear(cfg.d_model, cfg.d_mlp), nn.Linear(cfg.d_mlp, cfg.d_model)

        def forward(self, x: Any) -> Any:
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.view(b, n, cfg.n_heads, cfg.d_head).transpose(1, 2) for t in (q, k, v))
            z = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(z.transpose(1, 2).reshape(b, n, d))
            return x + self.fc_out(nn.functional.gelu(self.fc_in(self.ln2(x)), approximate="tanh"))

    class TorchGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.register_buffer("pe", torch.from_numpy(sinusoidal_positions(cfg.n_ctx, cfg.d_model, cfg.pos_base)))
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.n_layers))
            self.ln_f = nn.LayerNorm(cfg.d_model)

        def forward(self, tokens: Any) -> Any:
            x = self.wte(tokens) + self.pe[: tokens.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.T

    net = TorchGPT()
    with torch.no_grad():  # the same start as the NumPy run (nn.Linear keeps [out, in], ours is [in, out])
        net.wte.weight.copy_(torch.from_numpy(params["wte"]))
        for i, block in enumerate(net.blocks):
            b = f"blocks.{i}."
            for module, name in ((block.qkv, "attn.w_qkv"), (block.out, "attn.w_out")):
                module.weight.copy_(torch.from_numpy(params[b + name]).T)
                module.bias.copy_(torch.from_numpy(params[b + name.replace(".w_", ".b_")]))
            for module, name in ((block.fc_in, "mlp.w_in"), (block.fc_out, "mlp.w_out")):
                module.weight.copy_(torch.from_numpy(params[b + name]).T)
                module.bias.copy_(torch.from_numpy(params[b + name.replace(".w_", ".b_")]))
            for module, name in ((block.ln1, "ln1"), (block.ln2, "ln2")):
                module.weight.copy_(torch.from_numpy(params[b + name + ".g"]))
                module.bias.copy_(torch.from_numpy(params[b + name + ".b"]))
        net.ln_f.weight.copy_(torch.from_numpy(params["ln_final.g"]))
        net.ln_f.bias.copy_(torch.from_numpy(params["ln_final.b"]))
    return net


def gpt2_small_shaped(seed: int = 0) -> GPT:
    """GPT-2 small's shape (124M: 12 layers, d 768, 12 heads, vocabulary 50257, learned positions), random weights."""
    from model import CharTokenizer
    from model.params import parameter_shapes

    config = GPTConfig(
        vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, n_layers=12, d_mlp=3072, positional="learned"
    )
    rng = np.random.default_rng(seed)
    params: Params = {}
    for name, shape in parameter_shapes(config).items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "g":
            params[name] = np.ones(shape, np.float32)
        elif leaf.startswith("b"):
            params[name] = np.zeros(shape, np.float32)
        else:
            params[name] = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
    # GPT wants a tokenizer as large as the vocabulary; the benchmark feeds token ids, never text
    filler = [chr(0x4E00 + i) for i in range(config.vocab_size - 257)]
    return GPT(config, params, CharTokenizer(filler), name="gpt2-small-shaped", trained=False)


def max_abs_difference(ours: np.ndarray, theirs: Any) -> float:
    """How far apart two logit tables are (the benchmark checks the reference computes the same thing)."""
    return float(np.max(np.abs(ours.astype(np.float64) - theirs.numpy().astype(np.float64))))
