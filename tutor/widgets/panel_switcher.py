"""The panels' names (tutor/widgets/panel_tabs.py), and the one panel shown under them.

Textual's TabbedContent draws each tab as a widget, with an underline that moves a frame after
the tab changes: on every step key that changes panel, a dozen widgets repainted and a second
frame. Here the names are one line of text and the switch is a ContentSwitcher's.

Only the first panel is mounted with the switcher: mounting the hidden ones (their widgets, their
styles) was a fifth of the time to the first screen, and every widget mounted costs on every key after it
(Textual's message handling; the pilot's wait sends each a callback). The rest are mounted by `mount_hidden`
(those a step key opens, after the first frame: a step key should not wait for a mount) or when first asked
for (F6, a click, a lesson: ~25 ms more, once); a panel still mounting is shown once it is mounted, and `on_shown` is
called as it is shown, before any frame can show it, so the panel in view is always a whole one. A pane may be
given as its id and what makes it: it is made when mounted.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import AwaitMount, Widget
from textual.widgets import ContentSwitcher

from tutor.widgets.panel_tabs import PanelTabs

Pane = Widget | tuple[str, Callable[[], Widget]]  # a pane, or its id and what makes it when it is mounted


def _pane_id(pane: Pane) -> str:
    return (pane.id or "") if isinstance(pane, Widget) else pane[0]


def _made(pane: Pane) -> Widget:
    return pane if isinstance(pane, Widget) else pane[1]()


class Switcher(ContentSwitcher):
    """A ContentSwitcher that does not repaint itself when the panel changes: it draws nothing of its own under
    the panel it shows (the layout that shows the new panel repaints that), and its 26 blank lines, redrawn
    on every step key that switches the panel, were ~1 ms of it."""

    current: reactive[str | None] = reactive(None, init=False, repaint=False)


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

    def __init__(
        self,
        labels: dict[str, str],
        *panes: Pane,
        id: str | None = None,
        on_shown: Callable[[str], object] | None = None,
    ) -> None:
        """`on_shown(panel)`: a panel that was still mounting when asked for is shown (draw it there: the Switched
        message comes after, and a frame may come between)."""
        super().__init__(id=id)
        self._on_shown = on_shown
        self._order = [_pane_id(pane) for pane in panes]
        self._unmounted = {_pane_id(pane): pane for pane in panes[1:]}  # mounted by mount_hidden or when asked for
        first = _made(panes[0]) if panes else None
        # the two parts, held: every step key asks them (a query walks the children)
        self._tabs = PanelTabs(labels)
        self._tabs.active = (first.id or "") if first else ""
        self._switcher = Switcher(*([first] if first else []), initial=first.id if first else None)
        self._mounting: dict[str, AwaitMount] = {}
        self._wanted: str | None = None  # asked for while still mounting: shown once mounted

    def compose(self) -> ComposeResult:
        yield self._tabs
        yield self._switcher

    def pane(self, panel: str) -> Widget:
        """The pane of a panel mounted."""
        return self._switcher.get_child_by_id(panel)

    @property
    def active(self) -> str:
        """The panel shown (one asked for that is still mounting is not shown yet)."""
        return self._switcher.current or ""

    @property
    def asked(self) -> str:
        """The panel asked for last: one still mounting, else the one shown. F6 steps on from this one, or a
        quick F6 F6 F6 just after the start would ask for the same panel three times."""
        return self._wanted or self.active

    @active.setter
    def active(self, panel: str) -> None:
        if panel in self._unmounted or panel in self._mounting:
            self._wanted = panel
            self._mount(panel)
            return
        self._wanted = None
        switcher = self._switcher
        if panel == switcher.current:
            return
        switcher.current = panel
        self._tabs.active = panel
        self.post_message(self.Switched(self, panel))

    def mount_hidden(self, panels: Collection[str] | None = None) -> None:
        """Mount these panels (None: every one) not mounted yet; they stay hidden until shown."""
        for panel in list(self._unmounted):
            if panels is None or panel in panels:
                self._mount(panel)

    async def settled(self) -> None:
        """Once every panel being mounted is: the panel asked for in the meantime is shown."""
        while self._mounting:
            await next(iter(self._mounting.values()))
        self._show_wanted()

    def _mount(self, panel: str) -> None:
        given = self._unmounted.pop(panel, None)
        if given is None:
            return
        pane = _made(given)
        switcher = self._switcher
        later = [p for p in self._order[self._order.index(panel) + 1 :] if p not in self._unmounted]  # in order
        pane.display = False
        mounting = switcher.mount(pane, before=f"#{later[0]}" if later else None)
        self._mounting[panel] = mounting

        async def mounted() -> None:
            await mounting
            self._mounting.pop(panel, None)
            self._show_wanted()

        self.call_next(mounted)

    def _show_wanted(self) -> None:
        wanted = self._wanted
        if wanted is not None and wanted not in self._mounting and wanted not in self._unmounted:
            self.active = wanted
            if self._on_shown is not None:
                self._on_shown(wanted)

    def set_labels(self, labels: dict[str, str]) -> None:
        self._tabs.set_labels(labels)

    def on_panel_tabs_chosen(self, message: PanelTabs.Chosen) -> None:
        message.stop()
        self.active = message.panel
