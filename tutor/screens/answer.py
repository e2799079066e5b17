"""One exercise's hint, and its answer when the learner asks for it (a key): never shown unasked.

Opened by a lesson's `tutor:answer?id=…&n=…` links, the line the app shows in place of the lesson's
`tutor-answers` block (tutor/lessons/answers.py); Esc goes back to the lesson where it was.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.i18n import t
from tutor.lessons.answers import Answer
from tutor.lessons.markdown import short_markdown
from tutor.lessons.parse import Lesson
from tutor.patches.footer_labels import localize_bindings
from tutor.widgets.footer import TutorFooter

KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action
    "back": ("Back", "返回"),
    "reveal": ("Show the answer", "看答案"),
}


class AnswerScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="Esc"),
        Binding("a", "reveal", "Show the answer"),
    ]
    DEFAULT_CSS = """
    AnswerScreen { align: center middle; }
    AnswerScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 90%;
                                    border: round $accent; background: $surface; padding: 0 1; }
    AnswerScreen .heading { text-style: bold; margin: 1 0 0 0; }
    AnswerScreen #answer-hidden { color: $text-muted; margin: 1 0 0 0; }
    """

    def __init__(self, lesson: Lesson, answer: Answer, lang: str) -> None:
        super().__init__()
        self.lesson, self.answer, self.lang = lesson, answer, lang
        self.revealed = False

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = t("answer_title", self.lang, title=self.lesson.title, n=self.answer.n)
            yield Static(t("answer_hint", self.lang), classes="heading", markup=False)
            yield Static(short_markdown(self.answer.hint), id="hint")
            yield Static(t("answer_hidden", self.lang), id="answer-hidden", markup=False)
            yield Static(t("answer_heading", self.lang), id="answer-heading", classes="heading", markup=False)
            yield Static(short_markdown(self.answer.answer), id="answer")
        yield TutorFooter(compact=True)

    def on_mount(self) -> None:
        localize_bindings(self, KEY_WORDS, self.lang)
        self.query_one("#answer-heading").display = False
        self.query_one("#answer").display = False
        self.query_one(VerticalScroll).focus()

    def action_reveal(self) -> None:
        self.revealed = True
        self.query_one("#answer-hidden").display = False
        self.query_one("#answer-heading").display = True
        self.query_one("#answer").display = True

    def action_back(self) -> None:
        self.dismiss(None)
