"""The residual stream's norm at every point of the pass, as a bar chart, the current step marked."""

from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text

from tutor.i18n import t
from tutor.view import View, residual_points, visible_piece
from tutor.widgets.live_static import LiveStatic

BAR = 24


class ResidualPanel(LiveStatic):
    DEFAULT_CSS = "ResidualPanel { padding: 0 1; }"

    def show(self, view: View) -> None:
        trace, lang = view.trace, view.lang
        if not view.n_tokens:
            self.show_content(t("empty_prompt", lang), "empty")
            return
        points = residual_points(trace)
        norms = np.array([np.linalg.norm(trace[p.hook].astype(np.float64), axis=-1) for p in points])  # [point, pos]
        reached = [i for i, p in enumerate(points) if p.step_index <= view.step_index]
        current = reached[-1] if reached else -1
        top = float(norms.max()) or 1.0
        log = top / max(float(norms.min()), 1e-12) > 100  # norms across orders of magnitude: log bars
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        shown = range(min(view.n_tokens, 8))
        bar_width = max(6, min(BAR, self.size.width - 22 - 7 * len(shown)))
        table.add_column("", no_wrap=True, min_width=1)
        table.add_column("", no_wrap=True)
        table.add_column(f"‖x‖ [{view.token}]" + (" (log)" if log else ""), no_wrap=True)
        for pos in shown:
            table.add_column(f"{pos} {visible_piece(trace.pieces[pos])}", justify="right", no_wrap=True)
        for i, point in enumerate(points):
            value = float(norms[i, view.token])
            fraction = (np.log1p(value) / np.log1p(top)) if log else value / top
            bar = "█" * round(fraction * bar_width)
            future = i > current
            row_style = "dim" if future else ("bold" if i == current else "")
            table.add_row(
                "▶" if i == current else "",
                Text(point.label(lang), style=row_style),
                Text(f"{bar:<{bar_width}} {value:7.3f}", style="dim" if future else "cyan"),
                *(Text(f"{norms[i, pos]:.2f}", style="reverse" if pos == view.token else row_style) for pos in shown),
            )
        title = Text(
            t("resid_title", lang, token=f"{view.token} {visible_piece(trace.pieces[view.token])}"), style="bold"
        )
        from rich.console import Group

        self.show_content(Group(title, table), (len(points), self.size.width))
