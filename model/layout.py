"""How the weight matrices sit in memory for the forward pass: the numbers never change, only their order.

The formulas multiply a few token rows by a weight matrix, `x @ W`, and OpenBLAS is much faster
with some layouts of W than with others (measured with one thread, 8 to 64 tokens):

- GPT-2 small's matrices (`[768, 2304]`, `[768, 3072]`, `[3072, 768]`): 1.3–2× faster handed the
  other way round, as (Wᵀ · xᵀ)ᵀ with Wᵀ stored row by row. A `WeightMatrix` is W stored so.
- The tied unembedding `x @ W_Eᵀ`: W_Eᵀ is a transposed view of the embedding, which OpenBLAS
  packs afresh on every call; for `tiny` a contiguous copy of W_Eᵀ (0.27 MB per process) makes
  the product 1.6–4× faster. GPT-2's W_Eᵀ (154 MB) is turned round like its other matrices instead.

`tiny`'s other matrices are fastest as they are, and stay memory-mapped, shared between tutors.
A GPT keeps these copies for life: change its weights by building a new GPT, not in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from model.params import Params

# From about 1 MB on, a product is worth turning round; below, it is mostly call overhead, and
# the turned copy would cost every tutor its own memory (`tiny`'s largest matrix is 0.3 MB).
MIN_ELEMENTS = 1 << 18


class WeightMatrix(np.ndarray):
    """A weight matrix W whose transpose Wᵀ is C-contiguous, so that `x @ W` runs as (Wᵀ · xᵀ)ᵀ.

    The product comes back as a transposed view (column-major); its values are those of
    `x @ W`. Rows and slices of W come back as plain arrays.
    """

    def __rmatmul__(self, x: Any) -> Any:
        stored = self.T.view(np.ndarray)
        if not isinstance(x, np.ndarray) or x.ndim != 2 or not stored.flags.c_contiguous:
            return np.matmul(x, self.view(np.ndarray))
        return (stored @ x.T).T

    def __getitem__(self, key: Any) -> Any:
        return self.view(np.ndarray)[key]


class TokenEmbedding(np.ndarray):
    """The token embedding W_E `[vocab, d]` as stored, whose `.T` — the tied unembedding W_Eᵀ —
    comes in the layout OpenBLAS multiplies fastest. Rows (`W_E[tokens]`) are plain arrays."""

    unembedding: np.ndarray | None = None  # W_Eᵀ laid out for `x @ W_Eᵀ`; None on arrays derived from this one

    def __array_finalize__(self, obj: Any) -> None:
        self.unembedding = None  # `wte * 2` or `wte.copy()` must not inherit the original's transpose

    @property
    def T(self) -> Any:
        return self.unembedding if self.unembedding is not None else self.view(np.ndarray).T

    def __getitem__(self, key: Any) -> Any:
        return self.view(np.ndarray)[key]


def turned_round(w: np.ndarray) -> WeightMatrix:
    """W `[in, out]` as a `WeightMatrix`: the same values, stored as Wᵀ `[out, in]`, one copy."""
    transposed = np.ascontiguousarray(w.T)
    transposed.flags.writeable = w.flags.writeable  # a read-only mapped file stays read-only
    return transposed.T.view(WeightMatrix)


def token_embedding(w_e: np.ndarray) -> TokenEmbedding:
    """W_E over the same memory (still shared when memory-mapped), with W_Eᵀ laid out for the unembedding."""
    embedding = w_e.view(TokenEmbedding)
    if w_e.size >= MIN_ELEMENTS:
        embedding.unembedding = w_e.T.view(WeightMatrix)  # already row by row: no copy
    else:
        embedding.unembedding = np.ascontiguousarray(w_e.T)
        embedding.unembedding.flags.writeable = False
    return embedding


def for_forward(params: Params) -> Params:
    """`params` laid out for the forward pass (see the module's docstring); the same dict if nothing moves."""
    laid_out = dict(params)
    for name, array in params.items():
        multiplied = name.rsplit(".", 1)[-1].startswith("w_")  # w_qkv, w_out, w_in: `x @ W` in the formulas
        if name == "wte" and not isinstance(array, TokenEmbedding):
            laid_out[name] = token_embedding(array)
        elif multiplied and array.size >= MIN_ELEMENTS and not isinstance(array, WeightMatrix):
            laid_out[name] = turned_round(array)
    changed = any(laid_out[name] is not array for name, array in params.items())
    return laid_out if changed else params
