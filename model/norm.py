"""LayerNorm: pull every token's vector back to mean 0 and spread 1, then rescale."""

from __future__ import annotations

import numpy as np

from model.hooks import Hook, no_hook


def layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5, hook: Hook = no_hook
) -> np.ndarray:
    """LayerNorm over each token's own vector (the last axis):

        μ  = mean(x)
        σ² = mean((x − μ)²)
        x̂  = (x − μ) / √(σ² + ε)
        y  = γ · x̂ + β

    x̂ has mean 0 and variance σ²/(σ²+ε) ≈ 1, so ‖x̂‖ ≈ √d. γ and β are learned, one per dimension.
    """
    mu = x.mean(axis=-1, keepdims=True)
    hook("hook_mean", mu)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    scale = np.sqrt(var + eps)
    hook("hook_scale", scale)
    x_hat = (x - mu) / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat + beta
    hook("hook_normalized", y)
    return y
