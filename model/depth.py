"""What depth does to a model, layer by layer: the stream's size, the gradient's size, and collapse.

Measured on a batch of windows, at every point of the residual stream — the embedding's output
(`blocks.0.hook_resid_pre`) and each block's output (`blocks.{i}.hook_resid_post`):

    stream_norm[p]      mean over tokens of ‖x‖
    stream_grad[p]      ‖∂L/∂x‖ over the whole batch at that point (L: the mean cross-entropy)
    similarity[p]       mean over windows of the mean cosine similarity cos(x_s, x_t) between two
                        different positions s ≠ t of one window: 1.0 when every position carries
                        the same direction — the collapse of a stack without residuals
    param_grad[i]       ‖∂L/∂θ‖ over all of block i's parameters

`depth_profile` is what training records at initialisation and at the end (`model/train.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import numpy as np

from model.backward import cross_entropy_and_backward
from model.gradients import backward, record_forward

if TYPE_CHECKING:
    from model.gpt import GPT


class DepthProfile(TypedDict):
    """`depth_profile`'s figures (the module's docstring): one per stream point, or per block for `param_grad`."""

    loss: float
    stream_norm: list[float]
    stream_grad: list[float]
    similarity: list[float]
    param_grad: list[float]


def stream_points(n_layers: int) -> list[str]:
    """The residual stream's points: after the embedding, then after each block."""
    return ["blocks.0.hook_resid_pre"] + [f"blocks.{i}.hook_resid_post" for i in range(n_layers)]


def position_cosines(x: np.ndarray) -> np.ndarray:
    """cos(x_s, x_t) for every pair of positions: `[..., pos, d]` → `[..., pos, pos]`."""
    unit = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-30)
    return unit @ unit.swapaxes(-1, -2)


def mean_position_similarity(x: np.ndarray) -> float:
    """Mean cos(x_s, x_t) over pairs of different positions s ≠ t, averaged over windows; `x` is `[batch, pos, d]`."""
    cosines = position_cosines(x)  # [batch, pos, pos]
    n = x.shape[-2]
    off_diagonal = cosines.sum(axis=(-1, -2)) - np.trace(cosines, axis1=-2, axis2=-1)
    return float((off_diagonal / (n * (n - 1))).mean())


def depth_profile(gpt: GPT, inputs: np.ndarray, targets: np.ndarray) -> DepthProfile:
    """The figures of the module's docstring for `gpt` on windows `inputs` → `targets` `[batch, pos]`."""
    logits, acts = record_forward(gpt, inputs)
    loss, d_logits = cross_entropy_and_backward(logits, targets)
    act_grads: dict[str, np.ndarray] = {}
    param_grads = backward(gpt, inputs, acts, d_logits, act_grads.__setitem__)
    points = stream_points(gpt.config.n_layers)
    as64 = {name: acts[name].astype(np.float64) for name in points}
    return {
        "loss": float(loss),
        "stream_norm": [float(np.linalg.norm(as64[p], axis=-1).mean()) for p in points],
        "stream_grad": [float(np.linalg.norm(act_grads[p].astype(np.float64))) for p in points],
        "similarity": [mean_position_similarity(as64[p]) for p in points],
        "param_grad": [
            float(np.sqrt(sum(_squared(g) for name, g in param_grads.items() if name.startswith(f"blocks.{i}."))))
            for i in range(gpt.config.n_layers)
        ],
    }


def _squared(g: np.ndarray) -> float:
    g = g.astype(np.float64)
    return float(np.vdot(g, g))
