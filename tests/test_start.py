"""What the start leaves for after the first frame is never seen unfinished: the code of a lesson drawn before its
colours are in (they come after the first frame), a panel asked for before the hidden panels are mounted, the lesson
past its opening (the first frame renders only what it shows)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable

import pytest
from helpers import make_app, settle
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from tutor.lessons.display import display_markdown
from tutor.lessons.markdown import opening, render_markdown, tables_width
from tutor.lessons.parse import load_lessons
from tutor.panels.attention_panel import AttentionPanel
from tutor.paths import content_dir
from tutor.widgets.footer import TutorFooter
from tutor.widgets.lesson_view import LessonView
from tutor.widgets.panel_switcher import PanelSwitcher


@pytest.mark.parametrize("width", [37, 101])
def test_the_plain_render_has_the_highlighted_lines(width: int) -> None:
    """Without highlighting, the same lines (the text wraps the same way), the same segments off the code, and
    every line that differs marked as plain code."""
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    code_lines = 0
    for lesson in load_lessons("en"):
        markdown = display_markdown(lesson)
        coloured = render_markdown(console, markdown, width, {}, "ansi_dark", [Text("Lesson 1/2")])
        plain = render_markdown(console, markdown, width, {}, "ansi_dark", [Text("Lesson 1/2")], highlight=False)
        assert not coloured.plain_code
        assert plain.lines and len(plain.lines) == len(coloured.lines)
        assert ["".join(s.text for s in line) for line in plain.lines] == [
            "".join(s.text for s in line) for line in coloured.lines
        ]
        assert (plain.headings, plain.links) == (coloured.headings, coloured.links)
        differing = {y for y, (a, b) in enumerate(zip(plain.lines, coloured.lines, strict=True)) if a != b}
        assert differing <= plain.plain_code
        code_lines += len(differing)
    assert code_lines > 0  # the lessons quote code, and it is coloured


async def test_a_code_line_is_never_drawn_without_its_colours(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        plain = lesson._rendered
        assert plain.plain_code and not lesson._highlight  # lesson 1's first screen shows no code: not yet coloured
        lesson.scroll_to(y=min(plain.plain_code), animate=False, immediate=True)
        await settle(pilot)  # drawn: coloured first
        coloured = lesson._rendered
        assert lesson._highlight and not coloured.plain_code
        assert len(coloured.lines) == len(plain.lines)  # with the app's styles too: only the code's colours differ
        for y, line in enumerate(plain.lines):
            assert y in plain.plain_code or line == coloured.lines[y]
        assert any(plain.lines[y] != coloured.lines[y] for y in plain.plain_code)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("width", "height"), [(43, 38), (76, 20), (30, 12)])
def test_a_lesson_s_opening_is_the_whole_lesson_s_first_lines(lang: str, width: int, height: int) -> None:
    """What the first frame shows of a lesson (its opening, LessonView.opening_first) is what the whole lesson
    shows there, line for line and cell for cell, as wide as the whole (a wide table further down scrolls the
    lesson sideways from the first frame on)."""
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    cut_short = 0
    for lesson in load_lessons(lang):
        markdown = display_markdown(lesson)
        whole = render_markdown(console, markdown, width, {}, "ansi_dark", [Text("Lesson 1/2")], highlight=False)
        cut = opening(markdown, height // 2)
        if cut is None:
            continue
        start, rest = cut
        assert start + "\n" + rest == markdown
        at_least = tables_width(console, rest, width, {}, "ansi_dark")
        part = render_markdown(
            console, start, width, {}, "ansi_dark", [Text("Lesson 1/2")], highlight=False, at_least=at_least
        )
        assert part.width == whole.width, lesson.id
        assert part.lines == whole.lines[: len(part.lines)], lesson.id
        assert (part.headings, part.links) == (whole.headings[: len(part.headings)], whole.links[: len(part.links)])
        cut_short += len(part.lines) < len(whole.lines)
    assert cut_short >= 8  # most lessons have an opening


async def test_the_lesson_is_whole_right_after_the_first_frame(store) -> None:
    """The start renders lesson 1's opening for the first frame; the rest comes straight after it: the lines, the
    scrollbar (the virtual height), the end of the lesson, its headings, as if rendered whole at once."""
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        lesson = app.main.query_one(LessonView)
        await settle(pilot)
        assert lesson._whole
        whole = render_markdown(
            app.console,
            lesson._markdown,
            lesson.scrollable_content_region.width,
            lesson._styles(),
            "ansi_dark",
            [Text(text) for text, _ in lesson._before],
            highlight=False,
        )
        assert len(lesson._rendered.lines) == len(whole.lines) == lesson.virtual_size.height
        assert lesson._rendered.headings == whole.headings and lesson._rendered.links == whole.links
        lesson.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert lesson.end_seen  # the last line reached


async def test_the_lesson_s_opening_becomes_whole_when_anything_needs_more(store) -> None:
    """Before the first frame's rest comes (a key typed during the start): a scroll, a heading, a link, a fold
    reach the whole lesson, never the opening's end."""
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        for reach in (
            lambda: lesson.scroll_to(y=10, animate=False, immediate=True),
            lambda: lesson.goto_heading("no such heading"),
            lambda: lesson.plain_lines,
            lambda: lesson.action_follow(99),
            lesson.action_toggle_fold,
        ):
            lesson.scroll_home(animate=False, immediate=True)
            lesson.opening_first = True
            lesson.show(lesson._lesson, lesson._before[0][0])
            assert not lesson._whole and lesson.virtual_size.height > len(lesson._rendered.lines)
            reach()
            assert lesson._whole and lesson.virtual_size.height == len(lesson._rendered.lines)


class Pane(Vertical):
    """A panel whose content is composed, as the real panels' is."""

    def compose(self) -> ComposeResult:
        yield Static(f"inside {self.id}", id=f"{self.id}-inside")


class Panels(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.switched: list[str] = []

    def compose(self) -> ComposeResult:
        yield PanelSwitcher({"one": "One", "two": "Two"}, Pane(id="one"), Pane(id="two"), id="panels")

    def on_panel_switcher_switched(self, message: PanelSwitcher.Switched) -> None:
        # what MainScreen.panel_switched draws: the panel must be whole by then
        self.switched.append(message.panel)
        assert self.query_one(f"#{message.panel}-inside", Static).is_mounted


async def test_a_panel_asked_for_before_it_is_mounted_is_shown_once_whole() -> None:
    app = Panels()
    async with app.run_test() as pilot:
        tabs = app.query_one(PanelSwitcher)
        assert tabs.active == "one" and not app.query("#two")  # only the first is mounted with the switcher
        tabs.active = "two"
        assert tabs.active == "one"  # still mounting: the panel in view stays the whole one
        await pilot.pause()
        await tabs.settled()
        assert tabs.active == "two" and app.query_one("#two").display
        await pilot.pause()
        assert app.switched == ["two"]
        tabs.mount_hidden()  # nothing left to mount
        tabs.active = "one"
        assert tabs.active == "one"


async def test_f6_steps_on_from_the_panel_still_mounting(store) -> None:
    """F6 F6 F6 straight after the start: each press goes one panel on, from the one asked for last."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main
        tabs = main.query_one("#panels", PanelSwitcher)
        start = tabs.active
        tabs._wanted = "layernorm"  # as if F6 had asked for it and it were still mounting
        main.action_next_panel()
        assert tabs.asked == "residual"
        await settle(pilot)
        assert tabs.active == "residual" and start == "vectors"


async def test_the_panels_a_step_opens_are_mounted_after_the_first_frame_the_others_when_first_shown(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every widget on the screen costs on every key: a tab no step opens (F6's, ctrl+r's) is mounted when first
    asked for, and drawn before any frame can show it — here a frame is forced the moment it is switched in."""
    from tutor.catalogue import PANEL_FOR_KIND, TABS
    from tutor.panels.overview_panel import OverviewPanel

    drawn: list[object] = []
    show = OverviewPanel.show
    monkeypatch.setattr(OverviewPanel, "show", lambda panel, view: drawn.append(view) or show(panel, view))
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tabs = app.main.query_one("#panels", PanelSwitcher)
        stepped = set(PANEL_FOR_KIND.values())
        mounted = {panel for panel in TABS if app.main.query(f"#{panel}")}
        assert mounted == stepped and not tabs._mounting and "overview" not in mounted
        assert not app.main.query_one("#attention", AttentionPanel).display
        frames: list[tuple[bool, int]] = []  # (the overview in the frame, how many times it had been drawn)
        display = app._display

        def noted(screen: object, renderable: object) -> None:
            display(screen, renderable)
            overview = app.main.query("#overview")
            frames.append((bool(overview) and tabs.active == "overview", len(drawn)))

        monkeypatch.setattr(app, "_display", noted)
        post = PanelSwitcher.post_message

        def framed(switcher: PanelSwitcher, message: object) -> bool:  # a frame before the screen hears of it
            if isinstance(message, PanelSwitcher.Switched):
                asyncio.get_running_loop().call_soon(app.main._on_timer_update)
            return post(switcher, message)

        monkeypatch.setattr(PanelSwitcher, "post_message", framed)
        tabs.active = "overview"
        assert tabs.active == "vectors" and tabs.asked == "overview"  # mounting: the panel in view stays
        await settle(pilot)
        assert tabs.active == "overview" and drawn[-1] is not None
        shown = [times for in_frame, times in frames if in_frame]
        assert shown and min(shown) >= 1, frames  # never shown before it was drawn
        await pilot.press("f6")  # on to the next (the first again), mounted already
        await settle(pilot)
        assert tabs.active == "vectors"


async def test_a_pane_given_as_its_maker_is_made_when_mounted() -> None:
    made: list[str] = []

    def maker(name: str) -> tuple[str, Callable[[], Widget]]:
        return name, lambda: made.append(name) or Pane(id=name)

    class Lazy(App[None]):
        def compose(self) -> ComposeResult:
            yield PanelSwitcher({"one": "One", "two": "Two"}, maker("one"), maker("two"), id="panels")

    app = Lazy()
    async with app.run_test() as pilot:
        tabs = app.query_one(PanelSwitcher)
        assert made == ["one"] and tabs.active == "one"
        tabs.active = "two"
        await pilot.pause()
        await tabs.settled()
        assert made == ["one", "two"] and tabs.active == "two" and app.query_one("#two-inside").is_mounted


def test_the_tabs_import_their_panels_when_mounted() -> None:
    """Only the panel in view is made before the first frame: the others' modules (and the widgets they alone use)
    are imported after it, when the switcher mounts them."""
    code = (
        "import sys; from tutor.catalogue import PANEL_LIST; from tutor.panels.panes import tab_panes; tab_panes(); "
        "print(*[p.widget.split(':')[0] for p in PANEL_LIST if p.widget.split(':')[0] in sys.modules])"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "tutor.panels.attention_panel" not in loaded and "tutor.panels.gradient_panel" not in loaded, loaded


async def test_the_footer_keys_are_not_styled_again_once_mounted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key's `compact` (bound to the footer's) set its class after the key was mounted, and every class that
    changes restyles the widget: ~15 keys, ~10 ms of each start."""
    restyled: list[object] = []
    update_styles = App.update_styles

    def spy(app: App[None], node: DOMNode, animate: bool = True) -> None:
        restyled.append(node)
        update_styles(app, node, animate)

    class Keys(App[None]):
        BINDINGS = [("f1", "bell", "One"), ("f2", "screenshot", "Two"), ("f3", "quit", "Three")]

        def compose(self) -> ComposeResult:
            yield TutorFooter(compact=True)

    monkeypatch.setattr(App, "update_styles", spy)
    app = Keys()
    async with app.run_test() as pilot:
        await pilot.pause()
        keys = list(app.query(FooterKey))
        assert len(keys) >= 3 and all(key.has_class("-compact") for key in keys)
        assert not [node for node in restyled if isinstance(node, FooterKey)]


def _styles_of(screen) -> dict[int, str]:
    return {id(node): node.styles.css for node in screen.walk_children(with_self=True)}


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_main_screen_s_first_resume_has_nothing_to_restyle(store, size: tuple[int, int]) -> None:
    """The main screen's first resume does not style it again (tutor/patches/first_resume.py): styling it again
    after the start changes no widget's styles."""
    app = make_app(store, content_dir())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        main = app.main
        styled = _styles_of(main)
        assert len(styled) > 40
        app.update_styles(main, animate=False)
        assert _styles_of(main) == styled


class Early(Static):
    pass


class Unscoped(Static):
    """Its CSS, added when it is first mounted, reaches a widget mounted (and styled) before it."""

    SCOPED_CSS = False
    DEFAULT_CSS = "Early { width: 7; }"


class Holder(Vertical):
    def compose(self) -> ComposeResult:
        yield Unscoped("unscoped")  # mounted after Early was styled


class Later(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Early("early")
        yield Holder()


async def test_a_first_resume_restyles_after_unscoped_css_came() -> None:
    """CSS that can reach widgets styled before it came (not scoped to its own widget) still restyles the screen
    on its first resume."""
    app = App[None]()
    async with app.run_test() as pilot:
        await app.push_screen(Later())
        await pilot.pause()
        assert app.screen.query_one(Early).styles.width is not None
        assert app.screen.query_one(Early).styles.width.value == 7


async def test_the_start_paints_every_cell_once_and_ctrl_l_and_a_closed_screen_again(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame is the start's only whole frame: the screen's first resume (before it) and the mounts
    awaited after it asked Textual for more, each a second whole frame (~19 KB down the line at 120×40). What
    must paint every cell still does: ctrl+l, and the main screen coming back from under another."""
    from textual._compositor import Compositor

    whole_frames: list[Compositor] = []
    render_full_update = Compositor.render_full_update

    def counted(self: Compositor, *args: object, **kwargs: object) -> object:
        whole_frames.append(self)
        return render_full_update(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Compositor, "render_full_update", counted)
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)  # the tabs a step opens mounted, the lesson whole, the start's collector pass
        await settle(pilot)
        main_frames = lambda: sum(compositor is app.main._compositor for compositor in whole_frames)  # noqa: E731
        assert app.main._painted and main_frames() == 1
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert main_frames() == 2
        await pilot.press("f1")  # the help, over the main screen
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main and main_frames() == 3
