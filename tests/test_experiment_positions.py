"""The positions experiment: the sinusoidal and RoPE tables for a typed base, and the model run off it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import grid_values, make_app, open_experiment, screen_text, settle

import model
from model import sinusoidal_positions
from tutor.screens.experiments.positions import rope_angles
from tutor.widgets.heatmap import HeatmapGrid


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
        await pilot.press("alt+p")  # base 1e6, the preset above the trained 10000
        await settle(pilot)
        screen = app.screen
        assert screen.base == 1e6
        gpt = app.main.place.gpt
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
        await pilot.press("alt+p", "alt+p")  # 10, then back to the trained base
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
        await pilot.press("alt+p")
        await settle(pilot)
        assert "uses learned positions, not the base" in screen_text(app, "#pos-model")


@pytest.mark.parametrize(
    ("positional", "zh_words"), [("sinusoidal", "：正弦位置编码，训练时"), ("learned", "：可学习的位置向量，不用基数")]
)
async def test_positions_says_the_model_s_positions_in_chinese(store, make_gpt, positional: str, zh_words: str) -> None:
    """In Chinese the model's line read "tiny：sinusoidal 位置编码": the config's own word, in English."""
    app = make_app(store, gpt=make_gpt(positional=positional), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        text = screen_text(app, "#pos-model")
        assert zh_words in text and positional not in text, text


async def test_positions_with_rope_rotate_by_the_heads_table(store) -> None:
    gpt = model.load("rope")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("alt+p", "alt+p")  # 1e6, then 10
        await settle(pilot)
        table = grid_values(app.screen.query_one("#pos-table", HeatmapGrid))
        assert np.array_equal(table, sinusoidal_positions(64, gpt.config.d_head, 10.0))  # RoPE's table: d_head wide
        (_, _, prob), *_ = gpt.with_config(pos_base=10.0).run(app.screen.prompt).top_k(1)
        text = screen_text(app, "#pos-model")
        assert "RoPE positions, trained with base 10000" in text and f"{prob:6.1%}".strip() in text


async def test_positions_highlight_the_prompts_rows(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("tab", "ctrl+a", "ctrl+k", *"猫追狗的猫")
        await settle(pilot)
        assert app.screen.prompt == "猫追狗的猫"
        for grid in app.screen.query(HeatmapGrid):
            assert [row.highlight for row in grid.rows[:7]] == [True] * 5 + [False] * 2
