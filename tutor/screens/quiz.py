"""A lesson's quick check, one question at a time: pick an answer, see at once whether it is right and why.

The score is kept in the learner's progress when the last question is answered (with the best score so far),
so a learner who leaves half-way loses nothing they finished before.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.i18n import pick
from tutor.lessons.parse import Lesson
from tutor.lessons.quiz import Question, attempts_after, grade
from tutor.patches.footer_labels import localize_bindings
from tutor.widgets.footer import TutorFooter

WORDS: dict[str, tuple[str, str]] = {
    "title": ("Quick check · {lesson}", "小测验 · {lesson}"),
    "position": ("question {i} of {n}", "第 {i} 题，共 {n} 题"),
    "last_time": ("last time {score}/{total}", "上次 {score}/{total}"),
    "right": ("✓ Right.", "✓ 答对了。"),
    "wrong": ("✗ Not quite: the answer is {letter}.", "✗ 不对：答案是 {letter}。"),
    "how": (
        "Pick with A–D (or ↑↓ and Enter).",
        "用 A–D 选择（或 ↑↓ 加回车）。",
    ),
    "next_hint": ("→ or n: next question", "→ 或 n：下一题"),
    "finish_hint": ("→ or n: see your score", "→ 或 n：查看得分"),
    "answer_first": ("Answer this question first.", "请先回答这一题。"),
    "score": ("{score} of {total} right", "答对 {score} 题，共 {total} 题"),
    "best": ("best so far {best}/{total}", "最好成绩 {best}/{total}"),
    "review_right": ("✓ {n}. {question}", "✓ {n}. {question}"),
    "review_wrong": ("✗ {n}. {question} → {letter}. {answer}", "✗ {n}. {question} → {letter}. {answer}"),
    "again": ("r: take it again · Esc: back to the lesson", "r：再做一次 · Esc：回到课程"),
    "saved": ("Quick check saved: {score}/{total}", "小测验已保存：{score}/{total}"),
}


def letter(index: int) -> str:
    return chr(ord("A") + index)


KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action
    "back": ("Back", "返回"),
    "choose(0)": ("Answer", "作答"),
    "next": ("Next", "下一题"),
    "previous": ("Previous", "上一题"),
    "retake": ("Retake", "再做一次"),
}


def quiz_text(text: str) -> Text:
    """A quiz's text with its `code` spans shown as the lesson shows code (bold, the backticks dropped); an
    unpaired backtick stays as it is."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return Text(text)
    shown = Text()
    for k, part in enumerate(parts):
        shown.append(part, style="bold" if k % 2 else "")
    return shown


class QuizScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="Esc"),
        Binding("a", "choose(0)", "Answer", key_display="A–D"),
        Binding("b", "choose(1)", show=False),
        Binding("c", "choose(2)", show=False),
        Binding("d", "choose(3)", show=False),
        Binding("e", "choose(4)", show=False),
        Binding("f", "choose(5)", show=False),
        Binding("right,n", "next", "Next", key_display="→"),
        Binding("left,p", "previous", "Previous", key_display="←"),
        Binding("r", "retake", "Retake"),
    ]
    DEFAULT_CSS = """
    QuizScreen > #quiz-title { height: 1; padding: 0 1; background: $panel; }
    QuizScreen > VerticalScroll { padding: 0 2; }
    QuizScreen #question { margin: 1 0 1 0; text-style: bold; }
    QuizScreen OptionList { height: auto; border: none; padding: 0; }
    QuizScreen #feedback { margin: 1 0 0 0; }
    """

    def __init__(self, lesson: Lesson, questions: list[Question], lang: str) -> None:
        super().__init__()
        self.lesson, self.questions, self.lang = lesson, questions, lang
        self.picks: list[int | None] = [None] * len(questions)
        self.index = 0
        self.finished = False

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose(self) -> ComposeResult:
        yield Static(id="quiz-title", markup=False)
        with VerticalScroll():
            yield Static(id="question", markup=False)
            yield OptionList(id="choices")
            yield Static(id="feedback", markup=False)
        yield TutorFooter(compact=True)

    def on_mount(self) -> None:
        localize_bindings(self, KEY_WORDS, self.lang)
        self.show_question()

    # -- what is on screen ------------------------------------------------------------------------

    def saved(self) -> dict[str, object]:
        record = self.app.progress.quiz.get(self.lesson.id)  # type: ignore[attr-defined]
        return record if isinstance(record, dict) else {}

    def update_title(self) -> None:
        parts = [self.words("title", lesson=self.lesson.title)]
        if not self.finished:
            parts.append(self.words("position", i=self.index + 1, n=len(self.questions)))
        record = self.saved()
        if isinstance(record.get("score"), int) and isinstance(record.get("total"), int):
            parts.append(self.words("last_time", score=record["score"], total=record["total"]))
        self.query_one("#quiz-title", Static).update(" · ".join(parts))

    def show_question(self) -> None:
        self.finished = False
        question = self.questions[self.index]
        chosen = self.picks[self.index]
        self.update_title()
        self.query_one("#question", Static).update(quiz_text(f"{self.index + 1}. {question.text}"))
        choices = self.query_one("#choices", OptionList)
        choices.display = True
        choices.clear_options()
        for k, choice in enumerate(question.choices):
            mark = " "
            if chosen is not None and k == question.answer:
                mark = "✓"
            elif chosen == k:
                mark = "✗"
            choices.add_option(Option(quiz_text(f"{mark} {letter(k)}. {choice}"), id=str(k)))
        choices.highlighted = chosen if chosen is not None else 0
        choices.focus()
        self.query_one("#feedback", Static).update(quiz_text(self.feedback(question, chosen)))

    def feedback(self, question: Question, chosen: int | None) -> str:
        if chosen is None:
            return self.words("how")
        verdict = (
            self.words("right") if chosen == question.answer else self.words("wrong", letter=letter(question.answer))
        )
        last = self.index == len(self.questions) - 1
        return f"{verdict}\n\n{question.explanation}\n\n{self.words('finish_hint' if last else 'next_hint')}"

    def show_score(self) -> None:
        self.finished = True
        record = grade(self.questions, self.picks)
        self.save(record)
        self.update_title()
        score, total = record["score"], record["total"]
        self.query_one("#question", Static).update(self.words("score", score=score, total=total))
        self.query_one("#choices", OptionList).display = False
        lines = []
        for n, (question, chosen) in enumerate(zip(self.questions, self.picks, strict=True), 1):
            if chosen == question.answer:
                lines.append(self.words("review_right", n=n, question=question.text))
            else:
                right = question.choices[question.answer]
                lines.append(
                    self.words(
                        "review_wrong", n=n, question=question.text, letter=letter(question.answer), answer=right
                    )
                )
        best = self.saved().get("best", score)
        lines += ["", self.words("best", best=best, total=total), "", self.words("again")]
        self.query_one("#feedback", Static).update(quiz_text("\n".join(lines)))

    def save(self, record: dict[str, object]) -> None:
        app = self.app
        previous = self.saved()
        best = previous.get("best", previous.get("score", 0))
        record["best"] = max(int(record["score"]), best if isinstance(best, int) else 0)  # type: ignore[call-overload]
        record["attempts"] = attempts_after(previous)
        app.progress.quiz[self.lesson.id] = record  # type: ignore[attr-defined]
        app.save_now()  # type: ignore[attr-defined]
        self.notify(self.words("saved", score=record["score"], total=record["total"]))

    # -- keys -------------------------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(int(event.option.id or 0))

    def action_choose(self, choice: int) -> None:
        if self.finished or choice >= len(self.questions[self.index].choices):
            return
        if self.picks[self.index] is None:  # the first answer counts; changing it afterwards would be peeking
            self.picks[self.index] = choice
        self.show_question()

    def action_next(self) -> None:
        if self.finished:
            return
        if self.picks[self.index] is None:
            self.notify(self.words("answer_first"))
            return
        if self.index + 1 < len(self.questions):
            self.index += 1
            self.show_question()
        else:
            self.show_score()

    def action_previous(self) -> None:
        if self.finished:
            self.index = len(self.questions) - 1
        elif self.index > 0:
            self.index -= 1
        self.show_question()

    def action_retake(self) -> None:
        self.picks = [None] * len(self.questions)
        self.index = 0
        self.show_question()

    def action_back(self) -> None:
        self.dismiss(None)
