"""How alike the tokens' stream vectors are at the current step: cos(x_s, x_t) for every pair, a heatmap.

A stack without residuals collapses every position onto one direction (a block of 1.00); a model
without positions gives repeated tokens identical rows."""

from __future__ import annotations

import numpy as np
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from model.depth import mean_position_similarity
from tutor.i18n import pick
from tutor.view import ResidualPoint, View, diverging_style, residual_points, visible_piece
from tutor.widgets.heatmap import GridRow, HeatmapGrid

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "title": (
        "cos(x_s, x_t) of the stream {point}: mean over pairs s ≠ t {mean:.2f}",
        "残差流{point}各词元向量两两的 cos(x_s, x_t)：s ≠ t 的平均 {mean:.2f}",
    ),
    "point": ("after {label}", "在{label}之后"),
    "one_token": ("One token: no pair to compare.", "只有一个词元：没有可比较的一对。"),
    "empty": ("Type a prompt to see the model at work.", "输入提示词，看看模型如何计算。"),
}


def stream_point_at(view: View) -> ResidualPoint:
    """The residual stream as it stands at the view's step: the last point written at or before it."""
    points = residual_points(view.trace)
    written = [p for p in points if p.step_index <= view.step_index]
    return written[-1] if written else points[0]


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """cos(x_s, x_t) for every pair of rows of `x` `[pos, d]`."""
    x = x.astype(np.float64)
    unit = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-30)
    return unit @ unit.T


class SimilarityPanel(Vertical):
    DEFAULT_CSS = """
    SimilarityPanel > #similarity-title { height: auto; padding: 0 1; }
    SimilarityPanel > HeatmapGrid { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="similarity-title")
        yield HeatmapGrid(label_width=10)

    def show(self, view: View) -> None:
        title, grid = self.query_one("#similarity-title", Static), self.query_one(HeatmapGrid)
        if not view.n_tokens:
            title.update(pick(WORDS, "empty", view.lang))
            grid.set_rows([], [])
            return
        point = stream_point_at(view)
        x = view.trace[point.hook]
        if view.n_tokens < 2:
            title.update(pick(WORDS, "one_token", view.lang))
        else:
            where = pick(WORDS, "point", view.lang, label=point.label(view.lang))
            mean = mean_position_similarity(x[None].astype(np.float64))
            title.update(pick(WORDS, "title", view.lang, point=where, mean=mean))
        labels = [f"{pos} {visible_piece(piece)}" for pos, piece in enumerate(view.trace.pieces)]
        cos = cosine_matrix(x)
        rows = [GridRow(label, cos[s], s == view.token) for s, label in enumerate(labels)]
        grid.set_rows(rows, labels, scale=1.0, style_for=diverging_style, number=lambda v: f"{v:+.2f}")
