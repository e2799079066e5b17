"""Attention: every token asks (q), every token answers (k), and takes a weighted mix of values (v)."""

from __future__ import annotations

import functools
import math

import numpy as np

from model.hooks import Hook, no_hook
from model.positions import rope


def softmax(x: np.ndarray) -> np.ndarray:
    """softmax(x)ᵢ = exp(xᵢ − max x) / Σⱼ exp(xⱼ − max x), over the last axis.

    Subtracting the max changes nothing mathematically and keeps exp from overflowing.
    """
    e = np.exp(x - x.max(axis=-1, keepdims=True, initial=-np.inf))  # `initial`: an empty prompt has no max
    e /= e.sum(axis=-1, keepdims=True)  # in place: e is ours, and one array less to allocate
    return e


@functools.lru_cache(maxsize=256)  # the same few sizes on every keystroke; the array is read-only
def causal_mask(n_q: int, n_k: int) -> np.ndarray:
    """True where query i may look at key j: j ≤ i, counting the last query as the last key.

    With a KV cache the queries are the newest n_q of n_k positions, hence the offset.
    """
    mask = np.tri(n_q, n_k, k=n_k - n_q, dtype=bool)
    mask.flags.writeable = False
    return mask


@functools.lru_cache(maxsize=256)
def future_mask(n_q: int, n_k: int) -> np.ndarray:
    """The causal mask turned round: True where key j lies after query i, the scores set to −∞."""
    mask = ~causal_mask(n_q, n_k)
    mask.flags.writeable = False
    return mask


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = True, hook: Hook = no_hook) -> np.ndarray:
    """Scaled dot-product attention, every head at once:

        scores  = q · kᵀ / √d_head          (masked to −∞ where j > i when causal)
        pattern = softmax(scores)            (each row sums to 1)
        z       = pattern · v

    `q` is `[head, q_pos, d_head]`, `k` and `v` are `[head, k_pos, d_head]` (after any batch axes).
    """
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    if causal:  # in place: scores is a new array of ours
        np.copyto(scores, -np.inf, where=future_mask(q.shape[-2], k.shape[-2]))
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


def multi_head_attention(
    x: np.ndarray,
    w_qkv: np.ndarray,
    b_qkv: np.ndarray,
    w_out: np.ndarray,
    b_out: np.ndarray,
    n_heads: int,
    causal: bool = True,
    rope_pe: np.ndarray | None = None,
    past_kv: tuple[np.ndarray, np.ndarray] | None = None,
    hook: Hook = no_hook,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Multi-head causal self-attention:

        q, k, v = x W_Q + b_Q,  x W_K + b_K,  x W_V + b_V      (one [d, 3d] matrix, split)
        zₕ      = attention(qₕ, kₕ, vₕ)                          for every head h
        out     = concat(z₁ … z_H) W_O + b_O

    `x` is `[pos, d_model]`, or `[batch, pos, d_model]`: every shape here may have batch axes in front.
    With `rope_pe`, q and k are rotated by position first. `past_kv` holds the keys and
    values of earlier positions (a KV cache); the new ones are appended and returned.
    """
    qkv = x @ w_qkv
    qkv += b_qkv  # in place: one array less
    qkv = split_heads(qkv, 3 * n_heads)  # [pos, 3·head, d_head]: q's heads, then k's, then v's
    q, k, v = qkv[..., :n_heads, :], qkv[..., n_heads : 2 * n_heads, :], qkv[..., 2 * n_heads :, :]
    hook("hook_q", q)
    hook("hook_k", k)
    hook("hook_v", v)
    if rope_pe is not None:
        q, k = rope(q, rope_pe), rope(k, rope_pe)
        hook("hook_rot_q", q)
        hook("hook_rot_k", k)
    k, v = k.swapaxes(-3, -2), v.swapaxes(-3, -2)  # [head, pos, d_head]
    if past_kv is not None:
        k, v = np.concatenate([past_kv[0], k], axis=-2), np.concatenate([past_kv[1], v], axis=-2)
    z = attention(q.swapaxes(-3, -2), k, v, causal, hook).swapaxes(-3, -2)  # [pos, head, d_head]
    hook("hook_z", z)
    out = merge_heads(z) @ w_out
    out += b_out
    return out, (k, v)
