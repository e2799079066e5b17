"""The tutor's one working screen: the lesson beside the live panels, and the keys that drive them."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

import model
from model import GPT, Trace
from tutor.i18n import pick, t
from tutor.lessons import MODEL_VARIANTS, PANELS, Lesson, LessonError, Link, labelled_links, parse_link
from tutor.messages import TraceReady
from tutor.patches.footer_labels import localize_bindings
from tutor.view import View
from tutor.widgets.attention_panel import AttentionPanel
from tutor.widgets.footer import TutorFooter
from tutor.widgets.layernorm_panel import LayerNormPanel
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.next_token_panel import NextTokenPanel
from tutor.widgets.panel_switcher import PanelSwitcher
from tutor.widgets.prompt_input import PromptInput
from tutor.widgets.residual_panel import ResidualPanel
from tutor.widgets.step_bar import StepBar
from tutor.widgets.step_info import StepInfo
from tutor.widgets.token_strip import TokenStrip
from tutor.widgets.vectors_panel import VectorsPanel

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "model_failed": ("The model could not run on this prompt ({error}).", "模型无法处理这个提示词（{error}）。"),
    "lesson_model": (
        "A lesson can only switch to a shipped model ({known}), not '{name}'.",
        "课程只能切换到随附的模型（{known}），不能切换到“{name}”。",
    ),
    "lesson_opens_on": ("This lesson runs on model {name}.", "本课使用模型 {name}。"),
    "lesson_default_model": (
        "This lesson names no model: back to the default, {name}.",
        "本课没有指定模型：换回默认模型 {name}。",
    ),
}
FOOTER: dict[str, tuple[str, str]] = {  # action: (en, zh) label in the footer
    "step(1)": ("Step", "步进"),
    "toggle_lesson": ("Lesson/panels", "课文/面板"),
    "lesson(1)": ("Next lesson", "下一课"),
    "practice": ("Practice", "练习"),
    "links": ("Try it", "试一试"),
    "help": ("Help", "帮助"),
    "lessons": ("Lessons", "课程"),
    "block(1)": ("Block", "下一块"),
    "move_token(1)": ("Token", "词元"),
    "head(1)": ("Head", "注意力头"),
    "next_panel": ("Panel", "面板"),
    "scroll_lesson(1)": ("Scroll", "滚动课文"),
    "page_down": ("Scroll", "滚动"),  # the lesson's own, while it has the focus
}
MIN_WIDTH, MIN_HEIGHT = 60, 16
QUICK_PASS = 0.02  # seconds: a model this quick runs on the keystroke itself, not in a worker
COMPACT_WIDTH = 110  # below this the lesson and the panels take turns
WIDE_WIDTH = 170  # from here the residual chart and the next-token guess stay in view beside the tabs
PANEL_FOR_KIND = {
    "embed": "vectors",
    "norm": "layernorm",
    "attention": "attention",
    "residual": "residual",
    "mlp": "residual",
    "unembed": "next",
}


class MainScreen(Screen[None]):
    BINDINGS = [
        # Footer order is what a learner needs first: at 80 columns only the first eight fit (F1 lists all).
        # priority: the prompt (a scrolling widget underneath) would otherwise claim these keys
        Binding("down", "step(1)", "Step", key_display="↓↑", priority=True),
        Binding("up", "step(-1)", "Back", show=False, priority=True),
        Binding("f3", "toggle_lesson", "Lesson/panels"),
        # the lesson scrolls wherever the focus is (shown while the lesson is in view without the focus; with it,
        # the lesson's own PgDn is shown)
        Binding("alt+down", "scroll_lesson(1)", "Scroll", key_display="alt+↓↑", priority=True),
        Binding("alt+up", "scroll_lesson(-1)", "Scroll lesson back", show=False, priority=True),
        Binding("f8", "lesson(1)", "Next lesson"),
        Binding("f7", "lesson(-1)", "Prev lesson", show=False),
        Binding("f10", "practice", "Practice"),
        Binding("f9", "links", "Try it"),
        Binding("f1", "help", "Help"),
        Binding("f2", "lessons", "Lessons"),
        Binding("pagedown", "block(1)", "Block", key_display="PgDn", priority=True),
        Binding("pageup", "block(-1)", "Block back", show=False, priority=True),
        Binding("shift+up", "first_step", "First step", show=False, priority=True),
        Binding("shift+down", "last_step", "Last step", show=False, priority=True),
        Binding("alt+right", "move_token(1)", "Token", key_display="alt+→"),
        Binding("alt+left", "move_token(-1)", "Token back", show=False),
        Binding("f4", "head(1)", "Head"),
        Binding("shift+f4", "head(-1)", "Head back", show=False),
        Binding("f6", "next_panel", "Panel"),
        Binding("f5", "toggle_language", "中/En"),
        # single keys, only when the prompt does not have the focus (the input would type them)
        Binding("j", "step(1)", show=False),
        Binding("k", "step(-1)", show=False),
        Binding("l,right", "move_token(1)", show=False),
        Binding("h,left", "move_token(-1)", show=False),
        Binding("right_square_bracket", "head(1)", show=False),
        Binding("left_square_bracket", "head(-1)", show=False),
        Binding("question_mark", "help", show=False),
        Binding("slash", "focus_prompt", show=False),
        *[Binding(str(n), f"goto_block({n})", show=False) for n in range(10)],
    ]

    def __init__(self, gpt: GPT, lang: str) -> None:
        super().__init__()
        self.gpt = gpt
        self.home_gpt = gpt  # what the app started with (tiny, or the command line's): a lesson naming none opens on it
        self.lang = lang
        self.trace: Trace | None = None
        self.prompt = ""
        self.step_index = 0
        self.token = 0
        self.head = 0
        self.lesson: Lesson | None = None
        self._position = ""  # of the lesson shown: "2/9"
        self.pending_step: str | None = None  # a step a lesson asked for, applied when its trace arrives
        self.pending_token: int | None = None  # likewise a token
        self._drawn_trace: Trace | None = None  # what the panels show now (see refresh_panels)
        self._drawn: tuple[object, ...] = ()
        self._topbar: Content | None = None
        self.pass_seconds = math.inf  # how long the model's last pass took
        # a small window shows the lesson first (a new learner's, or where a returning learner left it): see on_resize
        self.start_on_lesson = False
        self._lesson_from_start = False  # the small window shows the lesson because it started so, not by F3

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="topbar")
        with Horizontal(id="body"):
            yield LessonView(id="lesson")
            with Vertical(id="work"):
                placeholder = t("prompt_placeholder", self.lang)
                yield PromptInput(placeholder=placeholder, id="prompt", on_value=self.prompt_typed)
                yield TokenStrip(id="tokens")
                yield StepBar(id="stepbar")
                yield StepInfo(id="stepinfo")
                yield PanelSwitcher(
                    self.panel_labels(),
                    VectorsPanel(id="vectors"),  # its grids scroll themselves
                    VerticalScroll(LayerNormPanel(), id="layernorm"),
                    VerticalScroll(ResidualPanel(), id="residual"),
                    AttentionPanel(id="attention"),
                    VerticalScroll(NextTokenPanel(), id="next"),
                    id="panels",
                )
            with Vertical(id="side"):
                with VerticalScroll():
                    yield ResidualPanel(id="side-residual")
                with VerticalScroll():
                    yield NextTokenPanel(id="side-next")
        yield Static(id="too-small")
        yield TutorFooter(compact=True)

    def panel_labels(self) -> dict[str, str]:
        return {panel: t(panel, self.lang) for panel in PANELS[1:]}  # "tokens" is always in view, not a tab

    def localize_footer(self) -> None:
        """The footer's labels in the learner's language (again after F5)."""
        localize_bindings(self, FOOTER, self.lang)
        localize_bindings(self.query_one(LessonView), FOOTER, self.lang)
        self.refresh_bindings()

    def on_mount(self) -> None:
        self.localize_footer()
        prompt = self.query_one("#prompt", Input)
        prompt.cursor_blink = False  # blinking costs bandwidth over SSH
        prompt.focus()

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        too_small = width < MIN_WIDTH or height < MIN_HEIGHT
        compact = width < COMPACT_WIDTH
        self.set_class(too_small, "-too-small")
        self.set_class(compact, "-compact")
        self.set_class(width >= WIDE_WIDTH, "-wide")
        if self.start_on_lesson and compact:  # the first layout: the lesson, not the panels
            self.add_class("-lesson")
            self._lesson_from_start = True
        elif self._lesson_from_start and not compact:  # wide enough for both: not the lesson hidden (see app.tcss)
            self.remove_class("-lesson")
            self._lesson_from_start = False
        self.start_on_lesson = False
        self.focus_what_is_shown()
        self.refresh_bindings()  # alt+↓↑ is in the footer only while the lesson is in view
        self.remember_view()
        if too_small:
            self.query_one("#too-small", Static).update(
                t("too_small", self.lang, w=MIN_WIDTH, h=MIN_HEIGHT, cw=width, ch=height)
            )
        self.refresh_panels()

    # -- the model, in a worker ----------------------------------------------------------------

    @on(Input.Changed, "#prompt")
    def prompt_changed(self, event: Input.Changed) -> None:
        # kept now, not when the model is done: a line that drops (or a busy machine) must not lose what was typed
        self.app.remember(prompt=event.value)  # type: ignore[attr-defined]
        if event.value != event.input.value or (self.trace is not None and event.value == self.prompt):
            return  # overtaken by a newer keystroke, or on screen already (first frame, or prompt_typed)
        self.run_model(event.value, self.gpt)  # a big model (GPT-2): typing must not wait; the latest pass wins

    def prompt_typed(self, value: str) -> None:
        """The prompt's text changed (called inside the keystroke). A quick model runs here and now, so
        that the character and its numbers come in one frame; a slow one waits for `prompt_changed`."""
        if self._drawn_trace is not None and self.pass_seconds < QUICK_PASS and value != self.prompt:
            self.workers.cancel_group(self, "model")
            self.run_model_now(value)

    def set_prompt(self, text: str) -> None:
        prompt = self.query_one("#prompt", Input)
        if prompt.value == text:
            self.run_model(text, self.gpt)
        else:
            prompt.value = text  # Input.Changed runs the model
        prompt.cursor_position = len(text)
        if self._drawn_trace is None:  # the very first picture: a pass of a few tokens takes milliseconds, wait for it
            self.run_model_now(text)

    def run_model_now(self, prompt: str) -> None:
        """The model on this thread: for the first picture, which would otherwise wait for a worker's turn."""
        try:
            trace = self.timed_pass(self.gpt, prompt)
        except Exception as error:  # as in the worker: a notice, and the app goes on
            self.notify(self.failure(error), severity="error", markup=False)
            return
        self.on_trace_ready(TraceReady(prompt, self.gpt, trace))

    @work(thread=True, exclusive=True, group="model")
    def run_model(self, prompt: str, gpt: GPT) -> None:
        worker = get_current_worker()
        try:  # a newer keystroke has its own worker: the latest wins, and this pass stops early
            trace = self.timed_pass(gpt, prompt, stop=lambda: worker.is_cancelled)
        except model.Stopped:
            return
        except Exception as error:  # a bug must not end the learner's session with a traceback: say it, go on
            self.app.call_from_thread(self.notify, self.failure(error), severity="error", markup=False)
            return
        if not worker.is_cancelled:
            self.post_message(TraceReady(prompt, gpt, trace))

    def timed_pass(self, gpt: GPT, prompt: str, stop: Callable[[], bool] | None = None) -> Trace:
        """`gpt.run`, noting how long it took (a quick model runs inside the keystroke: see prompt_typed)."""
        started = time.perf_counter()
        trace = gpt.run(prompt, stop=stop)
        self.pass_seconds = time.perf_counter() - started
        return trace

    def failure(self, error: Exception) -> str:
        return pick(WORDS, "model_failed", self.lang, error=f"{type(error).__name__}: {error}")

    def on_trace_ready(self, message: TraceReady) -> None:
        if message.gpt is not self.gpt or message.prompt != self.query_one("#prompt", Input).value:
            return  # a model or a prompt that is no longer on screen
        old = self.trace
        was_at_end = old is None or self.token >= len(old.tokens) - 1
        self.trace, self.prompt = message.trace, message.prompt
        n = len(message.trace.tokens)
        self.token = max(0, n - 1) if was_at_end else min(self.token, max(0, n - 1))
        if old is None or old.steps is not message.trace.steps:
            self.step_index = min(self.step_index, len(message.trace.steps) - 1)
        if self.pending_token is not None:
            self.token = self.pending_token % n if n else 0
            self.pending_token = None
        if self.pending_step is not None:
            self.goto_step_name(self.pending_step)
            self.pending_step = None
        self.refresh_panels()
        self.app.remember(prompt=message.prompt)  # type: ignore[attr-defined]

    # -- drawing -------------------------------------------------------------------------------

    def view(self) -> View | None:
        if self.trace is None:
            return None
        return View(self.gpt, self.trace, self.step_index, self.token, self.head, self.lang)

    def refresh_panels(self) -> bool:
        """Draw the current view; False when there was nothing new to draw."""
        view = self.view()
        if view is None or not self.is_mounted:
            return False
        tabs = self.query_one("#panels", PanelSwitcher)
        drawn = (view.step_index, view.token, view.head, tabs.active, self.size, self.classes, self.lang)
        if view.trace is self._drawn_trace and drawn == self._drawn:
            return False  # a second request for the same picture (a tab switch reports itself after the key drew it)
        self._drawn_trace, self._drawn = view.trace, drawn
        self.update_topbar()
        self.query_one(TokenStrip).show(view)
        self.query_one(StepBar).show(view.trace.steps, view.step_index)
        self.query_one(StepInfo).show(view)
        if self.has_class("-too-small"):
            return True
        active = tabs.active
        panels = {
            "vectors": VectorsPanel,
            "layernorm": LayerNormPanel,
            "residual": ResidualPanel,
            "attention": AttentionPanel,
            "next": NextTokenPanel,
        }
        if active in panels and not (self.has_class("-compact") and self.has_class("-lesson")):
            pane = self.query_one(f"#{active}")
            (pane if isinstance(pane, panels[active]) else pane.query_one(panels[active])).show(view)
        if self.has_class("-wide"):
            self.query_one("#side-residual", ResidualPanel).show(view)
            self.query_one("#side-next", NextTokenPanel).show(view)
        return True

    def update_topbar(self) -> None:
        title = self.lesson.title if self.lesson else ""
        status = "" if self.gpt.trained else f" ({t('untrained', self.lang)})"
        language = "中文" if self.lang == "zh" else "English"
        topbar = Content.from_markup(  # $variables: a title like "[/b]" is text, not markup
            "[b]tutor[/b] · $title · $model_word [b]$model[/b]$status · $language",
            title=title,
            model_word=t("model", self.lang),
            model=self.gpt.name,
            status=status,
            language=language,
        )
        if topbar != self._topbar:  # unchanged: not even a redraw (its bytes would go down the line again)
            self._topbar = topbar
            self.query_one("#topbar", Static).update(topbar, layout=False)  # one row: never a re-layout

    @on(PanelSwitcher.Switched, "#panels")
    def panel_switched(self) -> None:
        self.refresh_panels()  # a no-op when the key that switched the tab has drawn it already

    # -- stepping ------------------------------------------------------------------------------

    def _go(self, index: int) -> None:
        if self.trace is None:
            return
        self.step_index = max(0, min(index, len(self.trace.steps) - 1))
        tabs = self.query_one("#panels", PanelSwitcher)
        panel = PANEL_FOR_KIND[self.trace.steps[self.step_index].kind]
        if tabs.display:
            tabs.active = panel  # before the panels are drawn: one layout and one frame for the key
        self.refresh_panels()
        self.app.remember(step=self.trace.steps[self.step_index].name)  # type: ignore[attr-defined]

    def action_step(self, delta: int) -> None:
        self._go(self.step_index + delta)

    def action_first_step(self) -> None:
        self._go(0)

    def action_last_step(self) -> None:
        if self.trace is not None:
            self._go(len(self.trace.steps) - 1)

    def action_block(self, delta: int) -> None:
        """To the first step of the next (or previous) block; past the last block, to the end."""
        if self.trace is None:
            return
        steps = self.trace.steps
        current = steps[self.step_index].block
        if delta > 0:
            target = next(
                (
                    s.index
                    for s in steps[self.step_index :]
                    if s.block is not None and (current is None or s.block > current)
                ),
                len(steps) - 1,
            )
            if current is None and steps[self.step_index].kind != "embed":
                target = len(steps) - 1
        else:
            here = (
                current
                if current is not None
                else (-1 if steps[self.step_index].kind == "embed" else self.gpt.config.n_layers)
            )
            starts = [
                s.index
                for s in steps
                if s.block is not None and s.block < here and (s.index == 0 or steps[s.index - 1].block != s.block)
            ]
            target = starts[-1] if starts else 0
        self._go(target)

    def action_goto_block(self, block: int) -> None:
        if self.trace is None:
            return
        first = next((s.index for s in self.trace.steps if s.block == block), None)
        if first is None:
            self.notify(f"this model has blocks 0–{self.gpt.config.n_layers - 1}", severity="warning")
        else:
            self._go(first)

    def goto_step_name(self, name: str) -> bool:
        if self.trace is None:
            self.pending_step = name
            return True
        index = next((s.index for s in self.trace.steps if s.name == name), None)
        if index is None:
            self.notify(f"model {self.gpt.name} has no step {name}", severity="warning")
            return False
        self._go(index)
        return True

    def action_move_token(self, delta: int) -> None:
        if self.trace is not None and self.trace.tokens:
            self.token = max(0, min(self.token + delta, len(self.trace.tokens) - 1))
            self.refresh_panels()

    def action_head(self, delta: int) -> None:
        self.head = (self.head + delta) % self.gpt.config.n_heads
        self.refresh_panels()

    def action_next_panel(self) -> None:
        tabs = self.query_one("#panels", PanelSwitcher)
        order = list(PANELS[1:])  # "tokens" is always in view, not a tab
        tabs.active = order[(order.index(tabs.active) + 1) % len(order)] if tabs.active in order else order[0]

    def action_focus_prompt(self) -> None:
        self.query_one("#prompt", Input).focus()

    def action_scroll_lesson(self, delta: int) -> None:
        lesson = self.query_one(LessonView)
        if delta > 0:
            lesson.scroll_page_down(animate=False)
        else:
            lesson.scroll_page_up(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the lesson has the focus, the arrows and page keys scroll it instead of stepping (and its own
        bindings scroll it with alt+↓↑ too); alt+↓↑ is there only while the lesson is in view."""
        lesson = self.query_one(LessonView)
        in_lesson = self.focused is not None and lesson in self.focused.ancestors_with_self
        if action in {"step", "block", "first_step", "last_step"} and in_lesson:
            return False
        if action == "scroll_lesson":
            return self.lesson_shown() and not in_lesson
        return True

    def lesson_shown(self) -> bool:
        """Whether the lesson is in view (see app.tcss: F3 swaps it in a small window, hides it in a wide one)."""
        return self.has_class("-lesson") == self.has_class("-compact")

    def action_toggle_lesson(self) -> None:
        self.toggle_class("-lesson")
        self._lesson_from_start = False
        self.focus_what_is_shown()
        self.refresh_bindings()
        self.refresh_panels()
        self.remember_view()
        self.call_after_refresh(self.query_one(LessonView).check_end)  # in view again: a short lesson is read

    def remember_view(self) -> None:
        """What a small window shows (the lesson or the panels), to start there next time."""
        if self.has_class("-compact") and not self.has_class("-too-small"):
            self.app.remember(view="lesson" if self.has_class("-lesson") else "panels")  # type: ignore[attr-defined]

    def focus_what_is_shown(self) -> None:
        """After F3 or a resize across COMPACT_WIDTH: the keys go to what the learner sees."""
        lesson = self.query_one(LessonView)
        in_lesson = self.focused is not None and lesson in self.focused.ancestors_with_self
        lesson_only = self.has_class("-compact") and self.has_class("-lesson")
        lesson_hidden = self.has_class("-lesson") != self.has_class("-compact")  # see app.tcss
        if lesson_only and not in_lesson:
            lesson.focus()  # the lesson fills the window: the arrows and page keys should scroll it
        elif lesson_hidden and (self.focused is None or in_lesson):
            self.query_one("#prompt", Input).focus()  # the lesson went out of view: back to the prompt

    # -- lessons and links ---------------------------------------------------------------------

    async def show_lesson(self, lesson: Lesson | None, position: str, empty: str) -> None:
        self.lesson = lesson
        self._position = position
        self.query_one(LessonView).show(lesson, self.lesson_header(), empty)
        self.update_topbar()

    def lesson_header(self) -> str:
        """The lesson's title line: "Lesson 2/9", with a ✓ once it is done."""
        lesson = self.lesson
        if lesson is None:
            return ""
        done = lesson.id in self.app.progress.done  # type: ignore[attr-defined]
        return f"{t('lesson', self.lang)} {self._position}{'  ✓' if done else ''}"

    def update_lesson_header(self) -> None:
        """The header again (a lesson just marked done shows its ✓ at once), the lesson staying where it is."""
        self.query_one(LessonView).set_header(self.lesson_header())

    @on(LessonView.EndReached)
    def lesson_end_reached(self, event: LessonView.EndReached) -> None:
        event.stop()
        self.app.lesson_read(event.lesson_id)  # type: ignore[attr-defined]

    def start_lesson(self, lesson: Lesson, keep_model: bool = False) -> None:
        """Set the panels the way the lesson's front matter asks, on the lesson's own model: the one it names, else
        the one the app started with, never one a previous lesson or a link switched to. `keep_model`: the model
        stays (at start-up, when the command line named it)."""
        if not keep_model:
            self.open_on_lesson_model(lesson)
        if lesson.prompt:
            self.set_prompt(lesson.prompt)
        if lesson.steps:
            self.pending_step = lesson.steps[0]
            if self.trace is not None and self.prompt == lesson.prompt:
                self.goto_step_name(lesson.steps[0])
                self.pending_step = None
        if lesson.panels and lesson.panels[0] in PANELS and lesson.panels[0] != "tokens":
            self.query_one("#panels", PanelSwitcher).active = lesson.panels[0]

    def open_on_lesson_model(self, lesson: Lesson) -> None:
        """Switch to the lesson's model if another is loaded, and say so."""
        if lesson.model:
            if lesson.model != self.gpt.name and self.switch_model(lesson.model, from_lesson=True):
                self.notify(pick(WORDS, "lesson_opens_on", self.lang, name=lesson.model))
        elif self.gpt.name != self.home_gpt.name:
            home = self.home_gpt
            self.use_model(home, remember=home.name if home.name in MODEL_VARIANTS else None)
            self.notify(pick(WORDS, "lesson_default_model", self.lang, name=home.name))

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
            self.notify(f"model {name} is not shipped yet" if known else str(error), severity="warning")
            return False
        self.use_model(gpt, remember=name)
        return True

    def use_model(self, gpt: GPT, remember: str | None) -> None:
        """Show `gpt` from now on; `remember`: the name to resume it by next time (None: the app's default)."""
        self.gpt = gpt
        self.trace = None
        self.pass_seconds = math.inf  # not measured for this model yet: its first pass goes to a worker
        self.head = 0
        self.run_model(self.query_one("#prompt", Input).value, gpt)
        self.app.remember(model=remember)  # type: ignore[attr-defined]

    @on(LessonView.LinkClicked)
    async def link_clicked(self, event: LessonView.LinkClicked) -> None:
        event.stop()
        href = event.href
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
        """Do what a `tutor:` link says."""
        params = link.params
        if link.action == "show":
            if "model" in params:
                self.switch_model(params["model"], from_lesson=True)
            if "step" in params:
                if "prompt" in params or self.trace is None:
                    self.pending_step = params["step"]
                else:
                    self.goto_step_name(params["step"])
            if "panel" in params and params["panel"] in PANELS and params["panel"] != "tokens":
                self.query_one("#panels", PanelSwitcher).active = params["panel"]
            if "token" in params and params["token"].lstrip("-").isdigit():
                if "prompt" in params or "model" in params or self.trace is None:
                    self.pending_token = int(params["token"])  # counted in the prompt that is coming
                else:
                    n = len(self.trace.tokens)
                    self.token = int(params["token"]) % n if n else 0
            if "head" in params and params["head"].isdigit():
                self.head = int(params["head"]) % self.gpt.config.n_heads
            if "prompt" in params:  # last: a quick model's trace comes at once, and takes the step and token above
                self.set_prompt(params["prompt"])
            self.refresh_panels()
        elif link.action == "lesson":
            await self.app.open_lesson(params.get("id"), heading=params.get("heading"))  # type: ignore[attr-defined]
        elif link.action == "experiment":
            self.app.open_experiment(params.get("name", ""))  # type: ignore[attr-defined]
        elif link.action == "exercise":
            self.app.open_exercise(params.get("name", ""))  # type: ignore[attr-defined]
        elif link.action == "quiz":
            self.app.open_quiz(params.get("id") or (self.lesson.id if self.lesson else ""))  # type: ignore[attr-defined]

    def action_lessons(self) -> None:
        self.app.action_lessons()  # type: ignore[attr-defined]

    async def action_lesson(self, delta: int) -> None:
        await self.app.step_lesson(delta)  # type: ignore[attr-defined]

    def action_toggle_language(self) -> None:
        self.app.action_toggle_language()  # type: ignore[attr-defined]

    def action_links(self) -> None:
        """The lesson's links, to follow from the keyboard."""
        from tutor.screens.links import LinkPickerScreen

        links = labelled_links(self.lesson.body) if self.lesson else []
        if not links:
            self.notify(t("no_links", self.lang))
            return

        async def chosen(href: str | None) -> None:
            if href:
                try:
                    await self.follow(parse_link(href))
                except LessonError as error:
                    self.notify(str(error), severity="error")

        self.app.push_screen(LinkPickerScreen(links, t("links_title", self.lang)), chosen)

    def action_practice(self) -> None:
        """Everything to do rather than read: this lesson's quick check, the experiments, the exercises."""
        from tutor.screens.links import LinkPickerScreen

        async def chosen(href: str | None) -> None:
            if href:
                await self.follow(parse_link(href))

        items = self.app.practice_items()  # type: ignore[attr-defined]
        self.app.push_screen(LinkPickerScreen(items, t("practice_title", self.lang)), chosen)

    def action_help(self) -> None:
        from tutor.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))
