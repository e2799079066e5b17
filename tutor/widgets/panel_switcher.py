"""The panels' names (tutor/widgets/panel_tabs.py), and the one panel shown under them.

Textual's TabbedContent draws each tab as a widget, with an underline that moves a frame after
the tab changes: on every step key that changes panel, a dozen widgets repainted and a second
frame. Here the names are one line of text and the switch is a ContentSwitcher's.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ContentSwitcher

from tutor.widgets.panel_tabs import PanelTabs


class PanelSwitcher(Vertical):
    """The tab line, then the panel whose id is `active` (the panes are given, each with its id)."""

    DEFAULT_CSS = "PanelSwitcher > ContentSwitcher { height: 1fr; }"

    @dataclass
    class Switched(Message):
        """Another panel is shown (by the tabs or by code)."""

        switcher: PanelSwitcher
        panel: str

        @property
        def control(self) -> PanelSwitcher:  # what `@on(PanelSwitcher.Switched, "#id")` matches
            return self.switcher

    def __init__(self, labels: dict[str, str], *panes: Widget, id: str | None = None) -> None:
        super().__init__(id=id)
        self._labels = labels
        self._panes = panes

    def compose(self) -> ComposeResult:
        first = self._panes[0].id if self._panes else None
        tabs = PanelTabs(self._labels)
        tabs.active = first or ""
        yield tabs
        yield ContentSwitcher(*self._panes, initial=first)

    @property
    def active(self) -> str:
        return self.query_one(ContentSwitcher).current or ""

    @active.setter
    def active(self, panel: str) -> None:
        switcher = self.query_one(ContentSwitcher)
        if panel == switcher.current:
            return
        switcher.current = panel
        self.query_one(PanelTabs).active = panel
        self.post_message(self.Switched(self, panel))

    def set_labels(self, labels: dict[str, str]) -> None:
        self.query_one(PanelTabs).set_labels(labels)

    def on_panel_tabs_chosen(self, message: PanelTabs.Chosen) -> None:
        message.stop()
        self.active = message.panel
