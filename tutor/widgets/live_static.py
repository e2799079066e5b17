"""A Static for numbers that change on every keystroke but rarely change shape."""

from __future__ import annotations

from rich.text import Text
from textual.visual import VisualType
from textual.widgets import Static


class LiveStatic(Static):
    """Re-lays out the screen only when the content's height changes; otherwise it just redraws."""

    _shape: object = None
    _shown: VisualType | None = None

    def show_content(self, content: VisualType, shape: object) -> None:
        """`shape`: anything that changes exactly when the height may at a given width (a row count, a
        flag); a new width needs no part in it, as a resize lays the screen out anyway."""
        if isinstance(content, (str, Text)) and content == self._shown and shape == self._shape:
            return  # the same picture (the tokens while stepping): redrawing it would only cost bandwidth
        self._shown = content
        if not self.size.width:  # hidden (a tab not shown yet): showing it lays it out anyway
            self.update(content, layout=False)
            self._shape = shape
            return
        self.update(content, layout=shape != self._shape)
        self._shape = shape
