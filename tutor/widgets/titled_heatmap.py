"""A title line over a heatmap grid: what the attention and similarity panels are made of."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tutor.widgets.heatmap import HeatmapGrid


class TitledHeatmap(Vertical):
    """A one-line (or wrapped) title, then a `HeatmapGrid` taking the rest of the height."""

    DEFAULT_CSS = """
    TitledHeatmap > .heatmap-title { height: auto; padding: 0 1; }
    TitledHeatmap > HeatmapGrid { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(classes="heatmap-title")
        yield HeatmapGrid(label_width=10)

    @property
    def title(self) -> Static:
        return self.query_one(".heatmap-title", Static)

    @property
    def grid(self) -> HeatmapGrid:
        return self.query_one(HeatmapGrid)

    def show_nothing(self, words: str) -> None:
        """Only `words` (an empty prompt): no grid."""
        self.title.update(words)
        self.grid.set_rows([], [])
