"""A theme looked up by name without copying every theme first.

`App.get_theme` reads `App.available_themes`, a property that copies the registered themes into a new dict,
twice a name. Every drawn line asks for the ANSI theme (`StylesCache.render_line`'s `post`, through
`App.ansi_theme` → `current_theme` → `get_theme`), and every widget drawn asks again for it and for
`native_ansi_color`: on a step key some sixty lookups, each copying some twenty themes twice. Here the same
lookup reads the registered themes in place.
"""

from __future__ import annotations

from textual.app import App
from textual.theme import Theme


def get_theme(self: App[object], theme_name: str) -> Theme | None:
    """As Textual's `App.get_theme`: the first of the comma-separated names that is registered."""
    registered = self._registered_themes
    for name in theme_name.split(","):
        theme = registered.get(name.strip())
        if theme is not None:
            return theme
    return None


def install() -> None:
    """Process-wide, once."""
    if getattr(App.get_theme, "_tutor_theme_lookup", False):
        return
    get_theme._tutor_theme_lookup = True  # type: ignore[attr-defined]
    get_theme.__wrapped__ = App.get_theme  # type: ignore[attr-defined]
    App.get_theme = get_theme  # type: ignore[method-assign]
