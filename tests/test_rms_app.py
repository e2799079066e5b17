"""A model whose norms are RMSNorm (`norm_kind` "rms") in the app: the LayerNorm tab, the step words, the
calculator's RMSNorm mode and the BatchNorm view say RMSNorm and show its numbers (rms, x̂ = x / rms, γ·x̂, μ left
in, no β), in both languages; and every tab at every norm step, forwards and backwards, draws without a traceback."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import TOKENIZER, make_app, open_experiment, random_params, screen_text, settle, small_config

from model import GPT, rms_norm
from tutor.catalogue import PANEL_LIST
from tutor.model_words import describe_variant
from tutor.screens.experiments.layernorm_calc import (
    Worked,
    number_text,
    rms_centre_sentence,
    rms_norm_sentence,
    work_out_rms,
)
from tutor.screens.experiments.norm_axes import both_norms, describe
from tutor.step_words import step_label


def rms_gpt(**changes: object) -> GPT:
    config = small_config(norm_kind="rms", **changes)
    return GPT(config, random_params(config), TOKENIZER, name="rms")


def test_step_words_and_the_variants_line_say_rmsnorm() -> None:
    steps = {s.name: s for s in rms_gpt().steps}
    assert step_label(steps["blocks.1.ln2"], "en", "rms") == "Block 1 · RMSNorm 2"
    assert step_label(steps["ln_final"], "zh", "rms") == "最后的 RMSNorm"
    assert step_label(steps["blocks.1.ln2"], "en") == "Block 1 · LayerNorm 2"  # a LayerNorm model's, as before
    assert describe_variant("rmsnorm", "en") == "RMSNorm instead of LayerNorm"
    assert describe_variant("deep-rmsnorm", "zh") == "deep，用 RMSNorm 代替 LayerNorm"


def numbers_after(text: str, label: str, count: int) -> list[float]:
    for line in text.split("\n"):
        fields = line.strip().removeprefix(label).split()
        if line.strip().startswith(label + " ") and len(fields) >= count:
            return [float(f) for f in fields[:count]]
    raise AssertionError(f"no line starting with {label!r}")


async def test_the_layernorm_tab_shows_rmsnorm_and_every_tab_draws(store) -> None:
    gpt = rms_gpt()
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        app.main.goto_step_name("blocks.1.ln1")
        await pilot.pause()
        trace, text = app.main.place.trace, screen_text(app, "#layernorm")
        said = " ".join(text.split())  # the title and legend wrap at spaces
        assert "Block 1 · RMSNorm 1: RMSNorm, dividing each token's own vector by its root mean square" in said
        assert "no centring, no β" in said and "β: mean" not in said
        x = trace["blocks.1.hook_resid_pre"].astype(np.float64)
        x_hat, y = trace["blocks.1.ln1.hook_xhat"].astype(np.float64), trace["blocks.1.ln1.hook_normalized"]
        rms = np.sqrt((x * x).mean(axis=-1) + gpt.config.ln_eps)
        for pos, piece in enumerate(trace.pieces):
            expected = [x[pos].mean(), x[pos].std(), rms[pos], x[pos].mean() / rms[pos], x_hat[pos].std()]
            expected += [np.linalg.norm(x_hat[pos]), y[pos].mean(), y[pos].std()]
            assert numbers_after(text, f"{pos} {piece}", 8) == pytest.approx(expected, abs=6e-4)
        assert "y = γ · x / √(mean(x²) + ε)" in screen_text(app, "#stepinfo")
        await pilot.press("f5")
        await settle(pilot)
        text = screen_text(app, "#layernorm")
        said = "".join(text.split())
        assert "第1块·RMSNorm1：RMSNorm，把每个词元自己的向量除以它的均方根" in said and "没有β" in said
        await pilot.press("f5")
        tabs, seen = app.main.query_one("#panels"), []
        for backward, name in ((False, "blocks.0.ln2"), (True, "ln_final")):  # every tab, forwards and back
            if backward:
                await pilot.press("ctrl+r")
                await settle(pilot)
            app.main.goto_step_name(name)
            for panel in (p.name for p in PANEL_LIST if p.tab):
                tabs.active = panel
                app.main.refresh_panels()
                await pilot.pause()
                seen.append(" ".join(screen_text(app).split()))
        assert any("RMSNorm has no β" in text for text in seen)  # going back: the gradient of γ alone
        assert not any("∂L/∂β" in text for text in seen)


def test_the_rms_sentences_are_chosen_by_the_numbers() -> None:
    def worked(*x: float, eps: float = 1e-5) -> Worked:
        return work_out_rms(np.array(x), np.ones(len(x)), eps)

    four = worked(1, 2, 3, 4)
    assert (four.var, number_text(four.scale, 6)) == (7.5, number_text(math.sqrt(7.5 + 1e-5), 6))
    np.testing.assert_allclose(four.y, rms_norm(np.array([1.0, 2, 3, 4]), np.ones(4), 1e-5))
    assert "≈ d" in rms_norm_sentence(four, "en")
    assert "every xⱼ is 0" in rms_norm_sentence(worked(0, 0, 0), "en")
    small = worked(0.001, -0.002, eps=1e-5)  # mean(x²) = 2.5e-6, below ε: ‖x̂‖ well under √2
    assert "below √d" in rms_norm_sentence(small, "en") and np.linalg.norm(small.x_hat) < 0.999 * math.sqrt(2)
    assert "小于 1" in rms_norm_sentence(small, "zh")
    mean = number_text(float(four.x_hat.mean()))
    assert rms_centre_sentence(four, "zh").startswith(
        f"x̂ 的均值是 {mean} = μ / rms，μ = 2.5 是 x 的均值：RMSNorm 不减均值"
    )


async def test_the_calculator_has_an_rmsnorm_mode(store) -> None:
    lang = "en"  # the Chinese words: below, and on an RMSNorm model's vector
    app = make_app(store, lang=lang)  # tiny: a LayerNorm model, the calculator opens on LayerNorm
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "layernorm-calc")
        assert app.screen.worked.kind == "layer"
        await pilot.press("alt+r")
        await settle(pilot)
        screen, text = app.screen, screen_text(app)
        assert screen.worked.kind == "rms" and not screen.query_one("#ln-beta").display
        assert "mean(x²) = Σ xⱼ² / d = 30 / 4 = 7.5" in text
        assert f"rms = √(mean(x²) + ε) = √(7.5 + 1e-05) = {number_text(math.sqrt(7.5 + 1e-5), 6)}" in text
        expected = rms_norm(np.array([1.0, 2, 3, 4]), np.ones(4), 1e-5)
        rows = [line.split() for line in text.split("\n") if len(line.split()) == 6 and line.split()[0] in "0123"]
        assert [r[3] for r in rows] == [number_text(v) for v in expected]  # the x̂ column (γ = 1: y too)
        mean = number_text(float(expected.mean()))
        assert (
            f"x̂ has mean {mean} = μ / rms, with μ = 2.5" if lang == "en" else f"x̂ 的均值是 {mean} = μ / rms"
        ) in text
        assert ("RMSNorm takes no mean away" if lang == "en" else "RMSNorm 不减均值") in " ".join(text.split())
        await pilot.press("alt+r")
        await settle(pilot)
        assert screen.worked.kind == "layer" and screen.worked.mean == 2.5


async def test_the_calculator_takes_an_rms_models_vector_in_rms_mode(store) -> None:
    gpt = rms_gpt()
    app = make_app(store, gpt=gpt, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        await open_experiment(pilot, "layernorm-calc")
        assert app.screen.worked.kind == "rms"  # opens on the model's own norm
        await pilot.press("alt+r", "alt+m")  # from LayerNorm's mode: the model's vector brings RMSNorm back
        await settle(pilot)
        trace = gpt.run("猫追狗")
        assert app.screen.worked.kind == "rms"
        np.testing.assert_allclose(app.screen.worked.y, trace["blocks.0.ln1.hook_normalized"][-1], atol=1e-5)
        assert "γ 是这个 RMSNorm 的" in screen_text(app)


def test_the_batchnorm_view_of_an_rms_model_says_beta_is_zero() -> None:
    gpt = rms_gpt()
    trace = gpt.run("猫追狗的")
    step = next(s for s in gpt.steps if s.kind == "norm")
    both = both_norms(gpt, trace, step)
    assert both.rms and not both.beta.any()
    assert "β = 0 (an RMSNorm has none)" in describe(both, None, "RMSNorm 1", step.in_hook, "en").source
