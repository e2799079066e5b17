"""The attention pattern of the current block, one head at a time: rows are queries, columns keys."""

from __future__ import annotations

import numpy as np

from tutor.i18n import t
from tutor.view import View, probability_style, visible_piece
from tutor.widgets.heatmap import GridRow
from tutor.widgets.titled_heatmap import TitledHeatmap


class AttentionPanel(TitledHeatmap):
    def show(self, view: View) -> None:
        cfg, trace = view.gpt.config, view.trace
        head = view.head % cfg.n_heads
        if not view.n_tokens:
            self.show_nothing(t("empty_prompt", view.lang))
            return
        self.title.update(
            t("attn_title", view.lang, block=view.block, head=head, heads=cfg.n_heads)
            + ("" if cfg.causal else "  " + t("no_mask", view.lang))
        )
        pattern = trace[f"blocks.{view.block}.attn.hook_pattern"][head].astype(np.float64)
        if cfg.causal:  # masked cells show a dot, not a zero
            pattern = np.where(np.tril(np.ones_like(pattern)) > 0, pattern, np.nan)
        labels = [f"{pos} {visible_piece(piece)}" for pos, piece in enumerate(trace.pieces)]
        rows = [GridRow(label, pattern[q], q == view.token) for q, label in enumerate(labels)]
        self.grid.set_rows(rows, labels, scale=1.0, style_for=probability_style, number=probability)


def probability(value: float) -> str:
    """0.33, 1.00; a masked cell (NaN) is a dot."""
    return f"{value:.2f}" if np.isfinite(value) else "·"
