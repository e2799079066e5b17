"""What every experiment screen shares: a title line, Escape to go back, the footer, the language."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

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
    FOOTER_ZH: ClassVar[dict[str, str]] = {}  # a subclass's footer descriptions in Chinese: {"Scroll": "滚动"}
    DEFAULT_CSS = """
    ExperimentScreen > #experiment-title { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__()
        self.gpt = gpt
        self.prompt = prompt
        self.lang = lang
        if lang == "zh":
            self._footer_in_chinese({"Back": "返回", **self.FOOTER_ZH})

    def _footer_in_chinese(self, words: dict[str, str]) -> None:
        """Bindings are declared once per class in English; this screen's copy of them speaks Chinese."""
        for key, bindings in self._bindings.key_to_bindings.items():
            self._bindings.key_to_bindings[key] = [
                replace(binding, description=words.get(binding.description, binding.description))
                for binding in bindings
            ]

    def compose(self) -> ComposeResult:
        yield Static(f"[b]tutor[/b] · {title(self.NAME, self.lang)}", id="experiment-title")
        yield from self.compose_body()
        yield Footer(compact=True)

    def compose_body(self) -> ComposeResult:
        yield from ()

    def action_back(self) -> None:
        self.dismiss(None)
