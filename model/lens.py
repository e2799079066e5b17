"""The logit lens: what the model would guess if the residual stream stopped here."""

from __future__ import annotations

import numpy as np

from model.gpt import GPT


def logit_lens(gpt: GPT, stream: np.ndarray) -> np.ndarray:
    """Read an intermediate stream x out as if it were the last one (TransformerLens: the logit lens):

        logits = LN_final(x) · W_Eᵀ        probabilities = softmax(logits)

    `stream` is `[..., d_model]` (one token's vector, or `[pos, d_model]`); the logits are `[..., vocab]`.
    The read-out is the model's own end (`GPT.read_out`): at the last stream point it is exactly the
    model's output. Elsewhere it is not what the model outputs, only what its end makes of the stream.

    The wiring decides the read-out. Pre-norm (with or without residuals) has a final LayerNorm, as above.
    Post-norm has none, as every block already ends in a LayerNorm: logits = x · W_Eᵀ, and x after each
    sublayer is already normalised (the embedding is not). No norm: logits = x · W_Eᵀ, x at its raw size.
    """
    return gpt.read_out(stream)
