"""The main screen's tabs, made from the catalogue (tutor/catalogue.py): one pane per panel, its id the panel's name."""

from __future__ import annotations

from functools import partial
from typing import Protocol, cast

from textual.containers import VerticalScroll
from textual.widget import Widget

from tutor.catalogue import PANEL, PANEL_LIST, Panel, load_class
from tutor.view import View
from tutor.widgets.panel_switcher import Pane


class Shows(Protocol):
    def show(self, view: View) -> None: ...


def tab_panes() -> list[Pane]:
    """Every tab's pane, in the catalogue's order, as its id and what makes it: a panel's module is imported when
    the switcher mounts it (the panels not in view after the first frame: ~10 ms less before it)."""
    return [(panel.name, partial(make_pane, panel)) for panel in PANEL_LIST if panel.tab]


def import_tab_panels() -> None:
    """Every tab's panel module imported (the panes themselves are made when first shown)."""
    for panel in PANEL_LIST:
        if panel.tab:
            load_class(panel.widget)


def make_pane(panel: Panel) -> Widget:
    """A tab's pane: the panel's widget, or (a panel that scrolls) a VerticalScroll holding it."""
    widget = load_class(panel.widget)
    return VerticalScroll(widget(), id=panel.name) if panel.scrolls else widget(id=panel.name)


def drawn_by(pane: Widget) -> Shows:
    """The widget that draws a tab's pane: the pane itself, or the one it scrolls."""
    return cast(Shows, pane.children[0] if PANEL[pane.id or ""].scrolls else pane)
