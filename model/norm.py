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

    Each mean is a sum divided by d (what `ndarray.mean` computes, without its Python wrapper, which
    costs more than the sum at a few tokens); x − μ is computed once, and the last steps run in place.
    """
    d = x.shape[-1]
    mu = np.add.reduce(x, axis=-1, keepdims=True) / d
    hook("hook_mean", mu)
    centred = x - mu
    var = np.add.reduce(centred * centred, axis=-1, keepdims=True) / d
    var += eps
    scale = np.sqrt(var, out=var)
    hook("hook_scale", scale)
    x_hat = centred / scale
    hook("hook_xhat", x_hat)
    y = x_hat * gamma
    y += beta
    hook("hook_normalized", y)
    return y
