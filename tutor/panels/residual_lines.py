"""Each token's ‖x‖ through every point of the residual stream as a line (braille; markers under NO_COLOR):
the cursor token bright and on top, the others grey, a dotted column at the current step's point."""

from __future__ import annotations

import numpy as np

from model import Trace
from tutor.i18n import t
from tutor.number_style import visible_piece
from tutor.panels.residual_panel import reached_points
from tutor.stream_points import ResidualPoint, residual_points
from tutor.view import View
from tutor.widgets.line_chart import LineChart, Series

MAX_OTHERS = 15  # grey lines besides the cursor's: the tokens nearest the cursor, when there are more
CURSOR_COLOUR, OTHER_COLOUR = "#ffaf00", "#767676"
CURSOR_MARKER, OTHER_MARKER = "●", "·"
LOG_SPAN = 100  # norms across more than this factor: a log axis (as the table's bars)


def stream_norms(view: View, points: list[ResidualPoint]) -> np.ndarray:
    """‖x‖ of every token at every stream point, `[point, pos]` (float64, as the table computes them)."""
    return np.array([np.linalg.norm(view.trace[p.hook].astype(np.float64), axis=-1) for p in points])


def shown_others(token: int, n_tokens: int, most: int = MAX_OTHERS) -> list[int]:
    """The other tokens drawn beside the cursor's: all of them, or the `most` nearest it (earlier first on ties)."""
    others = sorted((p for p in range(n_tokens) if p != token), key=lambda p: (abs(p - token), p))[:most]
    return sorted(others)


def block_ticks(points: list[ResidualPoint], lang: str) -> list[tuple[float, str]]:
    """The x axis' names: the embedding at 0, each block's name between its two points (attn, MLP)."""
    ticks = [(0.0, t("lines_embed", lang))]
    for i in range((len(points) - 1) // 2):
        ticks.append((2 * i + 1.5, f"B{i}"))
    return ticks


class ResidualLines(LineChart):
    DEFAULT_CSS = "ResidualLines { height: 12; min-height: 8; }"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn_trace: Trace | None = None
        self._drawn_key: tuple[int, str] | None = None

    @staticmethod
    def title(point: ResidualPoint, lang: str, log: bool) -> str:
        return t("lines_title", lang, point=point.label(lang)) + (t("lines_log", lang) if log else "")

    def show(self, view: View) -> None:
        trace, lang = view.trace, view.lang
        points = residual_points(trace)
        _, current = reached_points(points, view)
        key = (view.token, lang)  # with the trace: the curves; the step moves only the marker
        point = points[min(max(current, 0), len(points) - 1)]
        marker = current if 0 <= current < len(points) else None
        if trace is self._drawn_trace and key == self._drawn_key:
            if marker != self.x_marker:
                self.move_marker(marker, self.title(point, lang, self.log_y))
            return
        self._drawn_key, self._drawn_trace = key, trace
        if not view.n_tokens:
            self.set_series([], y_label="", x_label="")
            return
        norms = stream_norms(view, points)
        xs = list(range(len(points)))
        cursor = f"{view.token} {visible_piece(trace.pieces[view.token])}"
        others = shown_others(view.token, view.n_tokens)
        n_others = view.n_tokens - 1
        if len(others) == n_others:
            others_name = t("lines_others", lang, n=n_others)
        else:
            others_name = t("lines_some_others", lang, n=len(others), m=n_others)
        series = [
            Series(
                t("lines_cursor", lang, token=cursor), xs, norms[:, view.token].tolist(), CURSOR_COLOUR, CURSOR_MARKER
            )
        ]
        for k, pos in enumerate(others):
            name = others_name if k == 0 else f"{pos}"
            series.append(Series(name, xs, norms[:, pos].tolist(), OTHER_COLOUR, OTHER_MARKER, legend=k == 0))
        top = float(norms.max()) or 1.0
        positive = norms[norms > 0]
        low = float(positive.min()) if positive.size else top
        log = top / low > LOG_SPAN
        self.set_series(
            series,
            y_label=self.title(point, lang, log),
            x_range=(0, len(points) - 1),
            y_range=None if log else (0.0, top),
            log_y=log,
            x_ticks=block_ticks(points, lang),
            x_marker=marker,
        )
