"""The residual stream's norm at every point of the pass, as a bar chart, the current step marked — or,
with `grads`, the norm of the loss's gradient there, ‖∂L/∂x‖ (the gradient panel's chart)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from rich.cells import cell_len
from rich.text import Text

from tutor.i18n import t
from tutor.number_style import grad_text, top_dims_text, visible_piece
from tutor.stream_points import ResidualPoint, residual_points
from tutor.text_table import Column, text_table
from tutor.view import View
from tutor.widgets.live_static import LiveStatic

BAR = 24
MAX_TOKENS = 8  # token columns at most; fewer when the panel is narrow
TOKEN_COLUMN = 7  # "3000.00", or a header cut to fit


def norm_text(value: float, width: int = 7, most: int = 2) -> str:
    """A norm in `width` cells with up to `most` decimals, as many as fit: 0.81, 27.71, 3012.4."""
    for decimals in range(most, -1, -1):
        text = f"{value:.{decimals}f}"
        if len(text) <= width:
            return text
    return f"{value:.1e}"


def signed_change(delta: float, grads: bool) -> str:
    """An edited run's ‖x‖ less the clean run's, signed (a gradient's in its own format)."""
    if grads:
        return ("+" if delta >= 0 else "−") + grad_text(abs(delta)).strip()
    return f"{delta:+.2f}".replace("-", "−")


def bar_fraction(value: float, top: float, low: float, log: bool) -> float:
    """How much of the bar `value` fills: linear (value/top), or on a log scale from `low`/2 to `top`."""
    if not log:
        return value / top
    floor = low / 2  # so that the smallest norm still gets a visible bar
    return max(0.0, math.log(max(value, 1e-30) / floor) / math.log(top / floor))


def reached_points(points: list[ResidualPoint], view: View) -> tuple[list[int], int]:
    """The stream points the pass has reached at the view's step, and the current one. Forwards: those
    written at or before the step, the last of them current. Backwards the gradient comes from the end:
    those written at or after the step (∂L/∂x there is known), the first of them current."""
    if view.backward:
        reached = [i for i, p in enumerate(points) if p.step_index >= view.step_index]
        return reached, reached[0] if reached else len(points)
    reached = [i for i, p in enumerate(points) if p.step_index <= view.step_index]
    return reached, reached[-1] if reached else -1


class ResidualPanel(LiveStatic):
    DEFAULT_CSS = "ResidualPanel { padding: 0 1; }"

    def __init__(self, grads: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.grads = grads  # ‖∂L/∂x‖ instead of ‖x‖

    def show(self, view: View) -> None:
        self.redraw = partial(self.show, view)  # the table is cut to the width: again if the width was not right
        trace, lang = view.trace, view.lang
        if not view.n_tokens:
            self.show_content(t("empty_prompt", lang), "empty")
            return
        if self.grads and not trace.has_grads:
            self.show_content(t("grad_needs_two", lang), "no grads")
            return
        points = residual_points(trace)
        suffix = "_grad" if self.grads else ""
        norms = np.array(  # [point, pos]
            [np.linalg.norm(trace[p.hook + suffix].astype(np.float64), axis=-1) for p in points]
        )
        reached, current = reached_points(points, view)
        clean = view.edited.clean if view.edited is not None else None  # an edited run: the clean one beside it
        if clean is not None and self.grads and not clean.has_grads:
            clean = None
        clean_norms = (
            None
            if clean is None
            else np.array([np.linalg.norm(clean[p.hook + suffix][view.token].astype(np.float64)) for p in points])
        )
        top = float(norms.max()) or 1.0
        positive = norms[norms > 0]  # a gradient is exactly 0 at a token nothing is scored on: not the scale's floor
        low = max(float(positive.min()) if positive.size else top, 1e-12)
        log = top / low > 100  # norms across orders of magnitude: log bars
        labels = [point.label(lang) for point in points]
        headers = [Text(f"{pos} {visible_piece(piece)}", style="bold") for pos, piece in enumerate(trace.pieces)]
        number = grad_text if self.grads else norm_text  # a vanishing gradient is 1e-14, not 0.00
        value_text = grad_text if self.grads else partial(norm_text, most=3)  # the bar's own number
        texts = [[number(v) for v in norms[:, pos]] for pos in range(view.n_tokens)]

        def column_width(pos: int) -> int:
            return min(TOKEN_COLUMN, max(headers[pos].cell_len, *(len(v) for v in texts[pos])))

        # marker, label, then the bar and its number, each column with a gap of two
        fixed = 1 + 2 + max(cell_len(label) for label in labels) + 2 + 8 + (18 if clean_norms is not None else 0)
        room = self.available_width - fixed
        n_shown = min(view.n_tokens, MAX_TOKENS)
        while True:
            first = max(0, view.token - n_shown + 1)  # the token cursor always has its column
            shown = range(first, first + n_shown)
            bar_width = min(BAR, room - sum(column_width(pos) + 2 for pos in shown))
            if bar_width >= 6 or n_shown == 1:
                break
            n_shown -= 1  # narrow: fewer token columns rather than squeezed numbers
        bar_width = max(6, bar_width)
        columns = [
            Column(min_width=1),
            Column(),
            Column(f"{'‖∂L/∂x‖' if self.grads else '‖x‖'} [{view.token}]" + (" (log)" if log else "")),
            *(
                [Column(t("clean_run", lang), justify="right"), Column("Δ", justify="right")]
                if clean_norms is not None
                else []
            ),
            *(Column(headers[pos], justify="right", max_width=column_width(pos)) for pos in shown),
        ]
        rows = []
        for i in range(len(points)):
            value = float(norms[i, view.token])
            bar = "█" * round(bar_fraction(value, top, low, log) * bar_width)
            future = i not in reached
            row_style = "dim" if future else ("bold" if i == current else "")
            rows.append(
                [
                    "▶" if i == current else "",
                    Text(labels[i], style=row_style),
                    Text(
                        f"{bar:<{bar_width}} {value_text(value):>7}",
                        style="dim" if future else "cyan",
                    ),
                    *(
                        [
                            Text(value_text(float(clean_norms[i])), style=row_style),
                            Text(signed_change(value - float(clean_norms[i]), self.grads), style=row_style),
                        ]
                        if clean_norms is not None
                        else []
                    ),
                    *(Text(texts[pos][i], style="reverse" if pos == view.token else row_style) for pos in shown),
                ]
            )
        token = f"{view.token} {visible_piece(trace.pieces[view.token])}"
        title = Text(t("grad_title" if self.grads else "resid_title", lang, token=token), style="bold")
        point = points[min(max(current, 0), len(points) - 1)]
        largest = Text(
            t(
                "largest_grad" if self.grads else "largest",
                lang,
                token=f"[{token}]",
                where=t("largest_at", lang, point=point.label(lang)),
                dims=top_dims_text(trace[point.hook + suffix][view.token], lang, of="‖∂L/∂x‖" if self.grads else "‖x‖"),
            ),
            style="dim",
        )
        lines = [title, *text_table(columns, rows), largest]
        scored = norms[:, : max(0, view.n_tokens - 1)]  # the last token is scored on nothing: its 0 is exact
        if self.grads and scored.size and (scored == 0).any():
            lines.append(Text(t("grad_underflow", lang), style="dim"))
        self.show_content(Text("\n").join(lines), (len(points), len(lines)))
