"""A ScrollView that redraws its scrollbars only when its size or its content's size changed."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


class QuietScrollView(ScrollView):
    """Every layout of the screen hands a ScrollView its region as "virtual size", and ScrollView
    answers by redrawing its scrollbars: a frame's worth of bytes on every key that switches a panel,
    for a widget that did not change. Our Line-API widgets set their virtual size themselves."""

    _laid_out: tuple[Size, Size, Size] | None = None  # size, container size, virtual size

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        unchanged = (size, container_size, self.virtual_size)
        if unchanged == self._laid_out:
            return False
        self._laid_out = unchanged
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        self._paint_scrollbars_now()
        return changed

    def _paint_scrollbars_now(self) -> None:
        """Scrollbars the new size moved, painted in the frame this layout is making. `_size_updated` runs inside
        the layout, after the widgets are placed and before the frame is drawn, but a scrollbar's repaint goes
        round as a message, and came a frame later: a second frame, for two scrollbars, on every typed key that
        adds a row (~3 ms). Their later messages find nothing left to paint."""
        bars = {self._vertical_scrollbar, self._horizontal_scrollbar, self._scrollbar_corner}
        dirty = {bar for bar in bars if bar is not None and bar._repaint_regions}
        if dirty and self.is_attached:
            self.screen._compositor.update_widgets(dirty)
