"""What every experiment screen shares: a title line, Escape to go back, the footer, the language."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from model import GPT
from tutor.screens.experiments import title


class ExperimentScreen(Screen[None]):
    """Subclasses set `NAME` (a key of `SCREENS`) and yield their widgets from `compose_body`."""

    NAME = ""
    BINDINGS = [Binding("escape", "back", "Back", key_display="Esc")]
    DEFAULT_CSS = """
    ExperimentScreen > #experiment-title { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__()
        self.gpt = gpt
        self.prompt = prompt
        self.lang = lang

    def compose(self) -> ComposeResult:
        yield Static(f"[b]tutor[/b] · {title(self.NAME, self.lang)}", id="experiment-title")
        yield from self.compose_body()
        yield Footer(compact=True)

    def compose_body(self) -> ComposeResult:
        yield from ()

    def action_back(self) -> None:
        self.dismiss(None)
