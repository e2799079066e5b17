"""LayerNorm: pull every token's vector back to mean 0 and spread 1, then rescale."""

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

    Each mean is written as the formula reads, a sum over d: what `x.mean(…)` computes, bit for bit,
    without the Python wrapper that costs more than the sum itself at a few tokens.
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
