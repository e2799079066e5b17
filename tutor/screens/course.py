"""The main screen's lessons, links and models: a lesson shown and set up, a `tutor:` link followed, a model
switched to; and the keys that open the lessons, the links, practice and help."""

from __future__ import annotations

from collections.abc import Mapping

from textual import on
from textual.screen import Screen

import model
from model import GPT
from tutor.catalogue import MODEL_VARIANTS, PANELS
from tutor.edits import EditWordsError, parse_edits
from tutor.i18n import pick, t
from tutor.layout import Layout
from tutor.lessons.answers import is_answer_link
from tutor.lessons.display import display_markdown
from tutor.lessons.folds import folds_in
from tutor.lessons.links import labelled_links
from tutor.lessons.parse import Lesson
from tutor.lessons.reading import reading_minutes
from tutor.place import Place
from tutor.runner import PassRunner
from tutor.screens.passes import Ready
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.panel_switcher import PanelSwitcher

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "lesson_model": (
        "A lesson can only switch to a shipped model ({known}), not '{name}'.",
        "课程只能切换到随附的模型（{known}），不能切换到“{name}”。",
    ),
    "lesson_opens_on": ("This lesson runs on model {name}.", "本课使用模型 {name}。"),
    "not_shipped": ("model {name} is not shipped yet", "模型 {name} 还没有随软件提供"),
    "lesson_default_model": (
        "This lesson names no model: back to the default, {name}.",
        "本课没有指定模型：换回默认模型 {name}。",
    ),
}
MODEL_FLASH_SECONDS = 4.0  # a small window's top bar lights the model a lesson switched to, this long


class Course(Screen[None]):
    """Lessons, links and models.

    A part of `MainScreen` (tutor/screens/main.py), which holds the state these methods use."""

    # MainScreen's, set in its __init__
    place: Place
    lang: str
    passes: PassRunner[Ready]
    layout_now: Layout
    sample_text: str | None
    model_flash: bool

    async def show_lesson(self, lesson: Lesson | None, position: str, empty: str) -> None:
        self.place.lesson, self.place.lesson_position = lesson, position
        self.query_one(LessonView).show(lesson, self.lesson_header(), empty)
        self.update_topbar()

    def lesson_header(self) -> str:
        """The lesson's title line: "Lesson 2/9 · 4 min read", with a ✓ once it is done."""
        lesson = self.place.lesson
        if lesson is None:
            return ""
        done = self.host.lesson_is_done(lesson.id)
        minutes = t("reading_time", self.lang, m=reading_minutes(lesson))
        return f"{t('lesson', self.lang)} {self.place.lesson_position} · {minutes}{'  ✓' if done else ''}"

    def goto_heading(self, heading: str) -> bool:
        return self.query_one(LessonView).goto_heading(heading)

    def lesson_end_seen(self, lesson_id: str) -> bool:
        """Whether the lesson shown is `lesson_id` and its last line has been seen (its message may still be on
        its way)."""
        shown = self.query_one(LessonView)
        return shown.lesson_id == lesson_id and shown.end_seen

    def update_lesson_header(self) -> None:
        """The header again (a lesson just marked done shows its ✓ at once), the lesson staying where it is."""
        self.query_one(LessonView).set_header(self.lesson_header())

    @on(LessonView.EndReached)
    def lesson_end_reached(self, event: LessonView.EndReached) -> None:
        event.stop()
        self.host.lesson_read(event.lesson_id)

    def start_lesson(self, lesson: Lesson, keep_model: bool = False) -> None:
        """Set the panels the way the lesson's front matter asks, on the lesson's own model: the one it names, else
        the one the app started with, never one a previous lesson or a link switched to. `keep_model`: the model
        stays (at start-up, when the command line named it)."""
        if not keep_model:
            self.open_on_lesson_model(lesson)
        if lesson.prompt:
            self.set_prompt(lesson.prompt)
        if lesson.steps:
            if self.place.trace is not None and self.place.prompt == lesson.prompt:
                self.goto_step_name(lesson.steps[0])
            else:
                self.place.pending_step = lesson.steps[0]  # taken when the lesson prompt's pass comes
        if lesson.panels and lesson.panels[0] in PANELS and lesson.panels[0] != "tokens":
            self.query_one("#panels", PanelSwitcher).active = lesson.panels[0]

    def open_on_lesson_model(self, lesson: Lesson) -> None:
        """Switch to the lesson's model if another is loaded, and say so."""
        if lesson.model:
            if lesson.model != self.place.gpt.name and self.switch_model(lesson.model, from_lesson=True):
                self.say_model_changed(pick(WORDS, "lesson_opens_on", self.lang, name=lesson.model))
        elif self.place.gpt.name != self.place.home_gpt.name:
            home = self.place.home_gpt
            self.use_model(home, remember=home.name if home.name in MODEL_VARIANTS else None)
            self.say_model_changed(pick(WORDS, "lesson_default_model", self.lang, name=home.name))

    def say_model_changed(self, words: str) -> None:
        """A notice in a wide window; in a small one, where a notice covers the lesson's text, the top bar's model
        name lit for MODEL_FLASH_SECONDS instead (the bar names the model all the time)."""
        if not self.layout_now.compact:
            self.notify(words)
            return
        self.model_flash = True
        self.update_topbar()

        def done() -> None:
            self.model_flash = False
            self.update_topbar()

        self.set_timer(MODEL_FLASH_SECONDS, done)

    def switch_model(self, name: str, from_lesson: bool = False) -> bool:
        """Load model `name`; a lesson (its front matter or a link) may only name a shipped variant, never a
        path: lesson text must not make the app open files outside the package."""
        if from_lesson and name not in MODEL_VARIANTS:
            self.notify(
                pick(WORDS, "lesson_model", self.lang, name=name, known=", ".join(MODEL_VARIANTS)), severity="warning"
            )
            return False
        try:
            gpt = model.load(name)
        except model.WeightsError as error:
            known = name in MODEL_VARIANTS
            words = pick(WORDS, "not_shipped", self.lang, name=name) if known else str(error)
            self.notify(words, severity="warning")
            return False
        self.use_model(gpt, remember=name)
        return True

    def use_model(self, gpt: GPT, remember: str | None) -> None:
        """Show `gpt` from now on; `remember`: the name to resume it by next time (None: the app's default)."""
        self.place.use_model(gpt)
        self.place.stop_generating()  # a run of draws belongs to the model it began on
        self.sample_text = None
        self.passes.forget_speed()  # not measured for this model yet: its first pass goes to a worker
        self.run_model(self.typed_prompt)
        self.host.remember(model=remember)

    def show_link(self, params: Mapping[str, str]) -> None:
        """What a `tutor:show?…` link asks (the app follows every link; this part is the screen's): the model,
        the edits, the direction, step, token and head, the panel, then the prompt."""
        if "model" in params:
            self.switch_model(params["model"], from_lesson=True)
        edits_changed = self.link_edits(params) if {"edit", "prompt", "model"} & params.keys() else False
        missing = self.place.show(params)  # direction, step, token, head (a step of a prompt still coming waits)
        if missing is not None:
            self.no_such_step(missing)
        elif "step" in params and self.place.pending_step is None:
            self.moved()  # the step's panel, before the link's own panel below
        if "panel" in params and params["panel"] in PANELS and params["panel"] != "tokens":
            self.query_one("#panels", PanelSwitcher).active = params["panel"]
        if "prompt" in params:  # last: a quick model's trace comes at once, and takes the step and token above
            self.set_prompt(params["prompt"])
        elif edits_changed:
            self.edits_changed()  # the pass again, with the link's edits (and its gradients if they are shown)
        else:
            self.ensure_grads()  # backwards now, or the gradient panel: the pass with its gradients
        self.refresh_panels()
        if self.lesson_only():  # the panels it changed are behind the lesson
            self.notify(t("f3_shows_it", self.lang), timeout=3)

    def link_edits(self, params: Mapping[str, str]) -> bool:
        """A link that sets up a scene (a prompt, a model or `edit=`) brings its own edits, none if it names none;
        True when they differ from the ones before. An `edit=` the app cannot read is a notice, and no edits."""
        try:
            edits = parse_edits(params.get("edit", "none"))
        except EditWordsError as error:
            self.notify(str(error), severity="warning", markup=False)
            edits = ()
        return self.place.set_edits(edits)

    def action_lessons(self) -> None:
        self.host.action_lessons()

    async def action_lesson(self, delta: int) -> None:
        await self.host.step_lesson(delta)

    def action_toggle_language(self) -> None:
        self.host.action_toggle_language()

    def action_links(self) -> None:
        """The lesson's links, to follow from the keyboard."""
        from tutor.screens.links import LinkPickerScreen

        # as shown, every fold open (a fold's links are the lesson's too): the exercises' answers are links there,
        # each named for the list by its exercise
        lesson = self.place.lesson
        shown = display_markdown(lesson, frozenset(range(len(folds_in(lesson.body)[0])))) if lesson else ""
        links = [
            (t("answer_item", self.lang, n=href.rpartition("=")[2]) if is_answer_link(href) else label, href)
            for label, href in labelled_links(shown)
        ]
        if not links:
            self.notify(t("no_links", self.lang))
            return

        async def chosen(href: str | None) -> None:
            if href:
                await self.host.follow_href(href)

        self.app.push_screen(LinkPickerScreen(links, t("links_title", self.lang)), chosen)

    def action_practice(self) -> None:
        """Everything to do rather than read: this lesson's quick check, the experiments, the exercises."""
        from tutor.screens.links import LinkPickerScreen

        async def chosen(href: str | None) -> None:
            if href:
                await self.host.follow_href(href)

        items = self.host.practice_items()
        self.app.push_screen(LinkPickerScreen(items, t("practice_title", self.lang)), chosen)

    def action_help(self) -> None:
        from tutor.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))
