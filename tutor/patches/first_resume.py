"""A screen's first ScreenResume without styling the whole screen again.

Textual's `Screen._on_screen_resume` styles every node of the screen again (`update_node_styles`) each time the
screen comes to the front, the first time too. A screen just pushed has had each of its widgets styled as it was
mounted (`App._register` applies the stylesheet), and a class or pseudo-class changed since styled its node at
once; what the first restyle could still change is a widget styled before some CSS was added. CSS added after the
screen was registered is the DEFAULT_CSS of widget classes met for the first time while it composed: scoped CSS
(Textual's default) matches only a widget of that class and what is inside it, all registered after the CSS came.
So the first resume skips the restyle when every CSS source added since the screen's registration is scoped; it
styled the main screen's ~60 widgets again before the first frame, ~5 ms of a start.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.screen import Screen

_SOURCES = "_tutor_css_at_register"  # the stylesheet's sources when the screen was registered
_RESUMED = "_tutor_resumed"


def _only_scoped_css_since(screen: Screen[Any], app: App[Any]) -> bool:
    before = getattr(screen, _SOURCES, None)
    if before is None:
        return False
    sources = app.stylesheet.source
    return all(sources[key].scope for key in sources.keys() - before)


def install() -> None:
    """Process-wide, once."""
    if getattr(Screen._on_screen_resume, "_tutor_first_resume", False):
        return
    original_resume = Screen._on_screen_resume
    original_post_register = Screen._post_register

    def _post_register(self: Screen[Any], app: App[Any]) -> None:
        original_post_register(self, app)
        setattr(self, _SOURCES, frozenset(app.stylesheet.source))

    def _on_screen_resume(self: Screen[Any], event: events.ScreenResume) -> None:
        first = not getattr(self, _RESUMED, False)
        setattr(self, _RESUMED, True)
        if first and event.refresh_styles and _only_scoped_css_since(self, self.app):
            event.refresh_styles = False  # every widget was styled as it was mounted
        original_resume(self, event)

    _on_screen_resume._tutor_first_resume = True  # type: ignore[attr-defined]
    _on_screen_resume.__wrapped__ = original_resume  # type: ignore[attr-defined]
    _post_register.__wrapped__ = original_post_register  # type: ignore[attr-defined]
    Screen._post_register = _post_register  # type: ignore[method-assign]
    Screen._on_screen_resume = _on_screen_resume  # type: ignore[method-assign]
