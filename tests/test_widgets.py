"""The widgets alone, each in an app of its own and at many widths: what the learner reads is never cut."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import TOKENIZER, random_params, screen_text, small_config
from textual.app import App, ComposeResult
from textual.widget import Widget

import model
from model import GPT
from tutor.number_style import diverging_style, fmt, probability_style
from tutor.panels.step_info import StepInfo
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid
from tutor.widgets.step_bar import StepBar, short_name


class Host(App[None]):
    """One widget on an empty screen."""

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


def twelve_blocks() -> GPT:
    """GPT-2's depth, so that hook names run to blocks.11.hook_resid_post."""
    config = small_config(n_layers=12)
    return GPT(config, random_params(config), TOKENIZER, name="twelve")


@pytest.mark.parametrize("width", [24, 60, 78])
async def test_step_bar_shows_whole_step_names_and_the_current_one(width: int) -> None:
    steps = twelve_blocks().steps
    names = [short_name(step) for step in steps]
    bar = StepBar()
    async with Host(bar).run_test(size=(width, 4)) as pilot:
        for current in [*range(len(steps)), *reversed(range(len(steps)))]:  # forward to the end, and back
            bar.show(steps, current)
            await pilot.pause()
            markers, chips = screen_text(pilot.app).split("\n")[:2]
            first, end = bar.window(width)
            assert first <= current < end
            shown = chips.split()
            assert shown == [*(["‹"] if first else []), *names[first:end], *(["›"] if end < len(steps) else [])], (
                current,
                chips,
            )
            assert end == len(steps) or first == 0 or end - first >= 2  # room for some context, not one chip
            tokens = [m for m in re.finditer(r"\S+", chips) if m.group() not in "‹›"]
            for marker in re.finditer(r"B(\d+)", markers):  # each block's marker sits on a chip of that block
                chip = next(i for i, token in enumerate(tokens) if token.start() == marker.start())
                assert steps[first + chip].block == int(marker.group(1)), (current, markers, chips)
            in_view = {steps[i].block for i in range(first, end)} - {None}
            assert sorted(int(m.group(1)) for m in re.finditer(r"B(\d+)", markers)) == sorted(in_view)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [52, 60, 72, 80, 120])
async def test_step_info_never_cuts_the_hook_it_writes(lang: str, width: int) -> None:
    gpt = twelve_blocks()
    trace = gpt.run("猫追狗")
    info = StepInfo()
    async with Host(info).run_test(size=(width, 6)) as pilot:
        for step in trace.steps:
            info.show(View(gpt, trace, step.index, 2, 0, lang))
            await pilot.pause()
            line = screen_text(pilot.app).split("\n")[2].rstrip()
            writes = "写入" if lang == "zh" else "writes"
            assert line.endswith(f"→ {writes} {step.out_hook}"), (step.name, line)
            reads = [step.in_hook, *([step.added_hook] if step.added_hook else [])]
            full = f" {'加上' if lang == 'zh' else 'adds'} ".join(reads)
            if len(line) + 20 < width:  # room to spare: the whole line, the read hooks whole
                assert full in line, (step.name, line)


@pytest.mark.parametrize("width", range(24, 36))  # every width modulo a cell of six
async def test_heatmap_drops_a_column_rather_than_cut_a_number(width: int) -> None:
    values = np.random.default_rng(width).normal(0, 3, 40)
    values[5] = -123456.0  # the widest a cell holds: "-1e5"
    grid = HeatmapGrid(label_width=6)
    async with Host(grid).run_test(size=(width, 6)) as pilot:
        grid.set_rows([GridRow("row", values)], [str(j) for j in range(len(values))])
        expected = (width - 6 + 1) // 6
        for _ in range(50):  # a loaded machine may take more than one pause to lay the grid out and draw it
            await pilot.pause(0.01)
            header, row = screen_text(pilot.app).split("\n")[:2]
            if len(row[6:].split()) == expected:
                break
        numbers = row[6:].split()
        assert numbers == [fmt(v).strip() for v in values[: len(numbers)]], (width, row)
        assert header.split() == [str(j) for j in range(len(numbers))]  # a column is shown whole, or not at all
        assert len(numbers) == expected  # every column that fits whole is there


def test_fmt_keeps_to_its_width() -> None:
    for value in (0.123, -12.34, 1234.0, -99999.0, 123456.0, 3.2e12, -7e15):
        assert len(fmt(value)) == 5, (value, fmt(value))
    assert fmt(123456.0) == " +1e5" and fmt(-3.2e12) == "-3e12"


def test_tiny_has_the_names_the_bar_tests_use() -> None:
    assert [short_name(s) for s in model.load("tiny").steps][:4] == ["emb", "LN1", "attn", "+"]


@pytest.mark.parametrize("no_color", [False, True])
async def test_heatmap_legend_shows_the_scale_and_its_range(no_color: bool) -> None:
    values = np.array([-2.5, -1.0, 0.0, 0.4, 1.9])
    grid = HeatmapGrid(label_width=6)
    app = Host(grid)
    async with app.run_test(size=(60, 8)) as pilot:
        app.no_color = no_color  # what NO_COLOR in the environment sets
        grid.set_rows([GridRow("a", values), GridRow("b", -values)], [str(j) for j in range(5)])
        await pilot.pause()
        lines = screen_text(pilot.app).split("\n")
        assert lines[3].split() == (["−2.5", "█▓▓▒░░", "0", "░░▒▓▓█", "+2.5"] if no_color else ["−2.5", "0", "+2.5"])
        legend = [s for s in app.screen._compositor.render_strips()[3] if s.text == " " and s.style and s.style.bgcolor]
        if not no_color:  # the swatches are drawn by the cells' own style: the darkest blue first, the reddest last
            assert legend[0].style.bgcolor == diverging_style(-2.5, 2.5).bgcolor
            assert legend[-1].style.bgcolor == diverging_style(2.5, 2.5).bgcolor
        grid.set_rows([GridRow("p", np.array([0.2, 0.8]))], ["0", "1"], scale=1.0, style_for=probability_style)
        await pilot.pause()
        ends = screen_text(pilot.app).split("\n")[2].split()
        assert (ends[0], ends[-1]) == ("0", "1")
        grid.set_rows([GridRow("p", np.array([0.2, 0.8]))], ["0", "1"], legend=False)
        await pilot.pause()
        assert screen_text(pilot.app).split("\n")[2].strip() == ""


async def test_text_lines_draw_each_lines_own_style_under_its_spans() -> None:
    """A line made as Text("…", style="dim") keeps its style on screen (Text.render leaves it out)."""
    from rich.style import Style
    from rich.text import Text

    from tutor.widgets.text_lines import TextLines

    widget = TextLines()
    app = Host(widget)
    async with app.run_test(size=(40, 6)) as pilot:
        widget.set_lines([Text("title", style="bold"), Text.assemble("a ", ("red", "red"), style="dim"), Text("x")])
        await pilot.pause()
        title, note, plain = (widget.render_line(y) for y in range(3))
        assert all(segment.style.bold for segment in title if segment.text.strip())
        styles = {segment.text.strip(): segment.style for segment in note if segment.text.strip()}
        assert styles["a"].dim and styles["red"].dim and styles["red"].color == Style.parse("red").color
        assert not any(segment.style.bold or segment.style.dim for segment in plain if segment.text.strip())


async def test_lesson_5_s_links_draw_all_four_sums_after_a_scroll(store) -> None:
    """Lesson 5: "Show the vectors of 猫追狗", "Try 猫猫猫猫", alt+PgDn drew one of the four "sum" rows empty: a
    line below the legend, drawn blank before the scroll, was kept by y + scroll_y and stood in for a row."""
    from helpers import make_app, settle

    from tutor.lessons.links import parse_link
    from tutor.paths import content_dir

    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("sinusoidal")
        await settle(pilot)
        for prompt in ("猫追狗", "猫猫猫猫"):
            await app.follow(parse_link(f"tutor:show?prompt={prompt}&step=embed&panel=vectors"))
            await settle(pilot)
        await pilot.press("alt+pagedown")
        await settle(pilot)
        grid = app.main.query_one("#vectors-grid", HeatmapGrid)
        width = grid.scrollable_content_region.width
        for y in range(grid.scrollable_content_region.height):  # each line as drawn = as drawn afresh
            drawn = "".join(segment.text for segment in grid.render_line(y))
            fresh = "".join(segment.text for segment in grid._draw_line(y, width, 0, grid.scroll_offset.y))
            if y != grid.legend_line():
                assert drawn == fresh, y
        shown = screen_text(app, "#vectors-grid")
        sums = shown[shown.index("sum x") :]
        assert all(f"{pos} 猫 ‖" in sums for pos in range(4)), sums


async def test_heatmap_draws_new_numbers_and_a_new_background_not_what_it_kept() -> None:
    """The grid keeps drawn lines (per row content) and its style for one frame: new values, or a new theme's
    background, must show on the next frame, never the kept ones."""
    grid = HeatmapGrid(label_width=6)
    async with Host(grid).run_test(size=(40, 6)) as pilot:
        grid.set_rows([GridRow("a", np.array([1.0, 2.0])), GridRow("b", np.array([3.0, 4.0]))], ["0", "1"])
        await pilot.pause()
        assert screen_text(pilot.app).split("\n")[2].split()[1:] == [fmt(3.0).strip(), fmt(4.0).strip()]
        grid.set_rows(
            [GridRow("a", np.array([1.0, 2.0])), GridRow("b", np.array([-4.0, 3.0]))], ["0", "1"]
        )  # the same scale (4)
        await pilot.pause()
        assert screen_text(pilot.app).split("\n")[2].split()[1:] == [fmt(-4.0).strip(), fmt(3.0).strip()]
        before = pilot.app.screen._compositor.render_strips()[0]
        pilot.app.theme = "textual-light"
        await pilot.pause()
        header = pilot.app.screen._compositor.render_strips()[0]
        assert header != before
        assert [s.style.bgcolor for s in header] == [grid.rich_style.bgcolor] * len(list(header)), header


async def test_panel_tabs_light_the_tab_shown_and_say_the_labels_given_never_a_kept_line() -> None:
    """The tab line is kept per tab lit: switching back and forth, and new labels (F5), must draw what is asked."""
    from tutor.widgets.panel_tabs import PanelTabs

    tabs = PanelTabs({"a": "Alpha", "b": "Beta"})
    app = Host(tabs)
    async with app.run_test(size=(40, 3)) as pilot:

        def lit() -> str:
            line = app.screen._compositor.render_strips()[0]
            return "".join(s.text for s in line if s.style and s.style.bgcolor == line_lit_bg()).strip()

        def line_lit_bg() -> object:
            return tabs.get_component_rich_style("panel-tabs--active").bgcolor

        for panel, word in (("a", "Alpha"), ("b", "Beta"), ("a", "Alpha"), ("b", "Beta")):
            tabs.active = panel
            await pilot.pause()
            assert lit() == word, (panel, screen_text(app))
        tabs.set_labels({"a": "甲", "b": "乙"})
        await pilot.pause()
        assert screen_text(app).split() == ["甲", "乙"] and lit() == "乙"


def test_text_table_lines_are_the_cells_fitted_one_by_one() -> None:
    """text_table pads a cell that fits and has no style of its own beside it, not in a copy: the lines must be
    exactly those of every cell fitted on its own (`_fit`) — plain text and every span — for styled, unstyled,
    cut and padded cells, left and right."""
    from rich.text import Text

    from tutor.text_table import Column, _fit, text_table

    rng = np.random.default_rng(0)
    words = ["a", "ab", "长词", "0.125", "−12.5", "‖x‖", "a much longer cell"]
    for case in range(200):
        columns = [
            Column("h" if case % 3 else "", ("left", "right")[int(rng.integers(2))], max_width=int(rng.integers(3, 9)))
            for _ in range(3)
        ]
        rows = []
        for _ in range(4):
            row: list[str | Text] = []
            for _ in range(3):
                word = words[int(rng.integers(len(words)))]
                kind = int(rng.integers(3))
                cell = word if kind == 0 else Text(word, style="bold" if kind == 1 else "")
                if kind == 2:
                    cell.stylize("reverse", 0, 1)
                row.append(cell)
            rows.append(row)
        lines = text_table(columns, rows, gap=2)
        widths = [len(line) for line in lines]
        reference = []
        cells = [[Text(c) if isinstance(c, str) else c for c in row] for row in rows]
        header = [Text(c.header, style="bold") for c in columns]
        for row in ([header] if any(c.header for c in columns) else []) + cells:
            line = Text(no_wrap=True, overflow="ellipsis")
            for i, (cell, column) in enumerate(zip(row, columns, strict=True)):
                if i:
                    line.append("  ")
                width = max(
                    min(
                        max([*(r[i].cell_len for r in cells), header[i].cell_len if header[i].plain else 0]),
                        column.max_width or 99,
                    ),
                    column.min_width,
                )
                line.append_text(_fit(cell, width, column.justify))
            reference.append(line)
        assert [(t.plain, t.spans) for t in lines] == [(t.plain, t.spans) for t in reference], (case, widths)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_token_strip_chips_that_fill_its_width_stay_on_one_line(lang: str) -> None:
    """The chips wrap at the width inside the strip's padding: they wrapped two cells early (size.width - 2,
    though Textual's size already leaves the padding out), so a prompt that just fit took two lines."""
    from rich.cells import cell_len

    from tutor.panels.token_strip import TokenStrip

    gpt = model.load("tiny")
    trace = gpt.run("猫追狗的一只猫")
    strip = TokenStrip()
    async with Host(strip).run_test(size=(120, 6)) as pilot:
        strip.show(View(gpt, trace, 0, 0, 0, lang))
        await pilot.pause()
        (line,) = [row for row in screen_text(pilot.app).splitlines() if row.strip()]
        chips = cell_len(line.rstrip()) - 1  # the cells the chips take, without the padding's cell on the left
        for width, lines in ((chips + 2, 1), (chips + 1, 2)):  # just fits inside the padding; one cell short
            await pilot.resize_terminal(width, 6)
            await pilot.pause()
            shown = [row for row in screen_text(pilot.app).splitlines() if row.strip()]
            assert len(shown) == len(strip.rows) == lines, (width, shown, strip.rows)  # no row of a lone gap
            assert all(cell_len(row) <= width for row in shown), shown
            numbers = [int(n) for n in re.findall(r"(\d+) \S+·\d+", "\n".join(shown))]
            assert numbers == list(range(len(trace.tokens))), shown  # every chip whole, in order
