"""The panels' names on one line: the shown one lit; a click, or ←/→ while focused, picks another."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


class PanelTabs(Widget, can_focus=True):
    """One line: every panel's name, the shown one lit; a click, or ←/→ while focused, picks one."""

    BINDINGS = [
        Binding("left", "move(-1)", "Previous panel", show=False),
        Binding("right", "move(1)", "Next panel", show=False),
    ]
    COMPONENT_CLASSES = {"panel-tabs--active"}
    DEFAULT_CSS = """
    PanelTabs {
        height: 1; padding: 0 1; color: $text-muted;
        link-style: none; link-color: $text-muted; link-background: transparent;  # a tab, not a hyperlink
        link-style-hover: bold; link-color-hover: $text; link-background-hover: $boost;
    }
    PanelTabs > .panel-tabs--active { color: $text; background: $primary-muted; text-style: bold; }
    PanelTabs:focus > .panel-tabs--active { background: $accent; color: $text; }
    """
    active: reactive[str] = reactive("")

    @dataclass
    class Chosen(Message):
        panel: str

    def __init__(self, labels: dict[str, str]) -> None:
        super().__init__()
        self.labels = dict(labels)
        # the line as drawn for each tab lit: a step key lights another tab, one of a few lines drawn before
        # (Textual draws this Content with its click links anew each time: ~0.5 ms, a sixth of a step key's frame)
        self._lines: dict[tuple[object, ...], Strip] = {}

    def render_line(self, y: int) -> Strip:
        key = (y, self.active, tuple(self.labels.items()), self.size, self.has_focus, self.app.no_color)
        if self.text_selection is not None:
            return super().render_line(y)
        line = self._lines.get(key)
        if line is None:
            if len(self._lines) > 64:
                self._lines.clear()
            line = self._lines[key] = super().render_line(y)
        return line

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()  # a new theme, or the focus's colours

    def set_labels(self, labels: dict[str, str]) -> None:
        self.labels = dict(labels)
        self.refresh()

    def render(self) -> Content:
        lit = Style.from_rich_style(self.get_component_rich_style("panel-tabs--active"))
        if self.app.no_color:  # without colours a background shows nothing: reverse the shown panel's name
            lit += Style(reverse=True)
        items = list(self.labels.items())
        first, end = self.window([cell_len(label) + 2 for _, label in items], self.content_size.width)
        parts: list[Content] = []
        for index in range(first, end):
            panel, label = items[index]
            tab = Content(f" {label} ").stylize(f"@click=choose({index})")
            parts.append(tab.stylize(lit) if panel == self.active else tab)
        line = Content(" ").join(parts)
        if (first, end) == (0, len(items)):
            return line
        return Content.assemble("‹" if first else " ", line, " ›" if end < len(items) else "")

    def window(self, widths: list[int], room: int) -> tuple[int, int]:
        """The tabs in view, [first, end): all when they fit; else a run that fits beside ‹ and ›, with the
        shown tab in it (a narrow panel area must not hide the very tab it shows)."""

        def fitting(first: int, space: int) -> int:
            end, used = first, -1
            while end < len(widths) and used + 1 + widths[end] <= space:
                used += 1 + widths[end]
                end += 1
            return max(end, first + 1)

        if not room or fitting(0, room) == len(widths):
            return 0, len(widths)
        active = list(self.labels).index(self.active) if self.active in self.labels else 0
        first = 0
        while fitting(first, room - 3) <= active:
            first += 1
        return first, fitting(first, room - 3)

    def action_choose(self, index: int) -> None:
        panels = list(self.labels)
        if 0 <= index < len(panels):
            self.post_message(self.Chosen(panels[index]))

    def action_move(self, delta: int) -> None:
        panels = list(self.labels)
        here = panels.index(self.active) if self.active in panels else 0
        self.post_message(self.Chosen(panels[(here + delta) % len(panels)]))
