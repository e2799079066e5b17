"""The LayerNorm calculator: model.norm.layer_norm on typed numbers, said in words."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import footer_misses, make_app, open_experiment, screen_text, settle

from model import layer_norm
from tutor.screens.experiments.layernorm_calc import number_text, parse_numbers


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
            await pilot.press("alt+e")  # every field back to the example: this input is the only odd one
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
        await pilot.press("alt+m")
        await settle(pilot)
        trace = app.main.place.gpt.run(app.main.place.prompt)
        worked = app.screen.worked
        assert np.allclose(worked.y, trace["blocks.0.ln1.hook_normalized"][-1], atol=1e-5)
        assert "differs by at most" in screen_text(app)
        await pilot.press("alt+e")
        await settle(pilot)
        assert app.screen.worked.mean == 2.5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("variant", ["tiny", "rmsnorm"])
async def test_every_key_the_calculator_offers_is_in_its_footer_at_80_columns(store, lang: str, variant: str) -> None:
    """At 80×24 the footer showed Esc, alt+v and alt+e only: alt+m and alt+r, shown nowhere else, were cut
    (the footer leaves out the keys that do not fit beside the palette key). In each mode and view, every key the
    screen shows is in the footer, whole."""
    import model

    app = make_app(store, gpt=model.load(variant), lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        for key in (None, "alt+r", "alt+v"):  # the vector view; the other norm (LayerNorm ↔ RMSNorm); BatchNorm's
            if key:
                await pilot.press(key)
            await settle(pilot)
            await pilot.pause(0.2)  # the footer composes its keys after a refresh
            assert footer_misses(app) == [], (key, screen_text(app).splitlines()[-1])
