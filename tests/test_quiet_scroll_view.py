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


async def test_a_new_virtual_size_paints_the_scrollbar_in_the_layouts_own_frame() -> None:
    """The scrollbar a new size moves is drawn in the frame of the layout that moved it, not one frame later (a
    second frame for a typed key), and that frame leaves nothing stale: a full redraw of the screen is the same."""
    app = Layouts()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        lines = app.query_one(Lines)
        frames: list[object] = []
        display = app._display
        app._display = lambda screen, renderable: (frames.append(renderable), display(screen, renderable))[1]  # type: ignore[method-assign]
        bar = lines.vertical_scrollbar.region
        lines.virtual_size = Size(20, 40)  # the thumb grows: the scrollbar changes
        await pilot.pause()
        await pilot.pause()
        drawn = [frame for frame in frames if frame is not None]
        assert drawn, "the new size drew nothing"
        spans = getattr(drawn[0], "spans", None)
        assert spans is not None and any(x1 <= bar.x < x2 for _, x1, x2 in spans), "the scrollbar came a frame late"
        assert len(drawn) == 1, f"{len(drawn)} frames for one new size"
        shown = [strip.text for strip in app.screen._compositor.render_strips()]
        app.screen.refresh()
        await pilot.pause()
        assert [strip.text for strip in app.screen._compositor.render_strips()] == shown
