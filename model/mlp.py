"""The MLP: widen each token's vector, bend it with GELU, narrow it back."""

from __future__ import annotations

import math

import numpy as np

from model.hooks import Hook, no_hook


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, the tanh form GPT-2 uses:

    gelu(x) = ½ · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))
    """
    x3 = x * x * x
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x3)))


def mlp(
    x: np.ndarray,
    w_in: np.ndarray,
    b_in: np.ndarray,
    w_out: np.ndarray,
    b_out: np.ndarray,
    hook: Hook = no_hook,
) -> np.ndarray:
    """The position-wise feed-forward network, the same for every token:

    mlp(x) = gelu(x W_in + b_in) W_out + b_out
    """
    pre = x @ w_in + b_in
    hook("hook_pre", pre)
    post = gelu(pre)
    hook("hook_post", post)
    return post @ w_out + b_out
