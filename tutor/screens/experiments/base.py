"""What every experiment screen shares: a title line, Escape to go back, the footer, the language."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Input, Static

from model import GPT
from tutor.catalogue import experiment_title
from tutor.i18n import t
from tutor.runner import failure_words
from tutor.widgets.footer import TutorFooter


class ExperimentScreen(Screen[None]):
    """Subclasses set `NAME` (their line's in `tutor.catalogue.EXPERIMENT_LIST`) and yield their widgets from
    `compose_body`."""

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
        yield Static(f"[b]tutor[/b] · {experiment_title(self.NAME, self.lang)}", id="experiment-title")
        yield from self.compose_body()
        yield TutorFooter(compact=True)

    def compose_body(self) -> ComposeResult:
        yield from ()

    def action_back(self) -> None:
        self.dismiss(None)

    def take_options(self, options: dict[str, str]) -> None:
        """What a link asks the screen to open on (`tutor:experiment?name=…&key=value`); most take none."""
        if options:
            self.notify(t("no_options", self.lang, name=self.NAME, options=", ".join(options)), severity="warning")

    def pass_failed(self, error: Exception) -> None:
        """A pass that failed: one line, and the screen goes on (see `tutor.runner`)."""
        self.notify(failure_words(error, self.lang), severity="error", markup=False)


class PromptExperimentScreen(ExperimentScreen):
    """An experiment driven by a prompt box (`#PROMPT_ID`): it has the focus from the start, every
    change recomputes, and the screen takes the class `-wide` from `WIDE` columns on."""

    PROMPT_ID: ClassVar[str] = "prompt"
    WIDE: ClassVar[int] = 120

    def on_mount(self) -> None:
        prompt = self.query_one(f"#{self.PROMPT_ID}", Input)
        prompt.cursor_blink = False
        prompt.focus()
        self.recompute()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width >= self.WIDE, "-wide")
        self.call_after_refresh(self.show_result)

    @on(Input.Changed)
    def prompt_changed(self, event: Input.Changed) -> None:
        if event.input.id == self.PROMPT_ID:
            self.recompute()

    def recompute(self) -> None:
        """Run the experiment on the prompt (in a worker)."""

    def show_result(self) -> None:
        """Draw the latest result for the screen's size."""
