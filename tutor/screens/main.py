"""The tutor's one working screen: the lesson beside the live panels, and the keys that drive them.

A shell: a key moves the `Place` (where the learner is), the pass comes through one runner, the `View` is
drawn by each panel's `show(view)`. Its parts, each a module: the passes (passes.py), the moves through the
pass (stepping.py), sampling (generation.py), lessons, links and models (course.py), edits (what_if.py); the window's
layout is one record (tutor/layout.py), the logit lens is read outside the panels (tutor/lens.py)."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from time import monotonic
from typing import Self, cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Key, Resize
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Input, Static

from model import GPT, Trace
from tutor.catalogue import PANEL, PANEL_FOR_KIND, TABS, panel_label
from tutor.host import Host
from tutor.i18n import LANGUAGE_NAMES, say, t
from tutor.layout import MIN_HEIGHT, MIN_WIDTH, Layout
from tutor.lens import LensReadings
from tutor.panels.edits_bar import EditsBar
from tutor.panels.next_token_panel import NextTokenPanel
from tutor.panels.panes import drawn_by, import_tab_panels, tab_panes
from tutor.panels.residual_panel import ResidualPanel
from tutor.panels.step_info import StepInfo
from tutor.panels.token_strip import TokenStrip
from tutor.patches.footer_labels import localize_bindings
from tutor.place import Place
from tutor.reach import Reach
from tutor.runner import PassRunner
from tutor.screens.course import Course
from tutor.screens.generation import GENERATE_PAUSE, Generation
from tutor.screens.main_keys import FOOTER, MAIN_KEYS, TURN_FORWARD
from tutor.screens.passes import Passes, Ready
from tutor.screens.stepping import Stepping
from tutor.screens.what_if import WhatIf
from tutor.view import View
from tutor.widgets.footer import TutorFooter
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.panel_switcher import PanelSwitcher
from tutor.widgets.prompt_input import PromptInput
from tutor.widgets.step_bar import StepBar

TYPING_NOTICE_SECONDS = 4.0  # keys typed into a lesson that fills the window: said once in this long


def page(widget: Widget, delta: int) -> None:
    """A page down (delta > 0) or up."""
    if delta > 0:
        widget.scroll_page_down(animate=False)
    else:
        widget.scroll_page_up(animate=False)


class MainScreen(Passes, Generation, Stepping, Course, WhatIf):
    BINDINGS = MAIN_KEYS

    def __init__(self, gpt: GPT, lang: str) -> None:
        super().__init__()
        self.place = Place(gpt, home_gpt=gpt)  # where the learner is: every key moves this, then the panels draw it
        self.lang = lang
        self.passes: PassRunner[Ready] = PassRunner(self, "model", self.pass_ready, self.pass_failed)
        # what a pass brings besides its trace: the logit lens, read on the key or (GPT-2) in a worker of its own
        self.lens = LensReadings(self, arrived=self.refresh_panels, failed=self.lens_failed)
        self.generate_pause = GENERATE_PAUSE
        self.sample_text: str | None = None  # the prompt with a token just drawn: its pass is the draw's, not typing's
        self.drawn_trace: Trace | None = None  # what the panels show now (see refresh_panels)
        self._drawn: tuple[object, ...] = ()
        self._topbar: Content | None = None
        self._topbar_made_from: tuple[object, ...] | None = None  # what the top bar shown was made from
        self._footer_backward = False  # the direction ctrl+r's footer label was written for
        self._typing_said = -TYPING_NOTICE_SECONDS  # when typing into the lesson was last said (monotonic)
        self.model_flash = False  # the top bar's model name lit: a lesson switched the model (small windows)
        self.requested: tuple[str, GPT, bool] | None = None  # the pass on its way: (prompt, model, with gradients)
        self.layout_now = Layout()  # what the window shows: the lesson, the panels or both (tutor/layout.py)
        self._side: Vertical | None = None  # the side panels, once the window has been wide (see show_side)
        self._side_mounted = False
        # a small window shows the lesson first (a new learner's, or where a returning learner left it): see on_resize
        self.start_on_lesson = False

    # -- the app, the prompt box --------------------------------------------------------------

    @property
    def host(self) -> Host:
        return cast(Host, self.app)

    @property
    def typed_prompt(self) -> str:
        """The prompt as typed (its pass may still be on its way)."""
        return self.query_one("#prompt", Input).value

    # the parts every key draws or asks, composed once and never replaced: held, not looked up again on each key
    # (a query walks the screen's widgets: ~0.4 ms of a step key)

    @cached_property
    def panel_switcher(self) -> PanelSwitcher:
        return self.query_one("#panels", PanelSwitcher)

    @cached_property
    def token_strip(self) -> TokenStrip:
        return self.query_one(TokenStrip)

    @cached_property
    def step_bar(self) -> StepBar:
        return self.query_one(StepBar)

    @cached_property
    def step_info(self) -> StepInfo:
        return self.query_one(StepInfo)

    @cached_property
    def edits_bar(self) -> EditsBar:
        return self.query_one(EditsBar)

    @cached_property
    def lesson_view(self) -> LessonView:
        return self.query_one(LessonView)

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
                yield EditsBar(id="edits")
                yield PanelSwitcher(  # the catalogue's tabs
                    self.panel_labels(), *tab_panes(), id="panels", on_shown=lambda _: self.panel_switched()
                )
            # the side panels (#side) are mounted when the window is first wide: see show_side
        yield Static(id="too-small")
        yield TutorFooter(compact=True)

    async def panels_settled(self) -> None:
        """Before the first frame: the panel asked for (a lesson's) mounted, shown and drawn."""
        await self.panel_switcher.settled()
        self.panel_switched()

    def first_frame_drawn(self) -> None:
        """What need not be in the first frame: the panels a step key opens, mounted now so that each is whole when
        first shown and a step key never waits for a mount; the other tabs' modules, so that one first shown (F6,
        ctrl+r, a lesson) has only its widgets to mount. Those are mounted then: every widget on the screen
        costs on every key. (The lesson's code is highlighted when it first comes into view: see LessonView.)"""
        self._painted = True
        import_tab_panels()
        self.panel_switcher.mount_hidden(PANEL_FOR_KIND.values())

    def panel_labels(self) -> dict[str, str]:
        return {panel: panel_label(panel, self.lang) for panel in TABS}  # "tokens" is always in view, not a tab

    def localize_footer(self) -> None:
        """The footer's labels in the learner's language (again after F5), ctrl+r's naming where it takes them."""
        words = FOOTER | ({"turn": TURN_FORWARD} if self.place.backward else {})
        held = self.place.reach.held_keys  # the keys a later lesson introduces: they work, unlisted until then
        localize_bindings(self, words, self.lang, held=held)
        localize_bindings(self.lesson_view, words, self.lang, held=held)
        self._footer_backward = self.place.backward
        self.refresh_bindings()

    def on_mount(self) -> None:
        self.localize_footer()
        prompt = self.query_one("#prompt", Input)
        prompt.cursor_blink = False  # blinking costs bandwidth over SSH
        prompt.focus()

    _painted = False  # the first frame has been drawn (first_frame_drawn)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        """Every cell of the screen is painted again only when that is what is asked for (ctrl+l, coming back from
        under another screen). Not before the first frame, which paints them all anyway; not for a layout, whose
        reflow repaints what moved, came or went. Textual asks for both (the screen's first resume, a mount into the
        screen once awaited), and each came as a second whole frame after the first: ~13 ms and ~19 KB at 120×40."""
        if not regions and (layout or not self._painted):
            repaint = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        self.show_layout(self.layout_now.resized(width, height, start_on_lesson=self.start_on_lesson))
        self.start_on_lesson = False
        if self.layout_now.too_small:
            self.query_one("#too-small", Static).update(
                t("too_small", self.lang, w=MIN_WIDTH, h=MIN_HEIGHT, cw=width, ch=height)
            )

    def show_layout(self, layout: Layout) -> None:
        """The window as `layout` says: app.tcss's classes written from it, the keys to what is shown, the footer
        (alt+↓↑ is there only while the lesson is in view), the choice kept for next time, the panels drawn."""
        self.layout_now = layout
        for name, on_ in layout.classes().items():
            self.set_class(on_, name)
        if layout.wide:
            self.show_side()
        self.focus_what_is_shown()
        self.refresh_bindings()
        self.remember_view()
        self.refresh_panels()

    def show_side(self) -> None:
        """The residual table and the next-token guess beside the tabs (a wide window): mounted the first time the
        window is wide, not hidden in every narrower one (each widget on the screen costs on every key), and kept
        out of view (app.tcss's "-drawing") until they are drawn, so that they come whole."""
        if self._side is not None:
            return
        side = Vertical(
            VerticalScroll(ResidualPanel(id="side-residual")),
            VerticalScroll(NextTokenPanel(id="side-next")),
            id="side",
            classes="-drawing",
        )
        self._side = side
        mounting = self.query_one("#body", Horizontal).mount(side)

        async def mounted() -> None:
            await mounting
            self._side_mounted = True
            self._drawn = ()  # the same view drawn again, the side panels with it
            self.refresh_panels()
            side.remove_class("-drawing")

        self.call_next(mounted)

    # -- drawing -------------------------------------------------------------------------------

    def view(self) -> View | None:
        return self.place.view(self.lang)

    def refresh_panels(self) -> bool:
        """Draw the current view; False when there was nothing new to draw."""
        view = self.view()
        if view is None or not self.is_mounted:
            return False
        tabs = self.panel_switcher
        if tabs.active == "residual" and tabs.display and view.n_tokens and not self.layout_now.too_small:
            view = replace(view, lens=self.lens.rows(view.gpt, view.trace, view.token))  # None: on its way
        drawn = (
            view.step_index,
            view.token,
            view.head,
            view.direction,
            view.sampling,
            view.reach,
            view.lens is not None,
            tabs.active,
            self.layout_now,
            self.lang,
        )
        if view.trace is self.drawn_trace and drawn == self._drawn:
            return False  # a second request for the same picture (a tab switch reports itself after the key drew it)
        self.drawn_trace, self._drawn = view.trace, drawn
        self.update_topbar()
        self.token_strip.show(view)
        self.step_bar.show(view.trace.steps, view.step_index, view.backward)
        if view.backward != self._footer_backward:
            self.localize_footer()
        self.step_info.show(view)
        self.edits_bar.show(view)
        if self.layout_now.too_small:
            return True
        active = tabs.active
        if not self.layout_now.panels_shown:
            pass
        elif active in PANEL:
            drawn_by(tabs.pane(active)).show(view)
        if self.layout_now.wide and self._side_mounted:
            self.query_one("#side-residual", ResidualPanel).show(view)
            self.query_one("#side-next", NextTokenPanel).show(view)
        return True

    def update_topbar(self) -> None:
        title = self.place.lesson.title if self.place.lesson else ""
        made_from = (title, self.place.gpt.trained, self.place.gpt.name, self.model_flash, self.lang)
        if made_from == self._topbar_made_from:
            return  # every key asks; the markup is parsed again only when something it shows changed (~0.2 ms)
        self._topbar_made_from = made_from
        status = "" if self.place.gpt.trained else f" ({t('untrained', self.lang)})"
        language = say(LANGUAGE_NAMES, self.lang)
        topbar = Content.from_markup(  # $variables: a title like "[/b]" is text, not markup
            "[b]tutor[/b] · $title · $model_word [b]$model[/b]$status · $language"
            if not self.model_flash
            else "[b]tutor[/b] · $title · [reverse]$model_word [b]$model[/b][/reverse]$status · $language",
            title=title,
            model_word=t("model", self.lang),
            model=self.place.gpt.name,
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

    # -- the lesson or the panels: what the window shows, and where the keys go ----------------

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
        return self.layout_now.lesson_only

    def action_scroll_lesson(self, delta: int) -> None:
        """alt+↓↑: the lesson a page; while the lesson is out of view (a small window's panels, F3), the panel."""
        if not self.lesson_shown():
            self.action_scroll_panel(delta)
            return
        page(self.lesson_view, delta)

    def action_scroll_panel(self, delta: int) -> None:
        """alt+PgDn/PgUp: the shown panel a page, so what lies below its fold (the logit lens at 80×24, the
        LayerNorm tab's rows) is reachable without a mouse; ↓↑ and PgDn step the model."""
        switcher = self.panel_switcher
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
        lesson = self.lesson_view
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
        return self.layout_now.lesson_shown

    def action_toggle_lesson(self) -> None:
        self.show_layout(self.layout_now.toggled())
        self.call_after_refresh(self.lesson_view.check_end)  # in view again: a short lesson is read

    def remember_view(self) -> None:
        """What a small window shows (the lesson or the panels), to start there next time."""
        if self.layout_now.compact and not self.layout_now.too_small:
            self.host.remember(view="lesson" if self.layout_now.swapped else "panels")

    def focus_what_is_shown(self) -> None:
        """After F3 or a resize across COMPACT_WIDTH: the keys go to what the learner sees."""
        lesson = self.lesson_view
        in_lesson = self.focused is not None and lesson in self.focused.ancestors_with_self
        if self.layout_now.compact and self.layout_now.swapped and not in_lesson:
            lesson.focus()  # the lesson fills the window: the arrows and page keys should scroll it
        elif not self.layout_now.lesson_shown and (self.focused is None or in_lesson):
            self.query_one("#prompt", Input).focus()  # the lesson went out of view: back to the prompt

    # -- the language and the reach --------------------------------------------------------

    def set_language(self, lang: str) -> None:
        """Everything on this screen in `lang` (the lesson itself the app reloads)."""
        self.lang = lang
        self.panel_switcher.set_labels(self.panel_labels())
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
