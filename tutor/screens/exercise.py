"""One coding exercise: the task, the file to edit, and ✓ or ✗ checked again every time the file is saved."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from tutor.exercises import EXERCISES, record_result, reference_source
from tutor.exercises.check import CheckResult, check_exercise
from tutor.exercises.workspace import exercise_path, workspace_dir, write_workspace
from tutor.i18n import pick
from tutor.patches.footer_labels import localize_bindings
from tutor.widgets.footer import TutorFooter

POLL_SECONDS = 0.5  # how often the file's mtime is looked at: no file-watching dependency needed

WORDS: dict[str, tuple[str, str]] = {
    "title": ("Exercise: {title}", "编程练习：{title}"),
    "check_failed": (
        "The check could not run ({error}); your file is untouched: save it again to retry.",
        "检查没能运行（{error}）；你的文件没有改动：再保存一次即可重试。",
    ),
    "task": ("Task: ", "任务："),
    "file": ("Edit: ", "编辑："),
    "starter": ("What you write, as the file starts it:", "你要写的函数，文件开头是这样的："),
    "file_note": (
        "in your editor (another terminal or tmux pane); every save is checked again here",
        "用你的编辑器打开（另一个终端或 tmux 窗格）；每次保存都会在这里重新检查",
    ),
    "status": ("Status: ", "状态："),
    "checking": ("checking …", "正在检查 …"),
    "not_checked": ("not checked yet", "尚未检查"),
    "tries": ("checked {n}×, last at {at}", "已检查 {n} 次，最近一次 {at}"),
    "unlocked": ("s shows the reference solution", "按 s 查看参考答案"),
    "unlocked_before": ("passed before: s shows the reference solution", "曾经通过：按 s 查看参考答案"),
    "printed": ("Your code printed:", "你的代码输出了："),
    "hint": ("Hint: ", "提示："),
    "solution": ("Reference solution, model/'s own code:", "参考答案，即 model/ 自己的代码："),
    "locked": (
        "The reference solution opens once your version passes.",
        "你的版本通过检查之后才能看参考答案。",
    ),
    "no_folder": ("cannot write the exercise folder {path}: {error}", "无法写入练习文件夹 {path}：{error}"),
}
KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action
    "back": ("Back", "返回"),
    "check": ("Check", "检查"),
    "hint": ("Hint", "提示"),
    "solution": ("Solution", "答案"),
}


@dataclass
class ExerciseChecked(Message):
    """The checker's verdict, from the worker, with the exercise's record as the progress file has it now."""

    result: CheckResult
    saved: dict[str, Any] | None


class ExerciseScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="Esc"),
        Binding("r", "check", "Check"),
        Binding("h", "hint", "Hint"),
        Binding("s", "solution", "Solution"),
    ]
    DEFAULT_CSS = """
    ExerciseScreen > #exercise-title { height: 1; padding: 0 1; background: $panel; }
    ExerciseScreen > VerticalScroll { padding: 0 1; }
    ExerciseScreen #exercise-status { margin: 1 0 0 0; }
    ExerciseScreen #exercise-output, ExerciseScreen #exercise-starter, ExerciseScreen #exercise-extra {
        margin: 1 0 0 0;
    }
    """

    def __init__(self, name: str, lang: str, folder: Path | None = None) -> None:
        super().__init__()
        self.exercise = EXERCISES[name]
        self.lang = lang
        self.folder = folder or workspace_dir()
        self.path = exercise_path(self.folder, name)
        self.stamp: tuple[int, int] | None = None
        self.result: CheckResult | None = None
        localize_bindings(self, KEY_WORDS, lang)

    def words(self, key: str, **values: Any) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose(self) -> ComposeResult:
        yield Static(f"[b]tutor[/b] · {self.words('title', title=self.exercise.title(self.lang))}", id="exercise-title")
        with VerticalScroll():
            yield Static(id="exercise-task")
            yield Static(id="exercise-status")
            yield Static(id="exercise-output")
            yield Static(id="exercise-starter")
            yield Static(id="exercise-extra")
        yield TutorFooter(compact=True)

    def on_mount(self) -> None:
        task = Text()
        task.append(self.words("task"), style="bold")
        task.append(self.exercise.task(self.lang) + "\n")
        task.append(self.words("file"), style="bold")
        task.append(str(self.path), style="underline")
        task.append("\n" + self.words("file_note"), style="dim")
        self.query_one("#exercise-task", Static).update(task)
        starter = Syntax(  # the signature and its formula, as the starter file has them; the body is the learner's
            self.exercise.code.strip("\n").replace("{todo}", "    ..."),
            "python",
            theme="ansi_dark",
            background_color="default",
            word_wrap=True,
        )
        title = Text(self.words("starter"), style="bold")
        self.query_one("#exercise-starter", Static).update(Group(title, starter))
        try:
            write_workspace(self.folder, self.lang)
        except OSError as error:
            self.notify(self.words("no_folder", path=self.folder, error=error.strerror or error), severity="warning")
        self.show_status(None)
        self.poll_file()
        self.set_interval(POLL_SECONDS, self.poll_file)

    # -- checking -----------------------------------------------------------------------------------

    def file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def poll_file(self) -> None:
        """Check again when the file's mtime or size has changed since the last look (a save)."""
        stamp = self.file_stamp()
        if stamp != self.stamp:
            self.stamp = stamp
            self.action_check()

    def action_check(self) -> None:
        self.show_status(None, checking=True)
        self.run_check()

    # exit_on_error=False: a check that cannot run (no fork, a full disk) is a notice, never the end of the session
    @work(thread=True, exclusive=True, group="exercise", exit_on_error=False)
    def run_check(self) -> None:
        worker = get_current_worker()  # a newer save cancels this check, and `stop` ends its subprocess
        try:
            result = check_exercise(self.exercise.name, self.path, stop=lambda: worker.is_cancelled)
        except Exception as error:
            words = self.words("check_failed", error=f"{type(error).__name__}: {error}")
            self.app.call_from_thread(self.notify, words, severity="error", markup=False)
            return
        if not worker.is_cancelled:
            self.post_message(ExerciseChecked(result, self.saved_record()))

    def saved_record(self) -> dict[str, Any] | None:
        """This exercise's record in the progress file: `tutor exercises` in another terminal may have
        checked it since the app started. None when there is none or the file cannot be read."""
        store = getattr(self.app, "store", None)
        try:
            record = json.loads(store.path.read_text(encoding="utf-8"))["exercises"][self.exercise.name]
        except (AttributeError, OSError, ValueError, KeyError, TypeError):
            return None
        return record if isinstance(record, dict) else None

    def on_exercise_checked(self, message: ExerciseChecked) -> None:
        result = message.result
        self.result = result
        if result.key != "no_file":
            app: Any = self.app
            record_result(app.progress.exercises, self.exercise.name, result.passed, message.saved)
            app.remember()  # saved atomically a moment later, with everything else
        self.show_status(result)
        status = self.query_one("#exercise-status", Static)
        self.call_after_refresh(status.scroll_visible, animate=False)  # a new verdict is what the learner looks for

    def record(self) -> dict[str, Any] | None:
        """The learner's saved result for this exercise: passed, tries, when."""
        progress = getattr(self.app, "progress", None)
        record = progress.exercises.get(self.exercise.name) if progress is not None else None
        return record if isinstance(record, dict) else None

    def show_status(self, result: CheckResult | None, checking: bool = False) -> None:
        status = Text()
        status.append(self.words("status"), style="bold")
        if checking:
            status.append(self.words("checking"), style="italic")
        elif result is None:
            status.append(self.words("not_checked"))
        else:
            status.append(result.describe(self.lang), style="bold green" if result.passed else "bold red")
        record = self.record()
        if record and record.get("tries"):
            at = str(record.get("at", "")).replace("T", " ")
            status.append("\n" + self.words("tries", n=record["tries"], at=at), style="dim")
            if record.get("passed"):
                unlocked = "unlocked" if result is not None and result.passed else "unlocked_before"
                status.append(" · " + self.words(unlocked), style="dim")
        self.query_one("#exercise-status", Static).update(status)
        output = result.output if result is not None and not result.passed else ""
        printed = Text()
        if output:
            printed.append(self.words("printed") + "\n", style="bold")
            printed.append(
                "\n".join(line if len(line) <= 160 else line[:160] + " …" for line in output.splitlines()[-10:])
            )
        self.query_one("#exercise-output", Static).update(printed)

    # -- hint and solution ---------------------------------------------------------------------------

    def action_hint(self) -> None:
        hint = Text()
        hint.append(self.words("hint"), style="bold")
        hint.append(self.exercise.hint(self.lang))
        extra = self.query_one("#exercise-extra", Static)
        extra.update(hint)
        self.call_after_refresh(extra.scroll_visible, animate=False)  # below the starter in a small window

    def action_solution(self) -> None:
        record = self.record()
        if not (record and record.get("passed")):
            self.notify(self.words("locked"), severity="warning")
            return
        title = Text(self.words("solution") + "\n", style="bold")
        code = Syntax(
            reference_source(self.exercise), "python", theme="ansi_dark", background_color="default", word_wrap=True
        )
        extra = self.query_one("#exercise-extra", Static)
        extra.update(Group(title, code))
        self.call_after_refresh(extra.scroll_visible, top=True, animate=False)  # once it has its new height

    def action_back(self) -> None:
        self.dismiss(None)
