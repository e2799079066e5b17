"""The Llama family's forward pass (Llama, Qwen2, Mistral): RMSNorm, RoPE as Hugging Face turns it, a gated MLP
and grouped-query attention, pre-norm and with no biases but Qwen2's on q, k and v.

A first slice of issue 32 (docs/llama.md): the bare pass, with TransformerLens' hook names, on float32
parameters laid out `[in, out]` for `x @ w`. It is not yet wired into `GPT` (steps, backward, KV cache).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from model.attention import attention, merge_heads, split_heads
from model.config import MAX_SIZES, ConfigError
from model.embedding import embed, unembed
from model.hooks import Hook, no_hook, scoped
from model.norm import rms_norm
from model.params import Params


@dataclass(frozen=True)
class LlamaShape:
    """Everything that fixes a Llama-family model's shape (Hugging Face's `config.json` names in docs/llama.md)."""

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_mlp: int
    n_ctx: int
    rms_eps: float = 1e-6
    rope_base: float = 10000.0
    tied: bool = False
    qkv_bias: bool = False  # Qwen2: q, k and v have biases (the output projection and the MLP none)

    def __post_init__(self) -> None:
        sizes = {
            "vocab_size": (self.vocab_size, MAX_SIZES["vocab_size"]),
            "d_model": (self.d_model, MAX_SIZES["d_model"]),
            "n_layers": (self.n_layers, MAX_SIZES["n_layers"]),
            "n_heads": (self.n_heads, MAX_SIZES["n_heads"]),
            "n_kv_heads": (self.n_kv_heads, MAX_SIZES["n_heads"]),
            "d_head": (self.d_head, MAX_SIZES["d_model"]),
            "d_mlp": (self.d_mlp, MAX_SIZES["d_mlp"]),
            "n_ctx": (self.n_ctx, MAX_SIZES["n_ctx"]),
        }
        for name, (value, most) in sizes.items():
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ConfigError(f"{name} must be an integer from 1 to {most}, got {value!r}")
        if self.n_heads % self.n_kv_heads:
            raise ConfigError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})")
        if self.d_head % 2:
            raise ConfigError(f"RoPE needs an even head size, got d_head={self.d_head}")
        if not (math.isfinite(self.rms_eps) and 0 <= self.rms_eps <= 1):
            raise ConfigError(f"rms_norm_eps must be a number from 0 to 1, got {self.rms_eps!r}")
        if not (math.isfinite(self.rope_base) and self.rope_base > 0):
            raise ConfigError(f"rope_theta must be a positive finite number, got {self.rope_base!r}")

    @property
    def group(self) -> int:
        """How many query heads share one key/value head."""
        return self.n_heads // self.n_kv_heads


def llama_parameter_shapes(cfg: LlamaShape) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape. Matrices are `[in, out]`; `w_u` (the unembedding, `[vocab, d]` as
    `wte`) only when it is not tied to `wte`."""
    d, q, kv = cfg.d_model, cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
    shapes: dict[str, tuple[int, ...]] = {"wte": (cfg.vocab_size, d)}
    for i in range(cfg.n_layers):
        b = f"blocks.{i}."
        shapes |= {
            b + "ln1.g": (d,),
            b + "attn.w_q": (d, q),
            b + "attn.w_k": (d, kv),
            b + "attn.w_v": (d, kv),
            b + "attn.w_o": (q, d),
            **({b + "attn.b_q": (q,), b + "attn.b_k": (kv,), b + "attn.b_v": (kv,)} if cfg.qkv_bias else {}),
            b + "ln2.g": (d,),
            b + "mlp.w_gate": (d, cfg.d_mlp),
            b + "mlp.w_up": (d, cfg.d_mlp),
            b + "mlp.w_down": (cfg.d_mlp, d),
        }
    shapes["ln_final.g"] = (d,)
    if not cfg.tied:
        shapes["w_u"] = (cfg.vocab_size, d)
    return shapes


def rope_half_angles(start: int, n: int, d_head: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos θ and sin θ for positions start … start+n−1, as Hugging Face lays them out, `[pos, d_head]` each:

    θ(pos, i) = pos / base^(2i/d),   i = 0 … d/2 − 1,   repeated: columns i and i + d/2 share θ(pos, i)
    """
    pos = np.arange(start, start + n, dtype=np.float64)[:, None]
    freqs = pos / base ** (np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    angles = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """(x₁, x₂) → (−x₂, x₁), x₁ the first half of the last axis and x₂ the second."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope_half(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """RoPE as Hugging Face's Llama turns queries and keys: dimension i pairs with i + d/2 (not 2i with 2i+1):

        x' = x · cos θ + rotate_half(x) · sin θ
        x'ᵢ = xᵢ cos θ − x_{i+d/2} sin θ,   x'_{i+d/2} = x_{i+d/2} cos θ + xᵢ sin θ

    The same rotation as `rope`, on another pairing of the dimensions. `x` is `[pos, head, d_head]`.
    """
    return x * cos[:, None, :] + rotate_half(x) * sin[:, None, :]


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): silu(x) = x · σ(x) = x / (1 + e^(−x))."""
    return x / (1.0 + np.exp(-x))


def gated_mlp(
    x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray, hook: Hook = no_hook
) -> np.ndarray:
    """The gated MLP (SwiGLU): one projection gates the other, position by position:

        mlp(x) = (silu(x W_gate) ⊙ x W_up) W_down

    Hooks as TransformerLens names them: `hook_pre` = x W_gate, `hook_pre_linear` = x W_up, `hook_post` the product.
    """
    pre = x @ w_gate
    hook("hook_pre", pre)
    pre_linear = x @ w_up
    hook("hook_pre_linear", pre_linear)
    post = silu(pre) * pre_linear
    hook("hook_post", post)
    return post @ w_down


def grouped_query_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    n_heads: int,
    n_kv_heads: int,
    cos: np.ndarray,
    sin: np.ndarray,
    biases: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    hook: Hook = no_hook,
) -> np.ndarray:
    """Causal self-attention where n_heads query heads share n_kv_heads key/value heads:

        q = x W_Q (+ b_Q) (n_heads heads),   k, v = x W_K (+ b_K), x W_V (+ b_V) (n_kv_heads heads)
        q, k = rope_half(q), rope_half(k)
        zₕ = attention(qₕ, k_g, v_g),   g = h // (n_heads / n_kv_heads)
        out = concat(z₁ … z_H) W_O

    `biases` (b_Q, b_K, b_V) are Qwen2's. `hook_k`, `hook_v` and `hook_rot_k` hold the n_kv_heads heads, as in
    TransformerLens' GroupedQueryAttention.
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    if biases is not None:
        q, k, v = q + biases[0], k + biases[1], v + biases[2]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_kv_heads), split_heads(v, n_kv_heads)
    hook("hook_q", q)
    hook("hook_k", k)
    hook("hook_v", v)
    q, k = rope_half(q, cos, sin), rope_half(k, cos, sin)
    hook("hook_rot_q", q)
    hook("hook_rot_k", k)
    group = n_heads // n_kv_heads
    k_per_q, v_per_q = np.repeat(k, group, axis=-2), np.repeat(v, group, axis=-2)  # head h reads kv head h // group
    z = attention(q.swapaxes(-3, -2), k_per_q.swapaxes(-3, -2), v_per_q.swapaxes(-3, -2), True, hook)
    z = z.swapaxes(-3, -2)  # [pos, head, d_head]
    hook("hook_z", z)
    return merge_heads(z) @ w_o


def llama_block(
    cfg: LlamaShape, p: Params, i: int, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, hook: Hook = no_hook
) -> np.ndarray:
    """One pre-norm block: x + attn(RMSNorm(x)), then x + mlp(RMSNorm(x))."""
    b = f"blocks.{i}."
    hook("hook_resid_pre", x)
    h = rms_norm(x, p[b + "ln1.g"], cfg.rms_eps, scoped(hook, "ln1."))
    attn_out = grouped_query_attention(
        h,
        p[b + "attn.w_q"],
        p[b + "attn.w_k"],
        p[b + "attn.w_v"],
        p[b + "attn.w_o"],
        cfg.n_heads,
        cfg.n_kv_heads,
        cos,
        sin,
        (p[b + "attn.b_q"], p[b + "attn.b_k"], p[b + "attn.b_v"]) if cfg.qkv_bias else None,
        scoped(hook, "attn."),
    )
    hook("hook_attn_out", attn_out)
    x = x + attn_out
    hook("hook_resid_mid", x)
    h = rms_norm(x, p[b + "ln2.g"], cfg.rms_eps, scoped(hook, "ln2."))
    mlp_out = gated_mlp(h, p[b + "mlp.w_gate"], p[b + "mlp.w_up"], p[b + "mlp.w_down"], scoped(hook, "mlp."))
    hook("hook_mlp_out", mlp_out)
    x = x + mlp_out
    hook("hook_resid_post", x)
    return x


def llama_forward(cfg: LlamaShape, p: Params, tokens: np.ndarray, hook: Hook = no_hook) -> np.ndarray:
    """logits = RMSNorm_final(blocks(embed(tokens))) · W_Uᵀ, `[pos, vocab]`: no position table enters the
    stream; position reaches attention only through RoPE's turn of q and k."""
    n = tokens.shape[-1]
    if n > cfg.n_ctx:
        raise ValueError(f"{n} positions do not fit the context of {cfg.n_ctx}")
    x = embed(tokens, p["wte"])
    hook("hook_embed", x)
    cos, sin = rope_half_angles(0, n, cfg.d_head, cfg.rope_base)
    for i in range(cfg.n_layers):
        x = llama_block(cfg, p, i, x, cos, sin, scoped(hook, f"blocks.{i}."))
    x = rms_norm(x, p["ln_final.g"], cfg.rms_eps, scoped(hook, "ln_final."))
    logits = unembed(x, p["wte"] if cfg.tied else p["w_u"])
    hook("logits", logits)
    return logits
