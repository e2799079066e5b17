"""The training experiment: the shipped curves, the baselines and a live run; and its line chart."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from helpers import make_app, open_experiment, screen_text, settle

import model
from tutor.screens.experiments import training
from tutor.widgets.line_chart import LineChart, Series, linear_ticks, log_ticks, tick_text


async def test_training_draws_every_shipped_curve_and_the_baselines(store) -> None:
    """f cycles the families of curves; together they hold every shipped model, each family with the baselines,
    on a log axis that holds every point: the start near 10 (lesson 7 asks to look at it) and the end."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "training")
        screen, chart = app.screen, app.screen.query_one(LineChart)
        records = {r.name: r for r in training.shipped_records()}
        assert set(records) == set(model.shipped_models())
        seen: set[str] = set()
        labels = []
        for _ in screen.families:
            names = [s.name.split()[0] for s in chart.series if not s.dashed]
            seen.update(names)
            text = screen_text(app)
            labels.append(next(line for line in text.split("\n") if "Curves:" in line))
            for name in names:
                assert f"{name} {records[name].val_loss[-1][1]:.3f}" in text
            assert f"unigram baseline {records['tiny'].baselines['unigram']:.3f}" in text
            assert f"bigram baseline {records['tiny'].baselines['bigram']:.3f}" in text
            assert any(0x2800 < ord(ch) <= 0x28FF for ch in text)  # braille curves
            assert chart.log_y and "log scale" in text
            (_, _), (low, high) = chart.ranges()
            ys = [y for s in chart.series for y in s.ys]
            assert low <= min(ys) and max(ys) <= high  # nothing clipped: not the start, not the end
            await pilot.press("f")
            await settle(pilot)
        assert seen == set(records)
        assert "tiny vs noresidual" in labels[0] and "the 10 models of 4 blocks" in labels[1]
        assert "f shows the 10 models of 16 blocks" in labels[1] and "f shows tiny vs noresidual" in labels[-1]
        assert [s.name.split()[0] for s in chart.series][:2] == ["tiny", "noresidual"]  # round again
        plot = [line for line in screen_text(app).split("\n") if line[7:8] in ("┤", "│")]
        assert any(line.startswith("     10┤") for line in plot)  # tiny starts at 10.06: the axis says 10


def test_training_curves_have_a_colour_and_a_marker_each() -> None:
    """No two curves in one colour, not even in a terminal of 256 colours, nor two alike markers."""
    from rich.color import Color, ColorSystem

    looks = [training.SERIES_LOOK[name] for name in model.shipped_models()]  # every shipped model has its own
    looks += list(training.BASELINE_LOOK.values())
    colours = [Color.parse(colour) for colour, _ in looks]
    assert len({c.triplet for c in colours}) == len(looks)
    assert len({c.downgrade(ColorSystem.EIGHT_BIT).number for c in colours}) == len(looks)
    assert len({marker for _, marker in looks}) == len(looks)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_training_is_readable_at_80x24(store, lang: str) -> None:
    """Every family at 80×24: its whole legend on screen, each swatch in its curve's colour, ten rows of plot."""
    from rich.color import Color

    app = make_app(store, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "training")
        screen, chart = app.screen, app.screen.query_one(LineChart)
        assert ("f Curves" if lang == "en" else "f 曲线") in screen_text(app)
        for _ in screen.families:
            strips = app.screen._compositor.render_strips()
            text = "\n".join("".join(segment.text for segment in strip) for strip in strips)
            plot = [line for line in text.split("\n") if line[7:8] in ("┤", "│")]
            assert len(plot) >= 10, text
            swatches = {seg.text: seg.style for strip in strips for seg in strip if seg.text[:1] in ("━", "╍")}
            for series in chart.series:
                assert series.name in text, (series.name, text)  # the legend is not cut
                style = swatches[LineChart.swatch(series)]
                assert style.color is not None and style.color.triplet == Color.parse(series.color).triplet
                assert style.color != style.bgcolor
            await pilot.press("f")
            await settle(pilot)


def test_line_chart_log_axis() -> None:
    """On a log axis 1, 10, 100 are equally far apart, and the ticks are round numbers at their rows."""
    chart = LineChart()
    chart.set_series([Series("a", [0, 1, 2], [1, 10, 100], "red", "*")], log_y=True)
    cells = chart._plot_cells(3, 3, (0, 2), (1, 100), braille=False)
    assert ["".join(ch for ch, _ in row) for row in cells] == ["  *", " * ", "*  "]
    rows = 9

    def row_of(value: float) -> int:
        return round((math.log(100) - math.log(value)) / math.log(100) * (rows - 1))

    ticks = log_ticks(1, 100, row_of, rows)
    assert ticks[0] == "100" and ticks[4] == "10" and ticks[8] == "1"
    assert all(float(label) in (1, 2, 3, 5, 10, 20, 30, 50, 100) for label in ticks.values())
    assert all(abs(a - b) >= 2 for a in ticks for b in ticks if a != b)


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 6, 9, 17])
def test_line_chart_linear_ticks_show_both_ends_at_any_height(rows: int) -> None:
    """A short chart (3 rows: the positions picture at 80×24) labelled its top row 0.50 for a curve reaching +1:
    five labels on three rows overwrote each other. Now the top row says the top, the bottom row the bottom."""
    ticks = linear_ticks(-1.0, 1.0, rows)
    assert ticks[0] == tick_text(1.0)
    if rows > 1:
        assert ticks[rows - 1] == tick_text(-1.0)
    assert len(ticks) == min(5, rows)
    row_span = 2.0 / max(rows - 1, 1)
    for row, label in ticks.items():  # each label is the value at its row, within half a row
        assert abs(float(label) - (1.0 - row * row_span)) <= row_span / 2 + 0.005


async def run_to_the_end(pilot) -> None:
    """Open the training experiment and start a live run (`r`); the quick run is over when this returns."""
    await open_experiment(pilot, "training")
    await pilot.press("r")
    await settle(pilot)
    await pilot.pause(0.1)


@pytest.fixture
def quick_live(monkeypatch: pytest.MonkeyPatch) -> training.LiveSettings:
    settings = replace(training.LIVE, steps=6, n_ctx=8, batch_size=2, eval_every=2, eval_windows=2, stdlib_text=False)
    monkeypatch.setattr(training, "LIVE", settings)
    return settings


async def test_training_live_run_finishes_and_draws_both_curves(store, quick_live, monkeypatch, tmp_path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_to_the_end(pilot)
        live = app.screen.live
        assert live.finished and not live.cancelled
        for name in quick_live.variants:
            assert [step for step, _ in live.val_loss[name]] == [2, 4, 6]
        chart = app.screen.query_one(LineChart)
        assert [len(s.xs) for s in chart.series[:2]] == [3, 3]
        text = screen_text(app)
        assert "Live: done" in text
        assert f"tiny {live.val_loss['tiny'][-1][1]:.3f}" in text
    assert list(temp.iterdir()) == []  # the checkpoints' folder is gone


async def test_training_live_divergence_is_a_visible_notice(store, quick_live, monkeypatch) -> None:
    from model import train as model_training

    real, calls = model_training.loss_and_gradients, {"noresidual": 0}

    def noresidual_blows_up_at_step_4(gpt, inputs, targets, look=None):  # type: ignore[no-untyped-def]
        loss, grads = real(gpt, inputs, targets, look)
        if gpt.name == "noresidual":
            calls["noresidual"] += 1
            if calls["noresidual"] == 4:
                loss = float("inf")
        return loss, grads

    monkeypatch.setattr(model_training, "loss_and_gradients", noresidual_blows_up_at_step_4)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_to_the_end(pilot)
        assert app.screen.live.finished
        shown = [n.message for n in app._notifications]
        assert any("Diverged" in m and "noresidual: diverged at step" in m for m in shown), shown


async def test_training_live_run_cancels(store, quick_live, monkeypatch) -> None:
    monkeypatch.setattr(training, "LIVE", replace(quick_live, steps=100_000))
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "training")
        await pilot.press("r")
        while app.screen.live.step < 3:
            await pilot.pause(0.05)
        await pilot.press("c")
        await settle(pilot)
        live = app.screen.live
        assert live.finished and live.cancelled
        assert 3 <= live.step < 100_000
        assert "cancelled at step" in screen_text(app)


async def test_training_leaving_and_quitting_mid_run_stop_the_worker(store, quick_live, monkeypatch) -> None:
    monkeypatch.setattr(training, "LIVE", replace(quick_live, steps=100_000))
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "training")
        screen = app.screen
        await pilot.press("r")
        while screen.live.step < 2:
            await pilot.pause(0.05)
        await pilot.press("escape")
        await settle(pilot)  # returns only when the worker has ended
        assert app.screen is app.main
        await open_experiment(pilot, "training")
        await pilot.press("r")
        while app.screen.live.step < 2:
            await pilot.pause(0.05)


def test_line_chart_marks_series_without_colour() -> None:
    chart = LineChart()
    chart.set_series([Series("a", [0, 1], [0, 1], "red", "*"), Series("b", [0, 1], [1, 0], "blue", "o")])
    cells = chart._plot_cells(10, 5, (0, 1), (0, 1), braille=False)
    text = "\n".join("".join(ch for ch, _ in row) for row in cells)
    assert "*" in text and "o" in text
    assert text.split("\n")[0][0] == "o" and text.split("\n")[-1][0] == "*"  # b starts high, a starts low
    assert text.split("\n")[2] == "    **    "  # where they cross, a (listed first) is on top
