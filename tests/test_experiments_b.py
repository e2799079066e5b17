"""The positions, LayerNorm-calculator and training experiments, driven end to end through the pilot."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from test_app import make_app, screen_text, settle

import model
from model import layer_norm, sinusoidal_positions
from tutor.progress import ProgressStore
from tutor.screens.experiments import training
from tutor.screens.experiments.layernorm_calc import number_text, parse_numbers
from tutor.screens.experiments.positions import rope_angles
from tutor.widgets.heatmap import HeatmapGrid
from tutor.widgets.line_chart import LineChart, Series, log_ticks


@pytest.fixture
def store(tmp_path) -> ProgressStore:
    return ProgressStore(tmp_path / "state" / "progress.json")


async def open_experiment(pilot, name: str) -> None:
    await settle(pilot)
    pilot.app.open_experiment(name)
    await settle(pilot)


def grid_values(grid: HeatmapGrid) -> np.ndarray:
    return np.array([row.values for row in grid.rows])


# -- positions -----------------------------------------------------------------------------------


async def test_positions_tables_follow_the_typed_base(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        screen = app.screen
        assert screen.base == 10000.0
        await pilot.press("ctrl+u", *"10", "enter")
        await settle(pilot)
        assert screen.base == 10.0
        n, d = 64, 64
        table = sinusoidal_positions(n, d, 10.0)
        assert np.array_equal(grid_values(screen.query_one("#pos-table", HeatmapGrid)), table)
        text = screen_text(app)
        row = next(line for line in text.split("\n") if line.strip().startswith("pos 1 "))
        assert [float(v) for v in row.split()[2:8]] == pytest.approx(table[1, :6], abs=0.005)
        pe = table.astype(np.float64)
        similarity = grid_values(screen.query_one("#pos-similarity", HeatmapGrid))
        assert np.allclose(similarity, pe @ pe.T)
        note = str(screen.query_one("#pos-similarity-note").render())
        k = 4 + int(np.argmax((pe @ pe.T)[0, 4:]))
        assert f"Distance 0: {pe[0] @ pe[0]:.2f}; 1: {pe[0] @ pe[1]:.2f}; 63: {pe[0] @ pe[63]:.2f}" in note
        assert f"distance of 4 or more: {k}, {pe[0] @ pe[k]:.2f}." in note
        angles = grid_values(screen.query_one("#pos-rope", HeatmapGrid))
        assert np.allclose(angles, rope_angles(sinusoidal_positions(n, 16, 10.0)))
        # θ = pos / base^(2i/d_head), mod 2π: the formula agrees with what was read back from the table
        theta = np.arange(n)[:, None] / 10.0 ** (np.arange(0, 16, 2) / 16)
        assert np.allclose(angles, np.mod(theta, 2 * math.pi), atol=1e-5)


async def test_positions_rerun_the_model_off_training(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("f4")  # base 1e6
        await settle(pilot)
        screen = app.screen
        assert screen.base == 1e6
        gpt = app.main.gpt
        prompt = screen.prompt
        trained = gpt.run(prompt).top_k(5)
        changed = gpt.with_config(pos_base=1e6).run(prompt).top_k(5)
        text = screen_text(app, "#pos-model")
        assert "OFF-TRAINING" in text
        assert "base 10000 (trained)" in text and "base 1e+06 (off-training)" in text
        for (_, _, p_trained), (_, _, p_changed) in zip(trained, changed, strict=True):
            assert f"{p_trained:6.1%}".strip() in text
            assert f"{p_changed:6.1%}".strip() in text
        assert trained != changed  # the base matters to this model
        await pilot.press("f3")  # back to the trained base
        await settle(pilot)
        assert "OFF-TRAINING" not in screen_text(app, "#pos-model")


async def test_positions_arrow_keys_scale_the_base_and_bad_input_is_a_notice(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "positions")
        screen = app.screen
        await pilot.press("down", "down")
        assert screen.base == 100.0
        await pilot.press("up")
        assert screen.base == 1000.0
        for bad in ("abc", "-5", "0", "inf"):
            await pilot.press("ctrl+a", "ctrl+k", *bad, "enter")
            await settle(pilot)
            assert screen.base == 1000.0
        assert any("positive number" in n.message for n in app._notifications)
        assert app.screen is screen  # still there, no traceback


async def test_positions_for_a_model_without_a_base(store, make_gpt) -> None:
    app = make_app(store, gpt=make_gpt(positional="learned"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("f2")
        await settle(pilot)
        assert "uses learned positions, not the base" in screen_text(app, "#pos-model")


# -- LayerNorm calculator ----------------------------------------------------------------------------


def test_number_parsing_and_text() -> None:
    assert parse_numbers("1 2 3 4") == parse_numbers("1,2, 3 ,4") == parse_numbers("[1, 2, 3, 4]") == [1, 2, 3, 4]
    assert parse_numbers("−1.5，2e1") == [-1.5, 20.0]
    with pytest.raises(ValueError, match="x"):
        parse_numbers("1 x 2")
    assert [number_text(v) for v in (2.5, 1.25, -1.3416407864998738, 0.0, -0.0, 10.0)] == [
        "2.5",
        "1.25",
        "−1.3416",
        "0",
        "0",
        "10",
    ]


async def test_layernorm_calculator_shows_the_lessons_worked_example(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        text = screen_text(app)
        assert "μ = Σ xⱼ / d = 10 / 4 = 2.5" in text
        assert "σ² = Σ (xⱼ − μ)² / d = 5 / 4 = 1.25" in text
        assert "√(σ² + ε) = √(1.25 + 1e-05) = 1.118038" in text
        x_hat = [line.split()[4] for line in text.split("\n") if line.strip()[:1] in "0123" and len(line.split()) == 8]
        assert x_hat == ["−1.3416", "−0.4472", "0.4472", "1.3416"]
        assert "‖x̂‖ = 2 against √d = √4 = 2" in text


async def test_layernorm_calculator_uses_model_layer_norm_with_gamma_beta_eps(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        screen = app.screen
        await pilot.press("ctrl+a", "ctrl+k", *"3, -1.5, 0.25", "tab", *"2", "tab", *"1 0 -1", "tab")
        await pilot.press("ctrl+a", "ctrl+k", *"0.1", "enter")
        await settle(pilot)
        x = np.array([3, -1.5, 0.25])
        expected = layer_norm(x, np.full(3, 2.0), np.array([1.0, 0.0, -1.0]), 0.1)
        assert np.allclose(screen.worked.y, expected)
        text = screen_text(app)
        rows = [line.split() for line in text.split("\n") if len(line.split()) == 8 and line.split()[0] in "012"]
        assert [r[7] for r in rows] == [number_text(v) for v in expected]
        mean, var = x.mean(), x.var()
        assert f"= {number_text(mean)}" in text and f"= {number_text(var)}" in text
        assert f"= {number_text(math.sqrt(var + 0.1), 6)}" in text


NORM_CASES = [  # (x, ε, what the sentence under the steps must say in en and in zh)
    ("1 2 3 4", "1e-5", ("‖x̂‖ = 2 against √d = √4 = 2", "≈ d."), ("‖x̂‖ = 2，对比 √d = √4 = 2", "≈ d。")),
    (  # a constant vector: x̂ = 0, not ≈ √d, and ε is what keeps 0 / √(0 + ε) finite
        "3 3 3 3",
        "1e-5",
        ("‖x̂‖ = 0, not √d = √4 = 2", "σ = 0", "ε = 1e-05 is what keeps this division finite"),
        ("‖x̂‖ = 0，不是 √d = √4 = 2", "σ = 0", "是 ε = 1e-05 让这个除法保持有限"),
    ),
    (  # the same number three times, but μ = 0.10000000000000002: σ² is rounding, x̂ is 1e-15, not 0
        "0.1 0.1 0.1",
        "1e-5",
        ("≈ 0, not √d = √3 = 1.7321", "σ² is 0 but for float rounding", "is what keeps this division finite"),
        ("≈ 0，不是 √d = √3 = 1.7321", "浮点舍入误差", "让这个除法保持有限"),
    ),
    (  # σ² small next to ε: ‖x̂‖ = √(4 · 1.25e-6 / (1.25e-6 + 1e-5)) = 2/3
        "1e-3 2e-3 3e-3 4e-3",
        "1e-5",
        ("‖x̂‖ = 0.6667, below √d = √4 = 2", "σ² = 1.25e−06 is smaller than ε = 1e-05", "= 0.111111"),
        ("‖x̂‖ = 0.6667，小于 √d = √4 = 2", "σ² = 1.25e−06 小于 ε = 1e-05", "= 0.111111"),
    ),
    (  # σ² of the same size as ε: ‖x̂‖ = √(4 · 1.25 / 2.25)
        "1 2 3 4",
        "1",
        ("‖x̂‖ = 1.4907, below √d", "ε = 1 is not negligible next to σ² = 1.25", "= 0.555556"),
        ("‖x̂‖ = 1.4907，小于 √d", "ε = 1 相对 σ² = 1.25 不可忽略", "= 0.555556"),
    ),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_layernorm_calculator_says_what_the_numbers_show(store, lang: str) -> None:
    """The sentence about ‖x̂‖ is chosen by the numbers: ≈ √d, 0 for a constant vector, or below √d."""
    app = make_app(store, lang=lang)
    async with app.run_test(size=(200, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        screen = app.screen
        for x, eps, en, zh in NORM_CASES:
            screen.query_one("#ln-x").focus()
            await pilot.press("ctrl+a", "ctrl+k", *x)
            screen.query_one("#ln-eps").focus()
            await pilot.press("ctrl+a", "ctrl+k", *eps, "enter")
            await settle(pilot)
            lines = [line.strip() for line in screen_text(app).split("\n")]
            first = next(i for i, line in enumerate(lines) if line.startswith("‖x̂‖ ="))
            last = next(i for i, line in enumerate(lines) if line.startswith(("Computed by", "由 model")))
            line = (" " if lang == "en" else "").join(lines[first:last])  # the sentence, however it wraps
            for words in en if lang == "en" else zh:
                assert words in line, (x, eps, line)
            norm = float(np.linalg.norm(screen.worked.x_hat))
            assert ("≈ d" in line) == (norm > 0.999 * math.sqrt(len(screen.worked.x)))  # never ≈ √d when it is not


ODD_INPUT = [  # (field, what is typed there, the notice)
    ("#ln-x", "1 two 3", "“two” is not a number"),
    ("#ln-x", "", "at least one number"),
    ("#ln-gamma", "1 2", "γ has 2 numbers but x has 4"),
    ("#ln-eps", "-1", "ε must be one number ≥ 0"),
    ("#ln-x", "1 nan", "must be finite"),
    ("#ln-x", "1e200 -1e200", "too large"),
]


async def test_layernorm_calculator_odd_input_is_a_notice(store) -> None:
    """Each odd input in turn, typed over the example (F2) in one app: its own notice, and no traceback."""
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        screen = app.screen
        for field, text, notice in ODD_INPUT:
            await pilot.press("f2")  # every field back to the example: this input is the only odd one
            await settle(pilot)
            app.clear_notifications()
            screen.query_one(field).focus()
            await pilot.press("ctrl+a", "ctrl+k", *text, "enter")
            await settle(pilot)
            messages = [str(n.message) for n in app._notifications]
            assert any(notice in message for message in messages), (field, text, messages)
            assert app.screen is screen and screen.worked is not None  # the last good result stays, no traceback


async def test_layernorm_calculator_takes_the_models_vector(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        await pilot.press("f3")
        await settle(pilot)
        trace = app.main.gpt.run(app.main.prompt)
        worked = app.screen.worked
        assert np.allclose(worked.y, trace["blocks.0.ln1.hook_normalized"][-1], atol=1e-5)
        assert "differs by at most" in screen_text(app)
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen.worked.mean == 2.5


# -- training ------------------------------------------------------------------------------------------


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
        assert "tiny vs noresidual" in labels[0] and "the 9 models of 4 blocks" in labels[1]
        assert "f shows the 9 models of 16 blocks" in labels[1] and "f shows tiny vs noresidual" in labels[-1]
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
        await open_experiment(pilot, "training")
        await pilot.press("r")
        await settle(pilot)
        await pilot.pause(0.1)
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

    def noresidual_blows_up_at_step_4(gpt, inputs, targets):  # type: ignore[no-untyped-def]
        loss, grads = real(gpt, inputs, targets)
        if gpt.name == "noresidual":
            calls["noresidual"] += 1
            if calls["noresidual"] == 4:
                loss = float("inf")
        return loss, grads

    monkeypatch.setattr(model_training, "loss_and_gradients", noresidual_blows_up_at_step_4)
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "training")
        await pilot.press("r")
        await settle(pilot)
        await pilot.pause(0.1)
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
    # leaving run_test quits the app mid-run: the worker must stop (else this test would hang)


def test_line_chart_marks_series_without_colour() -> None:
    chart = LineChart()
    chart.set_series([Series("a", [0, 1], [0, 1], "red", "*"), Series("b", [0, 1], [1, 0], "blue", "o")])
    cells = chart._plot_cells(10, 5, (0, 1), (0, 1), braille=False)
    text = "\n".join("".join(ch for ch, _ in row) for row in cells)
    assert "*" in text and "o" in text
    assert text.split("\n")[0][0] == "o" and text.split("\n")[-1][0] == "*"  # b starts high, a starts low
    assert text.split("\n")[2] == "    **    "  # where they cross, a (listed first) is on top


@pytest.mark.parametrize("name", ["positions", "layernorm-calc", "training"])
async def test_experiments_speak_chinese_footer_included(store, name: str) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_experiment(pilot, name)
        await pilot.press("f2")  # base 10 · the example · (nothing)
        await settle(pilot)
        text = screen_text(app)
        assert "返回" in text and "Back" not in text
        chinese, english = {
            "positions": ("训练之外", "OFF-TRAINING"),
            "layernorm-calc": ("方差", "variance"),
            "training": ("验证损失", "Validation loss"),
        }[name]
        assert chinese in text and english not in text


@pytest.mark.parametrize("name", ["positions", "layernorm-calc", "training"])
async def test_experiments_draw_without_colour(store, monkeypatch, name: str) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await open_experiment(pilot, name)
        await pilot.press("f" if name == "training" else "f2")  # the 4-block models · base 10 · the example
        await settle(pilot)
        text = screen_text(app)
        assert "Esc Back" in text
        if name == "training":  # the curves are drawn with their markers, not braille
            plot = "\n".join(line[8:] for line in text.split("\n") if line[7:8] in ("┤", "│"))
            assert "*" in plot and "@" in plot
            assert not any(0x2800 <= ord(ch) <= 0x28FF for ch in plot)


async def test_positions_with_rope_rotate_by_the_heads_table(store) -> None:
    gpt = model.load("rope")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("f2")
        await settle(pilot)
        table = grid_values(app.screen.query_one("#pos-table", HeatmapGrid))
        assert np.array_equal(table, sinusoidal_positions(64, gpt.config.d_head, 10.0))  # RoPE's table: d_head wide
        (_, _, prob), *_ = gpt.with_config(pos_base=10.0).run(app.screen.prompt).top_k(1)
        text = screen_text(app, "#pos-model")
        assert "rope positions, trained with base 10000" in text and f"{prob:6.1%}".strip() in text


async def test_positions_highlight_the_prompts_rows(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("tab", "ctrl+a", "ctrl+k", *"猫追狗的猫")
        await settle(pilot)
        assert app.screen.prompt == "猫追狗的猫"
        for grid in app.screen.query(HeatmapGrid):
            assert [row.highlight for row in grid.rows[:7]] == [True] * 5 + [False] * 2
