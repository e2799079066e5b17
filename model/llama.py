"""The Llama family's own formulas (Llama, Qwen2, Mistral): the gated MLP and grouped-query attention.

With RMSNorm (`model/norm.py: rms_norm`) and RoPE turned the half-split way (`model/positions.py: rope_half`)
they are all that sets a Llama apart from this project's GPT: `GPT` runs them when its config says
`mlp_kind="gated"`, `n_kv_heads`, `norm_kind="rms"`, `rope_style="half"` (docs/llama.md), with TransformerLens'
hook names.
"""

from __future__ import annotations

import numpy as np

from model.attention import attention, merge_heads, split_heads
from model.hooks import Hook, no_hook
from model.positions import rope_half


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): silu(x) = x · σ(x) = x / (1 + e^(−x))."""
    e = np.negative(x)
    np.exp(e, out=e)  # in place: this runs on the widest activations of the pass
    e += 1.0
    return np.divide(x, e, out=e)


def gated_mlp(
    x: np.ndarray, w_gate: np.ndarray, w_in: np.ndarray, w_out: np.ndarray, hook: Hook = no_hook
) -> np.ndarray:
    """The gated MLP (SwiGLU): one projection gates the other, position by position:

        mlp(x) = (silu(x W_gate) ⊙ x W_in) W_out

    TransformerLens' names: W_gate is Hugging Face's gate_proj, W_in its up_proj, W_out its down_proj; `hook_pre`
    = x W_gate, `hook_pre_linear` = x W_in, `hook_post` the product.
    """
    pre = x @ w_gate
    hook("hook_pre", pre)
    pre_linear = x @ w_in
    hook("hook_pre_linear", pre_linear)
    post = silu(pre)
    post *= pre_linear
    hook("hook_post", post)
    return post @ w_out


def grouped_query_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    n_heads: int,
    n_kv_heads: int,
    pe: np.ndarray,
    biases: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    hook: Hook = no_hook,
) -> np.ndarray:
    """Causal self-attention where n_heads query heads share n_kv_heads key/value heads:

        q = x W_Q (+ b_Q) (n_heads heads),   k, v = x W_K (+ b_K), x W_V (+ b_V) (n_kv_heads heads)
        q, k = rope_half(q), rope_half(k)            (`pe`: the angles, `sinusoidal_positions` of d_head)
        zₕ = attention(qₕ, k_g, v_g),   g = h // (n_heads / n_kv_heads)
        out = concat(z₁ … z_H) W_O

    `biases` (b_Q, b_K, b_V) are Qwen2's. `hook_k`, `hook_v` and `hook_rot_k` hold the n_kv_heads heads, as in
    TransformerLens' GroupedQueryAttention. The formula as the lessons quote it; `GPT` runs it as
    `multi_head_attention_kv` (one W_qkv, a KV cache), the same numbers (tests/test_llama_family.py).
    """
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    if biases is not None:
        q, k, v = q + biases[0], k + biases[1], v + biases[2]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_kv_heads), split_heads(v, n_kv_heads)
    hook("hook_q", q)
    hook("hook_k", k)
    hook("hook_v", v)
    q, k = rope_half(q, pe), rope_half(k, pe)
    hook("hook_rot_q", q)
    hook("hook_rot_k", k)
    group = n_heads // n_kv_heads
    k_per_q, v_per_q = np.repeat(k, group, axis=-2), np.repeat(v, group, axis=-2)  # head h reads kv head h // group
    z = attention(q.swapaxes(-3, -2), k_per_q.swapaxes(-3, -2), v_per_q.swapaxes(-3, -2), True, hook)
    z = z.swapaxes(-3, -2)  # [pos, head, d_head]
    hook("hook_z", z)
    return merge_heads(z) @ w_o
