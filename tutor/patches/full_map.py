"""After a layout, Textual's compositor keeps its map of every widget marked stale, and builds it again.

`Compositor.update_widgets` marks the full map stale when a repainted widget is not on screen (a panel's
widgets just before a tab switch shows them). `Compositor.reflow`, the layout that follows, builds the full
map afresh (`_arrange_root(…, visible_only=False)`) but leaves the mark: the next `widget.region` of a widget
it cannot find at once (every frame asks the footer's) arranges the whole screen a second time, ~1–2 ms of a
step key. Here the mark goes when the map it stands for has just been built.
"""

from __future__ import annotations

from typing import Any

from textual._compositor import Compositor, ReflowResult
from textual.geometry import Size


def install() -> None:
    """Process-wide, once."""
    original = Compositor.reflow
    if getattr(original, "_tutor_full_map", False):
        return

    def reflow(self: Compositor, parent: Any, size: Size) -> ReflowResult:
        result = original(self, parent, size)
        self._full_map_invalidated = False  # reflow's map is the full map, built just now
        return result

    reflow._tutor_full_map = True  # type: ignore[attr-defined]
    reflow.__wrapped__ = original  # type: ignore[attr-defined]  # what the canary reads (inspect.unwrap)
    Compositor.reflow = reflow  # type: ignore[method-assign]
