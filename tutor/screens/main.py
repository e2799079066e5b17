"""The tutor's one working screen: the lesson beside the live panels, and the keys that drive them."""

from __future__ import annotations

from time import monotonic
from typing import cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Key, Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static

import model
from model import GPT, Step, Trace
from tutor.catalogue import FOLLOWING_PANELS, MODEL_VARIANTS, PANEL, PANEL_FOR_KIND, PANELS, TABS, panel_label
from tutor.host import Host
from tutor.i18n import pick, t
from tutor.lessons.answers import is_answer_link
from tutor.lessons.display import display_markdown
from tutor.lessons.links import LessonError, Link, labelled_links, parse_link
from tutor.lessons.parse import Lesson
from tutor.lessons.reading import reading_minutes
from tutor.panels.logit_lens_panel import LensRow, LogitLensPanel, lens_rows
from tutor.panels.next_token_panel import NextTokenPanel, sampled_text
from tutor.panels.panes import drawn_by, tab_panes
from tutor.panels.residual_panel import ResidualPanel
from tutor.panels.step_info import StepInfo
from tutor.panels.token_strip import TokenStrip
from tutor.patches.footer_labels import localize_bindings
from tutor.place import Place
from tutor.reach import Reach
from tutor.runner import PassRunner, Stop, failure_words
from tutor.sampling import GENERATE_N, Sampled, appended
from tutor.view import View
from tutor.widgets.footer import TutorFooter
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.panel_switcher import PanelSwitcher
from tutor.widgets.prompt_input import PromptInput
from tutor.widgets.step_bar import StepBar

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
    "turn": ("Backward", "反向传播"),  # where ctrl+r takes the learner: TURN_FORWARD while backward
    "scroll_lesson(1)": ("Scroll", "滚动"),  # the lesson, or the panel while the lesson is out of view
    "page_down": ("Scroll", "滚动"),  # the lesson's own, while it has the focus
    "sample": ("Draw a token", "抽一个词元"),
    "temperature(1)": ("Temperature", "温度"),
    "toggle_language": ("中/En", "中/En"),
}
TYPING_NOTICE_SECONDS = 4.0  # keys typed into a lesson that fills the window: said once in this long
MODEL_FLASH_SECONDS = 4.0  # a small window's top bar lights the model a lesson switched to, this long
TURN_FORWARD = ("Forward", "正向计算")  # ctrl+r's label while the pass is shown backwards
Ready = tuple[str, GPT, Trace, Sampled | None]  # a pass: its prompt, model and trace, and the token drawn for it
LensReading = tuple[Trace, int, list[LensRow]]  # a logit lens read in the worker: for which trace and token
GENERATE_PAUSE = 0.1  # seconds between the tokens of a run: each is drawn on screen, and keys get in between
MIN_WIDTH, MIN_HEIGHT = 60, 16
COMPACT_WIDTH = 110  # below this the lesson and the panels take turns
WIDE_WIDTH = 170  # from here the residual chart and the next-token guess stay in view beside the tabs


def page(widget: Widget, delta: int) -> None:
    """A page down (delta > 0) or up."""
    if delta > 0:
        widget.scroll_page_down(animate=False)
    else:
        widget.scroll_page_up(animate=False)


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
        Binding("alt+pagedown", "scroll_panel(1)", "Scroll panel", show=False, priority=True),
        Binding("alt+pageup", "scroll_panel(-1)", "Scroll panel back", show=False, priority=True),
        Binding("f8", "lesson(1)", "Next lesson"),
        Binding("f7", "lesson(-1)", "Prev lesson", show=False),
        Binding("f10", "practice", "Practice"),
        Binding("f9", "links", "Try it"),
        Binding("f1", "help", "Help"),
        # ^r works in the prompt too (alt+b cannot: terminals send it as ESC b, which Textual reads as ctrl+left)
        Binding("ctrl+r", "turn", "Backward", priority=True),
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
        # sampling the next token: alt+letters work from the prompt too (priority: the prompt would type the letter)
        Binding("alt+n", "sample", "Draw a token", key_display="alt+n", priority=True),
        Binding("alt+g", "generate", "Generate", show=False, priority=True),
        Binding("alt+t", "temperature(1)", "Temperature", key_display="alt+t/T", priority=True),
        Binding("alt+shift+t", "temperature(-1)", "Cooler", show=False, priority=True),
        Binding("alt+k", "top_k(1)", "More tokens", show=False, priority=True),
        Binding("alt+shift+k", "top_k(-1)", "Fewer tokens", show=False, priority=True),
        Binding("escape", "stop_generating", "Stop", show=False),
        # single keys, only when the prompt does not have the focus (the input would type them)
        Binding("j", "step(1)", show=False),
        Binding("k", "step(-1)", show=False),
        Binding("l,right", "move_token(1)", show=False),
        Binding("h,left", "move_token(-1)", show=False),
        Binding("right_square_bracket", "head(1)", show=False),
        Binding("left_square_bracket", "head(-1)", show=False),
        Binding("b", "turn", show=False),
        Binding("question_mark", "help", show=False),
        Binding("slash", "focus_prompt", show=False),
        *[Binding(str(n), f"goto_block({n})", show=False) for n in range(10)],
    ]

    def __init__(self, gpt: GPT, lang: str) -> None:
        super().__init__()
        self.place = Place(gpt, home_gpt=gpt)  # where the learner is: every key moves this, then the panels draw it
        self.lang = lang
        self.passes: PassRunner[Ready] = PassRunner(self, "model", self.pass_ready, self.pass_failed)
        # a big model's logit lens (GPT-2: ~80 ms a token), read beside the passes so that neither cancels the other
        self.lens_readings: PassRunner[LensReading] = PassRunner(self, "lens", self.lens_read, self.lens_failed)
        self.generate_pause = GENERATE_PAUSE
        self._sample_text: str | None = None  # the prompt with a token just drawn: its pass is the draw's, not typing's
        self._drawn_trace: Trace | None = None  # what the panels show now (see refresh_panels)
        self._drawn: tuple[object, ...] = ()
        self._topbar: Content | None = None
        self._footer_backward = False  # the direction ctrl+r's footer label was written for
        self._typing_said = -TYPING_NOTICE_SECONDS  # when typing into the lesson was last said (monotonic)
        self._model_flash = False  # the top bar's model name lit: a lesson switched the model (small windows)
        self._requested: tuple[str, GPT, bool] | None = None  # the pass on its way: (prompt, model, with gradients)
        # a small window shows the lesson first (a new learner's, or where a returning learner left it): see on_resize
        self.start_on_lesson = False
        self._lesson_from_start = False  # the small window shows the lesson because it started so, not by F3

    # -- where the learner is (read-only: the moves are the Place's) ------------------------------

    @property
    def host(self) -> Host:
        return cast(Host, self.app)

    @property
    def gpt(self) -> GPT:
        return self.place.gpt

    @property
    def home_gpt(self) -> GPT:
        return self.place.home_gpt

    @property
    def trace(self) -> Trace | None:
        return self.place.trace

    @property
    def prompt(self) -> str:
        return self.place.prompt

    @property
    def step_index(self) -> int:
        return self.place.step_index

    @property
    def token(self) -> int:
        return self.place.token

    @property
    def head(self) -> int:
        return self.place.head

    @property
    def lesson(self) -> Lesson | None:
        return self.place.lesson

    @property
    def typed_prompt(self) -> str:
        """The prompt as typed (its pass may still be on its way)."""
        return self.query_one("#prompt", Input).value

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
                yield PanelSwitcher(self.panel_labels(), *tab_panes(), id="panels")  # the catalogue's tabs
            with Vertical(id="side"):
                with VerticalScroll():
                    yield ResidualPanel(id="side-residual")
                with VerticalScroll():
                    yield NextTokenPanel(id="side-next")
        yield Static(id="too-small")
        yield TutorFooter(compact=True)

    async def panels_settled(self) -> None:
        """Before the first frame: the panel asked for (a lesson's) mounted, shown and drawn."""
        await self.query_one("#panels", PanelSwitcher).settled()
        self.panel_switched()

    def first_frame_drawn(self) -> None:
        """What need not be in the first frame: the panels not in view, mounted now so that each is whole when
        first shown. (The lesson's code is highlighted when it first comes into view: see LessonView.)"""
        self.query_one("#panels", PanelSwitcher).mount_hidden()

    def panel_labels(self) -> dict[str, str]:
        return {panel: panel_label(panel, self.lang) for panel in TABS}  # "tokens" is always in view, not a tab

    def localize_footer(self) -> None:
        """The footer's labels in the learner's language (again after F5), ctrl+r's naming where it takes them."""
        words = FOOTER | ({"turn": TURN_FORWARD} if self.place.backward else {})
        held = self.place.reach.held_keys  # the keys a later lesson introduces: they work, unlisted until then
        localize_bindings(self, words, self.lang, held=held)
        localize_bindings(self.query_one(LessonView), words, self.lang, held=held)
        self._footer_backward = self.place.backward
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

    # -- the model: one runner, the latest pass wins -------------------------------------------

    @on(Input.Changed, "#prompt")
    def prompt_changed(self, event: Input.Changed) -> None:
        # kept now, not when the model is done: a line that drops (or a busy machine) must not lose what was typed
        self.host.remember(prompt=event.value)
        if event.value != event.input.value or (self.trace is not None and event.value == self.prompt):
            return  # overtaken by a newer keystroke, or on screen already (first frame, or prompt_typed)
        if event.value == self._sample_text:
            return  # a token drawn: its one new position is being computed already (see draw_token)
        self.run_model(event.value)  # a big model (GPT-2): typing must not wait; the latest pass wins

    def prompt_typed(self, value: str) -> None:
        """The prompt's text changed (called inside the keystroke). A quick model runs here and now, so
        that the character and its numbers come in one frame; a slow one waits for `prompt_changed`."""
        if value == self._sample_text:
            return  # the text of a draw (see draw_token): not a second, full pass
        self._sample_text = None
        if self.place.stop_generating():  # the learner typed: a run of draws gives way
            self.notify_stopped()
        if self._drawn_trace is not None and value != self.prompt and self.passes.quick_for(self.work_of(value)):
            self.run_model(value, inline=True)

    def set_prompt(self, text: str) -> None:
        prompt = self.query_one("#prompt", Input)
        if prompt.value == text:
            self.run_model(text)
        else:
            prompt.value = text  # Input.Changed runs the model
        prompt.cursor_position = len(text)
        if self._drawn_trace is None:  # the very first picture: a pass of a few tokens takes milliseconds, wait for it
            self.run_model(text, inline=True)

    def needs_grads(self) -> bool:
        """Backwards, and in the gradient panel, the pass records the gradients too (≈ 3× a forward pass)."""
        return self.place.backward or (
            self.is_mounted and self.query_one("#panels", PanelSwitcher).active == "gradient"
        )

    def work_of(self, prompt: str, grads: bool | None = None) -> int:
        """A pass's size for the runner's guess of its time: the prompt's characters (about its tokens), three
        times over with the gradients."""
        return len(prompt) * (3 if (self.needs_grads() if grads is None else grads) else 1)

    def run_model(self, prompt: str, inline: bool = False) -> None:
        """A pass of `prompt` on the model shown — with its gradients when they are shown."""
        gpt, grads = self.gpt, self.needs_grads()
        self._requested = (prompt, gpt, grads)

        def compute(stop: Stop) -> Ready:
            return prompt, gpt, self.run_pass(gpt, prompt, grads, stop), None

        self.passes.run(compute, inline=inline, work=self.work_of(prompt, grads))

    @staticmethod
    def run_pass(gpt: GPT, prompt: str, grads: bool, stop: Stop) -> Trace:
        """`gpt.run`; backwards, with the gradients, unless the prompt has no token to score (then forwards:
        the panels say why there is no ∂L/∂x)."""
        if grads:
            try:
                return gpt.run(prompt, grads=True, stop=stop)
            except model.NoTargetError:
                pass
        return gpt.run(prompt, stop=stop)

    def ensure_grads(self) -> None:
        """The gradients are to be shown and the pass on screen has none: the pass again, with them — once (a
        request already on its way is not made twice), and not for a prompt with no token to score."""
        trace = self.trace
        if trace is None or trace.has_grads or len(trace.tokens) < 2 or not self.needs_grads():
            return
        if self._requested != (self.prompt, self.gpt, True):
            self.run_model(self.prompt, inline=self.passes.quick_for(self.work_of(self.prompt, True)))

    @on(LogitLensPanel.Wanted)
    def read_lens(self, event: LogitLensPanel.Wanted) -> None:
        gpt, trace, token = event.gpt, event.trace, event.token
        self.lens_readings.run(lambda stop: (trace, token, lens_rows(gpt, trace, token)))

    def lens_read(self, reading: LensReading) -> None:
        self.query_one(LogitLensPanel).lens_read(*reading)

    def lens_failed(self, error: Exception) -> None:
        self.query_one(LogitLensPanel).lens_failed()
        self.notify(failure_words(error, self.lang), severity="error", markup=False)

    def pass_failed(self, error: Exception) -> None:
        self._requested = None
        self._sample_text = None
        self.place.stop_generating()
        self.notify(failure_words(error, self.lang), severity="error", markup=False)

    def pass_ready(self, result: Ready) -> None:
        prompt, gpt, trace, sampled = result
        self._requested = None
        if sampled is not None and prompt == self._sample_text:
            self._sample_text = None
        if gpt is not self.gpt or prompt != self.typed_prompt:
            return  # a model or a prompt that is no longer on screen
        missing = self.place.receive(trace, prompt, sampled)
        if missing is not None:
            self.no_such_step(missing)
        more = sampled is not None and sampled.run is not None and self.place.generated_one()
        self.refresh_panels()
        self.host.remember(prompt=prompt, step=trace.steps[self.step_index].name)
        if sampled is not None and not more and not self.next_panel_shown():
            self.notify(sampled_text(sampled, self.lang), markup=False)  # the panel that says it is out of view
        if sampled is not None:
            self.ensure_grads()  # backwards, and the pass before had none to carry on (a prompt of one token)
        if more:
            self.set_timer(self.generate_pause, self.generate_next)

    # -- drawing the next token: one new position through the KV cache --------------------------

    def draw_token(self, run: tuple[int, int] | None = None) -> bool:
        """Draw a token after the prompt's last one at the learner's temperature and top-k (draw n of the seed),
        append it to the prompt and compute only its position (`GPT.extend`, through the KV cache) — or, where
        the cache cannot serve (no causal mask, a full context, a text that re-tokenizes otherwise), the whole
        pass of the new text, and say why. The prompt box shows the new text without a pass of its own."""
        trace, prompt, gpt = self.trace, self.prompt, self.gpt
        if trace is None or not trace.tokens:
            self.notify(t("sample_no_prompt", self.lang))
            return False
        if self.typed_prompt != prompt or self._sample_text is not None:
            self.notify(t("sample_wait", self.lang))
            return False
        settings = self.place.sampling
        number = self.place.draw()
        logits = trace.logits[-1]
        token = model.sample(logits, settings.temperature, settings.top_k, model.sample_rng(settings.seed, number))
        raw = float(model.sampling_probs(logits, 1.0)[token])
        p = float(model.sampling_probs(logits, settings.temperature, settings.top_k)[token])
        text, reason = appended(gpt, trace, prompt, token)  # reason: why not the KV cache (None: it serves)
        grads = self.needs_grads()

        def compute(stop: Stop) -> Ready:
            longer = gpt.extend(trace, token) if reason is None else self.run_pass(gpt, text, grads, stop)
            sampled = Sampled(
                number,
                token,
                gpt.tokenizer.piece(token),
                raw,
                p,
                settings.temperature,
                settings.top_k,
                computed=1 if reason is None else len(longer.tokens),
                kept=len(trace.tokens) if reason is None else 0,
                full_reason=reason,
                run=run,
                backward=longer.has_grads,
            )
            return text, gpt, longer, sampled

        self._sample_text = text
        box = self.query_one("#prompt", Input)
        box.value = text  # prompt_typed and prompt_changed see `_sample_text`: no pass of their own
        box.cursor_position = len(text)
        self._requested = (text, gpt, grads if reason is not None else trace.has_grads)
        # one position through the cache: run inline if a pass of the text would be quick, and not measured
        # (its time says nothing of a whole pass's)
        work = self.work_of(text, grads)
        self.passes.run(compute, inline=self.passes.quick_for(work), work=work if reason is not None else 0)
        return True

    def next_panel_shown(self) -> bool:
        """Whether a next-token panel is in view (the tab, or beside the tabs in a wide window)."""
        if self.has_class("-wide"):
            return True
        tabs = self.query_one("#panels", PanelSwitcher)
        return tabs.active == "next" and tabs.display and not (self.has_class("-compact") and self.has_class("-lesson"))

    def action_sample(self) -> None:
        """alt+n: one token drawn and appended."""
        if self.place.stop_generating():
            self.notify_stopped()
        self.draw_token()

    def action_generate(self) -> None:
        """alt+g: GENERATE_N tokens in a row, each drawn on screen as it comes; alt+g again (or Esc) stops."""
        if self.place.stop_generating():
            self.notify_stopped()
            self.refresh_panels()
            return
        self.place.start_generating(GENERATE_N)
        tabs = self.query_one("#panels", PanelSwitcher)
        if tabs.display and not self.has_class("-wide"):
            tabs.active = "next"  # where the run's progress and each token's numbers are
        if not self.draw_token(run=(1, GENERATE_N)):
            self.place.stop_generating()
        self.refresh_panels()

    def generate_next(self) -> None:
        run = self.place.sampling.generating
        if run is None:
            return  # stopped in the meantime
        if not self.draw_token(run=(run[0] + 1, run[1])):
            self.place.stop_generating()
            self.refresh_panels()

    def action_stop_generating(self) -> None:
        if self.place.stop_generating():
            self.notify_stopped()
            self.refresh_panels()

    def notify_stopped(self) -> None:
        run = self.place.sampling.last.run if self.place.sampling.last is not None else None
        done, n = run if run is not None else (0, GENERATE_N)
        self.notify(t("generate_stopped", self.lang, done=done, n=n))

    def action_temperature(self, delta: int) -> None:
        if self.place.temperature_by(delta):
            self.settings_changed(t("temperature_set", self.lang, T=f"{self.place.sampling.temperature:g}"))

    def action_top_k(self, delta: int) -> None:
        if self.place.top_k_by(delta):
            top_k = self.place.sampling.top_k
            self.settings_changed(
                t("top_k_set", self.lang, k=top_k if top_k is not None else t("sample_all", self.lang))
            )

    def settings_changed(self, words: str) -> None:
        """The panel redrawn with the new probabilities; a notice says the new setting when it is out of view."""
        self.refresh_panels()
        if not self.next_panel_shown():
            self.notify(words, timeout=2)

    # -- drawing -------------------------------------------------------------------------------

    def view(self) -> View | None:
        return self.place.view(self.lang)

    def refresh_panels(self) -> bool:
        """Draw the current view; False when there was nothing new to draw."""
        view = self.view()
        if view is None or not self.is_mounted:
            return False
        tabs = self.query_one("#panels", PanelSwitcher)
        drawn = (
            view.step_index,
            view.token,
            view.head,
            view.direction,
            view.sampling,
            view.reach,
            tabs.active,
            self.size,
            self.classes,
            self.lang,
        )
        if view.trace is self._drawn_trace and drawn == self._drawn:
            return False  # a second request for the same picture (a tab switch reports itself after the key drew it)
        self._drawn_trace, self._drawn = view.trace, drawn
        self.update_topbar()
        self.query_one(TokenStrip).show(view)
        self.query_one(StepBar).show(view.trace.steps, view.step_index, view.backward)
        if view.backward != self._footer_backward:
            self.localize_footer()
        self.query_one(StepInfo).show(view)
        if self.has_class("-too-small"):
            return True
        active = tabs.active
        if self.has_class("-compact") and self.has_class("-lesson"):
            pass
        elif active in PANEL:
            drawn_by(self.query_one(f"#{active}")).show(view)
        if self.has_class("-wide"):
            self.query_one("#side-residual", ResidualPanel).show(view)
            self.query_one("#side-next", NextTokenPanel).show(view)
        return True

    def update_topbar(self) -> None:
        title = self.lesson.title if self.lesson else ""
        status = "" if self.gpt.trained else f" ({t('untrained', self.lang)})"
        language = "中文" if self.lang == "zh" else "English"
        topbar = Content.from_markup(  # $variables: a title like "[/b]" is text, not markup
            "[b]tutor[/b] · $title · $model_word [b]$model[/b]$status · $language"
            if not self._model_flash
            else "[b]tutor[/b] · $title · [reverse]$model_word [b]$model[/b][/reverse]$status · $language",
            title=title,
            model_word=t("model", self.lang),
            model=self.gpt.name,
            status=status,
            language=language,
        )
        # unchanged: not even a redraw (its bytes would go down the line again); Content compares its text only
        if self._topbar is None or (topbar.plain, topbar.spans) != (self._topbar.plain, self._topbar.spans):
            self._topbar = topbar
            self.query_one("#topbar", Static).update(topbar, layout=False)  # one row: never a re-layout

    @on(PanelSwitcher.Switched, "#panels")
    def panel_switched(self) -> None:
        self.ensure_grads()  # the gradient panel, forwards: the pass again, with them
        self.refresh_panels()  # a no-op when the key that switched the tab has drawn it already

    # -- stepping ------------------------------------------------------------------------------

    def moved(self, moved: bool = True) -> None:
        """After a move of the step: the panel for the step's kind, the picture, the step kept for next time."""
        if not moved or self.trace is None:
            return
        tabs = self.query_one("#panels", PanelSwitcher)
        step = self.trace.steps[self.step_index]
        if tabs.display and tabs.asked not in FOLLOWING_PANELS:  # before the panels are drawn: one layout and
            tabs.active = self.panel_for(step)  # one frame for the key
        self.refresh_panels()
        self.host.remember(step=step.name)

    def panel_for(self, step: Step) -> str:
        """The panel a step opens: backwards always the gradient's, forwards the one for the step's kind."""
        return "gradient" if self.place.backward else PANEL_FOR_KIND[step.kind]

    def goto_step_index(self, index: int) -> None:
        self.moved(self.place.go(index))

    def action_step(self, delta: int) -> None:
        self.moved(self.place.step_by(delta))

    def action_goto_step(self, index: int) -> None:
        """A click on a step's box (the overview): to that step."""
        self.moved(self.place.go(index))

    def action_first_step(self) -> None:
        self.moved(self.place.first_step())

    def action_last_step(self) -> None:
        self.moved(self.place.last_step())

    def action_block(self, delta: int) -> None:
        """To the first step of the next (or previous) block; past the last block, to the end."""
        self.moved(self.place.block_by(delta))

    def action_goto_block(self, block: int) -> None:
        if self.trace is not None and not self.place.goto_block(block):
            self.notify(t("block_range", self.lang, last=self.gpt.config.n_layers - 1), severity="warning")
        else:
            self.moved()

    def goto_step_name(self, name: str) -> bool:
        if self.trace is None:
            self.place.goto_step(name)  # kept for the pass on its way
            return True
        if not self.place.goto_step(name):
            self.no_such_step(name)
            return False
        self.moved()
        return True

    def no_such_step(self, name: str) -> None:
        self.notify(t("no_step", self.lang, model=self.gpt.name, name=name), severity="warning")

    def action_move_token(self, delta: int) -> None:
        if self.place.move_token(delta):
            self.refresh_panels()

    def action_turn(self) -> None:
        """b: the pass turned round — the step bar from the unembedding back, the gradient panel — at the same step."""
        self.place.turn()
        tabs = self.query_one("#panels", PanelSwitcher)
        if self.trace is not None and tabs.display:
            tabs.active = self.panel_for(self.trace.steps[self.step_index])
        self.ensure_grads()  # the gradients of the pass on screen
        self.refresh_panels()

    def action_head(self, delta: int) -> None:
        self.place.move_head(delta)
        self.refresh_panels()

    def action_next_panel(self) -> None:
        tabs = self.query_one("#panels", PanelSwitcher)
        order = list(TABS)  # "tokens" is always in view, not a tab
        asked = tabs.asked  # not `active`: the panel asked for may still be mounting
        tabs.active = order[(order.index(asked) + 1) % len(order)] if asked in order else order[0]

    def action_focus_prompt(self) -> None:
        """/: to the prompt — from a lesson that fills the window, the panels brought back first."""
        if self.lesson_only():
            self.action_toggle_lesson()
        self.query_one("#prompt", Input).focus()

    def on_key(self, event: Key) -> None:
        """A character typed while the lesson fills the window (no prompt in view): said, not dropped silently."""
        if not (event.is_printable and self.lesson_only()):
            return
        binding = self.app.active_bindings.get(event.key)
        if binding is not None and binding.enabled:
            return  # a key of its own (b, ?, /)
        now = monotonic()
        if now - self._typing_said >= TYPING_NOTICE_SECONDS:  # once, not once a character
            self._typing_said = now
            self.notify(t("typing_in_lesson", self.lang), timeout=TYPING_NOTICE_SECONDS)

    def lesson_only(self) -> bool:
        """A small window showing the lesson (F3 swaps the panels in)."""
        return self.has_class("-compact") and self.has_class("-lesson") and not self.has_class("-too-small")

    def action_scroll_lesson(self, delta: int) -> None:
        """alt+↓↑: the lesson a page; while the lesson is out of view (a small window's panels, F3), the panel."""
        if not self.lesson_shown():
            self.action_scroll_panel(delta)
            return
        page(self.query_one(LessonView), delta)

    def action_scroll_panel(self, delta: int) -> None:
        """alt+PgDn/PgUp: the shown panel a page, so what lies below its fold (the logit lens at 80×24, the
        LayerNorm tab's rows) is reachable without a mouse; ↓↑ and PgDn step the model."""
        switcher = self.query_one("#panels", PanelSwitcher)
        pane = switcher.query_one(f"#{switcher.active}") if switcher.active else None
        if pane is None:
            return
        for widget in [pane, *pane.query("*")]:
            # on screen (a hidden panel's grids keep their last size) and taller than its room
            if widget.region and widget.visible and widget.max_scroll_y > 0:
                page(widget, delta)
                return

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the lesson has the focus, the arrows and page keys scroll it instead of stepping (and its own
        bindings scroll it with alt+↓↑ too); alt+↓↑ is there only while the lesson is in view."""
        lesson = self.query_one(LessonView)
        in_lesson = self.focused is not None and lesson in self.focused.ancestors_with_self
        if action in {"step", "block", "first_step", "last_step"} and in_lesson:
            return False
        if action == "scroll_lesson":
            return not in_lesson
        if action == "stop_generating":
            return self.place.sampling.generating is not None  # else Esc is not this screen's
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
            self.host.remember(view="lesson" if self.has_class("-lesson") else "panels")

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
        self.place.lesson, self.place.lesson_position = lesson, position
        self.query_one(LessonView).show(lesson, self.lesson_header(), empty)
        self.update_topbar()

    def lesson_header(self) -> str:
        """The lesson's title line: "Lesson 2/9 · 4 min read", with a ✓ once it is done."""
        lesson = self.lesson
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

    def set_language(self, lang: str) -> None:
        """Everything on this screen in `lang` (the lesson itself the app reloads)."""
        self.lang = lang
        self.query_one("#panels", PanelSwitcher).set_labels(self.panel_labels())
        self.localize_footer()
        self.query_one("#prompt", Input).placeholder = t("prompt_placeholder", lang)
        self.refresh_panels()

    def set_reach(self, reach: Reach) -> None:
        """How far the lessons have taken the learner: the details and footer keys shown from now on."""
        if reach == self.place.reach:
            return
        self.place.reach = reach
        self.localize_footer()
        self.refresh_panels()

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
            if self.trace is not None and self.prompt == lesson.prompt:
                self.goto_step_name(lesson.steps[0])
            else:
                self.place.pending_step = lesson.steps[0]  # taken when the lesson prompt's pass comes
        if lesson.panels and lesson.panels[0] in PANELS and lesson.panels[0] != "tokens":
            self.query_one("#panels", PanelSwitcher).active = lesson.panels[0]

    def open_on_lesson_model(self, lesson: Lesson) -> None:
        """Switch to the lesson's model if another is loaded, and say so."""
        if lesson.model:
            if lesson.model != self.gpt.name and self.switch_model(lesson.model, from_lesson=True):
                self.say_model_changed(pick(WORDS, "lesson_opens_on", self.lang, name=lesson.model))
        elif self.gpt.name != self.home_gpt.name:
            home = self.home_gpt
            self.use_model(home, remember=home.name if home.name in MODEL_VARIANTS else None)
            self.say_model_changed(pick(WORDS, "lesson_default_model", self.lang, name=home.name))

    def say_model_changed(self, words: str) -> None:
        """A notice in a wide window; in a small one, where a notice covers the lesson's text, the top bar's model
        name lit for MODEL_FLASH_SECONDS instead (the bar names the model all the time)."""
        if not self.has_class("-compact"):
            self.notify(words)
            return
        self._model_flash = True
        self.update_topbar()

        def done() -> None:
            self._model_flash = False
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
        self._sample_text = None
        self.passes.forget_speed()  # not measured for this model yet: its first pass goes to a worker
        self.run_model(self.typed_prompt)
        self.host.remember(model=remember)

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
            missing = self.place.show(params)  # direction, step, token, head (a step of a prompt still coming waits)
            if missing is not None:
                self.no_such_step(missing)
            elif "step" in params and self.place.pending_step is None:
                self.moved()  # the step's panel, before the link's own panel below
            if "panel" in params and params["panel"] in PANELS and params["panel"] != "tokens":
                self.query_one("#panels", PanelSwitcher).active = params["panel"]
            if "prompt" in params:  # last: a quick model's trace comes at once, and takes the step and token above
                self.set_prompt(params["prompt"])
            else:
                self.ensure_grads()  # backwards now, or the gradient panel: the pass with its gradients
            self.refresh_panels()
            if self.lesson_only():  # the panels it changed are behind the lesson
                self.notify(t("f3_shows_it", self.lang), timeout=3)
        elif link.action == "lesson":
            await self.host.open_lesson(params.get("id"), heading=params.get("heading"))
        elif link.action == "experiment":
            options = {key: value for key, value in params.items() if key != "name"}
            self.host.open_experiment(params.get("name", ""), options)
        elif link.action == "exercise":
            self.host.open_exercise(params.get("name", ""))
        elif link.action == "quiz":
            self.host.open_quiz(params.get("id") or (self.lesson.id if self.lesson else ""))
        elif link.action == "answer":
            self.host.open_answer(params.get("id") or (self.lesson.id if self.lesson else ""), params.get("n", "1"))

    def action_lessons(self) -> None:
        self.host.action_lessons()

    async def action_lesson(self, delta: int) -> None:
        await self.host.step_lesson(delta)

    def action_toggle_language(self) -> None:
        self.host.action_toggle_language()

    def action_links(self) -> None:
        """The lesson's links, to follow from the keyboard."""
        from tutor.screens.links import LinkPickerScreen

        # as shown: the exercises' answers are links there, each named for the list by its exercise
        links = [
            (t("answer_item", self.lang, n=href.rpartition("=")[2]) if is_answer_link(href) else label, href)
            for label, href in (labelled_links(display_markdown(self.lesson)) if self.lesson else [])
        ]
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

        items = self.host.practice_items()
        self.app.push_screen(LinkPickerScreen(items, t("practice_title", self.lang)), chosen)

    def action_help(self) -> None:
        from tutor.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))
