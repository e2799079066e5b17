"""What a widget keeps between keys (so that a key redraws only what changed) never shows an older picture:
each cache here is fed the change it could miss, and the screen must show it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import screen_text, settle
from test_widgets import Host  # one widget on an empty screen
from textual.app import App, ComposeResult

import model
from tutor.panels.token_strip import TokenStrip
from tutor.view import View


async def test_the_token_strip_shows_every_change_of_what_it_was_made_from() -> None:
    gpt = model.load("tiny")
    cats, dogs = gpt.run("猫追狗"), gpt.run("狗追猫")
    strip = TokenStrip()
    async with Host(strip).run_test(size=(60, 6)) as pilot:
        strip.show(View(gpt, cats, 0, 0, 0, "en"))
        await pilot.pause()
        assert "▸0 猫" in screen_text(pilot.app)
        strip.show(View(gpt, cats, 3, 0, 0, "en"))  # a step key: nothing the strip shows changed
        await pilot.pause()
        assert "▸0 猫" in screen_text(pilot.app)
        strip.show(View(gpt, cats, 3, 2, 0, "en"))  # the token cursor moved
        await pilot.pause()
        assert "▸2 狗" in screen_text(pilot.app) and "▸0" not in screen_text(pilot.app)
        strip.show(View(gpt, dogs, 3, 2, 0, "en"))  # another prompt of the same length, the cursor where it was
        await pilot.pause()
        assert "▸2 猫" in screen_text(pilot.app)
        await pilot.resize_terminal(14, 6)  # narrower: the chips wrap again
        strip.show(View(gpt, dogs, 3, 2, 0, "en"))
        await pilot.pause()
        lines = screen_text(pilot.app).splitlines()
        for chip in ("0 狗·349", "1 追·346", "2 猫·340"):  # wrapped for the new width: each chip whole on a line
            assert any(chip in line for line in lines), lines


def test_a_kept_parameter_count_is_each_function_s_own() -> None:
    """tutor/patches/parameter_count.py keeps a function's count on it: partials of it, the bound method and a
    function of the same name defined again (a closure made anew) each count as Textual counts them."""
    from functools import partial

    from textual._callback import count_parameters

    import tutor.app  # noqa: F401  # installs the patch

    def two(a: int, b: int) -> None: ...

    class Holder:
        def method(self, a: int, b: int, c: int) -> None: ...

    assert [count_parameters(partial(two)) for _ in range(2)] == [2, 2]
    assert count_parameters(partial(two, 1)) == 1
    holder = Holder()
    assert [count_parameters(partial(Holder.method)) for _ in range(2)] == [4, 4]  # kept on the function
    assert [count_parameters(partial(holder.method)) for _ in range(2)] == [3, 3]  # bound: one fewer
    assert count_parameters(partial(holder.method, 1)) == 2
    made = []
    for n in (1, 3):
        exec(f"def again({', '.join(f'p{i}' for i in range(n))}): pass", namespace := {})
        made.append(count_parameters(partial(namespace["again"])))
    assert made == [1, 3]


def test_a_changed_cell_in_a_line_of_wide_characters_is_sent_alone() -> None:
    """terminal_diff compares a segment's cells (kept per text) as one slice, then cell by cell: a line of box
    characters and Chinese with one character changed sends that character, at its column, and nothing else."""
    from rich.console import Console
    from rich.segment import Segment
    from textual.strip import Strip

    from tutor.patches.terminal_diff import ScreenModel

    console = Console(color_system="256", force_terminal=True)
    model = ScreenModel()
    model.size = (60, 1)
    line = "▕ 猫追狗的一只猫追狗的一只猫追狗的一只 ▏"
    model._draw([(0, 0, Strip([Segment(line)]))], console)
    assert model._draw([(0, 0, Strip([Segment(line)]))], console) == ""
    changed = line.replace("一只 ▏", "二只 ▏")  # the last 一 (column 34): its text is new, its cells too
    sent = model._draw([(0, 0, Strip([Segment(changed)]))], console)
    assert sent == "\x1b[1;35H\x1b[0m二"  # row 1, column 35 (1-based), in the plain style
    assert "".join(cell for cell in model.chars[0] if cell) == changed


async def test_the_step_bar_redraws_for_other_steps_or_another_lit_one_and_only_then() -> None:
    from tutor.widgets.step_bar import StepBar

    gpt = model.load("tiny")
    steps = gpt.steps
    bar = StepBar()
    async with Host(bar).run_test(size=(60, 4)) as pilot:

        def lit() -> str:
            strip = bar.render_line(1)
            return "".join(segment.text for segment in strip if segment.style and segment.style.reverse).strip()

        bar.show(steps, 1)
        await pilot.pause()
        assert lit() == "LN1"
        bar.show(steps, 2)  # the next step lit
        await pilot.pause()
        assert lit() == "attn"
        bar.show(steps, 2, backward=True)  # turned round: the same index counts from the other end
        await pilot.pause()
        assert lit() == "attn" and screen_text(pilot.app).split("\n")[1].split()[0] in ("out", "‹")
        bar.show(steps, 2)
        await pilot.pause()
        bar.show(steps[:3], 2)  # fewer steps (another model), the same one lit
        await pilot.pause()
        assert screen_text(pilot.app).split("\n")[1].split() == ["emb", "LN1", "attn"]


async def test_a_grid_of_fixed_height_takes_more_rows_without_a_layout_and_its_scrollbar_follows() -> None:
    """QuietScrollView.set_virtual_size: a grid whose height does not follow its rows sets its scrollbar's thumb
    itself instead of laying the screen out; a scrollbar that comes or goes still lays it out."""
    import numpy as np
    from textual.containers import Vertical

    from tutor.widgets.heatmap import GridRow, HeatmapGrid

    class Box(App[None]):
        CSS = "Vertical { height: 12; } HeatmapGrid { height: 1fr; }"

        def compose(self) -> ComposeResult:
            with Vertical():
                yield HeatmapGrid(id="grid")

    def rows(n: int) -> list[GridRow]:
        return [GridRow(f"row {i}", np.full(3, float(i))) for i in range(n)]

    async with Box().run_test(size=(40, 14)) as pilot:
        grid = pilot.app.query_one(HeatmapGrid)
        grid.set_rows(rows(20), ["a", "b", "c"])
        await pilot.pause()
        assert grid.show_vertical_scrollbar
        compositor, layouts = pilot.app.screen._compositor, []
        reflow = compositor.reflow
        compositor.reflow = lambda *args: layouts.append(args) or reflow(*args)  # type: ignore[method-assign]
        for n in (30, 45, 25):
            grid.set_rows(rows(n), ["a", "b", "c"])
            await pilot.pause()
            bar = grid.vertical_scrollbar
            assert (bar.window_virtual_size, bar.window_size) == (n + 2, grid.scrollable_content_region.height), n
            assert not layouts, n
            grid.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            assert f"row {n - 1}" in screen_text(pilot.app)
        grid.set_rows(rows(3), ["a", "b", "c"])  # fits: the scrollbar goes, the screen is laid out
        await pilot.pause()
        assert not grid.show_vertical_scrollbar and "row 2" in screen_text(pilot.app) and layouts


async def test_the_top_bar_is_made_again_when_the_model_is_lit_or_the_language_changes(tmp_path: Path) -> None:
    from tutor.app import TutorApp
    from tutor.progress import ProgressStore

    app = TutorApp(model.load("tiny"), "en", store=ProgressStore(tmp_path / "progress.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        main = app.main

        def lit() -> bool:
            bar = main.query_one("#topbar")
            return any(s.style and s.style.reverse for s in bar.render_line(0) if "tiny" in s.text)

        assert "model tiny" in screen_text(app, "#topbar") and not lit()
        main.update_topbar()  # asked again with nothing changed
        main.model_flash = True
        main.update_topbar()
        await pilot.pause()
        assert lit()
        main.model_flash = False
        main.update_topbar()
        await pilot.pause()
        assert not lit()
        main.lang = "zh"  # alone
        main.update_topbar()
        await pilot.pause()
        assert "模型 tiny" in screen_text(app, "#topbar")


async def test_the_side_panels_are_mounted_when_the_window_first_grows_wide_and_come_drawn(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#side (the residual table and the next-token guess, from 170 columns) is mounted the first time the window
    is wide; frames forced while it mounts must never show it before its panels are drawn for the prompt."""
    from helpers import make_app

    from tutor.panels.residual_panel import ResidualPanel

    drawn: list[str] = []
    show = ResidualPanel.show
    monkeypatch.setattr(ResidualPanel, "show", lambda panel, view: drawn.append(panel.id or "") or show(panel, view))
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        main = app.main
        assert not main.query("#side") and not main.query("#side-residual")  # never wide: never mounted
        frames: list[tuple[bool, int]] = []  # (#side in the frame, how often the side's table had been drawn)
        display = app._display

        def noted(screen: object, renderable: object) -> None:
            display(screen, renderable)
            side = main.query("#side")
            frames.append((bool(side) and side.first().display, drawn.count("side-residual")))

        monkeypatch.setattr(app, "_display", noted)
        loop = asyncio.get_running_loop()
        for n in range(40):  # a frame every 2 ms, as the mount goes on
            loop.call_later(n * 0.002, main._on_timer_update)
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        shown = [times for in_frame, times in frames if in_frame]
        assert shown and min(shown) >= 1, frames
        table = screen_text(app, "#side-residual")
        assert "‖x‖" in table and "2 狗" in table, table
        guess = main.query_one("#side-next")  # its rows made for its own room, as in a window started wide
        assert guess.size.height <= guess.parent.size.height, (guess.size, guess.parent.size)  # type: ignore[union-attr]
        await pilot.resize_terminal(120, 40)  # narrower again: kept, hidden
        await settle(pilot)
        assert not main.query_one("#side").display
        await pilot.press("backspace")  # a change while hidden is drawn when the window is wide again
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        table = screen_text(app, "#side-residual")
        assert "1 追" in table and "2 狗" not in table, table


async def test_the_position_pictures_are_mounted_when_first_taught_and_come_drawn(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Vectors tab's position pictures (9 widgets) are mounted when the positions are first taught; frames
    forced while they mount must never lay the panel out for them before they are drawn."""
    from helpers import make_app

    from tutor.panels.vectors_panel import VectorsPanel
    from tutor.paths import content_dir
    from tutor.widgets.position_pictures import PositionPictures

    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        panel = main.query_one(VectorsPanel)
        assert panel.display and not main.query(PositionPictures)  # a new learner: not taught, not mounted
        frames: list[tuple[bool, bool]] = []  # (laid out for the pictures, the pictures drawn)
        display = app._display

        def noted(screen: object, renderable: object) -> None:
            display(screen, renderable)
            pictures = main.query(PositionPictures)
            frames.append((panel.has_class("-pictures"), bool(pictures) and pictures.first().key is not None))

        monkeypatch.setattr(app, "_display", noted)
        loop = asyncio.get_running_loop()
        for n in range(40):
            loop.call_later(n * 0.002, main._on_timer_update)
        app.action_show_everything()  # the positions taught
        await settle(pilot)
        assert any(shown for shown, _ in frames) and all(drawn for shown, drawn in frames if shown), frames
        assert main.query_one(PositionPictures).region.height >= 12
        assert "PE(pos, dim)" in screen_text(app, "#vectors-pictures")


async def test_the_parts_the_screen_holds_are_the_ones_on_it(store) -> None:
    """MainScreen holds the parts every key draws (not looked up again each key): after a language switch, F3 and a
    lesson opened they must still be the widgets on the screen, or a key would draw into one nobody sees."""
    from helpers import make_app
    from textual.widgets import ContentSwitcher

    from tutor.panels.edits_bar import EditsBar
    from tutor.panels.step_info import StepInfo
    from tutor.panels.token_strip import TokenStrip
    from tutor.paths import content_dir
    from tutor.widgets.lesson_view import LessonView
    from tutor.widgets.panel_switcher import PanelSwitcher
    from tutor.widgets.panel_tabs import PanelTabs
    from tutor.widgets.step_bar import StepBar

    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        await pilot.press("f5", "f3", "f3")
        await app.open_lesson("layernorm")
        await settle(pilot)
        await pilot.press("ctrl+u", *"狗追猫")
        await settle(pilot)
        held = (main.panel_switcher, main.token_strip, main.step_bar, main.step_info, main.edits_bar, main.lesson_view)
        found = (
            main.query_one("#panels", PanelSwitcher),
            main.query_one(TokenStrip),
            main.query_one(StepBar),
            main.query_one(StepInfo),
            main.query_one(EditsBar),
            main.query_one(LessonView),
        )
        assert all(a is b for a, b in zip(held, found, strict=True))
        tabs = main.panel_switcher
        assert tabs.pane(tabs.active) is main.query_one(f"#{tabs.active}")  # the switcher holds its parts too
        assert tabs._tabs is main.query_one(PanelTabs) and tabs._switcher is main.query_one(ContentSwitcher)
        assert "2 猫" in screen_text(app, "#tokens")


async def test_a_line_chart_keeps_its_curves_while_the_marker_moves_and_never_shows_old_ones() -> None:
    """LineChart keeps its plotted curves between marker moves (the Residual tab's step key): a moved marker is
    drawn at its new column only; new curves of the same ranges, another size or NO_COLOR are plotted again."""
    from tutor.widgets.line_chart import Y_LABEL_WIDTH, LineChart, Series

    chart = LineChart()

    def plot() -> list[str]:
        return ["".join(segment.text for segment in chart.render_line(y))[Y_LABEL_WIDTH:] for y in range(1, 11)]

    def marked_columns() -> set[int]:
        return {line.index("┊") for line in plot() if "┊" in line}

    rising = [Series("up", [0, 1, 2, 3], [0.0, 1.0, 2.0, 3.0], "#ffaf00", "•")]
    falling = [Series("down", [0, 1, 2, 3], [3.0, 2.0, 1.0, 0.0], "#ffaf00", "•")]
    ranges = {"x_range": (0.0, 3.0), "y_range": (0.0, 3.0)}
    async with Host(chart).run_test(size=(40, 14)) as pilot:
        chart.set_series(rising, x_marker=1, **ranges)
        await pilot.pause()
        up, first = plot(), marked_columns()
        assert len(first) == 1
        chart.move_marker(2)
        await pilot.pause()
        second = marked_columns()
        assert len(second) == 1 and second != first  # at its new column, gone from the old one
        assert [line.replace("┊", " ") for line in plot()] == [line.replace("┊", " ") for line in up]  # same curves
        chart.set_series(falling, x_marker=2, **ranges)  # other curves, the same ranges and size
        await pilot.pause()
        down = plot()
        assert up[0].rstrip().endswith("⠊") and down[0].startswith("⠑")  # the top row: rising right, falling left
        await pilot.resize_terminal(30, 14)  # narrower: plotted again for the width
        await pilot.pause()
        assert max(len(line.rstrip()) for line in plot()) <= 30 - Y_LABEL_WIDTH
        pilot.app.no_color = True  # NO_COLOR: markers, not braille
        chart.refresh()
        await pilot.pause()
        assert any("•" in line for line in plot()) and not any("⠀" < ch <= "⣿" for line in plot() for ch in line)
