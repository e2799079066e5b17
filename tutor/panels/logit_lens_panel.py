"""The logit lens for the cursor token: at every point of the residual stream, the top guesses that the
model's own end (final LayerNorm, unembedding, softmax) reads out of the stream there, the current step's
point marked — so a learner watches the prediction form block by block."""

from __future__ import annotations

import math

from rich.text import Text
from textual.events import Resize

from model import GPT
from tutor.i18n import t
from tutor.lens import TOP, LensRow
from tutor.number_style import sequential_style, visible_piece
from tutor.panels.residual_panel import reached_points
from tutor.sentences import EARLIER_NAMED, lens_lead
from tutor.text_table import Column, text_table
from tutor.view import View
from tutor.widgets.live_static import laid_out_width
from tutor.widgets.text_lines import TextLines

PIECE = 6  # cells a guessed token may take ("<0xAE>"); longer ones end in "…"


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
    """Drawn a line at a time: a step key moves the ▶ and repaints two rows, not the whole lens. It draws the
    rows the view brings (`View.lens`, read by `tutor.lens`); while a big model's are on their way, one line
    says so."""

    DEFAULT_CSS = "LogitLensPanel { margin: 0 1; }"
    MARGIN = 2  # cells left and right

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines_shown: list[Text] = []
        self._view: View | None = None
        self._width_used = 0

    @property
    def available_width(self) -> int:
        """Cells for the lines; a hidden tab (drawn before it is laid out) measures by its nearest laid-out ancestor."""
        return self.size.width or laid_out_width(self, self.MARGIN)

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
        rows = view.lens
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
    """The lens's read-out in symbols: the model's own final norm (LayerNorm or RMSNorm, if it has one) and its
    unembedding (W_Eᵀ, or a W_U of its own)."""
    cfg = gpt.config
    x = ("RMSNorm_final(x)" if cfg.is_rms else "LN_final(x)") if cfg.has_final_norm else "x"
    return f"softmax({x}·{'W_Eᵀ' if cfg.tied else 'W_U'})"
