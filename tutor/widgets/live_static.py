"""A Static for numbers that change on every keystroke but rarely change shape."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.events import Resize
from textual.visual import VisualType
from textual.widget import Widget
from textual.widgets import Static


def laid_out_width(widget: Widget, own: int) -> int:
    """The cells a widget not laid out yet (a hidden tab, drawn before the layout that shows it) will get:
    its nearest laid-out ancestor's content width, less `own` (what the widget itself takes beside its content:
    its gutter, a margin) and what the containers between take: padding, borders, and a scrollbar they keep
    room for (scrollbar-gutter: stable)."""
    taken = own
    for node in widget.ancestors:
        if not isinstance(node, Widget):
            continue
        if node.size.width:
            return max(0, node.content_size.width - taken)
        taken += node.styles.gutter.width
        if node.styles.scrollbar_gutter == "stable" and node.styles.overflow_y in ("auto", "scroll"):
            taken += node.styles.scrollbar_size_vertical
    return 0


class LiveStatic(Static):
    """Re-lays out the screen only when the content's height changes; otherwise it just redraws."""

    _shape: object = None
    _shown: VisualType | None = None
    _width_used = 0  # what `available_width` said when the content was made
    # a panel whose content depends on its width sets this to draw itself again (see on_resize)
    redraw: Callable[[], None] | None = None

    @property
    def available_width(self) -> int:
        """Cells for the content. A hidden panel (a tab being switched to, drawn before the layout that
        shows it) measures by its nearest laid-out ancestor: the panels' area is one width for every tab."""
        if self.size.width:
            return self.content_size.width
        return laid_out_width(self, self.styles.gutter.width)

    def show_content(self, content: VisualType, shape: object) -> None:
        """`shape`: anything that changes exactly when the height may at a given width (a row count, a
        flag); a new width needs no part in it, as a resize lays the screen out anyway."""
        self._width_used = self.available_width
        if isinstance(content, (str, Text)) and content == self._shown and shape == self._shape:
            return  # the same picture (the tokens while stepping): redrawing it would only cost bandwidth
        self._shown = content
        if not self.size.width:  # hidden (a tab not shown yet): showing it lays it out anyway
            self.update(content, layout=False)
            self._shape = shape
            return
        self.update(content, layout=shape != self._shape)
        self._shape = shape

    def on_resize(self, event: Resize) -> None:
        """Made for a width it did not get (a hidden tab measured by its container, before a scrollbar
        took its two cells): made again, at once, for the width it has."""
        if self.redraw is not None and self.content_size.width != self._width_used:
            self.redraw()
