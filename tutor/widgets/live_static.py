"""A Static for numbers that change on every keystroke but rarely change shape."""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


class LiveStatic(Static):
    """Re-lays out the screen only when the content's height changes; otherwise it just redraws."""

    _shape: object = None

    def show_content(self, content: VisualType, shape: object) -> None:
        """`shape`: anything that changes exactly when the height may (a row count, a flag)."""
        if not self.size.width:  # hidden (a tab not shown yet): showing it will lay it out anyway
            self.update(content, layout=False)
            self._shape = None
            return
        self.update(content, layout=shape != self._shape)
        self._shape = shape
