"""Textual's footer, showing only the keys that fit whole beside the palette key on the right."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEPT_ACTIONS = frozenset({"help"})  # shown whatever else is left out: the help lists every key


def _width(widget: Widget) -> int:
    """Cells the widget takes in the footer's row: its text, padding and border, and its margin."""
    content = widget.get_content_width(widget.app.size, widget.app.size)
    return content + widget.styles.gutter.width + widget.styles.margin.width


class TutorFooter(Footer):
    """A footer whose keys that do not fit before the palette key are left out, not laid beneath it.

    Textual's footer lays its keys out in a row that scrolls beneath the palette key (docked right).
    There they showed through the palette key's margin (a stray "l" in the last cell, "palettel"),
    and their edges cut the palette key's Chinese in half: the compositor divides each line at every
    widget's edge, and a double-width character so divided is drawn as blanks ("^p 命令面" for
    "^p 命令面板"). The keys left out are in the help (F1) and in the command palette.
    """

    _recompose_queued = False
    _queued_under: Screen | None = None  # the screen on top when the recompose was asked for

    def bindings_changed(self, screen: Screen) -> None:
        """As Textual's, but one recompose for any number of changes before it runs: the start changes the
        bindings five times (mount, focus, language, size), and each recompose mounted every key again."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if not (self.is_attached and screen is self.screen):
            return
        top = screen.app.screen  # call_after_refresh waits for this screen's refresh: a modal popped first drops it
        if self._recompose_queued and self._queued_under is top:
            return
        self._recompose_queued, self._queued_under = True, top
        self.call_after_refresh(self.recompose)

    def compose(self) -> ComposeResult:
        """Textual's keys, each made with the footer's "-compact" class: its `compact`, bound to the footer's, sets
        that class once mounted, and a class that changes restyles the key (~0.3 ms a key, ~15 keys at the start)."""
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        self._recompose_queued = False  # a change from here on needs another
        shown = self._shown()
        if shown is not None and shown == self._composed:
            return  # the same keys (a focus change, a panel mounted): mounting them all again would only cost
        self._composed = shown
        await super().recompose()
        self.fit_keys()
        self.call_after_refresh(self.fit_keys)  # again once the new keys have their styles (compact: less padding)

    _composed: object = None  # what the keys shown were composed from

    def _shown(self) -> object:
        """Everything Footer.compose reads: the screen's active bindings, with whether each is enabled."""
        if not self._bindings_ready:
            return None
        bindings = tuple((b, enabled, tip) for _, b, enabled, tip in self.screen.active_bindings.values())
        return self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE, self.compact, bindings

    def on_resize(self) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        """The keys in order while they fit; the help key (F1) whatever comes before it, as it lists the rest."""
        docked = [child for child in self.children if child.styles.dock != "none"]
        room = self.size.width - sum(_width(child) for child in docked)
        kept = [child for child in self.children if isinstance(child, FooterKey) and child.action in KEPT_ACTIONS]
        room -= sum(_width(child) for child in kept)
        used = 0
        for child in self.children:
            if child in kept:
                child.display = room >= 0
            elif child not in docked:
                used += _width(child)
                child.display = used <= room
