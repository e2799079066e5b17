"""LayerNorm: pull every token's vector back to mean 0 and spread 1, then rescale; BatchNorm, its column twin;
RMSNorm, LayerNorm without the mean (Llama, Qwen, Mistral)."""

from __future__ import annotations

import numpy as np

from model.hooks import Hook, no_hook


def layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5, hook: Hook = no_hook
) -> np.ndarray:
    """LayerNorm over each token's own vector (the last axis):

        μ  = (1/d) Σⱼ xⱼ
        σ² = (1/d) Σⱼ (xⱼ − μ)²
        x̂  = (x − μ) / √(σ² + ε)
        y  = γ · x̂ + β

    x̂ has mean 0 and variance σ²/(σ²+ε) ≈ 1, so ‖x̂‖ ≈ √d. γ and β are learned, one per dimension.
    """
    d = x.shape[-1]
    mu = x.sum(axis=-1, keepdims=True) / d
    hook("hook_mean", mu)
    centred = x - mu
    var = (centred**2).sum(axis=-1, keepdims=True) / d
    scale = np.sqrt(var + eps)
    hook("hook_scale", scale)
    x_hat = centred / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat + beta
    hook("hook_normalized", y)
    return y


def batch_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5, hook: Hook = no_hook
) -> np.ndarray:
    """BatchNorm over each feature's column — every axis but the last: the T tokens (and the sequences of a batch,
    if x has one) — not each token's row:

        μⱼ  = (1/T) Σₜ xₜⱼ
        σⱼ² = (1/T) Σₜ (xₜⱼ − μⱼ)²
        x̂ₜⱼ = (xₜⱼ − μⱼ) / √(σⱼ² + ε)
        yₜⱼ = γⱼ · x̂ₜⱼ + βⱼ

    The statistics are the batch's own (no running averages), so row t of y depends on every token's x,
    the ones after t too. One token: σⱼ² = 0 and x − μ = 0, so x̂ = 0 and y = β (without ε, 0 / 0).
    The hooks carry LayerNorm's names; here μ and √(σ²+ε) are one per column.
    """
    axes = tuple(range(x.ndim - 1))
    n = int(np.prod([x.shape[a] for a in axes]))
    mu = x.sum(axis=axes, keepdims=True) / n
    hook("hook_mean", mu)
    centred = x - mu
    var = (centred**2).sum(axis=axes, keepdims=True) / n
    scale = np.sqrt(var + eps)
    hook("hook_scale", scale)
    x_hat = centred / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat + beta
    hook("hook_normalized", y)
    return y


def rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-6, hook: Hook = no_hook) -> np.ndarray:
    """RMSNorm over each token's own vector (the last axis): LayerNorm without the mean and without β:

        rms = √((1/d) Σⱼ xⱼ² + ε)
        x̂   = x / rms
        y   = γ · x̂

    Nothing is centred: a mean the stream carries stays in x̂. ‖x̂‖ ≈ √d as in LayerNorm. The hooks carry
    LayerNorm's names: `hook_scale` is the rms, `hook_xhat` x̂, `hook_normalized` y.
    """
    d = x.shape[-1]
    scale = np.sqrt((x * x).sum(axis=-1, keepdims=True) / d + eps)
    hook("hook_scale", scale)
    x_hat = x / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat
    hook("hook_normalized", y)
    return y
