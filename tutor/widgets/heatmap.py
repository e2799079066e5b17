"""A grid of numbers on coloured cells, drawn a line at a time (Textual's Line API).

The label column and the header row stay put while the cells scroll, so a 768-wide vector
costs no more to draw than what fits on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.geometry import Region, Size
from textual.strip import Strip

from tutor.number_style import diverging_style, fmt
from tutor.patches.quiet_scroll_view import QuietScrollView
from tutor.widgets.legend import legend_kind, legend_segments

CELL = 6  # five characters and a gap


@dataclass(frozen=True)
class GridRow:
    """One row: a label and its values; a row without values is a section title. `scale`: the row's own
    colour scale (a section of small values beside one of large ones), else the grid's; a section title
    with a scale shows that section's legend after its words (where it fits whole)."""

    label: str
    values: np.ndarray | None = None
    highlight: bool = False
    scale: float | None = None


def fit_cells(text: str, width: int) -> str:
    """Right-aligned in exactly `width` terminal cells (a Chinese character takes two)."""
    return " " * (width - cell_len(text)) + text if cell_len(text) <= width else set_cell_size(text, width)


class HeatmapGrid(QuietScrollView, can_focus=True):
    """Rows of values as coloured cells with their digits; header and labels stay in view."""

    DEFAULT_CSS = """
    HeatmapGrid { height: auto; max-height: 100%; scrollbar-size: 1 1; }
    """

    def __init__(self, *, label_width: int = 14, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.label_width = label_width
        self.rows: list[GridRow] = []
        self.columns: list[str] = []
        self.scale = 1.0
        self.style_for: Callable[[float, float], Style] = diverging_style
        self.number: Callable[[float], str] = fmt
        self._lines: dict[tuple[object, ...], Strip] = {}  # drawn lines, until the data changes
        # rows drawn before, by what they show: typing one more token changes a few rows, not all of them
        self._row_lines: dict[tuple[object, ...], Strip] = {}
        self.legend: str | None = None  # the colour scale's legend under the rows (diverging or sequential)
        self._highlighted: int | None = None  # the selected row's index
        self._follow = False  # it changed: scroll it into view once laid out
        self._base: Style | None = None  # the widget's style while a frame draws it (see render_lines)
        self._frame: tuple[int, tuple[int, int], int | None] | None = None  # width, scroll, legend line: ditto

    def set_rows(
        self,
        rows: Sequence[GridRow],
        columns: Sequence[str],
        scale: float | None = None,
        style_for: Callable[[float, float], Style] = diverging_style,
        number: Callable[[float], str] = fmt,
        legend: bool = True,
    ) -> None:
        """`legend`: a line under the rows with the colour scale and its range, when `style_for` is one of
        the two scales (`diverging_style`, `probability_style`) — not when rows have scales of their own:
        then each section's title shows its own."""
        self.rows, self.columns, self.style_for, self.number = list(rows), list(columns), style_for, number
        values = [r.values for r in self.rows if r.values is not None and r.values.size]
        own = any(r.scale is not None for r in self.rows)
        if scale is None:  # the grid's scale, from the rows that have none of their own (on every keystroke)
            shared = [r.values for r in self.rows if r.values is not None and r.values.size and r.scale is None]
            largest = [float(np.abs(v[np.isfinite(v)]).max(initial=0.0)) for v in shared]
            scale = max(largest) if largest and max(largest) > 0 else 1.0
        self.scale = scale
        self.legend = legend_kind(style_for) if legend and values and not own else None
        self.set_virtual_size(Size(self.label_width + CELL * len(self.columns), len(self.rows) + 1 + self.legend_lines))
        self._lines.clear()
        highlighted = next((i for i, row in enumerate(self.rows) if row.highlight), None)
        if highlighted != self._highlighted:  # a new selected row: scrolled into view (once, so the wheel can leave it)
            self._highlighted, self._follow = highlighted, highlighted is not None
        self.keep_highlight_in_view()
        self.refresh()

    def keep_highlight_in_view(self, again: bool = True) -> None:
        """Scroll so that a newly selected row (the token of a long prompt) is in view below the header; a grid
        not laid out yet does it when it is (see on_resize). Forced: a tab drawn before its layout has no
        scrollbar yet, and would not scroll."""
        region = self.content_region
        scrollbar = self.styles.scrollbar_size_horizontal if self.virtual_size.width > region.width else 0
        # rows under the header, above the legend and a scrollbar (that may not be drawn yet)
        shown = region.height - scrollbar - 1 - self.legend_lines
        if not self._follow or self._highlighted is None or shown <= 0:
            return
        self._follow = False
        top = round(self.scroll_y)
        if self._highlighted < top:
            target = self._highlighted
        elif self._highlighted >= top + shown:
            target = self._highlighted - shown + 1
        else:
            return
        self.scroll_to(y=target, animate=False, force=True)
        if again and round(self.scroll_y) != target:  # held back by a scrollbar not laid out yet: once more after
            self._follow = True
            self.call_after_refresh(self.keep_highlight_in_view, False)

    def on_resize(self, event: Resize) -> None:
        if self._highlighted is not None:
            self._follow = True
        self.keep_highlight_in_view()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self._row_lines.clear()

    @property
    def legend_lines(self) -> int:
        return 1 if self.legend else 0

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows) + 1 + self.legend_lines

    def legend_line(self) -> int | None:
        """Where the legend is drawn: under the last row, or on the last line when the rows scroll."""
        if not self.legend:
            return None
        return min(len(self.rows) + 1, self.scrollable_content_region.height - 1)

    def render_lines(self, crop: Region) -> list[Strip]:
        # `rich_style` walks up every ancestor's styles (~40 µs), the content region is computed afresh on
        # every read: once a frame, not once (or thrice) a line
        self._base = self.rich_style
        self._frame = (self.scrollable_content_region.width, self.scroll_offset, self.legend_line())
        try:
            return super().render_lines(crop)
        finally:
            self._base, self._frame = None, None

    @property
    def base_style(self) -> Style:
        return self._base if self._base is not None else self.rich_style

    def _now(self) -> tuple[int, tuple[int, int], int | None]:
        """Width, scroll offset and legend line: the frame's (see render_lines), or read afresh outside one."""
        if self._frame is not None:
            return self._frame
        return self.scrollable_content_region.width, self.scroll_offset, self.legend_line()

    def render_line(self, y: int) -> Strip:
        width, (scroll_x, scroll_y), legend_line = self._now()
        if self.legend and y == legend_line:
            key = (-1, self.legend, self.scale, width, self.app.no_color)
            strip = self._lines.get(key)
            if strip is None:
                base = self.base_style
                segments = [Segment(" " * self.label_width, base)]
                segments += legend_segments(self.legend, self.scale, self.app.no_color, base)
                strip = Strip(segments).crop(0, width).extend_cell_length(width, base)
                self._lines[key] = strip
            return strip
        whole = max(1, self.whole_cells(width))
        first = min(-(-scroll_x // CELL), max(0, len(self.columns) - whole))  # scrolled right to the end: all whole
        # y and the scroll apart, and the legend's line: a line below the legend is drawn blank, and keyed by
        # y + scroll_y that blank (y 13, unscrolled) stood in for a row after a scroll (y 9, scrolled by 4):
        # lesson 5's "sum" row drawn empty. The rows themselves are kept by content in _row_lines.
        key = (y, 0 if y == 0 else scroll_y, first, width, legend_line)
        strip = self._lines.get(key)
        if strip is None:
            strip = self._lines[key] = self._draw_line(y, width, first, scroll_y)
        return strip

    def whole_cells(self, width: int) -> int:
        """Cells that fit whole beside the labels: a number is never cut at the right edge, its column is
        left out instead (the last cell needs its five characters, not the gap after them)."""
        return max(0, (width - self.label_width + 1) // CELL)

    def _draw_line(self, y: int, width: int, first: int, scroll_y: int) -> Strip:
        n_cells = self.whole_cells(width)
        base = self.base_style
        if y == 0:  # the header stays on top
            label = Segment(" " * self.label_width, base)
            cells = [
                Segment(fit_cells(c, CELL - 1) + " ", base + Style(dim=True))
                for c in self.columns[first : first + n_cells]
            ]
            return Strip([label, *cells]).crop(0, width).extend_cell_length(width, base)
        index = y - 1 + scroll_y
        if index >= len(self.rows) or (self.legend and y > (self._now()[2] or 0)):
            return Strip.blank(width, base)
        row = self.rows[index]
        if row.values is None:
            return self._draw_row(row, width, first)
        scale = self.scale if row.scale is None else row.scale
        key = (row.label, row.highlight, row.values.tobytes(), width, first, scale, self.style_for, self.number)
        strip = self._row_lines.get(key)
        if strip is None:
            if len(self._row_lines) > 4096:
                self._row_lines.clear()
            strip = self._row_lines[key] = self._draw_row(row, width, first)
        return strip

    def _draw_row(self, row: GridRow, width: int, first: int) -> Strip:
        n_cells = self.whole_cells(width)
        base = self.base_style
        label_style = base + Style(bold=True, reverse=row.highlight) if row.highlight else base
        if row.values is None:
            segments = [Segment(row.label, base + Style(bold=True, underline=True))]
            kind = legend_kind(self.style_for)
            if row.scale is not None and kind is not None:
                legend = [Segment("  ", base), *legend_segments(kind, row.scale, self.app.no_color, base)]
                if Strip(segments + legend).cell_length <= width:  # a legend cut short would mislead
                    segments += legend
            return Strip(segments).crop(0, width).extend_cell_length(width, base)
        label = Text(row.label, style=label_style)
        label.truncate(self.label_width - 1, pad=True)
        label.append(" ")
        segments = [
            Segment(seg.text, label_style + seg.style if seg.style else label_style)
            for seg in label.render(self.app.console)
        ]
        scale = self.scale if row.scale is None else row.scale
        for value in row.values[first : first + n_cells]:
            value = float(value)
            # the gap takes the cell's colour too: a row reads as one band of colour, and the terminal gets one
            # style change per cell instead of two (the bytes of a step key are mostly these)
            segments.append(Segment(self.number(value).rjust(CELL - 1) + " ", base + self.style_for(value, scale)))
        return Strip(segments).crop(0, width).extend_cell_length(width, base)
