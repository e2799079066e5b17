"""The lesson: its title, any warnings about the file, and its Markdown with live code quotes.

One Line-API widget (as Toolong's `LogLines`): the lesson is rendered to lines once per width
(`tutor.lessons.markdown`) and scrolling only picks lines, so the panels' keys never lay it out again.

A fold (tutor/lessons/folds.py) opens and closes by a click on its line, or by Enter or space: the keys act on
the fold in view (the first whose line is on screen, else the open fold the screen is inside), whose line is
drawn reversed while the lesson has the focus.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip

from tutor.lessons.display import display_markdown
from tutor.lessons.folds import FOLD_SCHEME
from tutor.lessons.markdown import RenderedLesson, opening, render_markdown, tables_width
from tutor.lessons.parse import Lesson
from tutor.patches.quiet_scroll_view import QuietScrollView

# component class → the Rich Markdown style it stands for
MARKDOWN_STYLES = {
    "lesson-view--h1": "markdown.h1",
    "lesson-view--h2": "markdown.h2",
    "lesson-view--h3": "markdown.h3",
    "lesson-view--link": "markdown.link_url",
    "lesson-view--code": "markdown.code",
    "lesson-view--quote": "markdown.block_quote",
    "lesson-view--bullet": "markdown.item.bullet",
    "lesson-view--number": "markdown.item.number",
    "lesson-view--table-border": "markdown.table.border",
    "lesson-view--table-header": "markdown.table.header",
}


class LessonView(QuietScrollView, can_focus=True):
    BINDINGS = [
        # ScrollView's own, shown in the footer while the lesson has the focus; alt+↓↑ as the main screen's
        Binding("pagedown", "page_down", "Scroll", key_display="PgDn"),
        Binding("alt+down", "page_down", show=False),
        Binding("alt+up", "page_up", show=False),
        # Enter and space are free while the lesson has the focus (the prompt takes Enter only while it has it)
        Binding("enter,space", "toggle_fold", "Open/close", key_display="⏎"),
    ]
    COMPONENT_CLASSES = {*MARKDOWN_STYLES, "lesson-view--title", "lesson-view--warning"}
    DEFAULT_CSS = """
    LessonView { scrollbar-gutter: stable; padding: 0 1; }
    LessonView > .lesson-view--title { text-style: bold; }
    LessonView > .lesson-view--warning { color: $warning; }
    LessonView > .lesson-view--h1 { color: $text-primary; text-style: bold; }
    LessonView > .lesson-view--h2 { color: $text-accent; text-style: bold; }
    LessonView > .lesson-view--h3 { color: $text-accent; text-style: bold italic; }
    LessonView > .lesson-view--link { color: $text-primary; text-style: underline; }
    LessonView > .lesson-view--code { color: $text-warning; background: $warning-muted; }
    LessonView > .lesson-view--quote { color: $text-secondary; }
    LessonView > .lesson-view--bullet { color: $text-accent; text-style: bold; }
    LessonView > .lesson-view--number { color: $text-accent; }
    LessonView > .lesson-view--table-border { color: $primary-muted; }
    LessonView > .lesson-view--table-header { color: $text-accent; text-style: bold; }
    """

    @dataclass
    class LinkClicked(Message):
        """The learner clicked a link in the lesson."""

        href: str

    @dataclass
    class EndReached(Message):
        """The lesson's last line is in view (once per lesson shown): the learner has read to its end."""

        lesson_id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._markdown = ""
        self._lesson: Lesson | None = None
        self._open_folds: frozenset[int] = frozenset()
        self._fold_in_view: int | None = None  # as last drawn: the footer shows Enter while there is one
        self._before: list[tuple[str, str]] = []  # (text, component class) lines above the Markdown
        self._rendered = RenderedLesson([])
        self._rendered_width = -1
        self._rendered_styles: dict[str, Style] = {}
        self._strips: dict[int, Strip] = {}
        # code blocks in colour from the first time one is to be drawn (render_line): their lexer takes ~20 ms to
        # build, and a lesson's first screen seldom shows code (nor does a class starting thirty tutors at once)
        self._highlight = False
        self.lesson_id: str | None = None  # of the lesson shown
        self.end_seen = True  # its last line has been in view (nothing shown yet: nothing to report)
        # the app's start: the next `show` renders the lesson's opening only (what the first screen shows), and
        # `whole` the rest just after the first frame (rendering all of lesson 1 took ~16 ms of the start)
        self.opening_first = False
        self._whole = True  # False while only the opening is rendered

    def show(self, lesson: Lesson | None, header: str, empty_message: str = "") -> None:
        self._before = [(header, "lesson-view--title")] if header else []
        if lesson is not None:
            self._before += [(f"⚠ {warning}", "lesson-view--warning") for warning in lesson.warnings]
        self._lesson, self._open_folds = lesson, frozenset()
        self._markdown = display_markdown(lesson) if lesson else empty_message
        self._lay_out(force=True, opening_only=self.opening_first)
        self.opening_first = False
        self.scroll_home(animate=False)
        self.lesson_id = lesson.id if lesson else None
        self.end_seen = lesson is None
        self.check_end()
        self._fold_moved(force=True)

    def whole(self) -> None:
        """The whole lesson in place of its opening (after the start's first frame, or at once when anything
        needs more of it than the first screen): the scrollbar, the end and the folds as for the whole."""
        if not self._whole:
            self._lay_out(force=True)
            self.check_end()
            self._fold_moved(force=True)

    def set_header(self, header: str) -> None:
        """A new title line (the ✓ of a lesson just done), where the learner is in the lesson."""
        if self._before and self._before[0][1] == "lesson-view--title":
            self._before[0] = (header, "lesson-view--title")
            self._lay_out(force=True)

    # -- reading to the end --------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        self.whole()  # scrolled before the rest came: the lines it scrolls to
        super().watch_scroll_y(old_value, new_value)
        self.check_end()
        self._fold_moved()

    def check_end(self) -> None:
        """EndReached, the first time the last line is in view (a lesson that fits the window: at once)."""
        if self.end_seen or self.lesson_id is None or not self._rendered.lines or not self._whole:
            return
        laid_out = self.region.height > 0 and self.container_size.height > 0  # in view, not hidden by F3
        if laid_out and self.virtual_size.height == len(self._rendered.lines) and self.scroll_y >= self.max_scroll_y:
            self.end_seen = True
            self.post_message(self.EndReached(self.lesson_id))

    @property
    def plain_lines(self) -> list[str]:
        """The lesson as the learner reads it, one string per line (for copying and for tests)."""
        self.whole()
        return ["".join(segment.text for segment in line).rstrip() for line in self._rendered.lines]

    def goto_heading(self, heading: str) -> bool:
        """Scroll to a heading by its text (slugs would drop CJK, so anchors could not find 公式与代码)."""
        self.whole()
        wanted = heading.strip().casefold()
        for title, y in self._rendered.headings:
            if title.casefold() == wanted:
                self.scroll_to(y=y, animate=False)
                return True
        return False

    def action_follow(self, index: int) -> None:
        self.whole()
        if 0 <= index < len(self._rendered.links):
            href = self._rendered.links[index]
            if href.startswith(FOLD_SCHEME):
                self.toggle_fold(int(href.removeprefix(FOLD_SCHEME)))
            else:
                self.post_message(self.LinkClicked(href))

    # -- folds -----------------------------------------------------------------------------------

    def fold_in_view(self) -> int | None:
        """The fold Enter and space act on: the first whose own line is on screen, else the open fold whose
        inside fills the screen; None when no fold is in view."""
        top = round(self.scroll_y)
        bottom = top + max(1, self.scrollable_content_region.height)
        on_screen = [(y, n) for n, ys in self._rendered.folds.items() for y in ys if top <= y < bottom]
        if on_screen:
            return min(on_screen)[1]
        around = [n for n, ys in self._rendered.folds.items() if len(ys) > 1 and ys[0] < top and ys[-1] >= bottom]
        return around[0] if around else None

    @property
    def open_folds(self) -> frozenset[int]:
        return self._open_folds

    def toggle_fold(self, n: int) -> None:
        """Open fold n, or close it; a fold closed from inside leaves its line at the top of the screen."""
        if self._lesson is None or n not in self._rendered.folds:
            return
        self._open_folds = self._open_folds ^ {n}
        self._markdown = display_markdown(self._lesson, self._open_folds)
        self._lay_out(force=True)
        own_line = self._rendered.folds[n][0]  # where it was: what comes before a fold does not change
        if n not in self._open_folds and self.scroll_y > own_line:
            self.scroll_to(y=own_line, animate=False)
        self._fold_moved(force=True)
        self.check_end()

    def action_toggle_fold(self) -> None:
        self.whole()
        n = self.fold_in_view()
        if n is not None:
            self.toggle_fold(n)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_fold":
            return self.fold_in_view() is not None  # no fold in view: Enter and space are nobody's, not shown
        return super().check_action(action, parameters)

    def _fold_moved(self, force: bool = False) -> None:
        """The footer's Enter and the reversed fold line follow the fold in view."""
        n = self.fold_in_view()
        if force or n != self._fold_in_view:
            self._fold_in_view = n
            self.refresh_bindings()
            self.refresh()

    def on_focus(self) -> None:
        self.refresh()  # the fold in view reversed

    def on_blur(self) -> None:
        self.refresh()

    # -- lines ---------------------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        self._lay_out()
        self.check_end()
        self._fold_moved()

    def on_mount(self) -> None:
        # the colours are baked into the lines: a new theme draws them again, once its styles are in place
        self.watch(self.app, "theme", lambda _theme: self.call_after_refresh(self._render_if_restyled), init=False)

    def highlight(self) -> None:
        """The code blocks highlighted from now on."""
        if not self._highlight:
            self._highlight = True
            if self._rendered.plain_code:
                self._lay_out(force=True)  # the same lines: only the code's colours change

    def _render_if_restyled(self) -> None:
        if self._styles() != self._rendered_styles:
            self._lay_out(force=True)

    def _lay_out(self, force: bool = False, opening_only: bool = False) -> None:
        """The lesson's Markdown made into lines for the width (again only for a new width, or `force`); with
        `opening_only`, the lines of its opening, if it has one longer than the view (`whole` renders the rest)."""
        width = self.scrollable_content_region.width
        if width <= 0 or (width == self._rendered_width and not force):
            return
        styles = self._styles()
        before = [Text(text, style=self.get_component_rich_style(cls, partial=True)) for text, cls in self._before]
        code_theme = "ansi_dark" if self.app.current_theme.dark else "ansi_light"
        height = self.scrollable_content_region.height
        cut = opening(self._markdown, height // 2) if opening_only and height > 0 else None
        rendered: RenderedLesson | None = None
        if cut is not None:
            start, rest = cut
            # as wide as the whole lesson: a wide table's sideways scrollbar is there at once
            at_least = tables_width(self.app.console, rest, width, styles, code_theme)
            rendered = render_markdown(
                self.app.console, start, width, styles, code_theme, before, highlight=self._highlight, at_least=at_least
            )
            if len(rendered.lines) <= height:  # the first screen would show its end: render the whole
                rendered = None
        self._whole = rendered is None
        if rendered is None:
            rendered = render_markdown(
                self.app.console, self._markdown, width, styles, code_theme, before, highlight=self._highlight
            )
            lines = len(rendered.lines)
        else:  # the scrollbar's thumb as near the whole lesson's as the opening can tell, till `whole`
            assert cut is not None
            lines = round(len(rendered.lines) * len(self._markdown) / max(1, len(cut[0])))
        self._rendered = rendered
        self._rendered_width, self._rendered_styles = width, styles
        self._strips.clear()
        # a table wider than the view keeps its width: the lesson scrolls sideways to it (←→, shift+wheel)
        self.virtual_size = Size(self._rendered.width, lines)
        self.refresh()

    def _styles(self) -> dict[str, Style]:
        """Rich's Markdown style names → this widget's component styles (from the theme)."""
        return {name: self.get_component_rich_style(cls, partial=True) for cls, name in MARKDOWN_STYLES.items()}

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        if line in self._rendered.plain_code:
            self.highlight()  # never drawn without its colours
        width = self.scrollable_content_region.width
        if line >= len(self._rendered.lines):
            return Strip.blank(width, self.rich_style)
        if self.text_selection is not None:
            strip = Strip(self._with_selection(self._rendered.lines[line], line)).apply_style(self.rich_style)
        elif (strip := self._strips.get(line)) is None:
            strip = self._strips[line] = Strip(self._rendered.lines[line]).apply_style(self.rich_style)
        if self.has_focus and self._fold_in_view is not None and line in self._rendered.folds[self._fold_in_view]:
            strip = strip.apply_style(Style(reverse=True))  # the fold Enter and space would open or close
        strip = strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)
        return strip.apply_offsets(scroll_x, line)

    # -- selection (copying a formula out of the lesson) ----------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.plain_lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _with_selection(self, segments: list[Segment], line: int) -> list[Segment]:
        """The selected part of a line drawn in the selection's colours."""
        selection = self.text_selection
        span = selection.get_span(line) if selection is not None else None
        if span is None:
            return segments
        text = Text.assemble(*((segment.text, segment.style or "") for segment in segments))
        start, end = span
        text.stylize(self.screen.get_component_rich_style("screen--selection"), start, len(text) if end == -1 else end)
        return list(text.render(self.app.console))
