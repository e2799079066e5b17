"""The order experiment: swapping two tokens swaps the rows of every position-free step, exactly."""

from __future__ import annotations

import numpy as np
from helpers import make_app, screen_line, screen_text, settle

import model
from tutor.lessons.links import parse_link
from tutor.screens.experiments.order import OrderScreen, compare_swap


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
        await app.follow(parse_link("tutor:experiment?name=order"))
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
