"""The MLP: widen each token's vector, bend it with GELU, narrow it back."""

from __future__ import annotations

import math

import numpy as np

from model.hooks import Hook, no_hook

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # a Python float, so float32 stays float32


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, the tanh form GPT-2 uses:

    gelu(x) = ½ · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))

    Computed term by term, in place after the first (this runs on the widest activations): the same
    operations in the same order as the formula, so the same values.
    """
    u = 0.044715 * (x * x * x)  # NumPy's float32 `x**3` goes through pow(): ~70× slower here
    u += x
    u *= _SQRT_2_OVER_PI  # u = √(2/π) · (x + 0.044715 · x³)
    y = np.tanh(u)  # not in place: x may be a scalar
    y += 1.0
    y *= x
    y *= 0.5  # ½ · (1 + tanh u) · x: halving is exact, so the order does not matter
    return y


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
    pre = x @ w_in
    pre += b_in  # in place: one array less per product
    hook("hook_pre", pre)
    post = gelu(pre)
    hook("hook_post", post)
    out = post @ w_out
    out += b_out
    return out
