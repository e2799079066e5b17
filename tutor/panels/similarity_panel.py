"""How alike the tokens' stream vectors are at the current step: cos(x_s, x_t) for every pair, a heatmap.

A stack without residuals collapses every position onto one direction (a block of 1.00); a model
without positions gives repeated tokens identical rows."""

from __future__ import annotations

import numpy as np

from model.depth import mean_position_similarity, position_cosines
from tutor.i18n import pick, t
from tutor.number_style import diverging_style, visible_piece
from tutor.stream_points import ResidualPoint, residual_points
from tutor.view import View
from tutor.widgets.heatmap import GridRow
from tutor.widgets.titled_heatmap import TitledHeatmap

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "title": (
        "cos(x_s, x_t) of the stream {point}: mean over pairs s ≠ t {mean:.2f}",
        "残差流{point}各词元向量两两的 cos(x_s, x_t)：s ≠ t 的平均 {mean:.2f}",
    ),
    "point": ("after {label}", "在{label}之后"),
    "one_token": ("One token: no pair to compare.", "只有一个词元：没有可比较的一对。"),
}


def stream_point_at(view: View) -> ResidualPoint:
    """The residual stream as it stands at the view's step: the last point written at or before it."""
    points = residual_points(view.trace)
    written = [p for p in points if p.step_index <= view.step_index]
    return written[-1] if written else points[0]


class SimilarityPanel(TitledHeatmap):
    def show(self, view: View) -> None:
        title, grid = self.title, self.grid
        if not view.n_tokens:
            self.show_nothing(t("empty_prompt", view.lang))
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
        cos = position_cosines(x.astype(np.float64))
        rows = [GridRow(label, cos[s], s == view.token) for s, label in enumerate(labels)]
        grid.set_rows(rows, labels, scale=1.0, style_for=diverging_style, number=lambda v: f"{v:+.2f}")
