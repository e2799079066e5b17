"""The lesson list, with a mark for every lesson done."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.i18n import t
from tutor.lessons.parse import Lesson
from tutor.lessons.reading import reading_minutes


class LessonListScreen(ModalScreen[str | None]):
    """Pick a lesson; dismisses with its id (or None)."""

    BINDINGS = [Binding("escape,f2", "dismiss_none", "Close")]
    DEFAULT_CSS = """
    LessonListScreen { align: center middle; }
    LessonListScreen > #lessons-box { width: 70; max-width: 100%; height: auto; max-height: 90%;
                                      border: round $accent; background: $surface; }
    LessonListScreen OptionList { height: auto; max-height: 30; border: none; }
    """

    def __init__(
        self,
        lessons: list[Lesson],
        done: set[str],
        current: str | None,
        lang: str,
        quiz: dict[str, object] | None = None,
    ) -> None:
        super().__init__()
        self.lessons, self.done, self.current, self.lang = lessons, done, current, lang
        self.quiz = quiz or {}

    def quiz_mark(self, lesson_id: str) -> str:
        """The last quick-check score, e.g. "  3/4", when the learner has taken it."""
        record = self.quiz.get(lesson_id)
        if isinstance(record, dict) and isinstance(record.get("score"), int) and isinstance(record.get("total"), int):
            return f"  {record['score']}/{record['total']}"
        return ""

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical

        with Vertical(id="lessons-box"):
            yield Static(
                f" {t('lessons_title', self.lang)}  ({len(self.done & {x.id for x in self.lessons})}"
                f"/{len(self.lessons)} ✓)",
                classes="title",
            )
            options = [
                Option(
                    f"{'✓' if lesson.id in self.done else ' '} {n:>2}. {lesson.title}"
                    + f"  · {t('reading_time', self.lang, m=reading_minutes(lesson))}"
                    + self.quiz_mark(lesson.id)
                    + ("  ⚠" if lesson.warnings else ""),
                    id=lesson.id,
                )
                for n, lesson in enumerate(self.lessons, 1)
            ]
            yield OptionList(*options)

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        ids = [lesson.id for lesson in self.lessons]
        if self.current in ids:
            option_list.highlighted = ids.index(self.current)
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
