"""What a pass brings besides its trace: the logit lens of the cursor token, read once per (trace, token).

At every point of the residual stream, softmax(logit_lens(x)): the guesses the model's own end reads out of
the stream there. A small model's lens (tiny: 0.6 M multiply-adds) is read on the key itself; a big one's
(GPT-2: ~965 M, ~80 ms) by `PassRunner` in a worker, so the keystroke never waits for it. The screen puts
what is read into the `View` (`View.lens`); the panel only draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from textual.dom import DOMNode

from model import GPT, Trace, logit_lens, softmax, top_order
from tutor.runner import PassRunner
from tutor.stream_points import ResidualPoint, residual_points

TOP = 3  # guesses per row
INLINE_LENS = 20_000_000  # multiply-adds (points × d_model × vocab): a lens this small is read on the key itself


def lens_probabilities(gpt: GPT, trace: Trace, token: int, points: list[ResidualPoint]) -> np.ndarray:
    """softmax(logit_lens(x)) of the cursor token's stream at every point, `[point, vocab]`, in float64.

    One `[points, d] · [d, vocab]` product for this token only: d·vocab per point, where the lens of every
    token would cost n_tokens times that on every new trace. The last point's row is the model's output
    itself, `trace.logits[token]`: the lens there is exactly that (tests/test_logit_lens.py checks it bit for
    bit at the model's own `[pos, d]` shape, which a one-token product would round differently).
    """
    earlier = np.stack([trace[point.hook][token] for point in points[:-1]])
    logits = np.concatenate([logit_lens(gpt, earlier), trace.logits[token][None]])
    return softmax(logits.astype(np.float64))


def top_tokens(probs: np.ndarray, k: int = TOP) -> list[int]:
    """The k likeliest ids, likeliest first, ties by id: `np.argsort(-probs, kind="stable")[:k]` (as
    `Trace.top_k` picks them) without sorting the whole vocabulary."""
    return [int(i) for i in top_order(probs, min(k, probs.size))]


@dataclass(frozen=True)
class LensRow:
    """One stream point as the lens reads it: its top guesses (id, piece, p) and the final guess's p, rank."""

    point: ResidualPoint
    top: list[tuple[int, str, float]]
    final_p: float
    final_rank: int  # 1 = the lens's top guess here


def lens_rows(gpt: GPT, trace: Trace, token: int) -> list[LensRow]:
    """The lens at every stream point for `token`; the final guess is the model's top guess at the last point."""
    points = residual_points(trace)
    probs = lens_probabilities(gpt, trace, token, points)
    final = top_tokens(probs[-1], 1)[0]
    rows = []
    for point, row in zip(points, probs, strict=True):
        top = [(i, trace.tokenizer.piece(i), float(row[i])) for i in top_tokens(row)]
        rank = int((row > row[final]).sum()) + 1
        rows.append(LensRow(point, top, float(row[final]), rank))
    return rows


def lens_cost(gpt: GPT, trace: Trace) -> int:
    """Multiply-adds of one token's lens: a `[points, d] · [d, vocab]` product. tiny: 9 × 64 × 1,044 ≈ 0.6 M;
    GPT-2 small: 25 × 768 × 50,257 ≈ 965 M, some 80 ms with its softmax, too long to hold a keystroke for."""
    return len(residual_points(trace)) * gpt.config.d_model * gpt.config.vocab_size


LensReading = tuple[Trace, int, list[LensRow]]  # a lens read in the worker: for which trace and token


class LensReadings:
    """The lens rows of each token of the latest trace, read once each: on the key when the lens is small,
    else by a runner of their own beside the passes (so neither cancels the other); `arrived` is called when a
    reading from the worker is in, `failed` with the error of one that could not be read."""

    def __init__(self, owner: DOMNode, arrived: Callable[[], None], failed: Callable[[Exception], None]) -> None:
        self._trace: Trace | None = None
        self._rows: dict[int, list[LensRow]] = {}  # for the trace above, by token
        self._reading: tuple[Trace, int] | None = None  # asked of the worker, on its way
        self._arrived, self._failed = arrived, failed
        self._runner: PassRunner[LensReading] = PassRunner(owner, "lens", self._deliver, self._fail)

    def rows(self, gpt: GPT, trace: Trace, token: int) -> list[LensRow] | None:
        """The rows of `token` in `trace`; None while a big model's are being read (asked for here, once)."""
        if trace is not self._trace:
            self._trace, self._rows = trace, {}
        if token in self._rows:
            return self._rows[token]
        if lens_cost(gpt, trace) <= INLINE_LENS:
            self._rows[token] = lens_rows(gpt, trace, token)
            return self._rows[token]
        if self._reading != (trace, token):
            self._reading = (trace, token)
            self._runner.run(lambda stop: (trace, token, lens_rows(gpt, trace, token)))
        return None

    def _deliver(self, reading: LensReading) -> None:
        trace, token, rows = reading
        self._reading = None
        if trace is self._trace:  # else a newer trace came meanwhile: its own lens is asked for when it is shown
            self._rows[token] = rows
            self._arrived()

    def _fail(self, error: Exception) -> None:
        self._reading = None  # the next look asks again
        self._failed(error)
