"""Choosing the next token: temperature, top-k, and a seeded draw from what is left."""

from __future__ import annotations

import numpy as np

from model.attention import softmax


def top_k_mask(logits: np.ndarray, top_k: int | None) -> np.ndarray:
    """True for the `top_k` largest logits, exactly k of them: of equal logits at the cut, the lowest ids
    (the first k of a stable sort of −z, the order the next-token list is drawn in); all if None.

    In O(vocab): the k-th largest by `np.partition`, everything above it, then ties to fill."""
    n = len(logits)
    if top_k is None or top_k >= n:
        return np.ones(n, dtype=bool)
    k = max(1, top_k)
    kth = np.partition(logits, n - k)[n - k]
    keep = logits > kth
    keep[np.flatnonzero(logits == kth)[: k - int(keep.sum())]] = True
    return keep


def top_order(logits: np.ndarray, n: int) -> np.ndarray:
    """The ids of the `n` largest logits, largest first (equal logits: lowest id first)."""
    ids = np.flatnonzero(top_k_mask(logits, n))
    return ids[np.lexsort((ids, -logits[ids]))]


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
