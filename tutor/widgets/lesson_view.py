"""The lesson: its title, any warnings about the file, and its Markdown with live code quotes."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from tutor.lessons import Lesson, display_markdown


class LessonView(VerticalScroll):
    DEFAULT_CSS = """
    LessonView > #lesson-title { text-style: bold; padding: 0 1; }
    LessonView > #lesson-warnings { color: $warning; padding: 0 1; height: auto; display: none; }
    LessonView > #lesson-warnings.-shown { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="lesson-title")
        yield Static(id="lesson-warnings", markup=False)  # file names and quoted lesson text, not markup
        yield Markdown(id="lesson-markdown", open_links=False)

    async def show(self, lesson: Lesson | None, header: str, empty_message: str = "") -> None:
        self.query_one("#lesson-title", Static).update(header)
        warnings = self.query_one("#lesson-warnings", Static)
        shown = bool(lesson and lesson.warnings)
        warnings.set_class(shown, "-shown")
        warnings.update("\n".join(f"⚠ {w}" for w in lesson.warnings) if lesson and shown else "")
        await self.query_one(Markdown).update(display_markdown(lesson) if lesson else empty_message)
        self.scroll_home(animate=False)

    def goto_heading(self, heading: str) -> bool:
        """Scroll to a heading by its text: Textual's slugs drop CJK, so anchors cannot find 公式与代码."""
        markdown = self.query_one(Markdown)
        wanted = heading.strip().casefold()
        for _level, title, block_id in markdown.table_of_contents:
            if title.strip().casefold() == wanted and block_id:
                self.scroll_to_widget(markdown.query_one(f"#{block_id}"), top=True, animate=False)
                return True
        return False
