"""Lines of Rich text drawn a line at a time (Textual's Line API), repainting only the lines that changed.

A Static repaints all of itself on every update: a table whose ▶ moves down one row on a step key would
send every row to the terminal again. `TextLines.set_lines` compares the new lines with those shown and
refreshes only the ones that differ — two lines for a moved marker — unless the height changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


class TextLines(Widget):
    """Text lines, each wrapped to the width (a long note takes several rows); inside its padding, if any."""

    DEFAULT_CSS = "TextLines { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._lines: list[Text] = []  # as given
        self._rows: list[Text] = []  # wrapped to `_wrapped_at` cells
        self._wrapped_at = 0
        self._strips: dict[int, Strip] = {}

    @property
    def rows(self) -> list[Text]:
        """The rows shown: the lines, wrapped to the width."""
        return self._rows

    def set_lines(self, lines: Sequence[Text]) -> None:
        self._lines = list(lines)
        old = self._rows
        self._wrap(self.size.width)
        if len(self._rows) != len(old) or not self.size.width:
            self.refresh(layout=True)
            return
        width, top, left = self.size.width, self.styles.gutter.top, self.styles.gutter.left  # size: inside the padding
        changed = [
            Region(left, top + y, width, 1) for y, (a, b) in enumerate(zip(old, self._rows, strict=True)) if a != b
        ]
        if changed:
            self.refresh(*changed)

    def _wrap(self, width: int) -> None:
        self._wrapped_at = width
        self._strips = {}
        if width <= 0:
            self._rows = [line.copy() for line in self._lines]
            return
        rows: list[Text] = []
        for line in self._lines:
            if line.cell_len <= width:
                rows.append(line)
            else:
                rows.extend(line.wrap(self.app.console, width, overflow="fold"))
        self._rows = rows

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._wrapped_at:
            before = len(self._rows)
            self._wrap(event.size.width)
            self.refresh(layout=len(self._rows) != before)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._wrapped_at:
            self._wrap(width)
        return len(self._rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(y)
        if strip is None:
            row, console = self._rows[y], self.app.console
            # a line's own style (Text("…", style="dim")) is not in what Text.render yields: Rich applies it when
            # it prints a Text whole, so here it goes under the spans by hand
            base = self.rich_style + console.get_style(row.style) if row.style else self.rich_style
            segments = [
                Segment(segment.text, base + segment.style if segment.style else base)
                for segment in row.render(console, end="")
            ]
            strip = self._strips[y] = Strip(segments).crop(0, width).extend_cell_length(width, self.fill_style(base))
        return strip

    def fill_style(self, base: Style) -> Style:
        """The style of the blank after a row's text."""
        return base
