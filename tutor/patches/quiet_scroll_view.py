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
        return super()._size_updated(size, virtual_size, container_size, layout)
