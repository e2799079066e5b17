"""The drift experiment (F10 → drift): x multiplied layer after layer, with and without LayerNorm."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_app, open_from_practice_menu, screen_line, screen_text, settle

import model
from tutor.screens.experiments.drift import DriftScreen, drift, number_text


def test_drift_without_norm_is_the_power_and_with_norm_is_layer_norm_each_layer() -> None:
    result = drift(1.4, 0.6, 30)
    assert np.allclose(result.plain[30], [2 * 1.4**30, 2 * 0.6**30])
    x = np.array([2.0, 2.0])
    for _ in range(30):
        x = model.layer_norm(x * [1.4, 0.6], np.ones(2), np.zeros(2), 1e-5)
    assert np.allclose(result.normed[30], x)
    assert number_text(2 * 1.4**10) == "57.85" and number_text(2 * 0.6**10) == "0.01209"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_drift_opens_from_the_practice_menu_and_follows_the_factor(store, lang) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_from_practice_menu(pilot, "drift")
        assert isinstance(app.screen, DriftScreen)
        text = screen_text(app)
        assert screen_line(text, "10")[1:3] == ["57.85", "0.01209"]  # the lesson's table
        assert screen_line(text, "30")[1:3] == ["48403", "4.421e-07"]
        assert screen_line(text, "30")[-3:] == ["+1.000", "-1.000", "1.414"]
        assert ("LayerNorm" in text) and (("每一层" in text) if lang == "zh" else ("every layer multiplies" in text))

        await pilot.press("ctrl+u", *"1.5")  # factor A, which has the focus
        await settle(pilot)
        assert screen_line(screen_text(app), "30")[1] == number_text(2 * 1.5**30) == "383502"

        await pilot.press("up")  # ↑ adds 0.1
        await settle(pilot)
        assert app.screen.query_one("#factor-a").value == "1.6"
        assert screen_line(screen_text(app), "20")[1] == number_text(2 * 1.6**20)

        await pilot.press("ctrl+u", *"x", "enter")  # bad input: a notice, and the last good table stays
        await settle(pilot)
        assert screen_line(screen_text(app), "20")[1] == number_text(2 * 1.6**20)
        assert any("1.4" in n.message for n in app._notifications)

        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main


async def test_drift_with_equal_factors_says_there_is_nothing_to_normalise(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_experiment("drift")
        await settle(pilot)
        await pilot.press("tab", "ctrl+u", *"1.4")  # B × 1.4 too
        await settle(pilot)
        text = screen_text(app)
        assert "σ = 0" in text
        assert screen_line(text, "1")[-3:] == ["+0.000", "+0.000", "0.000"]
