"""Attention: every token asks (q), every token answers (k), and takes a weighted mix of values (v).

The functions down to `multi_head_attention` are the formulas, as the lessons quote them. Below them,
`multi_head_attention_kv` and `attention_cached_mask` are what the forward pass runs: the same numbers,
with a KV cache, a causal mask made once per size and fewer arrays (docs/performance.md says what that
saves; tests/test_quoted_code.py that the numbers are the same).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from model.hooks import Hook, no_hook
from model.positions import rope, rope_half


def softmax(x: np.ndarray) -> np.ndarray:
    """softmax(x)ᵢ = exp(xᵢ − max x) / Σⱼ exp(xⱼ − max x), over the last axis.

    Subtracting the max changes nothing mathematically and keeps exp from overflowing.
    """
    e = np.exp(x - x.max(axis=-1, keepdims=True, initial=-np.inf))  # `initial`: an empty prompt has no max
    return e / e.sum(axis=-1, keepdims=True)


def causal_mask(n_q: int, n_k: int) -> np.ndarray:
    """True where query i may look at key j: j ≤ i, counting the last query as the last key.

    With a KV cache the queries are the newest n_q of n_k positions, hence the offset.
    """
    return np.tri(n_q, n_k, k=n_k - n_q, dtype=bool)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = True, hook: Hook = no_hook) -> np.ndarray:
    """Scaled dot-product attention, every head at once:

        scores  = q · kᵀ / √d_head          (masked to −∞ where j > i when causal)
        pattern = softmax(scores)            (each row sums to 1)
        z       = pattern · v

    `q` is `[head, q_pos, d_head]`, `k` and `v` are `[head, k_pos, d_head]` (after any batch axes).
    """
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(causal_mask(q.shape[-2], k.shape[-2]), scores, -np.inf)
    hook("hook_attn_scores", scores)
    pattern = softmax(scores)
    hook("hook_pattern", pattern)
    return pattern @ v


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """[pos, d_model] → [pos, head, d_head]: each head gets its own slice of the vector."""
    return x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads)


def merge_heads(z: np.ndarray) -> np.ndarray:
    """[pos, head, d_head] → [pos, d_model]: the heads' outputs side by side."""
    return z.reshape(*z.shape[:-2], z.shape[-2] * z.shape[-1])


def qkv_heads(
    x: np.ndarray,
    w_qkv: np.ndarray,
    b_qkv: np.ndarray | None,
    n_heads: int,
    hook: Hook = no_hook,
    n_kv_heads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every token's query, key and value, from one matrix W_qkv = [W_Q | W_K | W_V]:

        q, k, v = x W_Q + b_Q,  x W_K + b_K,  x W_V + b_V

    each split into heads: `[pos, head, d_head]`. With grouped-query attention k and v have only
    `n_kv_heads` heads (W_K and W_V are that much narrower); a model without biases (Llama) has no b_qkv.
    """
    kv = n_kv_heads or n_heads
    qkv = x @ w_qkv if b_qkv is None else x @ w_qkv + b_qkv
    qkv = split_heads(qkv, n_heads + 2 * kv)  # [pos, head + 2·kv, d_head]: q's heads, then k's, then v's
    q, k, v = qkv[..., :n_heads, :], qkv[..., n_heads : n_heads + kv, :], qkv[..., n_heads + kv :, :]
    hook("hook_q", q)
    hook("hook_k", k)
    hook("hook_v", v)
    return q, k, v


def rotate_qk(
    q: np.ndarray, k: np.ndarray, pe: np.ndarray, hook: Hook = no_hook, style: str = "interleaved"
) -> tuple[np.ndarray, np.ndarray]:
    """RoPE's place in attention: queries and keys turned by their positions' angles, values left alone:

        q' = rope(q),  k' = rope(k)

    so that the score q'ᵢ · k'ⱼ depends on how far apart i and j are, not on where they stand.
    `style` "half" turns them as Hugging Face's Llama does (`rope_half`).
    """
    turn = rope_half if style == "half" else rope
    q, k = turn(q, pe), turn(k, pe)
    hook("hook_rot_q", q)
    hook("hook_rot_k", k)
    return q, k


def shared_heads(kv: np.ndarray, group: int) -> np.ndarray:
    """Grouped-query attention's keys or values for every query head: query head h reads key/value head
    h // group (`[pos, kv_head, d_head]` → `[pos, kv_head · group, d_head]`)."""
    return kv if group == 1 else np.repeat(kv, group, axis=-2)


def multi_head_attention(
    x: np.ndarray,
    w_qkv: np.ndarray,
    b_qkv: np.ndarray,
    w_out: np.ndarray,
    b_out: np.ndarray,
    n_heads: int,
    causal: bool = True,
    rope_pe: np.ndarray | None = None,
    hook: Hook = no_hook,
) -> np.ndarray:
    """Multi-head causal self-attention:

        q, k, v = x W_Q + b_Q,  x W_K + b_K,  x W_V + b_V      split into heads
        q, k    = rope(q), rope(k)                               with `rope_pe` (RoPE models) only
        zₕ      = attention(qₕ, kₕ, vₕ)                          for every head h
        out     = concat(z₁ … z_H) W_O + b_O

    `x` is `[pos, d_model]`, or `[batch, pos, d_model]`: every shape here may have batch axes in front.
    """
    q, k, v = qkv_heads(x, w_qkv, b_qkv, n_heads, hook)
    if rope_pe is not None:
        q, k = rotate_qk(q, k, rope_pe, hook)
    z = attention(q.swapaxes(-3, -2), k.swapaxes(-3, -2), v.swapaxes(-3, -2), causal, hook)  # [head, pos, d_head]
    z = z.swapaxes(-3, -2)  # [pos, head, d_head]
    hook("hook_z", z)
    return merge_heads(z) @ w_out + b_out


# -- how the forward pass runs it -------------------------------------------------------------------


@functools.lru_cache(maxsize=256)  # the same few sizes on every keystroke
def future_mask(n_q: int, n_k: int) -> np.ndarray:
    """`~causal_mask(n_q, n_k)`, read-only and made once per size: True where key j lies after query i."""
    mask = ~causal_mask(n_q, n_k)
    mask.flags.writeable = False
    return mask


def attention_cached_mask(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = True, hook: Hook = no_hook
) -> np.ndarray:
    """`attention`, bit for bit and hook for hook, with fewer arrays: the mask comes from `future_mask`'s cache
    and is written into the scores in place, and the scale and the softmax work in place too (building the
    mask, `np.where` and three more arrays in every block cost ~5% of tiny's pass).

    With fewer key/value heads than query heads (grouped-query attention, `[kv_head, pos, d_head]`), the query
    heads that share a key/value head are stacked into one taller matrix: one product per key/value head, and no
    copies of k and v (`shared_heads`) — the same scores, pattern and z, ~10% of a 64-token Llama block."""
    group = q.shape[-3] // k.shape[-3]
    grouped = (*q.shape[:-3], k.shape[-3], group * q.shape[-2])  # [kv_head, group · q_pos]
    if group > 1:
        scores = (q.reshape(*grouped, q.shape[-1]) @ k.swapaxes(-1, -2)).reshape(*q.shape[:-1], k.shape[-2])
    else:
        scores = q @ k.swapaxes(-1, -2)
    scores /= math.sqrt(q.shape[-1])
    if causal:
        np.copyto(scores, -np.inf, where=future_mask(q.shape[-2], k.shape[-2]))
    hook("hook_attn_scores", scores)
    pattern = scores - scores.max(axis=-1, keepdims=True, initial=-np.inf)  # softmax, as `softmax` computes it
    np.exp(pattern, out=pattern)
    pattern /= pattern.sum(axis=-1, keepdims=True)
    hook("hook_pattern", pattern)
    if group > 1:
        return (pattern.reshape(*grouped, k.shape[-2]) @ v).reshape(*q.shape[:-1], v.shape[-1])
    return pattern @ v


def multi_head_attention_kv(
    x: np.ndarray,
    w_qkv: np.ndarray,
    b_qkv: np.ndarray | None,
    w_out: np.ndarray,
    b_out: np.ndarray | None,
    n_heads: int,
    causal: bool = True,
    rope_pe: np.ndarray | None = None,
    past_kv: tuple[np.ndarray, np.ndarray] | None = None,
    hook: Hook = no_hook,
    n_kv_heads: int | None = None,
    rope_style: str = "interleaved",
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """`multi_head_attention` as the forward pass runs it, with a KV cache; without `past_kv` it computes
    the same output and hooks, bit for bit (tests/test_quoted_code.py).

    `past_kv` holds the keys (after RoPE's turn) and values of earlier positions, `[pos, head, d_head]`; the
    new positions' queries meet them and their own, and every position's keys and values are returned.
    With `n_kv_heads` (grouped-query attention), n_heads / n_kv_heads query heads share each key/value head:
    the cache and the hooks hold the n_kv_heads heads; query head h reads key/value head h // group.
    """
    q, k, v = qkv_heads(x, w_qkv, b_qkv, n_heads, hook, n_kv_heads)
    if rope_pe is not None:
        q, k = rotate_qk(q, k, rope_pe, hook, rope_style)
    if past_kv is not None:
        k, v = np.concatenate([past_kv[0], k], axis=-3), np.concatenate([past_kv[1], v], axis=-3)
    z = attention_cached_mask(q.swapaxes(-3, -2), k.swapaxes(-3, -2), v.swapaxes(-3, -2), causal, hook)
    z = z.swapaxes(-3, -2)
    hook("hook_z", z)
    out = merge_heads(z) @ w_out
    if b_out is not None:
        out += b_out  # in place: one array less
    return out, (k, v)
