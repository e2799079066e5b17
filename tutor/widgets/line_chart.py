"""Several curves on one pair of axes, drawn a line at a time (Textual's Line API).

With colour each series is a braille line (2×4 dots per cell) in its own colour; without colour
(NO_COLOR) braille dots of different series look alike, so each series is drawn with its own
marker character instead, one per cell. The legend shows colour and marker either way, as a
short stroke "━*━" in the series' colour before its name. The y axis may be logarithmic
(`log_y`): values that span 1.5 to 18 then all get room, the small differences at the bottom too.
The x axis may carry named ticks (`x_ticks`, say the points of a pass) instead of numbers, and a
vertical marker (`x_marker`, "┊" down the empty cells of one column: where the learner is).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

Y_LABEL_WIDTH = 7  # "10.00 ┤"-style tick labels left of the plot
# a log axis labels round numbers, the roundest first: 1, 2, 5, then 3, 1.5, … times a power of ten
LOG_TICK_MANTISSAS = (1.0, 2.0, 5.0, 3.0, 1.5, 4.0, 7.0, 2.5, 6.0, 8.0, 9.0)
# braille dot bits by (column, row) inside a cell: the Unicode block is 0x2800 + the sum of the bits
DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
BLANK: tuple[str, Style | None] = (" ", None)  # a plot cell no curve passes through
MARKER_STYLE = Style(dim=True)  # the marker's dotted column


@dataclass(frozen=True)
class Series:
    """One curve: points (x, y) in order, a colour, and a marker for the legend and for NO_COLOR."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    color: str = "white"
    marker: str = "•"
    dashed: bool = False  # for reference lines such as a baseline
    legend: bool = True  # False: drawn, but not named in the legend (the many lines one entry names)
    points: bool = False  # True: each point is its marker in its colour, nothing between them (on top of the lines)


def tick_text(value: float, whole: bool = False) -> str:
    """An axis number in at most six cells: 3.22, 12.5, 3000, 1.2e+04; `whole` numbers without decimals."""
    for decimals in (0,) if whole else (2, 1, 0):
        text = f"{value:.{decimals}f}"
        if text.startswith("-") and float(text) == 0:  # a tick at 0 by rounding error: not "-0.00"
            text = text[1:]
        if len(text) <= 6:
            return text
    return f"{value:.0e}"


def linear_ticks(low: float, high: float, rows: int) -> dict[int, str]:
    """Labels of a linear y axis by row, top row 0 = `high`, last row = `low`: five (fewer when fewer rows fit,
    never two on one row, which left a curve reaching +1 under a top label of 0.50), each the value at its row."""
    ticks = min(5, rows)
    if ticks == 1:
        return {0: tick_text(high)}
    step = (high - low) / (ticks - 1)
    return {round(i * (rows - 1) / (ticks - 1)): tick_text(high - i * step) for i in range(ticks)}


def log_ticks(low: float, high: float, row_of: Callable[[float], int], rows: int) -> dict[int, str]:
    """Round values between `low` and `high` (> 0) for a log axis, by row: the roundest first, each at
    least two rows from the others; the two ends when no two round values fit."""
    chosen: dict[int, str] = {}
    powers = range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
    for mantissa in LOG_TICK_MANTISSAS:
        for power in powers:
            value = float(f"{mantissa}e{power}")  # 0.3, not 0.30000000000000004
            row = row_of(value)
            if low <= value <= high and 0 <= row < rows and all(abs(row - other) >= 2 for other in chosen):
                chosen[row] = f"{value:g}"
    if len(chosen) < 2:
        chosen = {row_of(high): tick_text(high), row_of(low): tick_text(low)}
    return chosen


class LineChart(Widget):
    """Axes with tick labels, titles for both axes, a legend, and any number of series."""

    DEFAULT_CSS = """
    LineChart { height: 1fr; min-height: 8; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[Series] = []
        self.x_label = ""
        self.y_label = ""
        self.x_range: tuple[float, float] | None = None
        self.y_range: tuple[float, float] | None = None
        self.log_y = False
        self.x_ticks: list[tuple[float, str]] | None = None
        self.x_marker: float | None = None
        self._strips: list[Strip] | None = None
        self._drawn_for: tuple[int, int, bool] | None = None
        # the plot's cells without the marker, and what they were made for: a step key moves only the marker
        self._curves: tuple[object, list[list[tuple[str, Style | None]]]] | None = None

    def set_series(
        self,
        series: Sequence[Series],
        *,
        x_label: str = "",
        y_label: str = "",
        x_range: tuple[float, float] | None = None,
        y_range: tuple[float, float] | None = None,
        log_y: bool = False,
        x_ticks: Sequence[tuple[float, str]] | None = None,
        x_marker: float | None = None,
    ) -> None:
        """Replace the curves. Without a range the axes fit the data; points outside a range are clipped.
        `log_y`: a logarithmic y axis (values ≤ 0 are left out). `x_ticks`: (x, name) pairs under the axis
        instead of numbers (a name that would touch the one before is left out). `x_marker`: a dotted
        vertical line at that x."""
        self.series = list(series)
        self.x_label, self.y_label = x_label, y_label
        self.x_range, self.y_range = x_range, y_range
        self.log_y = log_y
        self.x_ticks = list(x_ticks) if x_ticks is not None else None
        self.x_marker = x_marker
        self._strips = None
        self._curves = None
        self.refresh()

    def move_marker(self, x_marker: float | None, y_label: str | None = None) -> None:
        """Move the vertical marker (and retitle), the curves unchanged: only the title row and the marker's
        old and new columns are drawn again, so a step key sends a few cells, not the whole chart."""
        old = self.x_marker
        self.x_marker = x_marker
        if y_label is not None:
            self.y_label = y_label
        self._strips = None
        width, height = self.size
        if not width or not height:
            self.refresh()
            return
        braille = not self.app.no_color
        x_range, _ = self.ranges()
        plot_width, plot_height = self._plot_size(width, height)
        regions = [Region(0, 0, width, 1)]  # the title
        for x in (old, x_marker):
            if x is not None:
                column = Y_LABEL_WIDTH + self._column(x, x_range, plot_width, braille)
                regions.append(Region(column, 1, 1, plot_height))
        self.refresh(*regions)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips = None
        self._curves = None

    # -- geometry ---------------------------------------------------------------------------

    def ranges(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The x and y ranges the axes show: the given ones, or the data's, never empty."""
        xs = [float(x) for s in self.series for x in s.xs if math.isfinite(x)]
        ys = [float(y) for s in self.series for y in s.ys if self._plottable(y)]
        x_range = self.x_range or ((min(xs), max(xs)) if xs else (0.0, 1.0))
        y_range = self.y_range or ((min(ys), max(ys)) if ys else ((1.0, 10.0) if self.log_y else (0.0, 1.0)))
        if self.log_y and y_range[0] <= 0:  # a log axis starts above 0: at the lowest value it can draw
            low = min(ys, default=1.0)
            y_range = (low, max(y_range[1], low))
        return _widen(x_range), _widen(y_range)

    def _plottable(self, y: float) -> bool:
        return math.isfinite(y) and (y > 0 or not self.log_y)

    def _axis(self, y: float) -> float:
        """Where y sits along the y axis: y itself, or its logarithm."""
        return math.log(y) if self.log_y else y

    @staticmethod
    def swatch(s: Series) -> str:
        """The series in the legend: a stroke of its line (dashed for a reference line) around its marker."""
        if s.points:
            return f" {s.marker} "
        stroke = "╍" if s.dashed else "━"
        return f"{stroke}{s.marker}{stroke}"

    def legend_lines(self, width: int) -> list[list[Segment]]:
        """The legend: "━•━ name" entries, wrapped to the width."""
        lines: list[list[Segment]] = [[]]
        used = 0
        for s in self.series:
            if not s.legend:
                continue
            entry = [Segment(self.swatch(s), Style(color=s.color, bold=True)), Segment(f" {s.name}  ", Style())]
            size = sum(cell_len(seg.text) for seg in entry)
            if used and used + size > width:
                lines.append([])
                used = 0
            lines[-1].extend(entry)
            used += size
        return lines if lines[0] else []

    # -- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        key = (width, height, self.app.no_color)
        if self._strips is None or self._drawn_for != key:
            self._strips = self._draw(width, height, braille=not self.app.no_color)
            self._drawn_for = key
        return self._strips[y] if y < len(self._strips) else Strip.blank(width, self.rich_style)

    def _plot_size(self, width: int, height: int) -> tuple[int, int]:
        """The plot's cells across and down, inside the tick labels, the titles, the x axis and the legend."""
        titles = 2 if self.x_label else 1  # the y title on top; the x title below the ticks, if there is one
        return max(1, width - Y_LABEL_WIDTH), max(1, height - 2 - titles - len(self.legend_lines(max(1, width))))

    def _draw(self, width: int, height: int, braille: bool) -> list[Strip]:
        base = self.rich_style
        dim = base + Style(dim=True)
        legend = self.legend_lines(max(1, width))
        plot_width, plot_height = self._plot_size(width, height)
        (x0, x1), (y0, y1) = self.ranges()
        cells = self._plot_cells(plot_width, plot_height, (x0, x1), (y0, y1), braille)

        strips = [Strip([Segment(self.y_label, dim)]).crop(0, width).extend_cell_length(width, base)]
        if self.log_y:
            dots_y = 4 if braille else 1
            top, bottom = self._axis(y1), self._axis(y0)

            def row_of(value: float) -> int:  # the row the curves put `value` in
                return round((top - self._axis(value)) / (top - bottom) * (plot_height * dots_y - 1)) // dots_y

            tick_rows = log_ticks(y0, y1, row_of, plot_height)
        else:
            tick_rows = linear_ticks(y0, y1, plot_height)
        for row in range(plot_height):
            label = f"{tick_rows[row]:>6}┤" if row in tick_rows else "      │"
            segments = [Segment(label, dim)]
            for text, style in cells[row]:
                segments.append(Segment(text, base + style if style else base))
            strips.append(Strip(segments).crop(0, width).extend_cell_length(width, base))
        strips.append(Strip([Segment("      └" + "─" * plot_width, dim)]).crop(0, width))
        if self.x_ticks is not None:
            named = [(self._column(x, (x0, x1), plot_width, braille), name) for x, name in self.x_ticks]
            tick_line = place_labels(named, plot_width)
        else:
            ticks = [" "] * plot_width
            whole = float(x0).is_integer() and float(x1).is_integer() and x1 - x0 >= 10  # steps, counts
            for fraction in (0.0, 0.5, 1.0):
                text = tick_text(x0 + fraction * (x1 - x0), whole).strip()
                start = min(max(0, round(fraction * (plot_width - 1)) - len(text) // 2), max(0, plot_width - len(text)))
                ticks[start : start + len(text)] = list(text)
            tick_line = "".join(ticks)
        strips.append(Strip([Segment(" " * Y_LABEL_WIDTH + tick_line, dim)]).crop(0, width))
        if self.x_label:
            x_title = " " * max(0, width - cell_len(self.x_label)) + self.x_label  # by cells: 训练步数 takes eight
            strips.append(Strip([Segment(x_title, dim)]).crop(0, width))
        for line in legend:  # every segment styled: NO_COLOR's filter cannot take a segment without a style
            segments = [Segment(" ", base), *(Segment(seg.text, base + seg.style) for seg in line)]
            strips.append(Strip(segments).crop(0, width).extend_cell_length(width, base))
        return [strip.extend_cell_length(width, base) for strip in strips[:height]]

    def _column(self, x: float, x_range: tuple[float, float], plot_width: int, braille: bool = True) -> int:
        """The plot cell column the curves put `x` in."""
        x0, x1 = x_range
        dots_x = 2 if braille else 1
        return round((x - x0) / (x1 - x0) * (plot_width * dots_x - 1)) // dots_x

    def _plot_cells(
        self,
        plot_width: int,
        plot_height: int,
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        braille: bool,
    ) -> list[list[tuple[str, Style | None]]]:
        """Each plot cell as (character, style): braille dots, or one marker per cell; the marker's column dotted
        where no curve passes."""
        cells = self._curve_cells(plot_width, plot_height, x_range, y_range, braille)
        if self.x_marker is None:
            return cells
        column = self._column(self.x_marker, x_range, plot_width, braille)
        marked = []
        for line in cells:
            if 0 <= column < len(line) and line[column] == BLANK:
                line = [*line]
                line[column] = ("┊", MARKER_STYLE)
            marked.append(line)
        return marked

    def _curve_cells(
        self,
        plot_width: int,
        plot_height: int,
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        braille: bool,
    ) -> list[list[tuple[str, Style | None]]]:
        """The plot's cells without the marker: made again only for other curves, ranges or size (~1 ms of the
        Residual tab's step key, where only the marker moves)."""
        made_for = (plot_width, plot_height, x_range, y_range, braille)
        if self._curves is not None and self._curves[0] == made_for:
            return self._curves[1]
        dots_x, dots_y = (2, 4) if braille else (1, 1)
        columns, rows = plot_width * dots_x, plot_height * dots_y
        bits = [[0] * plot_width for _ in range(plot_height)]
        owner: list[list[Series | None]] = [[None] * plot_width for _ in range(plot_height)]
        (x0, x1), (y0, y1) = x_range, (self._axis(y_range[0]), self._axis(y_range[1]))

        def to_dot(x: float, y: float) -> tuple[float, float]:
            return (x - x0) / (x1 - x0) * (columns - 1), (y1 - self._axis(y)) / (y1 - y0) * (rows - 1)

        glyphs: dict[tuple[int, int], Series] = {}  # (row, column) → the points series drawn there
        for s in reversed(self.series):  # the first series ends on top where curves cross
            if s.points:
                for x, y in zip(s.xs, s.ys, strict=True):
                    if math.isfinite(x) and self._plottable(float(y)):
                        dx, dy = to_dot(float(x), float(y))
                        if 0 <= round(dx) < columns and 0 <= round(dy) < rows:
                            glyphs[(round(dy) // dots_y, round(dx) // dots_x)] = s
                continue
            points = [
                to_dot(float(x), float(y))
                for x, y in zip(s.xs, s.ys, strict=True)
                if math.isfinite(x) and self._plottable(float(y))
            ]
            if len(points) == 1:
                points = points * 2
            for (ax, ay), (bx, by) in itertools.pairwise(points):
                n = max(1, math.ceil(max(abs(bx - ax), abs(by - ay))))
                for k in range(n + 1):
                    dx, dy = round(ax + (bx - ax) * k / n), round(ay + (by - ay) * k / n)
                    if not (0 <= dx < columns and 0 <= dy < rows):
                        continue  # clipped: outside the axes' range
                    if s.dashed and (dx // (2 * dots_x)) % 2:
                        continue
                    cx, cy = dx // dots_x, dy // dots_y
                    bits[cy][cx] |= DOT_BITS[dx % 2][dy % 4] if braille else 1
                    owner[cy][cx] = s
        cells: list[list[tuple[str, Style | None]]] = []
        for row in range(plot_height):
            line: list[tuple[str, Style | None]] = []
            for column in range(plot_width):
                s = owner[row][column]
                if (row, column) in glyphs:
                    mark = glyphs[(row, column)]
                    line.append((mark.marker, Style(color=None if not braille else mark.color, bold=True)))
                elif s is None:
                    line.append(BLANK)
                elif braille:
                    line.append((chr(0x2800 + bits[row][column]), Style(color=s.color)))
                else:
                    line.append((s.marker, Style(bold=True)))
            cells.append(line)
        self._curves = (made_for, cells)
        return cells


def place_labels(labels: Sequence[tuple[int, str]], width: int) -> str:
    """A line of `width` cells with each name centred on its column. Where the names would touch (come
    closer than one cell) or run off the line, every second one is named (the first kept), else every third…"""
    line = ""
    for stride in range(1, len(labels) + 1):
        line, all_placed = _place_labels(labels[::stride], width)
        if all_placed:
            break
    return line or " " * width


def _place_labels(labels: Sequence[tuple[int, str]], width: int) -> tuple[str, bool]:
    """The names placed left to right, one that would touch the one before it left out; and whether none was."""
    cells: list[str] = [" "] * width
    free_from = 0  # the first cell a name may start at
    all_placed = True
    for column, name in labels:
        size = cell_len(name)
        start = min(max(0, column - (size - 1) // 2), width - size)
        if start < free_from or start < 0:
            all_placed = False
            continue
        cells[start] = name
        for i in range(start + 1, start + size):
            cells[i] = ""  # taken by the name's later cells (a CJK character is two)
        free_from = start + size + 1
    return "".join(cells), all_placed


def _widen(span: tuple[float, float]) -> tuple[float, float]:
    low, high = span
    if high > low:
        return low, high
    pad = abs(low) * 0.05 or 1.0
    return low - pad, high + pad
