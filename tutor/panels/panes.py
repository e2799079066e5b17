"""The main screen's tabs, made from the catalogue (tutor/catalogue.py): one pane per panel, its id the panel's name."""

from __future__ import annotations

from typing import Protocol, cast

from textual.containers import VerticalScroll
from textual.widget import Widget

from tutor.catalogue import PANEL, PANEL_LIST, load_class
from tutor.view import View


class Shows(Protocol):
    def show(self, view: View) -> None: ...


def tab_panes() -> list[Widget]:
    """Every tab's pane, in the catalogue's order: the panel's widget, or (a panel that scrolls) a VerticalScroll
    holding it."""
    panes: list[Widget] = []
    for panel in PANEL_LIST:
        if panel.tab:
            widget = load_class(panel.widget)
            panes.append(VerticalScroll(widget(), id=panel.name) if panel.scrolls else widget(id=panel.name))
    return panes


def drawn_by(pane: Widget) -> Shows:
    """The widget that draws a tab's pane: the pane itself, or the one it scrolls."""
    return cast(Shows, pane.children[0] if PANEL[pane.id or ""].scrolls else pane)
