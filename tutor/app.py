"""The Textual app: it owns the model, the lessons and the learner's progress; MainScreen does the rest."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from rich.console import RenderableType
from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.css.query import NoMatches
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Size
from textual.markup import MarkupError
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer

import model
from model import GPT
from tutor.catalogue import EXPERIMENTS, MODEL_VARIANTS, experiment_title
from tutor.edits import patch_edit, step_edit
from tutor.i18n import Words, other_language, pick, t
from tutor.layout import MIN_HEIGHT, MIN_WIDTH
from tutor.lesson_clock import LessonClock
from tutor.lessons.answers import lesson_answers
from tutor.lessons.course import session_lessons
from tutor.lessons.links import LessonError, Link, parse_link
from tutor.lessons.parse import Lesson
from tutor.lessons.quiz import lesson_quiz
from tutor.lessons.quiz import passed as quiz_passed
from tutor.model_words import describe_variant
from tutor.patches import (
    cjk_wrap,
    dirty_spans,
    first_resume,
    full_map,
    lost_terminal,
    palette,
    parameter_count,
    small_window,
    strip_caches,
    theme_lookup,
)
from tutor.patches.terminal_diff import ScreenModel
from tutor.paths import content_dir
from tutor.process_tuning import IdleCollector, collector_after_start
from tutor.progress import ProgressStore
from tutor.reach import reach_of
from tutor.screens.lessons import LessonListScreen
from tutor.screens.main import MainScreen
from tutor.step_words import step_label
from tutor.widgets.lesson_view import LessonView

lost_terminal.install()
full_map.install()
strip_caches.install()
dirty_spans.install()
parameter_count.install()
theme_lookup.install()
first_resume.install()
small_window.install(
    lambda screen, size: t(
        "too_small", getattr(screen.app, "lang", "en"), w=MIN_WIDTH, h=MIN_HEIGHT, cw=size.width, ch=size.height
    ),
    own_guard=(MainScreen,),  # keeps its widgets in place, with the same words (MainScreen.on_resize)
)
SAVE_DELAY = 0.5  # seconds without a change before the learner's place is written …
SAVE_AT_MOST = 5.0  # … but never later than this after the first change not yet written
WEB_EXIT_SECONDS = 2.0  # a browser tab's tutor, told to end (SIGTERM, SIGHUP), has saved and is gone by then
START_AT_MOST = 2.0  # seconds after the start: the collector is on again even if the main screen drew no frame
WORDS: dict[str, Words] = {  # key: (en, zh)
    "lesson_command": ("Lesson {n}: {title}", "课程 {n}: {title}"),
    "model_command": ("Model: {name} — {what}", "模型: {name} — {what}"),
    "step_command": ("Step {n}: {step}", "步骤 {n}: {step}"),
    "backward_command": ("Backward pass: step back from the loss", "反向传播：从损失往回走"),
    "edit_command": ("What if: {edit}", "假如：{edit}"),
    "undo_command": ("Take back: {edit}", "撤回：{edit}"),
    "patch_command": ("What if: patch this point from another prompt", "假如：用另一个提示词替换这一点的值"),
    "clear_command": ("Take back every edit: the model as trained", "撤回所有改动：回到训练好的模型"),
    "not_done": (
        "Not marked done: read the lesson to its end, or pass its quick check (F10).",
        "本课还没有标记为完成：读到课文末尾，或者通过小测验（F10）。",
    ),
}


def what_if_commands(screen: MainScreen, lang: str) -> Iterator[tuple[str, Any, str]]:
    """The palette's edits: take out the piece at the step on screen (or put it back), patch its point from
    another prompt, take back one edit or all."""
    step = screen.place.step
    edit = step_edit(step, screen.place.head) if step is not None else None
    if edit is not None:
        undo = edit in screen.place.edits
        yield (
            pick(WORDS, "undo_command" if undo else "edit_command", lang, edit=edit.words(lang)),
            screen.action_edit_step,
            "alt+x",
        )
    if step is not None and patch_edit(step, screen.place.head, screen.place.token, "?") is not None:
        yield (pick(WORDS, "patch_command", lang), screen.action_patch_point, "alt+p")
    for index, asked in enumerate(screen.place.edits):
        yield (
            pick(WORDS, "undo_command", lang, edit=asked.words(lang)),
            lambda i=index: screen.action_remove_edit(i),
            "",
        )
    if screen.place.edits:
        yield (pick(WORDS, "clear_command", lang), screen.action_clear_edits, "alt+X")


class TutorCommands(Provider):
    """The command palette: lessons, model variants, steps and blocks."""

    def _commands(self) -> Iterator[tuple[str, Any, str]]:
        app = cast(TutorApp, self.app)
        screen = app.main
        lang = app.lang
        for n, lesson in enumerate(app.lessons, 1):
            yield (
                pick(WORDS, "lesson_command", lang, n=n, title=lesson.title),
                lambda i=lesson.id: app.open_lesson_now(i),
                "✓" if lesson.id in app.progress.done else "",
            )
        for name in MODEL_VARIANTS:
            yield (
                pick(WORDS, "model_command", lang, name=name, what=describe_variant(name, lang)),
                lambda n=name: screen.switch_model(n),
                t("shipped" if name in model.shipped_models() else "not_shipped", app.lang),
            )
        for step in screen.place.gpt.steps:
            yield (
                pick(
                    WORDS,
                    "step_command",
                    lang,
                    n=step.index + 1,
                    step=step_label(step, lang, screen.place.gpt.config.norm_kind),
                ),
                lambda name=step.name: screen.goto_step_name(name),
                step.name,
            )
        for label, href in app.practice_items():
            yield (label, lambda h=href: app.follow_now(h), "F10")
        yield (pick(WORDS, "backward_command", lang), screen.action_turn, "^r")
        yield from what_if_commands(screen, lang)
        yield ("中文 / English", app.action_toggle_language, "F5")
        everything = app.progress.last.get("everything") is True
        yield (
            t("everything_off_command" if everything else "everything_on_command", app.lang),
            app.action_show_everything,
            "",
        )

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class TutorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "tutor"
    COMMANDS = App.COMMANDS | {TutorCommands}
    BINDINGS = [Binding("ctrl+l", "redraw", "Redraw", show=False, priority=True)]
    MIN_SIZE = Size(MIN_WIDTH, MIN_HEIGHT)  # below it every screen asks for a larger window (patches/small_window.py)

    def __init__(
        self,
        gpt: GPT,
        lang: str,
        store: ProgressStore | None = None,
        content: Path | None = None,
        resume_model: bool = True,
        course: Path | None = None,
    ) -> None:
        super().__init__()
        cjk_wrap.install()  # Rich's word wrap learns Chinese: by the app that needs it, not by importing it
        self.animation_level = "none"  # every animated frame is bytes down an SSH link
        self.gpt = gpt
        self.lang = lang
        self.resume_model = resume_model  # False when the command line named a model: that one wins
        self.content = content or content_dir()  # the shipped lessons
        self.course = course  # a teacher's lessons folder (`tutor --lessons DIR`): alone or after the shipped ones
        self.lessons_folder = self.content / lang  # where the lessons shown come from (named when there are none)
        self._lesson_notices: set[str] = set()  # shown once a session
        self.store = store or ProgressStore()
        self.store.lang = lang
        self.progress, self._progress_notice = self.store.load()
        self.lessons: list[Lesson] = []
        self.read_to_end: set[str] = set()  # lessons whose last line the learner has seen
        if isinstance(self.progress.last.get("read_to_end"), str):
            self.read_to_end.add(self.progress.last["read_to_end"])
        self.clock = LessonClock()  # time with each lesson open, added to the progress at each save
        self._save_timer: Timer | None = None
        self._unsaved_since = 0.0  # time.monotonic() of the first change the save timer waits to write
        self._saving = False  # inside store.save: a signal that comes then does not save over it
        self._exit_soon: threading.Timer | None = None  # a browser tab's tutor told to end: its last resort
        self._loop_for_signals: asyncio.AbstractEventLoop | None = None
        self.main = MainScreen(gpt, lang)
        self.screen_model = ScreenModel()  # what the terminal shows: only changed cells are sent
        self.collector: IdleCollector | None = None  # full garbage-collector passes between keys (on_mount)
        self._first_frame_drawn = False
        self._started = False  # after_start has run
        self.model_notice: str | None = None  # `tutor --model FILE`: the recipe it was trained by (tutor.commands.app)
        self._hung_up = False
        self.localize_palette_key()

    # -- the command palette, in the learner's language -----------------------------------------

    def localize_palette_key(self) -> None:
        """The footer's "^p palette" (a binding Textual adds to the app) in the learner's language."""
        palette.localize_key(self, self.lang)

    def action_command_palette(self) -> None:
        if self.use_command_palette and not palette.TutorPalette.is_open(self):
            self.push_screen(palette.TutorPalette(self.lang, id="--command-palette"))

    def search_themes(self) -> None:
        from textual.theme import ThemeProvider

        placeholder = palette.word("search_themes", self.lang)
        self.push_screen(palette.TutorPalette(self.lang, providers=[ThemeProvider], placeholder=placeholder))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's Theme, Quit, Keys, … in the learner's language; on the main screen "Keys" is F1's help."""
        keys = self.main.action_help if screen is self.main else None
        return palette.system_commands(super().get_system_commands(screen), self.lang, keys=keys)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        """Every frame goes through the screen model, which keeps only the cells that changed."""
        super()._display(screen, self.screen_model.frame_for(self, renderable))
        if not self._first_frame_drawn and renderable is not None and not self._batch_count and screen is self.main:
            self._first_frame_drawn = True
            self.call_next(self.whole_lesson)  # before any key: the first frame drew the lesson's opening only
            self.call_later(self.main.first_frame_drawn)  # what is not in view waits for the first frame
            self.call_later(self.after_start)

    def action_redraw(self) -> None:
        """ctrl+l: draw every cell again (after a message from the system, say, wrote over the screen)."""
        self.screen_model.forget()
        self.screen.refresh()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notice; text that is not valid markup (a lesson id like `[/]`, a file name) is shown as it is,
        where Textual would otherwise raise while drawing the toast."""
        if markup:
            try:
                Content.from_markup(message)
                Content.from_markup(title)
            except MarkupError:
                markup = False
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and self.collector is not None:
            self.collector.key()
        if isinstance(event, events.Key | events.MouseEvent):  # the learner at work: time on the open lesson
            self.clock.mark(self.open_lesson_id())
        await super().on_event(event)

    async def on_mount(self) -> None:
        self.collector = IdleCollector()
        self.set_interval(0.5, self.collector.tick, name="idle collector")
        self.app_suspend_signal.subscribe(self, self.screen_model.forget)
        self.app_resume_signal.subscribe(self, self.screen_model.forget)
        loop = self._loop_for_signals = asyncio.get_running_loop()
        for signum in (signal.SIGHUP, signal.SIGTERM):  # a dropped SSH session, a `kill`; a killed `tutor serve`
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                if self.is_web:
                    signal.signal(signum, self.hang_up_now)
                else:
                    loop.add_signal_handler(signum, self.hang_up)
        if isinstance(self._driver, LinuxDriver):  # a real terminal (not a test's, not a browser tab's)

            def terminal_gone() -> None:
                with contextlib.suppress(RuntimeError):  # the loop has closed: the app has left already
                    loop.call_soon_threadsafe(self.hang_up)

            lost_terminal.watch_for_hang_up([self._driver.fileno], terminal_gone)
        with self.batch_update():  # the first frame shows the lesson and the numbers, not the steps to them
            notices = self.load_lessons()
            last = self.progress.last
            # a small window starts on the lesson: a new learner's ("How to use the tutor"), or where a returning
            # learner left it
            new_learner = "lesson" not in last and "view" not in last
            self.main.start_on_lesson = bool(self.lessons) and (new_learner or last.get("view") == "lesson")
            await self.push_screen(self.main)
            if self._progress_notice:
                self.notify(self._progress_notice, severity="warning", timeout=10)
            self.lesson_notices(notices)
            if self.model_notice:
                self.notify(self.model_notice, timeout=15)
            start = last.get("lesson") if isinstance(last.get("lesson"), str) else None
            self.main.query_one(LessonView).opening_first = True  # the rest after the first frame (whole_lesson)
            await self.open_lesson(start, resume=True)
            await self.main.panels_settled()
        self.main.refresh(layout=True)
        self.set_timer(START_AT_MOST, self.after_start)  # the first frame is drawn under another screen, say

    def after_start(self) -> None:
        """Once, after the first frame: what start-up built stays for the whole session, out of the collector's
        full passes, which would otherwise walk it all and stall a keystroke now and then (~60 ms each); the
        collector, paused for the start by `tutor`, on again (tutor/process_tuning.py)."""
        if not self._started:
            self._started = True
            self.whole_lesson()  # the first frame was drawn under another screen, or not yet
            collector_after_start()

    def whole_lesson(self) -> None:
        """The start's lesson whole: its first frame showed only its opening (LessonView.opening_first)."""
        with contextlib.suppress(NoMatches):
            self.main.query_one(LessonView).whole()

    # -- progress ------------------------------------------------------------------------------

    def remember(self, **changes: Any) -> None:
        """Keep where the learner is (lesson, step, prompt, model, language, what a small window shows, the
        lesson last read to its end).

        Written atomically once the learner has paused for SAVE_DELAY seconds, or SAVE_AT_MOST seconds after the
        first change not yet written, and at once on exit: a key must not wait for a lock, a read and two fsyncs
        (milliseconds on a local disk, far more on a lab's network home folder) while the learner is pressing keys.
        """
        self.progress.last.update(changes)
        now = time.monotonic()
        if self._save_timer is None:
            self._unsaved_since = now
        elif now - self._unsaved_since < SAVE_AT_MOST - SAVE_DELAY:
            self._save_timer.stop()  # still pressing keys: wait for the pause
        else:
            return  # the timer set writes within SAVE_DELAY, SAVE_AT_MOST after the first change
        self._save_timer = self.set_timer(SAVE_DELAY, self._save)

    def open_lesson_id(self) -> str | None:
        lesson = self.main.place.lesson
        return lesson.id if lesson is not None else None

    def count_time(self) -> None:
        """The time counted since the last save, into the progress (the store adds it to what is on disk)."""
        self.clock.mark(self.open_lesson_id())
        spent = self.progress.time_spent
        for lesson_id, seconds in self.clock.take().items():
            spent[lesson_id] = spent.get(lesson_id, 0.0) + seconds

    def _save(self) -> None:
        self._save_timer = None
        self.count_time()
        was_failing = self.store.failing
        self._saving = True
        try:
            notice = self.store.save(self.progress)
        finally:
            self._saving = False
        if notice:
            resumed = was_failing and not self.store.failing  # saved again after a full disk: good news
            self.notify(notice, severity="information" if resumed else "warning", timeout=10)

    def save_now(self) -> None:
        """For results the learner earned (a quiz, an exercise, a lesson done) and for the end: written at once, and
        the timer waiting to write stopped (its save would write the same again)."""
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save()

    def hang_up(self) -> None:
        """Save first (the terminal may be gone already), then leave. Called on SIGHUP and SIGTERM, and when the
        terminal is seen gone (which may be just after a SIGHUP): once is enough."""
        if self._hung_up:
            return
        self._hung_up = True
        if self.main.place.trace is not None:  # the prompt as typed: its Input.Changed may still wait in the queue
            with contextlib.suppress(NoMatches):
                self.progress.last["prompt"] = self.main.typed_prompt
        self.save_now()  # and the timer waiting to save stopped: this is its save
        self.exit()

    def hang_up_now(self, signum: int, frame: object) -> None:
        """SIGTERM or SIGHUP in a browser tab's tutor, which must end promptly even while busy. Python runs this
        between two steps of whatever the main thread is doing: a widget working through a queue of thousands
        of keys never gave the event loop back, and `hang_up`, queued there, waited minutes. So: save what is
        known now, ask for `hang_up` (it runs once the loop is free), and end the process WEB_EXIT_SECONDS
        later if it has not ended by then (a browser tab has no terminal to restore)."""
        if self._exit_soon is not None:
            return
        if not self._saving:  # else the save this interrupted finishes as soon as this returns
            self.count_time()
            self.store.save(self.progress)
        self._exit_soon = threading.Timer(WEB_EXIT_SECONDS, os._exit, args=(0,))
        self._exit_soon.daemon = True
        self._exit_soon.start()
        if self._loop_for_signals is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the process is ending anyway
                self._loop_for_signals.call_soon_threadsafe(self.hang_up)

    async def on_unmount(self) -> None:
        if self.collector is not None:
            self.collector.restore()
        self.save_now()

    # -- lessons -------------------------------------------------------------------------------

    def load_lessons(self) -> list[str]:
        """The lessons of the session's language (the shipped ones, or a teacher's folder's alone or after them);
        what could not be used, as notices (tutor/lessons/course.py)."""
        session = session_lessons(self.lang, self.course, self.content)
        self.lessons, self.lessons_folder = session.lessons, session.folder
        return session.notices

    def lesson_notices(self, notices: list[str]) -> None:
        """Each notice about the lessons folder once a session, where the learner (or the teacher) sees it."""
        for notice in notices:
            if notice not in self._lesson_notices:
                self._lesson_notices.add(notice)
                self.notify(t("lessons_notice", self.lang, notice=notice), severity="warning", timeout=20)

    def lesson_by_id(self, lesson_id: str | None) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)

    async def open_lesson(self, lesson_id: str | None, heading: str | None = None, resume: bool = False) -> None:
        lesson = self.lesson_by_id(lesson_id) or (self.lessons[0] if self.lessons else None)
        if lesson_id and self.lesson_by_id(lesson_id) is None and not resume:
            self.notify(t("no_lesson", self.lang, id=lesson_id), severity="warning")
        position = f"{self.lessons.index(lesson) + 1}/{len(self.lessons)}" if lesson else ""
        empty = t("no_lessons", self.lang, path=self.lessons_folder)
        if lesson:
            self.reached(lesson)  # before the lesson's panels are drawn
        await self.main.show_lesson(lesson, position, empty)
        self.clock.mark(self.open_lesson_id())  # from now on, time goes to this lesson
        last = self.progress.last
        if resume and lesson and last.get("lesson") == lesson.id:
            # back where the learner left off: their prompt, model and step, not the lesson's defaults
            self._resume_saved_model()
            if isinstance(last.get("step"), str):  # before the prompt: its trace may be ready at once
                self.main.place.pending_step = last["step"]
            self.main.set_prompt(str(last.get("prompt", lesson.prompt)))
        elif lesson:
            # another lesson opens on its own model; at start-up, a model named on the command line stays
            self.main.start_lesson(lesson, keep_model=resume and not self.resume_model)
        else:
            if resume:
                self._resume_saved_model()
            self.main.set_prompt(str(last.get("prompt", "猫追狗")) if resume else "猫追狗")
        if heading and lesson and not self.main.goto_heading(heading):
            self.notify(t("no_heading", self.lang, heading=heading), severity="warning")
        if lesson:
            self.remember(lesson=lesson.id, lang=self.lang)

    def reached(self, lesson: Lesson | None = None) -> None:
        """The learner's reach (tutor/reach.py) from the lessons opened — the furthest kept for next time — and
        whether they asked for everything."""
        order_of = {each.id: n for n, each in enumerate(self.lessons)}
        furthest = self.progress.last.get("furthest")
        if lesson is not None and order_of.get(lesson.id, -1) > order_of.get(str(furthest), -1):
            furthest = lesson.id
            self.remember(furthest=furthest)
        opened = [*self.progress.done, str(furthest), *([lesson.id] if lesson else [])]
        self.main.set_reach(reach_of(order_of, opened, everything=self.progress.last.get("everything") is True))

    def action_show_everything(self) -> None:
        """Every panel's details and every key at once, or (again) as the lessons reach them; kept for next time."""
        everything = self.progress.last.get("everything") is not True
        self.remember(everything=everything)
        self.reached(self.main.place.lesson)
        self.notify(t("everything_on" if everything else "everything_off", self.lang))

    def _resume_saved_model(self) -> None:
        """The model the learner last had, unless the command line named one (that one wins)."""
        saved_model = self.progress.last.get("model")
        if self.resume_model and isinstance(saved_model, str) and saved_model != self.main.place.gpt.name:
            self.main.switch_model(saved_model)

    # -- links: every `tutor:` link is followed here, from a lesson, F9, F10 or the palette -----------------

    async def on_lesson_view_link_clicked(self, event: LessonView.LinkClicked) -> None:
        """A link clicked in the lesson (the message comes up from the lesson view, through the main screen)."""
        await self.follow_href(event.href)

    def follow_now(self, href: str) -> None:
        self.run_worker(self.follow_href(href), group="link")

    async def follow_href(self, href: str) -> None:
        """A link as written: a `tutor:` one followed, a malformed one said, any other (http:, file:) named
        in a notice and never opened."""
        if not href.startswith("tutor:"):
            self.notify(t("external_link", self.lang, href=href), severity="information")
            return
        try:
            link = parse_link(href)
        except LessonError as error:
            self.notify(str(error), severity="error")
            return
        await self.follow(link)

    async def follow(self, link: Link) -> None:
        """Do what a `tutor:` link says: the main screen shows a `show` link, the app opens everything else."""
        params = link.params
        this_lesson = self.main.place.lesson.id if self.main.place.lesson else ""
        if link.action == "show":
            self.main.show_link(params)
        elif link.action == "lesson":
            await self.open_lesson(params.get("id"), heading=params.get("heading"))
        elif link.action == "experiment":
            self.open_experiment(params.get("name", ""), {key: value for key, value in params.items() if key != "name"})
        elif link.action == "exercise":
            self.open_exercise(params.get("name", ""))
        elif link.action == "quiz":
            self.open_quiz(params.get("id") or this_lesson)
        elif link.action == "answer":
            self.open_answer(params.get("id") or this_lesson, params.get("n", "1"))

    def open_lesson_now(self, lesson_id: str) -> None:
        self.run_worker(self.open_lesson(lesson_id), exclusive=True, group="lesson")

    def lesson_is_done(self, lesson_id: str) -> bool:
        return lesson_id in self.progress.done

    def lesson_read(self, lesson_id: str) -> None:
        """The learner has scrolled to the end of a lesson: kept, for the next session too."""
        self.read_to_end.add(lesson_id)
        self.remember(read_to_end=lesson_id)

    def lesson_finished(self, lesson: Lesson) -> bool:
        """Read to its end, or its quick check passed: what F8 needs to mark a lesson done."""
        return (
            self.main.lesson_end_seen(lesson.id)
            or lesson.id in self.read_to_end
            or quiz_passed(self.progress.quiz.get(lesson.id))
        )

    async def step_lesson(self, delta: int) -> None:
        current = self.main.place.lesson
        if not self.lessons or current is None:
            return
        if delta > 0 and current.id not in self.progress.done:
            if self.lesson_finished(current):
                self.progress.done.append(current.id)
                self.save_now()  # the waiting timer stopped: this save writes what it waited to write
                self.main.update_lesson_header()  # the ✓ at once (seen on the last lesson, which stays open)
            else:
                self.notify(pick(WORDS, "not_done", self.lang))
        index = self.lessons.index(current) + delta
        if 0 <= index < len(self.lessons):
            await self.open_lesson(self.lessons[index].id)
        elif delta > 0:
            self.notify(t("last_lesson", self.lang))

    def action_lessons(self) -> None:
        def chosen(lesson_id: str | None) -> None:
            if lesson_id:
                self.open_lesson_now(lesson_id)

        current = self.main.place.lesson.id if self.main.place.lesson else None
        self.push_screen(
            LessonListScreen(self.lessons, set(self.progress.done), current, self.lang, self.progress.quiz), chosen
        )

    # -- practice: quick checks, experiments, exercises ---------------------------------------------

    def practice_items(self) -> list[tuple[str, str]]:
        """(label, tutor: link) for the practice menu and the palette: quiz first, then the rest."""
        from tutor.exercises import EXERCISES, status_mark

        items: list[tuple[str, str]] = []
        lesson = self.main.place.lesson
        if lesson is not None and lesson_quiz(lesson):
            items.append((t("quiz_item", self.lang, title=lesson.title), f"tutor:quiz?id={lesson.id}"))
        items += [
            (t("experiment_item", self.lang, title=experiment_title(n, self.lang)), f"tutor:experiment?name={n}")
            for n in EXPERIMENTS
        ]
        items += [
            (
                f"{t('exercise_item', self.lang, title=exercise.title(self.lang))} "
                f"{status_mark(self.progress.exercises.get(name), untried='')}".rstrip(),
                f"tutor:exercise?name={name}",
            )
            for name, exercise in EXERCISES.items()
        ]
        return items

    def open_experiment(self, name: str, options: dict[str, str] | None = None) -> None:
        """Experiment `name`; `options`: what a link asks it to open on (the depth lab's left, right, view)."""
        from tutor.screens.experiments import experiment_screen

        if name not in EXPERIMENTS:
            self.notify(t("no_experiment", self.lang, name=name, known=", ".join(EXPERIMENTS)), severity="warning")
            return
        main = self.main
        screen = experiment_screen(name, main.place.gpt, main.place.prompt, self.lang)
        if options:
            screen.take_options(options)
        self.push_screen(screen)

    def show_model(self, name: str) -> None:
        """Close the screens above the main one and load shipped variant `name` there, to step through it."""
        while self.screen is not self.main and len(self.screen_stack) > 1:
            self.pop_screen()
        self.main.switch_model(name)

    def open_exercise(self, name: str) -> None:
        from tutor.exercises import EXERCISES
        from tutor.screens.exercise import ExerciseScreen

        if name not in EXERCISES:
            self.notify(t("no_exercise", self.lang, name=name, known=", ".join(EXERCISES)), severity="warning")
            return
        self.push_screen(ExerciseScreen(name, self.lang))

    def open_quiz(self, lesson_id: str) -> None:
        from tutor.screens.quiz import QuizScreen

        lesson = self.lesson_by_id(lesson_id)
        questions = lesson_quiz(lesson) if lesson else []
        if lesson is None or not questions:
            self.notify(t("no_quiz", self.lang, id=lesson_id), severity="warning")
            return
        self.push_screen(QuizScreen(lesson, questions, self.lang))

    def open_answer(self, lesson_id: str, n: str) -> None:
        from tutor.screens.answer import AnswerScreen

        lesson = self.lesson_by_id(lesson_id)
        answer = next((a for a in lesson_answers(lesson) if str(a.n) == n), None) if lesson else None
        if lesson is None or answer is None:
            self.notify(t("no_answer", self.lang, id=lesson_id, n=n), severity="warning")
            return
        self.push_screen(AnswerScreen(lesson, answer, self.lang))

    def action_toggle_language(self) -> None:
        self.lang = other_language(self.lang)
        self.store.lang = self.lang
        current = self.main.place.lesson.id if self.main.place.lesson else None
        notices = self.load_lessons()
        self.localize_palette_key()
        self.main.set_language(self.lang)
        self.remember(lang=self.lang)
        self.lesson_notices(notices)
        self.run_worker(self._reopen(current), exclusive=True, group="lesson")

    async def _reopen(self, lesson_id: str | None) -> None:
        lesson = self.lesson_by_id(lesson_id)
        position = f"{self.lessons.index(lesson) + 1}/{len(self.lessons)}" if lesson else ""
        await self.main.show_lesson(lesson, position, t("no_lessons", self.lang, path=self.lessons_folder))
