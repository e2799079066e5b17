"""The Residual tab: every token's ‖x‖ through the stream as lines, the logit lens of the cursor token,
and the table of ‖x‖ digits (with a patch among the edits, the patching view first). Where the tab is too
low for a chart (80×24), the table and the lens only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.widget import Widget

from tutor.panels.logit_lens_panel import LogitLensPanel
from tutor.panels.patching_panel import PatchingPanel
from tutor.panels.residual_lines import ResidualLines
from tutor.panels.residual_panel import ResidualPanel
from tutor.view import View

CHART_ROOM = 20  # rows the tab needs before the lines get a place (at 80×24 it has about 10)
CHART_WIDTH = 50  # cells, likewise
CHART_LOWEST, CHART_HIGHEST = 9, 20  # the chart's own rows: the lens below it keeps the rest


class StreamPanel(VerticalScroll):
    DEFAULT_CSS = """
    StreamPanel { scrollbar-gutter: stable; }  /* the table is made for one width, scrolling or not */
    StreamPanel > ResidualLines { margin: 0 1 1 1; }
    StreamPanel > LogitLensPanel { margin: 0 1 1 1; }
    StreamPanel > PatchingPanel { display: none; height: auto; margin: 0 1 1 1; }
    StreamPanel > PatchingPanel > .patching-title { height: auto; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._view: View | None = None
        self._room: tuple[int, int] = (0, 0)

    def compose(self) -> ComposeResult:
        yield PatchingPanel()  # while a patch is among the edits: what the learner asked about comes first
        yield ResidualLines()
        yield LogitLensPanel()
        yield ResidualPanel()

    def room(self) -> tuple[int, int]:
        """(width, height) of the tab: its own, or (a tab not laid out yet) its nearest laid-out ancestor's."""
        if self.size.height:
            return self.size.width, self.size.height
        for node in self.ancestors:
            if isinstance(node, Widget) and node.size.height:
                return node.content_size.width, node.content_size.height
        return 0, 0

    def show(self, view: View) -> None:
        self._view = view
        self._room = width, height = self.room()
        lines, lens, table = (
            self.query_one(ResidualLines),
            self.query_one(LogitLensPanel),
            self.query_one(ResidualPanel),
        )
        self.query_one(PatchingPanel).show(view)
        lens.show(view)
        table.show(view)
        chart = view.n_tokens > 0 and height >= CHART_ROOM and width >= CHART_WIDTH
        if chart:
            rows = min(CHART_HIGHEST, max(CHART_LOWEST, height - lens.height_at(width) - 2))
            if lines.styles.height is None or lines.styles.height.value != rows:
                lines.styles.height = rows
            lines.show(view)
        if chart != lines.display:
            lines.display = chart
            # with the lines, the lens comes next and the table after; without, the table stands in first
            if chart:
                self.move_child(lens, after=lines)
            else:
                self.move_child(lens, after=table)

    def on_resize(self, event: Resize) -> None:
        if self._view is not None and self.room() != self._room:
            self.show(self._view)
