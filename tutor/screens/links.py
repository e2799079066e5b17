"""The lesson's links as a list, so that everything a lesson can do is one key away (no mouse needed)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class LinkPickerScreen(ModalScreen[str | None]):
    """Pick one of the lesson's `tutor:` links; dismisses with its target (or None)."""

    BINDINGS = [Binding("escape,f9", "dismiss_none", "Close")]
    DEFAULT_CSS = """
    LinkPickerScreen { align: center middle; }
    LinkPickerScreen > Vertical { width: 80; max-width: 100%; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; }
    LinkPickerScreen OptionList { height: auto; max-height: 30; border: none; }
    """

    def __init__(self, links: list[tuple[str, str]], title: str) -> None:
        super().__init__()
        self.links, self.title_text = links, title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f" {self.title_text}")
            yield OptionList(*[Option(f"{n:>2}. {label}", id=str(n)) for n, (label, _) in enumerate(self.links, 1)])

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.links[int(event.option.id or 1) - 1][1])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
