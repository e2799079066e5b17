"""tutor/patches/quiet_scroll_view.py: a layout that changes no size redraws no scrollbar."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import Static

from tutor.patches.quiet_scroll_view import QuietScrollView


class Lines(QuietScrollView):
    """A Line-API widget that sets its own virtual size, as the lesson and the heatmap do."""

    def on_mount(self) -> None:
        self.virtual_size = Size(20, 200)

    def render_line(self, y: int) -> Strip:
        return Strip.blank(self.size.width)


class Layouts(App[None]):
    def compose(self) -> ComposeResult:
        yield Lines()
        yield Static("other", id="other")


async def test_a_layout_that_changes_no_size_redraws_no_scrollbar() -> None:
    app = Layouts()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        lines = app.query_one(Lines)
        assert lines.show_vertical_scrollbar
        redraws: list[int] = []
        scrollbar = lines.vertical_scrollbar
        refresh = scrollbar.refresh
        scrollbar.refresh = lambda *args, **kwargs: (redraws.append(1), refresh(*args, **kwargs))[1]  # type: ignore[method-assign]
        for text in ("a", "b", "c"):  # another widget changes: the screen lays out again, Lines' sizes stay
            app.query_one("#other", Static).update(text)
            app.screen.refresh(layout=True)
            await pilot.pause()
        assert redraws == [], f"the scrollbar was redrawn {len(redraws)} times by layouts that changed nothing"
        lines.virtual_size = Size(20, 300)  # a real change still redraws it
        await pilot.pause()
        assert redraws
