"""A table of signed values as a picture: one terminal cell per value, no digits (Textual's Line API).

With colour, each cell is the half block '▀' carrying two rows of the table: the upper row's colour
in its foreground, the lower row's in its background, so a 64 × 64 table takes 32 lines. Colours
come from `diverging_style` (blue below 0, red above). Without colour (NO_COLOR) each row of the
table takes a line of its own and each cell is a `shade_glyph` of where the value sits between
−scale (' ') and +scale ('█'). Two lines stay on top while the rows scroll: the title with the axes'
names and the legend (the scale's ends, the colours or shades between), then the column ticks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.events import Resize
from textual.geometry import Size
from textual.strip import Strip

from tutor.number_style import diverging_style, shade_glyph
from tutor.patches.quiet_scroll_view import QuietScrollView

HALF = "▀"
HEADER = 2  # the title line (with the legend) and the column ticks stay on top
TICK_EVERY = 8  # a column number every 8 columns


def glyph_fraction(value: float, scale: float) -> float:
    """Where `value` sits between −scale (0) and +scale (1): the shade a signed value gets without colour."""
    return (min(1.0, max(-1.0, value / scale)) + 1.0) / 2.0 if scale > 0 and np.isfinite(value) else float("nan")


def rows_per_line(no_color: bool) -> int:
    """Table rows a terminal line carries: two half blocks with colour, one glyph without."""
    return 1 if no_color else 2


class ValueMap(QuietScrollView):
    """Rows × columns of signed values as coloured half blocks (or shade glyphs), with axis labels."""

    DEFAULT_CSS = """
    ValueMap { height: auto; max-height: 100%; scrollbar-size: 1 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.values = np.zeros((0, 0))
        self.scale = 1.0
        self.row_title = ""
        self.column_title = ""
        self.marked: frozenset[int] = frozenset()
        self.key: object = None  # what the values were made from: the same key draws nothing new
        self._lines: dict[tuple[object, ...], Strip] = {}

    def set_values(
        self,
        values: np.ndarray,
        *,
        scale: float | None = None,
        row_title: str = "",
        column_title: str = "",
        key: object = None,
    ) -> bool:
        """Show `values` `[rows, columns]`. With a `key` equal to the last one's nothing is redone (the picture is
        the same); returns whether it was redrawn."""
        if key is not None and key == self.key and (row_title, column_title) == (self.row_title, self.column_title):
            return False
        self.key = key
        self.values = np.asarray(values, dtype=np.float64)
        finite = self.values[np.isfinite(self.values)]
        self.scale = scale if scale is not None else (float(np.abs(finite).max()) if finite.size else 1.0) or 1.0
        self.row_title, self.column_title = row_title, column_title
        self._lines.clear()
        self._resize_virtual()
        self.refresh()
        return True

    def set_marked(self, rows: Sequence[int]) -> None:
        """Rows whose labels are lit (the prompt's positions, the selected token): only their labels change."""
        marked = frozenset(rows)
        if marked != self.marked:
            self.marked = marked
            self.refresh()

    # -- geometry -------------------------------------------------------------------------------

    @property
    def label_width(self) -> int:
        """A line's first row number and a mark: narrow, so that 64 columns fit an 70-cell panel with a scrollbar."""
        return len(str(max(0, len(self.values) - 1))) + 1

    def lines_of_rows(self, no_color: bool | None = None) -> int:
        """Terminal lines the table's rows take."""
        per = rows_per_line(self.app.no_color if no_color is None else no_color)
        return -(-len(self.values) // per)

    def _resize_virtual(self) -> None:
        columns = self.values.shape[1] if self.values.ndim == 2 else 0
        self.virtual_size = Size(self.label_width + columns, self.lines_of_rows() + HEADER)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        scrollbar = 1 if self.virtual_size.width > width else 0
        return self.lines_of_rows() + HEADER + scrollbar

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()

    def on_resize(self, event: Resize) -> None:
        self._resize_virtual()

    # -- drawing ------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x, scroll_y = self.scroll_offset
        no_color = self.app.no_color
        if y < HEADER:
            index, kind = -1, ("title", "header")[y]
        elif y - HEADER + scroll_y >= self.lines_of_rows(no_color):
            index, kind = -1, "blank"
        else:
            index, kind = y - HEADER + scroll_y, "row"
        marked = self._marked_in(index, no_color) if kind == "row" else False
        key = (kind, index, marked, width, scroll_x, no_color)
        strip = self._lines.get(key)
        if strip is None:
            if len(self._lines) > 1024:
                self._lines.clear()
            strip = self._lines[key] = self._draw(kind, index, marked, width, scroll_x, no_color)
        return strip

    def _marked_in(self, line: int, no_color: bool) -> bool:
        per = rows_per_line(no_color)
        return any(r in self.marked for r in range(line * per, line * per + per))

    def _draw(self, kind: str, line: int, marked: bool, width: int, scroll_x: int, no_color: bool) -> Strip:
        base = self.rich_style
        dim = base + Style(dim=True)
        label_width = self.label_width
        columns = self.values.shape[1] if self.values.ndim == 2 else 0
        shown = range(scroll_x, min(columns, scroll_x + max(0, width - label_width)))
        if kind == "blank":
            return Strip.blank(width, base)
        if kind == "title":
            return self._title(width, no_color)
        if kind == "header":
            ticks = [" "] * len(shown)
            for j in shown:
                if j % TICK_EVERY == 0 and j - scroll_x + len(str(j)) <= len(shown):
                    at = j - scroll_x
                    ticks[at : at + len(str(j))] = list(str(j))
            segments = [Segment(" " * label_width, dim), Segment("".join(ticks), dim)]
            return Strip(segments).crop(0, width).extend_cell_length(width, base)
        per = rows_per_line(no_color)
        top = line * per
        label = f"{top}".rjust(label_width - 1) + ("▸" if marked else " ")
        label_style = base + Style(bold=True, reverse=True) if marked else dim
        segments = [Segment(label, label_style)]
        for j in shown:
            upper = float(self.values[top, j])
            if no_color:
                segments.append(Segment(shade_glyph(glyph_fraction(upper, self.scale)), base))
                continue
            lower = float(self.values[top + 1, j]) if top + 1 < len(self.values) else None
            fg = diverging_style(upper, self.scale).bgcolor
            bg = diverging_style(lower, self.scale).bgcolor if lower is not None else None
            segments.append(Segment(HALF, base + Style(color=fg, bgcolor=bg)))
        return Strip(segments).crop(0, width).extend_cell_length(width, base)

    def _title(self, width: int, no_color: bool) -> Strip:
        """The title, then the legend '−1.00 ░▒▓█ +1.00': the scale's two ends and the shades (or colours) between."""
        base = self.rich_style
        title = f"{self.column_title}  {self.row_title}" if self.row_title else self.column_title
        segments = [Segment(title + f"  {-self.scale:+.2f} ", base + Style(dim=True))]
        for step in np.linspace(-1.0, 1.0, 9):
            value = float(step) * self.scale
            if no_color:
                segments.append(Segment(shade_glyph(glyph_fraction(value, self.scale)), base))
            else:
                segments.append(Segment(" ", base + Style(bgcolor=diverging_style(value, self.scale).bgcolor)))
        segments.append(Segment(f" {self.scale:+.2f}", base + Style(dim=True)))
        return Strip(segments).crop(0, width).extend_cell_length(width, base)
