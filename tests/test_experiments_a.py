"""The compare, order and drift experiments, driven through the pilot; every number checked against the model."""

from __future__ import annotations

import numpy as np
import pytest
from test_app import make_app, screen_text, settle

import model
from tutor.lessons import parse_link
from tutor.progress import ProgressStore
from tutor.screens.experiments.compare import CompareScreen
from tutor.screens.experiments.drift import DriftScreen, drift, number_text
from tutor.screens.experiments.order import OrderScreen, compare_swap


@pytest.fixture
def store(tmp_path) -> ProgressStore:
    return ProgressStore(tmp_path / "state" / "progress.json")


def screen_line(text: str, first: str) -> list[str]:
    """The fields of the first screen line that starts with the words `first`."""
    for line in text.split("\n"):
        if (line.strip() + " ").startswith(first + " "):
            return line.split()
    raise AssertionError(f"no line starting with {first!r} in\n{text}")


async def open_from_practice_menu(pilot, name: str) -> None:
    """F10, then down to the experiment's entry and Enter: the way a learner opens it."""
    app = pilot.app
    hrefs = [href for _, href in app.practice_items()]
    await pilot.press("f10")
    await settle(pilot)
    await pilot.press(*["down"] * hrefs.index(f"tutor:experiment?name={name}"), "enter")
    await settle(pilot)


# -- drift -------------------------------------------------------------------------------------------


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


# -- order -------------------------------------------------------------------------------------------


def test_the_order_property_holds_in_the_shipped_models() -> None:
    """What the lesson teaches, measured: the verdicts on screen are read off exactly these numbers."""
    nope = model.load("nope")
    ids = nope.tokenizer.encode("猫追狗")
    same, follow = compare_swap(nope.with_config(causal=False), ids, 0, 1)
    assert follow.max() < 1e-4  # no mask, no positions: the outputs permute with the tokens
    same, follow = compare_swap(nope, ids, 0, 1)
    assert same[1, 2] < 1e-4  # causal, no positions: the last position after block 0 is unchanged
    assert same[2, 2] > 0.1  # ... but not after block 1
    tiny = model.load("tiny")
    same, _ = compare_swap(tiny, tiny.tokenizer.encode("猫追狗"), 0, 1)
    assert same[1, 2] > 0.1  # with positions the last position changes in block 0


async def test_order_by_link_shows_the_exact_property_and_follows_the_keys(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.set_prompt("猫追狗")
        await settle(pilot)
        await app.main.follow(parse_link("tutor:experiment?name=order"))
        await settle(pilot)
        assert isinstance(app.screen, OrderScreen)
        nope, tiny = model.load("nope"), model.load("tiny")
        block0 = [nope.run(p)["blocks.0.hook_resid_post"].astype(np.float64) for p in ("猫追狗", "追猫狗")]
        nope_causal, nope_full, tiny_causal, _ = (screen_text(app, f"#run-{n}") for n in range(4))
        assert "OFF-TRAINING" in nope_full and "OFF-TRAINING" not in nope_causal
        assert screen_line(nope_causal, "B0")[1:] == [f"{v:.3f}" for v in np.abs(block0[0] - block0[1]).max(-1)]
        assert screen_line(nope_causal, "B0")[-1] == "0.000" and screen_line(nope_causal, "B1")[-1] != "0.000"
        assert "unchanged through B0; first changes at B1" in " ".join(nope_causal.split())
        assert "first changes at B0" in " ".join(tiny_causal.split())
        assert "permuted" in nope_full and "permuted" not in nope_causal

        await pilot.press("f6")  # follow each token: without mask and positions every number is 0
        await settle(pilot)
        nope_full = screen_text(app, "#run-1")
        for row in ("embed", "B0", "B1", "B2", "B3"):
            assert screen_line(nope_full, row)[1:] == ["0.000"] * 3

        await pilot.press("shift+right")  # the second position moves on: swap 0 ↔ 2, 猫追狗 → 狗追猫
        await settle(pilot)
        assert "狗追猫" in screen_text(app, "#order-swap")
        block2 = [tiny.run(p)["blocks.2.hook_resid_post"].astype(np.float64) for p in ("猫追狗", "狗追猫")]
        moved = np.abs(block2[0] - block2[1][[2, 1, 0]]).max(-1)  # F6 is still on: following the tokens
        tiny_causal = screen_text(app, "#run-2")
        assert screen_line(tiny_causal, "B2")[1:] == [f"{v:.3f}" for v in moved]
        assert "one of the two swapped" in tiny_causal

        await pilot.press("ctrl+u", *"狗")  # one token: nothing to swap, said on the screen
        await settle(pilot)
        assert "at least two tokens" in screen_text(app, "#order-swap")


# -- compare -----------------------------------------------------------------------------------------


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

        await pilot.press("f3")  # the right side moves on to the next shipped model
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
        assert "左边模型" in text and "返回" in text  # the footer speaks the learner's language too
        await pilot.press("ctrl+u")
        await settle(pilot)
        assert "输入提示词" in screen_text(app)


async def test_order_at_80_by_24_keeps_whole_numbers_and_the_swapped_columns(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        prompt = "猫追狗的一是在不了有和人这中"  # more tokens than columns fit (人 is three byte tokens)
        last = len(model.load("tiny").tokenizer.encode(prompt)) - 1
        app.main.set_prompt(prompt)
        await settle(pilot)
        app.open_experiment("order")
        await settle(pilot)
        await pilot.press("alt+left")  # the first position wraps round to the last token
        await settle(pilot)
        assert f"swap positions {last} ↔ 1" in screen_text(app, "#order-swap")
        panel = screen_text(app, "#run-0")
        header = screen_line(panel, "0")
        assert "1" in header and str(last) in header  # both swapped positions keep their columns
        for row in ("embed", "B0", "B3"):
            fields = screen_line(panel, row)[1:]
            assert all(len(f.split(".")[1]) == 3 for f in fields), fields  # whole numbers, never cut with "…"
