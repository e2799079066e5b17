"""A ScrollView that redraws its scrollbars only when its size or its content's size changed, and whose content's
size can change without laying the screen out."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widget import Widget


class QuietScrollView(ScrollView):
    """Every layout of the screen hands a ScrollView its region as "virtual size", and ScrollView
    answers by redrawing its scrollbars: a frame's worth of bytes on every key that switches a panel,
    for a widget that did not change. Our Line-API widgets set their virtual size themselves."""

    _laid_out: tuple[Size, Size, Size] | None = None  # size, container size, virtual size

    def set_virtual_size(self, size: Size) -> None:
        """`virtual_size = size`, which lays the whole screen out (~2 ms), unless the layout could change nothing
        but the scrollbars' thumbs: the widget is laid out, its size does not follow its content (no `auto`
        width or height), and the same scrollbars are shown. Then the thumbs are set here, as the layout would
        set them (`_scroll_update`), and painted in the next frame. A typed key adds a row to a grid of fixed
        height: a layout for the thumb alone, on every key."""
        if size == self.virtual_size:
            return
        height, width = self.styles.height, self.styles.width
        fixed = height is not None and not height.is_auto and width is not None and not width.is_auto
        if not (fixed and self.size and self.container_size and self.is_attached):
            self.virtual_size = size
            return
        shown = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        self.set_reactive(Widget.virtual_size, size)
        self._scroll_update(size)  # the scrollbars shown, their thumbs, the scroll kept within the new size
        if (self.show_horizontal_scrollbar, self.show_vertical_scrollbar) != shown:
            return  # a scrollbar came or went: it takes room, and its setter has asked for the layout
        self._laid_out = (self.size, self.container_size, size)  # what the next layout would find: nothing new
        self._paint_scrollbars_now()

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
