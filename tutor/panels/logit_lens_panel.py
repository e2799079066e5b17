"""The logit lens for the cursor token: at every point of the residual stream, the top guesses that the
model's own end (final LayerNorm, unembedding, softmax) reads out of the stream there, the current step's
point marked — so a learner watches the prediction form block by block."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.events import Resize
from textual.message import Message

from model import GPT, Trace, logit_lens, softmax, top_order
from tutor.i18n import t
from tutor.panels.residual_panel import reached_points
from tutor.sentences import EARLIER_NAMED, lens_lead
from tutor.text_table import Column, text_table
from tutor.view import ResidualPoint, View, residual_points, sequential_style, visible_piece
from tutor.widgets.live_static import laid_out_width
from tutor.widgets.text_lines import TextLines

TOP = 3  # guesses per row
PIECE = 6  # cells a guessed token may take ("<0xAE>"); longer ones end in "…"
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


def lead_text(rows: list[LensRow], lang: str, **values: str) -> str:
    """The sentence under the lens: where the final guess leads, as `tutor.sentences.lens_lead` decides."""
    sentence = lens_lead([row.final_rank for row in rows], [row.point.label(lang) for row in rows])
    words = dict(sentence.values)
    if "earlier" in words:
        words["earlier"] = (
            t("list_separator", lang).join(words["earlier"])
            if words["count"] <= EARLIER_NAMED
            else t("lens_earlier_many", lang, count=words["count"], first=words["first_earlier"])
        )
    return t(sentence.key, lang, **(words | values))


def prob_text(p: float) -> str:
    """A probability in at most five cells: 73.9%, 0.0%, 100%."""
    text = f"{p:.1%}"
    return text if len(text) <= 5 else f"{p:.0%}"


def guess_text(piece: str, p: float) -> Text:
    """One guess: the token (cut to PIECE cells) and its probability on the sequential scale."""
    name = Text(visible_piece(piece), style="bold")
    name.truncate(PIECE, overflow="ellipsis")  # by cells: a wide character takes two
    return Text.assemble(name, " " * (PIECE + 1 - name.cell_len), (f"{prob_text(p):>5}", sequential_style(p)))


class LogitLensPanel(TextLines):
    """Drawn a line at a time: a step key moves the ▶ and repaints two rows, not the whole lens. A big model's
    lens (GPT-2) is asked of the screen (`Wanted`), which reads it in a worker and hands it back (`lens_read`):
    until it comes, one line says it is on its way."""

    DEFAULT_CSS = "LogitLensPanel { margin: 0 1; }"
    MARGIN = 2  # cells left and right

    class Wanted(Message):
        """The lens of `token` in `trace` is too big to read on the keystroke: the screen reads it in a worker."""

        def __init__(self, gpt: GPT, trace: Trace, token: int) -> None:
            super().__init__()
            self.gpt, self.trace, self.token = gpt, trace, token

    class Filled(Message):
        """A lens read in the worker is in: the tab (StreamPanel) shows it, and lays itself out around its height."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._trace: Trace | None = None
        self._rows_by_token: dict[int, list[LensRow]] = {}  # for the trace above: built once each
        self._lines_shown: list[Text] = []
        self._view: View | None = None
        self._width_used = 0
        self._reading: tuple[Trace, int] | None = None  # the lens asked for, on its way from the worker

    @property
    def available_width(self) -> int:
        """Cells for the lines; a hidden tab (drawn before it is laid out) measures by its nearest laid-out ancestor."""
        return self.size.width or laid_out_width(self, self.MARGIN)

    def rows_for(self, view: View) -> list[LensRow] | None:
        """The lens rows of the view's token, built once per (trace, token); None while a big model's are
        being read in the worker (asked for here)."""
        if view.trace is not self._trace:
            self._trace, self._rows_by_token = view.trace, {}
        if view.token not in self._rows_by_token:
            gpt, trace, token = view.gpt, view.trace, view.token
            if lens_cost(gpt, trace) <= INLINE_LENS:
                self._rows_by_token[token] = lens_rows(gpt, trace, token)
            else:
                if self._reading != (trace, token):
                    self._reading = (trace, token)
                    self.post_message(self.Wanted(gpt, trace, token))
                return None
        return self._rows_by_token[view.token]

    def lens_read(self, trace: Trace, token: int, rows: list[LensRow]) -> None:
        """The rows the screen read for `trace` and `token`: kept, and drawn if they are still the view's."""
        self._reading = None
        if trace is not self._trace:
            return  # a newer trace came meanwhile: its own lens is asked for when it is shown
        self._rows_by_token[token] = rows
        if self._view is not None and self._view.trace is trace and self._view.token == token:
            self.post_message(self.Filled())  # the tab draws it: the lens, and the chart above around its height

    def lens_failed(self) -> None:
        """The reading failed (the screen said why): the next show asks again."""
        self._reading = None

    def height_at(self, width: int) -> int:
        """How many rows the lines shown take in a tab `width` cells wide (the note wraps)."""
        inner = max(1, width - self.MARGIN)
        return sum(max(1, math.ceil(line.cell_len / inner)) for line in self._lines_shown)

    def on_resize(self, event: Resize) -> None:
        """Made for a width it did not get: made again (how many guesses fit a row depends on it)."""
        super().on_resize(event)
        if self._view is not None and event.size.width != self._width_used:
            self.show(self._view)

    def show(self, view: View) -> None:
        self._view, self._width_used = view, self.available_width
        lang = view.lang
        if not view.n_tokens:
            self._lines_shown = []
            self.set_lines([])
            return
        rows = self.rows_for(view)
        if rows is None:
            self._lines_shown = [
                Text(t("lens_title", lang, token=here_of(view), formula=formula_of(view.gpt)), style="bold"),
                Text(t("lens_reading", lang, vocab=f"{view.gpt.config.vocab_size:,}"), style="dim"),
            ]
            self.set_lines(self._lines_shown)
            return
        reached, current = reached_points([row.point for row in rows], view)
        _final, final_piece, final_p = rows[-1].top[0]
        final_text = visible_piece(final_piece)
        here = here_of(view)
        table: list[Text] = []
        for k in range(TOP, 0, -1):  # as many guesses per row as the width takes
            columns = [
                Column(min_width=1),
                Column(),  # the stream point (the title says so)
                Column(t("lens_top", lang, k=k)),
                Column(" " + t("lens_final", lang, token=final_text)),  # a cell more: apart from the guesses
            ]
            cells = []
            for i, row in enumerate(rows):
                future = i not in reached
                label_style = "dim" if future else ("bold" if i == current else "")
                guesses = Text(" ").join(guess_text(piece, p) for _id, piece, p in row.top[:k])
                final = Text(
                    f" {prob_text(row.final_p):>5} #{row.final_rank}", style="bold" if row.final_rank == 1 else ""
                )
                cells.append(
                    ["▶" if i == current else "", Text(row.point.label(lang), style=label_style), guesses, final]
                )
            table = text_table(columns, cells)
            if k == 1 or max(line.cell_len for line in table) <= self._width_used:
                break
        cfg = view.gpt.config
        note = t({"pre": "lens_note_pre", "post": "lens_note_post"}.get(cfg.norm, "lens_note_none"), lang)
        formula = formula_of(view.gpt)
        if not cfg.residual:
            note += " " + t("lens_no_residual", lang)
        settles = lead_text(rows, lang, token=final_text, p=prob_text(final_p))
        self._lines_shown = [
            Text(t("lens_title", lang, token=here, formula=formula), style="bold"),
            Text(note, style="dim"),
            *table,
            Text(settles),
        ]
        self.set_lines(self._lines_shown)


def here_of(view: View) -> str:
    """The cursor token as the lens's title names it: "1 追"."""
    return f"{view.token} {visible_piece(view.trace.pieces[view.token])}"


def formula_of(gpt: GPT) -> str:
    return "softmax(LN_final(x)·W_Eᵀ)" if gpt.config.has_final_norm else "softmax(x·W_Eᵀ)"
