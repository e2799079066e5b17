"""How the big weight matrices sit in memory for the forward pass: the numbers never change, only their order.

The formulas multiply a few token rows by a weight matrix, `x @ W` with W `[in, out]`. OpenBLAS runs
that product 1.3–2× faster when it is handed the other way round, as (Wᵀ · xᵀ)ᵀ with Wᵀ stored row
by row (measured at GPT-2 small's shapes, 16 and 64 tokens: `[768, 2304]`, `[768, 3072]`, `[3072, 768]`
and the `[768, 50257]` unembedding). A `WeightMatrix` is W with exactly that storage: it reads as
W everywhere, and `x @ W` takes the fast route.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from model.params import Params

# Below ~1 MB a product is mostly call overhead: turning it round saves nothing and costs a copy per
# process (`tiny`'s largest matrix is 0.3 MB, and its memory-mapped weights stay shared between tutors).
MIN_ELEMENTS = 1 << 18


class WeightMatrix(np.ndarray):
    """A weight matrix W whose transpose Wᵀ is C-contiguous, so that `x @ W` runs as (Wᵀ · xᵀ)ᵀ.

    The product comes back in column-major order (a transposed view); its values are those of
    `x @ W` up to float32 rounding. Rows and slices (`wte[tokens]`) come back as plain arrays.
    """

    def __rmatmul__(self, x: Any) -> Any:
        stored = self.T.view(np.ndarray)
        if not isinstance(x, np.ndarray) or x.ndim != 2 or not stored.flags.c_contiguous:
            return np.matmul(x, self.view(np.ndarray))
        return (stored @ x.T).T

    def __getitem__(self, key: Any) -> Any:
        return self.view(np.ndarray)[key]


def for_forward(params: Params) -> Params:
    """`params` with every large matrix as a `WeightMatrix`; the same dict when there is none to turn.

    A matrix the formulas use as `x @ W` (`[in, out]`) is copied once into `[out, in]` order; the
    token embedding, used as `x @ W_Eᵀ`, is already stored that way and is wrapped without a copy.
    """
    laid_out = dict(params)
    for name, array in params.items():
        multiplied = name == "wte" or name.rsplit(".", 1)[-1].startswith("w_")  # not the position table
        if not multiplied or array.size < MIN_ELEMENTS or isinstance(array, WeightMatrix):
            continue
        if name == "wte":
            laid_out[name] = array.view(WeightMatrix)
        else:
            transposed = np.ascontiguousarray(array.T)
            transposed.flags.writeable = array.flags.writeable  # a read-only mapped file stays read-only
            laid_out[name] = transposed.T.view(WeightMatrix)
    changed = any(laid_out[name] is not array for name, array in params.items())
    return laid_out if changed else params
