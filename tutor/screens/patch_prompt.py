"""The small box alt+p opens: the other prompt a point is patched from."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tutor.edits import MAX_SOURCE


class PatchPromptScreen(ModalScreen[str | None]):
    """Asks for another prompt; dismisses with it (None: cancelled)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close")]
    DEFAULT_CSS = """
    PatchPromptScreen { align: center middle; }
    PatchPromptScreen > Vertical { width: 80; max-width: 100%; height: auto; border: round $accent;
                                   background: $surface; padding: 0 1; }
    PatchPromptScreen Input { border: none; height: 1; }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, markup=False)
            yield Input(max_length=MAX_SOURCE, id="source")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
