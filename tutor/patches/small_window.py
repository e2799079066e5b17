"""Below the smallest useful size every screen asks for a larger window, the modals too, not only the main screen.

A modal (F2's lesson list, F9's links, F10's practice menu, the command palette) laid out in a window one to six
columns wide gave its text a width of 0, and Rich's `chop_cells` raised (`range() arg 3 must not be zero`): the
app crashed. `install()` wraps Textual's `Screen._refresh_layout`, which every layout of a screen goes through (a
resize, a screen shown again, a refresh), so that before a layout in a window too small a screen's own widgets
are hidden (an inline `display: none`, taken back once the window is large enough) and one line, mounted the
first time, asks for a larger window. Only the screens of an app that names its smallest size (`MIN_SIZE`, a
Size) are guarded, and not those of the classes given as `own_guard` (the main screen keeps its widgets in place
and shows the same words): any other app in the process (a test's, at 40×12) lays out as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

NOTICE_CLASS = "window-too-small"
_HIDDEN = "_tutor_hidden_while_small"  # a screen's widgets this module hid, to show again


def _hide_for_small_window(screen: Screen[Any], size: Size, min_size: Size, words: Callable[[Size], str]) -> None:
    small = size.width < min_size.width or size.height < min_size.height
    hidden: list[Widget] | None = getattr(screen, _HIDDEN, None)
    if small:
        notices = [child for child in screen.children if child.has_class(NOTICE_CLASS)]
        if hidden is None:
            hidden = [child for child in screen.children if child.display and child not in notices]
            for child in hidden:
                child.display = False
            setattr(screen, _HIDDEN, hidden)
        if notices:
            notice = notices[0]
            notice.display = True
            if isinstance(notice, Static):
                notice.update(words(size))
        else:
            screen.mount(Static(words(size), classes=NOTICE_CLASS, markup=False))
    elif hidden is not None:
        for child in screen.children:
            if child.has_class(NOTICE_CLASS):
                child.display = False
        for child in hidden:
            child.styles.clear_rule("display")  # back to what the screen's CSS says
        setattr(screen, _HIDDEN, None)


def install(words: Callable[[Screen[Any], Size], str], own_guard: tuple[type, ...]) -> None:
    """Every screen of an app with a MIN_SIZE, but those of the `own_guard` classes, asks for a window of at least
    that size with `words(screen, size)`."""
    original = Screen._refresh_layout
    if getattr(original, "_tutor_small_window", False):
        return

    def _refresh_layout(self: Screen[Any], size: Size | None = None, scroll: bool = False) -> None:
        min_size = getattr(self.app, "MIN_SIZE", None)
        if isinstance(min_size, Size) and not isinstance(self, own_guard) and self.is_attached:
            now = self.outer_size if size is None else size
            if now:
                _hide_for_small_window(self, now, min_size, lambda at: words(self, at))
        original(self, size, scroll)

    _refresh_layout._tutor_small_window = True  # type: ignore[attr-defined]
    Screen._refresh_layout = _refresh_layout  # type: ignore[method-assign]
