"""The compare experiment: two models side by side on one prompt, every number checked against the model."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_app, open_from_practice_menu, screen_line, screen_text, settle

import model
from tutor.screens.experiments.compare import CompareScreen


async def test_compare_shows_both_models_numbers_and_follows_model_and_prompt_changes(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.set_prompt("猫追狗")
        await settle(pilot)
        await open_from_practice_menu(pilot, "compare")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        tiny, post = model.load("tiny").run("猫追狗"), model.load("postnorm").run("猫追狗")

        def norm_value(trace, hook: str, token: int = 2) -> float:
            return float(np.linalg.norm(trace[hook][token].astype(np.float64)))

        def norm(trace, hook: str, token: int = 2) -> str:
            return f"{norm_value(trace, hook, token):.2f}"

        residual = screen_text(app, "#compare-residual")
        fields = screen_line(residual, "embed")
        assert norm(tiny, "blocks.0.hook_resid_pre") in fields and norm(post, "blocks.0.hook_resid_pre") in fields
        row = " ".join(screen_line(residual, "B3 mlp"))  # tiny, postnorm and their ratio
        tiny_norm = norm_value(tiny, "blocks.3.hook_resid_post")
        post_norm = norm_value(post, "blocks.3.hook_resid_post")
        assert f"{tiny_norm:.2f}" in row and f"{post_norm:.2f}" in row
        assert f"×{post_norm / tiny_norm:.2f}" in row

        norms = screen_text(app, "#compare-norms")
        x = tiny["blocks.1.hook_resid_pre"][2].astype(np.float64)
        assert screen_line(norms, "B1 ln1")[2:4] == [f"{x.mean():+.3f}", f"{x.std():.3f}"]
        assert screen_line(norms, "ln_final")[-2:] == ["—", "—"]  # post-norm has no final LayerNorm

        guesses = screen_text(app, "#compare-next")
        assert tiny.top_k(1)[0][1] in screen_line(guesses, "1")[1]
        assert f"{post.top_k(1)[0][2]:.1%}" in screen_line(guesses, "1")

        await pilot.press("shift+down")  # the right side moves on to the next shipped model
        await settle(pilot)
        names = screen.names
        assert screen.chosen[1] == names[(names.index("postnorm") + 1) % len(names)]
        screen.query_one("#compare-right").value = "nonorm"
        await settle(pilot)
        assert "nonorm — no LayerNorm" in screen_text(app, "#compare-norms")

        await pilot.press("ctrl+u", *"狗追", "alt+left")  # a new prompt, and the first token
        await settle(pilot)
        nonorm = model.load("nonorm").run("狗追")
        assert "token 0 狗" in screen_text(app, "#compare-token")
        fields = screen_line(screen_text(app, "#compare-residual"), "embed")
        assert norm(nonorm, "blocks.0.hook_resid_pre", 0) in fields


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_compare_describes_each_wiring_as_a_person_would(store, lang: str) -> None:
    """noresidual's line writes no "x +" (it has no residual); nope's says it has no positional encoding."""
    app = make_app(store, gpt=model.load("noresidual"), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_experiment("compare")
        await settle(pilot)
        app.screen.query_one("#compare-right").value = "nope"
        await settle(pilot)
        lines = screen_text(app, "#compare-summary").split("\n")
        noresidual = next(line for line in lines if line.strip().startswith("noresidual"))
        nope = next(line for line in lines if line.strip().startswith("nope"))
        assert "pre-norm F(LN(x))" in noresidual and "x +" not in noresidual
        assert ("NO residual" if lang == "en" else "没有残差") in noresidual
        assert ("no positional encoding" if lang == "en" else "没有位置编码") in nope
        assert "none" not in nope and "pre-norm x + F(LN(x))" in nope


async def test_compare_at_80_by_24_and_in_chinese(store) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_experiment("compare")
        await settle(pilot)
        text = screen_text(app)
        assert "残差流的 ‖x‖" in text and "postnorm" in text
        assert "左模型" in text and "右模型" in text and "返回" in text  # the footer speaks the learner's language too
        await pilot.press("ctrl+u")
        await settle(pilot)
        assert "输入提示词" in screen_text(app)


async def test_a_deeper_model_beside_a_shallow_one_shows_all_its_blocks(store) -> None:
    """tiny (4 blocks) beside deep-postnorm-nowarmup (16): only B0–B3 were shown, "largest difference" was
    taken over those without saying so, and the picker cut the name at 13 characters."""
    app = make_app(store)
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        app.main.set_prompt("猫追狗")
        await settle(pilot)
        await open_from_practice_menu(pilot, "compare")
        screen = app.screen
        screen.query_one("#compare-right").value = "deep-postnorm-nowarmup"
        await settle(pilot)
        assert "deep-postnorm-nowarmup" in screen_text(app, "#compare-right")  # the whole name in the picker
        residual = screen_text(app, "#compare-residual")
        deep = model.load("deep-postnorm-nowarmup").run("猫追狗")
        row = screen_line(residual, "B15 mlp")
        assert row[2] == "—" and f"{np.linalg.norm(deep['blocks.15.hook_resid_post'][2]):.2f}" in row
        assert screen_line(residual, "B15 mlp")[-1] == "—"  # no ratio where the left has no point
        summary = " ".join(screen_text(app, "#compare-summary").split())
        assert "at the 9 points both models have" in summary  # embed + 4 blocks × (attn, mlp)
        assert "deep-postnorm-nowarmup has 16 blocks, the other 4" in summary


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compare_says_rmsnorm_for_an_rms_model_and_nothing_more_for_layernorm(lang: str) -> None:
    from tutor.screens.experiments.compare import wiring

    rms, layer = wiring(model.load("rmsnorm"), lang), wiring(model.load("tiny"), lang)
    assert "RMSNorm" in rms and "F(LN(x))" in rms
    assert "RMSNorm" not in layer and "F(LN(x))" in layer


@pytest.mark.parametrize(
    ("lang", "words"), [("en", "base 500000, Llama 3 scaling ×8"), ("zh", "base 500000，Llama 3 缩放 ×8")]
)
def test_compare_names_a_scaled_rope(lang: str, words: str) -> None:
    from helpers import TOKENIZER, random_params, small_config

    from tutor.screens.experiments.compare import wiring

    cfg = small_config(positional="rope", pos_base=5e5, rope_scaling="llama3", rope_factor=8.0)
    assert words in wiring(model.GPT(cfg, random_params(cfg), TOKENIZER), lang)
    plain = small_config(positional="rope", pos_base=5e5)
    assert "scaling" not in wiring(model.GPT(plain, random_params(plain), TOKENIZER), "en")
