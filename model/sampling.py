"""Choosing the next token: temperature, top-k, and a seeded draw from what is left."""

from __future__ import annotations

import numpy as np

from model.attention import softmax


def top_k_mask(logits: np.ndarray, top_k: int | None) -> np.ndarray:
    """True for the `top_k` largest logits (ties at the cut by lowest id, so exactly k); all if None.

    The order is `argsort`'s stable one of −z, the order the next-token list is drawn in."""
    if top_k is None or top_k >= len(logits):
        return np.ones(len(logits), dtype=bool)
    keep = np.zeros(len(logits), dtype=bool)
    keep[np.argsort(-logits, kind="stable")[: max(1, top_k)]] = True
    return keep


def sampling_probs(logits: np.ndarray, temperature: float, top_k: int | None = None) -> np.ndarray:
    """The distribution a token is drawn from, over the whole vocabulary (float64):

    pᵢ = exp(zᵢ/T) / Σⱼ exp(zⱼ/T)     for i among the top k, else 0
    T = 0: all of it on the argmax (the limit T → 0)
    """
    if temperature < 0:
        raise ValueError("temperature must not be negative")
    z = logits.astype(np.float64)
    if temperature == 0:
        probs = np.zeros(len(z))
        probs[int(np.argmax(z))] = 1.0
        return probs
    scores = np.where(top_k_mask(z, top_k), z / temperature, -np.inf)
    return softmax(scores)


def sample(logits: np.ndarray, temperature: float, top_k: int | None, rng: np.random.Generator) -> int:
    """Draw a token from `sampling_probs(logits, temperature, top_k)` (T = 0 takes the likeliest, no draw)."""
    if temperature == 0:
        return int(np.argmax(logits))
    probs = sampling_probs(logits, temperature, top_k)
    return int(rng.choice(len(probs), p=probs))


def sample_rng(seed: int, n: int) -> np.random.Generator:
    """The generator of a session's `n`th sample: seeded by (seed, n), so each sample is reproducible on its own."""
    return np.random.default_rng([seed, n])
