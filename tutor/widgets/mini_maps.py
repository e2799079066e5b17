"""Several small value grids side by side, each under its title, drawn a line at a time (Textual's Line API).

One cell per value, no digits: a shade glyph (light to full) on the cell's colour, so that the picture
reads under NO_COLOR too; a masked value (NaN) is a dim dot, never a blank or a zero. The maps wrap to
several bands when they do not fit the width, and their cells shrink (4×2, 2×1, 1×1 terminal cells) when
they do not fit the room. In a big grid a window of rows and columns is shown that holds a focus cell (it
stays put while the focus moves inside it, and centres on the focus when it leaves), and the selected row
is marked ▸ in every map. The widget knows nothing of attention: the caller hands it
the grids, their titles and how to colour a value.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

SCALES = ((4, 2), (2, 1), (1, 1))  # a cell's width × height in terminal cells, largest first
GAP = 2  # columns between two maps
MARK, MASKED = "▸", "·"
MIN_ROOM = 5  # the caption, the titles and three rows of each map


@dataclass(frozen=True)
class MiniMap:
    """One grid: its title and its values (rows × columns; NaN is a masked cell). `selected`: its title lit
    and in brackets."""

    title: str
    values: np.ndarray
    selected: bool = False


@dataclass(frozen=True)
class MapLayout:
    """Where the maps go: cell size, maps per band, bands, the window of rows and columns shown."""

    cell_width: int
    cell_height: int
    per_band: int
    bands: int
    rows: range
    cols: range
    slot: int  # columns per map: the marker column and the cells, or the title if wider

    @property
    def band_height(self) -> int:
        return 1 + len(self.rows) * self.cell_height

    @property
    def height(self) -> int:
        return 1 + self.bands * self.band_height  # the caption line, then the bands


def window(size: int, total: int, focus: int) -> range:
    """`size` consecutive indices of `total`, `focus` as near the middle as the ends allow."""
    size = min(size, total)
    start = min(max(0, focus - size // 2), total - size)
    return range(start, start + size)


def map_layout(
    n_maps: int, n_rows: int, n_cols: int, width: int, height: int, focus: tuple[int, int], title_width: int = 1
) -> MapLayout | None:
    """The layout showing the most cells in `width` × `height` (a caption line included); among those the
    biggest cells, then the fewest bands. None when not even one cell of each map fits."""
    best: tuple[tuple[int, int, int], MapLayout] | None = None
    for cell_w, cell_h in SCALES:
        for wanted in range(1, n_maps + 1):
            per_band = math.ceil(n_maps / wanted)
            bands = math.ceil(n_maps / per_band)
            slot = (width + GAP) // per_band - GAP
            cols = min(n_cols, (slot - 1) // cell_w)
            rows = min(n_rows, ((height - 1) // bands - 1) // cell_h)
            if cols < 1 or rows < 1 or slot < title_width:
                continue
            layout = MapLayout(
                cell_w,
                cell_h,
                per_band,
                bands,
                window(rows, n_rows, focus[0]),
                window(cols, n_cols, focus[1]),
                max(title_width, 1 + cols * cell_w),
            )
            score = (rows * cols, cell_w * cell_h, -bands)
            if best is None or score > best[0]:
                best = (score, layout)
    return best[1] if best else None


def _digest(maps: Sequence[MiniMap]) -> bytes:
    """The maps' values, all of them, in 16 bytes: what their cells look like depends on nothing else."""
    hasher = hashlib.blake2b(digest_size=16)
    for m in maps:
        values = np.ascontiguousarray(m.values, dtype=np.float64)
        hasher.update(f"{values.shape}".encode())
        hasher.update(values.tobytes())
    return hasher.digest()


class MiniMaps(Widget):
    """Small grids side by side under their titles; its height follows what fits (see `set_maps`)."""

    DEFAULT_CSS = """
    MiniMaps { height: auto; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.maps: list[MiniMap] = []
        self.caption = ""
        self.selected_row: int | None = None
        self.focus_cell = (0, 0)
        self.style_for: Callable[[float], Style] = lambda value: Style()
        self.fraction: Callable[[float], float] = lambda value: value
        self.glyph: Callable[[float], str] = lambda fraction: " "
        self.window_words: Callable[[range, range, int, int], str] | None = None
        self.reserve, self.share = 0, 0.5
        self._key: tuple[object, ...] = ()
        self._lines: dict[tuple[int, ...], Strip] = {}
        # strips of the last few contents, by content: back to a token shown before, nothing is drawn again
        self._drawn: OrderedDict[tuple[object, ...], dict[tuple[int, ...], Strip]] = OrderedDict()
        # a map row's cells (all its columns) by (map, row, cell width, line in the cell), while the values stay:
        # the next token moves the window and the marker, not the cells
        self._values: bytes = b""
        self._row_cells: dict[tuple[int, int, int, int], list[Segment]] = {}
        self._layouts: dict[tuple[int, int], MapLayout | None] = {}
        self._windows: dict[tuple[int, int, int, int], tuple[range, range]] = {}  # by size and shape: see _stick
        self._base: Style | None = None

    def set_maps(
        self,
        maps: Sequence[MiniMap],
        *,
        caption: str = "",
        selected_row: int | None = None,
        focus: tuple[int, int] | None = None,
        style_for: Callable[[float], Style] | None = None,
        fraction: Callable[[float], float] | None = None,
        glyph: Callable[[float], str] | None = None,
        window_words: Callable[[range, range, int, int], str] | None = None,
        reserve: int = 0,
        share: float = 0.5,
    ) -> bool:
        """Show `maps` (all the same shape). `style_for(value)`: a cell's style; `glyph(fraction(value))` its
        character. `focus` (row, column): kept in the window when not all fits (the selected row, else 0).
        `window_words(rows, cols, n_rows, n_cols)`: appended to the caption when only a window is shown.
        The maps take the room their parent has left after `reserve` rows for the widgets beside them, or
        `share` of it when that leaves them less than MIN_ROOM rows. False when nothing changed (then nothing
        is drawn again)."""
        values = _digest(maps)
        style_for, fraction, glyph = style_for or self.style_for, fraction or self.fraction, glyph or self.glyph
        key = (
            values,
            tuple((m.title, m.selected) for m in maps),
            caption,
            selected_row,
            focus,
            style_for,
            fraction,
            glyph,
            window_words,
            reserve,
            share,
        )
        if key == self._key:
            return False
        relayout = (reserve, share, [m.values.shape for m in maps]) != (
            self.reserve,
            self.share,
            [m.values.shape for m in self.maps],
        )
        if (values, style_for, fraction, glyph) != (self._values, self.style_for, self.fraction, self.glyph):
            self._row_cells.clear()
        self._key, self._values = key, values
        self.maps, self.caption, self.selected_row = list(maps), caption, selected_row
        self.focus_cell = focus if focus is not None else (selected_row or 0, selected_row or 0)
        self.style_for, self.fraction, self.glyph = style_for, fraction, glyph
        self.window_words = window_words
        self.reserve, self.share = reserve, share
        self._layouts.clear()
        drawn = self._drawn.pop(key, None)
        self._lines = drawn if drawn is not None else {}
        self._drawn[key] = self._lines
        while len(self._drawn) > 8:
            self._drawn.popitem(last=False)
        self.refresh(layout=relayout)
        return True

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._lines.clear()
        self._row_cells.clear()
        self._drawn.clear()
        self._drawn[self._key] = self._lines

    @property
    def base(self) -> Style:
        """The widget's own style (looked up once: Textual computes it from every ancestor)."""
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def room(self, height: int) -> int:
        """The rows the maps may take of their parent's `height`: what the widgets beside them leave, if that
        holds a few rows of each map; else `share` of it (they then share the room)."""
        left = height - self.reserve
        return left if left >= MIN_ROOM else int(height * self.share)

    def layout_for(self, width: int, height: int) -> MapLayout | None:
        if (width, height) in self._layouts:
            return self._layouts[width, height]
        layout = None
        if self.maps and self.maps[0].values.size:
            n_rows, n_cols = self.maps[0].values.shape
            title_width = max(cell_len(m.title) + 2 * m.selected for m in self.maps)
            layout = map_layout(len(self.maps), n_rows, n_cols, width, height, self.focus_cell, title_width)
            layout = self._stick(layout, (width, height, n_rows, n_cols))
        self._layouts[width, height] = layout
        return layout

    def _stick(self, layout: MapLayout | None, size: tuple[int, int, int, int]) -> MapLayout | None:
        """The window where it was while the focus is still in it (the next token then moves the marker only:
        a few cells to send down the line, not every map); when the focus leaves, centred on it again."""
        if layout is None:
            return None
        before = self._windows.get(size)
        if before is not None:
            rows, cols = before
            focus_row, focus_col = self.focus_cell
            same_size = (len(rows), len(cols)) == (len(layout.rows), len(layout.cols))
            if same_size and focus_row in rows and focus_col in cols:
                layout = replace(layout, rows=rows, cols=cols)
        self._windows[size] = (layout.rows, layout.cols)
        return layout

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        layout = self.layout_for(width, self.room(container.height))
        return layout.height if layout else 0

    def current_layout(self) -> MapLayout | None:
        """The layout as drawn now, in the widget's own size."""
        return self.layout_for(self.size.width, self.size.height)

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        layout = self.layout_for(width, height)
        key = (y, width, height, *((layout.rows.start, layout.cols.start) if layout else ()))
        strip = self._lines.get(key)
        if strip is None:
            strip = self._lines[key] = self._draw_line(y, width, height)
        return strip

    def _draw_line(self, y: int, width: int, height: int) -> Strip:
        base = self.base
        layout = self.layout_for(width, height)
        if layout is None or y >= layout.height:
            return Strip.blank(width, base)
        if y == 0:
            n_rows, n_cols = self.maps[0].values.shape
            text = self.caption
            if self.window_words and (len(layout.rows) < n_rows or len(layout.cols) < n_cols):
                text += self.window_words(layout.rows, layout.cols, n_rows, n_cols)
            return Strip([Segment(text, base)]).crop(0, width).extend_cell_length(width, base)
        band, line = divmod(y - 1, layout.band_height)
        first = band * layout.per_band
        maps = range(first, min(len(self.maps), first + layout.per_band))
        segments: list[Segment] = []
        gap = Segment(" " * GAP, base)
        for i in maps:
            if i > first:
                segments.append(gap)
            if line == 0:
                segments.append(self._title(self.maps[i], layout.slot, base))
            else:
                index, sub = divmod(line - 1, layout.cell_height)
                segments.extend(self._cells(i, layout, layout.rows.start + index, sub, base))
        used = len(maps) * layout.slot + (len(maps) - 1) * GAP
        if used > width:
            return Strip(segments).crop(0, width).extend_cell_length(width, base)
        segments.append(Segment(" " * (width - used), base))
        return Strip(segments, width)

    def _title(self, m: MiniMap, slot: int, base: Style) -> Segment:
        title = f"[{m.title}]" if m.selected else m.title  # brackets too: under NO_COLOR reverse may be all there is
        text = title if cell_len(title) <= slot else set_cell_size(title, slot)
        left = (slot - cell_len(text)) // 2
        text = " " * left + text + " " * (slot - left - cell_len(text))
        return Segment(text, base + Style(bold=True, reverse=True) if m.selected else base + Style(dim=True))

    def _cells(self, index: int, layout: MapLayout, row: int, sub: int, base: Style) -> list[Segment]:
        """One line of map `index` at `row`: the marker column, the cells in the window, padding to the slot."""
        marked = row == self.selected_row and sub == 0
        segments = [Segment(MARK, base + Style(bold=True)) if marked else Segment(" ", base)]
        segments += self._row(index, row, layout.cell_width, sub, base)[layout.cols.start : layout.cols.stop]
        used = 1 + len(layout.cols) * layout.cell_width
        if used < layout.slot:
            segments.append(Segment(" " * (layout.slot - used), base))
        return segments

    def _row(self, index: int, row: int, cell_width: int, sub: int, base: Style) -> list[Segment]:
        """Every cell of one map row, one segment each (cached while the values stay)."""
        key = (index, row, cell_width, sub)
        cells = self._row_cells.get(key)
        if cells is None:
            masked = Segment((MASKED if sub == 0 else " ").center(cell_width), base + Style(dim=True))
            cells = []
            for value in self.maps[index].values[row].tolist():
                if math.isfinite(value):
                    style = base + self.style_for(value)
                    cells.append(Segment(self.glyph(self.fraction(value)) * cell_width, style))
                else:
                    cells.append(masked)
            if len(self._row_cells) > 20000:
                self._row_cells.clear()
            self._row_cells[key] = cells
        return cells
