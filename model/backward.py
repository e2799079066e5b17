"""The backward pass: for every forward formula, how the loss's gradient flows back through it.

Each `*_backward` function takes `d_out` = ∂L/∂(the forward function's output) and what the
forward computed, and returns ∂L/∂(each input). The derivative is in the docstring. Shapes may
carry any leading batch axes; parameter gradients are summed over them (every position shares
the same weights). Like the forward, every function keeps its input's float dtype. Where the
forward hands an intermediate value to its hook, the backward hands that value's gradient to its
own hook under the same name (`hook("hook_pattern", ∂L/∂pattern)`).
"""

from __future__ import annotations

import math

import numpy as np

from model.attention import merge_heads, shared_heads
from model.hooks import Hook, no_hook
from model.llama import silu
from model.positions import rope, rope_half

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # a Python float, so float32 stays float32


def _flat(x: np.ndarray) -> np.ndarray:
    """[..., n] → [rows, n]: every position as one row, for the weight gradients' sums."""
    return x.reshape(-1, x.shape[-1])


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean next-token cross-entropy: L = −(1/N) Σₙ log softmax(logitsₙ)[targetₙ]."""
    return _mean_negative_log_likelihood(_log_softmax(logits), targets)


def cross_entropy_backward(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """∂L/∂logits = (softmax(logits) − onehot(target)) / N, for the mean cross-entropy."""
    return cross_entropy_and_backward(logits, targets)[1]


def cross_entropy_and_backward(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Both of the above from one log-softmax (the logits are the biggest array of the pass)."""
    log_probs = _log_softmax(logits)
    loss = _mean_negative_log_likelihood(log_probs, targets)
    return loss, _mean_loss_gradient(log_probs, targets)


def _mean_loss_gradient(log_probs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(softmax − onehot(target)) / N, made in place of `log_probs` (which it uses up)."""
    d_logits = np.exp(log_probs, out=log_probs)
    _flat(d_logits)[np.arange(targets.size), targets.reshape(-1)] -= 1.0  # a view: lands in d_logits
    d_logits /= targets.size
    return d_logits


def position_losses_and_backward(logits: np.ndarray, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One prompt's own loss: position t predicts token t+1, for t = 0 … n−2.

        Lₜ = −log softmax(logitsₜ)[tokenₜ₊₁],   L = mean(Lₜ)

    Returns the n−1 losses Lₜ (float32) and ∂L/∂logits `[n, vocab]`, whose last row is 0: the last
    position has no next token, so it is not in L.
    """
    log_probs = _log_softmax(logits[:-1])
    targets = tokens[1:]
    losses = -log_probs[np.arange(targets.size), targets]  # a copy: taken before the gradient uses log_probs up
    d_logits = np.zeros_like(logits)
    d_logits[:-1] = _mean_loss_gradient(log_probs, targets)
    return losses.astype(logits.dtype, copy=False), d_logits


def _mean_negative_log_likelihood(log_probs: np.ndarray, targets: np.ndarray) -> float:
    return -float(_flat(log_probs)[np.arange(targets.size), targets.reshape(-1)].mean())


def _log_softmax(x: np.ndarray) -> np.ndarray:
    """log softmax(x) = (x − max x) − log Σ exp(x − max x), over the last axis (in place: the logits are big)."""
    shifted = x - np.maximum.reduce(x, axis=-1, keepdims=True)
    shifted -= np.log(np.add.reduce(np.exp(shifted), axis=-1, keepdims=True))
    return shifted


def embed_backward(d_x: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """x = W_E[token]:  ∂L/∂W_E[t] = Σ of ∂L/∂x over every position holding token t."""
    d_w_e = np.zeros((vocab_size, d_x.shape[-1]), dtype=d_x.dtype)
    np.add.at(d_w_e, tokens.reshape(-1), _flat(d_x))
    return d_w_e


def unembed_backward(d_logits: np.ndarray, x: np.ndarray, w_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """logits = x · W_Eᵀ:  ∂L/∂x = ∂L/∂logits · W_E,  ∂L/∂W_E = (∂L/∂logits)ᵀ · x.

    With tied embeddings this is only the unembedding's share of W_E's gradient; the
    embedding's share (`embed_backward`) is added to it.
    """
    return d_logits @ w_e, _flat(d_logits).T @ _flat(x)


def learned_positions_backward(d_x: np.ndarray, n_ctx: int) -> np.ndarray:
    """x = W_E[token] + W_P[pos]:  ∂L/∂W_P[p] = Σ over the batch of ∂L/∂x at position p.

    Positions beyond the sequence get no gradient. `d_x` is `[batch, pos, d]`.
    """
    d_w_p = np.zeros((n_ctx, d_x.shape[-1]), dtype=d_x.dtype)
    d_w_p[: d_x.shape[-2]] = d_x.reshape(-1, *d_x.shape[-2:]).sum(axis=0)
    return d_w_p


def rope_backward(d_out: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """RoPE turns each pair (x₂ᵢ, x₂ᵢ₊₁) by θ, a linear map R(θ) = [[cos, −sin], [sin, cos]].

    ∂L/∂x = R(θ)ᵀ · ∂L/∂x' and R(θ)ᵀ = R(−θ): the gradient turns back by −θ, which is `rope`
    with sin θ (the table's even columns) negated. The sinusoidal table is a constant.
    """
    back = pe.copy()
    back[:, 0::2] *= -1.0
    return rope(d_out, back)


def rope_half_backward(d_out: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """`rope_half` turns each pair (xᵢ, x_{i+d/2}) by θᵢ: as for `rope_backward`, the gradient turns back by −θ,
    `rope_half` with sin θ negated."""
    back = pe.copy()
    back[:, 0::2] *= -1.0
    return rope_half(d_out, back)


def unembed_untied_backward(d_logits: np.ndarray, x: np.ndarray, w_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """logits = x · W_U (an unembedding of its own, `[d, vocab]`):

    ∂L/∂x = ∂L/∂logits · W_Uᵀ,  ∂L/∂W_U = xᵀ · ∂L/∂logits."""
    return d_logits @ w_u.T, _flat(x).T @ _flat(d_logits)


def layer_norm_backward(
    d_y: np.ndarray, x_hat: np.ndarray, scale: np.ndarray, gamma: np.ndarray, hook: Hook = no_hook
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y = γ · x̂ + β with x̂ = (x − μ)/s and s = √(σ² + ε), over the last axis of size d:

        ∂L/∂β = Σ ∂L/∂y,   ∂L/∂γ = Σ ∂L/∂y · x̂           (summed over positions)
        g = γ · ∂L/∂y                                        (∂L/∂x̂)
        ∂L/∂x = (g − mean(g) − x̂ · mean(g · x̂)) / s

    from ∂x̂ᵢ/∂xⱼ = (δᵢⱼ − 1/d − x̂ᵢ x̂ⱼ / d) / s, since ∂μ/∂xⱼ = 1/d and ∂s/∂xⱼ = x̂ⱼ/d.
    As values of their own: ∂L/∂s = −Σ gᵢ x̂ᵢ / s and ∂L/∂μ = −Σ gᵢ / s (μ moves σ² not at all).

    Both sums, Σ g and Σ g · x̂, serve the hooks and ∂L/∂x (a mean is the sum / d, as in `layer_norm`);
    ∂L/∂x is made term by term, in place.
    """
    d = x_hat.shape[-1]
    g = d_y * gamma
    g_sum = np.add.reduce(g, axis=-1, keepdims=True)
    g_x_hat = g * x_hat
    g_x_hat_sum = np.add.reduce(g_x_hat, axis=-1, keepdims=True)
    if hook is not no_hook:
        hook("hook_xhat", g)
        hook("hook_scale", -g_x_hat_sum / scale)
        hook("hook_mean", -g_sum / scale)
    d_x = g - g_sum / d
    d_x -= np.multiply(x_hat, g_x_hat_sum / d, out=g_x_hat)  # x̂ · mean(g · x̂), over g · x̂: no longer needed
    d_x /= scale
    return d_x, _flat(d_y * x_hat).sum(axis=0), _flat(d_y).sum(axis=0)


def rms_norm_backward(
    d_y: np.ndarray, x_hat: np.ndarray, scale: np.ndarray, gamma: np.ndarray, hook: Hook = no_hook
) -> tuple[np.ndarray, np.ndarray]:
    """y = γ · x̂ with x̂ = x / r and r = √(mean(x²) + ε), over the last axis of size d:

        ∂L/∂γ = Σ ∂L/∂y · x̂                                  (summed over positions)
        g = γ · ∂L/∂y                                        (∂L/∂x̂)
        ∂L/∂x = (g − x̂ · mean(g · x̂)) / r

    from ∂x̂ᵢ/∂xⱼ = (δᵢⱼ − x̂ᵢ x̂ⱼ / d) / r, since ∂r/∂xⱼ = x̂ⱼ / d: LayerNorm's without the "− 1/d" of μ.
    As a value of its own: ∂L/∂r = −Σ gᵢ x̂ᵢ / r.
    """
    d = x_hat.shape[-1]
    g = d_y * gamma
    g_x_hat_sum = np.add.reduce(g * x_hat, axis=-1, keepdims=True)
    if hook is not no_hook:
        hook("hook_xhat", g)
        hook("hook_scale", -g_x_hat_sum / scale)
    d_x = (g - x_hat * (g_x_hat_sum / d)) / scale
    return d_x, _flat(d_y * x_hat).sum(axis=0)


def softmax_backward(d_p: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p = softmax(s) over the last axis:  ∂L/∂sᵢ = pᵢ · (∂L/∂pᵢ − Σⱼ pⱼ ∂L/∂pⱼ).

    Masked entries have p = 0, so they get no gradient. Made in one new array (these are
    `[batch, head, pos, pos]`, the largest of a training step after the logits).
    """
    d_s = d_p * p
    np.subtract(d_p, np.add.reduce(d_s, axis=-1, keepdims=True), out=d_s)
    d_s *= p
    return d_s


def attention_backward(
    d_z: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, pattern: np.ndarray, hook: Hook = no_hook
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """z = pattern · v, pattern = softmax(q · kᵀ / √d_head) (masked or not):

        ∂L/∂v       = patternᵀ · ∂L/∂z
        ∂L/∂pattern = ∂L/∂z · vᵀ
        ∂L/∂scores  = softmax_backward(∂L/∂pattern, pattern)
        ∂L/∂q       = ∂L/∂scores · k / √d_head
        ∂L/∂k       = (∂L/∂scores)ᵀ · q / √d_head

    All `[head, pos, d_head]` after any batch axes, `pattern` `[head, q, k]`. Masked scores get 0.
    """
    d_v = pattern.swapaxes(-1, -2) @ d_z
    d_pattern = d_z @ v.swapaxes(-1, -2)
    hook("hook_pattern", d_pattern)
    d_scores = softmax_backward(d_pattern, pattern)
    hook("hook_attn_scores", d_scores)
    d_dot = d_scores / math.sqrt(q.shape[-1])  # ∂L/∂(q · kᵀ); not in place: the hook keeps d_scores
    return d_dot @ k, d_dot.swapaxes(-1, -2) @ q, d_v


def linear_backward(d_out: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """out = x · W + b:  ∂L/∂x = ∂L/∂out · Wᵀ,  ∂L/∂W = xᵀ · ∂L/∂out,  ∂L/∂b = Σ ∂L/∂out."""
    return d_out @ w.T, _flat(x).T @ _flat(d_out), _flat(d_out).sum(axis=0)


def gelu_backward(d_y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """gelu(x) = ½ x (1 + tanh u),  u = √(2/π) (x + 0.044715 x³):

    gelu'(x) = ½ (1 + tanh u) + ½ x (1 − tanh² u) · √(2/π) (1 + 3 · 0.044715 x²)
    """
    # In place, term by term: this runs on the widest activations and was the slowest step.
    x_sq = x * x
    t = 0.044715 * x_sq
    t += 1.0
    t *= x
    t *= _SQRT_2_OVER_PI
    np.tanh(t, out=t)  # tanh u
    du_dx = x_sq
    du_dx *= 3.0 * 0.044715
    du_dx += 1.0
    du_dx *= _SQRT_2_OVER_PI  # du/dx
    sech_sq = t * t
    np.subtract(1.0, sech_sq, out=sech_sq)  # 1 − tanh² u
    sech_sq *= du_dx
    sech_sq *= x
    t += 1.0
    t += sech_sq
    t *= 0.5  # gelu'(x)
    t *= d_y
    return t


def silu_backward(d_y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """silu(x) = x · σ(x):   silu'(x) = σ(x) · (1 + x · (1 − σ(x)))."""
    sigma = 1.0 / (1.0 + np.exp(-x))
    return d_y * sigma * (1.0 + x * (1.0 - sigma))


def gated_mlp_backward(
    d_out: np.ndarray,
    x: np.ndarray,
    pre: np.ndarray,
    pre_linear: np.ndarray,
    post: np.ndarray,
    w_gate: np.ndarray,
    w_in: np.ndarray,
    w_out: np.ndarray,
    hook: Hook = no_hook,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """mlp(x) = (silu(x W_gate) ⊙ x W_in) W_out, back through each step:

        ∂L/∂post = ∂L/∂out · W_outᵀ                          post = silu(pre) ⊙ pre_linear
        ∂L/∂pre_linear = ∂L/∂post ⊙ silu(pre),   ∂L/∂pre = silu'(pre) ⊙ ∂L/∂post ⊙ pre_linear
        ∂L/∂x = ∂L/∂pre · W_gateᵀ + ∂L/∂pre_linear · W_inᵀ   (x feeds both projections)

    `pre`, `pre_linear`, `post` are the forward's hooks. Returns ∂L/∂x and the gradients of W_gate, W_in, W_out.
    """
    d_post, d_w_out, _ = linear_backward(d_out, post, w_out)
    hook("hook_post", d_post)
    d_pre_linear = d_post * silu(pre)
    hook("hook_pre_linear", d_pre_linear)
    d_pre = silu_backward(d_post * pre_linear, pre)
    hook("hook_pre", d_pre)
    d_x_gate, d_w_gate, _ = linear_backward(d_pre, x, w_gate)
    d_x_in, d_w_in, _ = linear_backward(d_pre_linear, x, w_in)
    return d_x_gate + d_x_in, d_w_gate, d_w_in, d_w_out


def mlp_backward(
    d_out: np.ndarray,
    x: np.ndarray,
    pre: np.ndarray,
    post: np.ndarray,
    w_in: np.ndarray,
    w_out: np.ndarray,
    hook: Hook = no_hook,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """mlp(x) = gelu(x W_in + b_in) W_out + b_out, back through each of its three steps.

    `pre` and `post` are the forward's `hook_pre` and `hook_post`. Returns ∂L/∂x and the
    gradients of W_in, b_in, W_out, b_out.
    """
    d_post, d_w_out, d_b_out = linear_backward(d_out, post, w_out)
    hook("hook_post", d_post)
    d_pre = gelu_backward(d_post, pre)
    hook("hook_pre", d_pre)
    d_x, d_w_in, d_b_in = linear_backward(d_pre, x, w_in)
    return d_x, d_w_in, d_b_in, d_w_out, d_b_out


def multi_head_attention_backward(
    d_out: np.ndarray,
    x: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    pattern: np.ndarray,
    z: np.ndarray,
    w_qkv: np.ndarray,
    w_out: np.ndarray,
    rope_pe: np.ndarray | None = None,
    hook: Hook = no_hook,
    z_keep: np.ndarray | None = None,
    rope_style: str = "interleaved",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Multi-head attention backwards, one forward step at a time:

        out = concat(z) W_O + b_O     → ∂L/∂z, ∂L/∂W_O, ∂L/∂b_O          (`linear_backward`)
        zₕ = attention(qₕ, kₕ, vₕ)     → ∂L/∂q, ∂L/∂k, ∂L/∂v per head     (`attention_backward`)
        q, k rotated by RoPE           → turned back by −θ                 (`rope_backward`)
        [q|k|v] = x W_QKV + b_QKV      → ∂L/∂x, ∂L/∂W_QKV, ∂L/∂b_QKV      (`linear_backward`)

    `x` is `[pos, d]`; `q`, `k` (after RoPE if any), `v`, `z` are `[pos, head, d_head]`; `pattern`
    is `[head, q_pos, k_pos]`; any batch axes in front. Returns ∂L/∂x and the gradients of W_QKV,
    b_QKV, W_O, b_O. `z_keep` is an edit's m in z′ = m ⊙ z + c (model/interventions.py): the share of
    ∂L/∂z′ that reaches the heads.

    With grouped-query attention `k` and `v` have fewer heads than `q`, each read by `group` query heads:
    a shared key/value head's gradient is the sum of what its query heads send back.
    """
    d_z, d_w_out, d_b_out = linear_backward(d_out, z.reshape(x.shape), w_out)
    d_z = d_z.reshape(z.shape)
    hook("hook_z", d_z)
    if z_keep is not None:
        d_z = z_keep * d_z
    group = q.shape[-2] // k.shape[-2]
    d_q, d_k, d_v = (
        t.swapaxes(-3, -2)  # back to [pos, head, d_head]
        for t in attention_backward(
            d_z.swapaxes(-3, -2),
            q.swapaxes(-3, -2),
            shared_heads(k, group).swapaxes(-3, -2),
            shared_heads(v, group).swapaxes(-3, -2),
            pattern,
            hook,
        )
    )
    if group > 1:  # query head h read key/value head h // group: add up each group's share
        d_k = d_k.reshape(*k.shape[:-1], group, k.shape[-1]).sum(axis=-2)
        d_v = d_v.reshape(*v.shape[:-1], group, v.shape[-1]).sum(axis=-2)
    hook("hook_v", d_v)
    if rope_pe is not None:
        hook("hook_rot_q", d_q)
        hook("hook_rot_k", d_k)
        turn_back = rope_half_backward if rope_style == "half" else rope_backward
        d_q, d_k = turn_back(d_q, rope_pe), turn_back(d_k, rope_pe)
    hook("hook_q", d_q)
    hook("hook_k", d_k)
    d_qkv = merge_heads(np.concatenate([d_q, d_k, d_v], axis=-2))  # [pos, 3·head, d_head] → [pos, 3d], as qkv was split
    d_x, d_w_qkv, d_b_qkv = linear_backward(d_qkv, x, w_qkv)
    return d_x, d_w_qkv, d_b_qkv, d_w_out, d_b_out
