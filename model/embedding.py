"""From token ids into vectors, and from vectors back to scores over the vocabulary."""

from __future__ import annotations

import numpy as np


def embed(tokens: np.ndarray, w_e: np.ndarray) -> np.ndarray:
    """Token embedding: row `token` of the embedding matrix, x = W_E[token]. `[pos, d_model]`."""
    return w_e[tokens]


def unembed(x: np.ndarray, w_e: np.ndarray) -> np.ndarray:
    """Tied unembedding: logits = x · W_Eᵀ, one score per vocabulary entry. `[pos, vocab]`.

    The same matrix reads tokens in and writes guesses out.
    """
    return x @ w_e.T
