"""Sampling the next token: temperature and top-k, the seed, one token more through the KV cache —
on the model, on the learner's `Place`, and on the screen."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import TOKENIZER, VARIANTS, variant_id

import model
from model import sample, sample_rng, sampling_probs, top_k_mask
from tutor.number_style import visible_piece

CAUSAL = [v for v in VARIANTS if v["causal"]]


def assert_same_trace(extended: model.Trace, full: model.Trace) -> None:
    assert extended.tokens == full.tokens and extended.pieces == full.pieces
    assert list(extended.activations) == list(full.activations)  # every hook, in the pass's order
    for name, value in full.activations.items():
        got = extended[name]
        assert got.shape == value.shape and got.dtype == value.dtype == np.float32, name
        scale = max(1.0, float(np.abs(value[np.isfinite(value)]).max()))
        np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-5 * scale, err_msg=name)


# -- GPT.extend: one position more, the rest kept ------------------------------------------------------------


@pytest.mark.parametrize("variant", CAUSAL, ids=variant_id)
def test_extend_by_one_token_equals_the_full_pass_for_every_hook(make_gpt, variant) -> None:
    gpt = make_gpt(**variant)
    ids = TOKENIZER.encode("猫追狗的人")
    trace = gpt.run(ids[:3])
    for n in range(3, len(ids)):
        trace = gpt.extend(trace, ids[n])  # chained: an extended trace extends again
        assert_same_trace(trace, gpt.run(ids[: n + 1]))


@pytest.mark.parametrize("name", ["tiny", "rope", "learned"])
def test_extend_on_the_shipped_models(name) -> None:
    gpt = model.load(name)
    assert gpt.extend_refusal(gpt.run("猫追狗")) is None
    assert_same_trace(gpt.extend(gpt.run("猫追狗"), gpt.tokenizer.encode("的")[0]), gpt.run("猫追狗的"))


def test_extend_keeps_the_gradients_when_the_trace_has_them(make_gpt) -> None:
    gpt = make_gpt()
    ids = TOKENIZER.encode("猫追狗的")
    extended, full = gpt.extend(gpt.run(ids[:3], grads=True), ids[3]), gpt.run(ids, grads=True)
    assert extended.loss == pytest.approx(full.loss, rel=1e-5)
    for name, value in full.grads.items():
        np.testing.assert_allclose(extended[name], value, rtol=1e-4, atol=1e-6, err_msg=name)


def test_extend_refuses_what_the_cache_cannot_do(make_gpt) -> None:
    assert make_gpt(causal=False).extend_refusal(make_gpt(causal=False).run("猫追")) == "not_causal"
    gpt = make_gpt()  # a context of 16
    full = gpt.run([5] * 16)
    assert gpt.extend_refusal(full) == "context_full"
    with pytest.raises(ValueError, match="context_full"):
        gpt.extend(full, 5)
    assert gpt.extend_refusal(gpt.run([5] * 15)) is None


def test_with_bpe_a_token_that_merges_across_the_seam_takes_the_whole_pass(tmp_path) -> None:
    """GPT-2's BPE: "The cat" + a token can re-tokenize into other tokens. Those run the whole pass of the
    new text; the rest extend by one position, and equal the pass of the new text."""
    from test_hf_gpt2 import write_folder

    from tutor.draw_settings import appended

    write_folder(tmp_path / "m")
    gpt = model.load(tmp_path / "m")
    trace = gpt.run("The cat")
    kinds: dict[str | None, int] = {}
    for token in range(gpt.config.vocab_size):
        text, reason = appended(gpt, trace, "The cat", token)
        assert text == "The cat" + gpt.tokenizer.decode([token])
        same = gpt.tokenizer.encode(text) == [*trace.tokens, token]
        assert reason == (None if same else "retokenized")
        kinds[reason] = kinds.get(reason, 0) + 1
        if reason is None and kinds[None] <= 3:
            assert_same_trace(gpt.extend(trace, token), gpt.run(text))
    assert kinds.get(None, 0) > 0 and kinds.get("retokenized", 0) > 0, kinds


# -- temperature, top-k, the draw ------------------------------------------------------------------------------

LOGITS = np.array([2.0, -1.0, 0.5, 3.0, 0.5, -4.0], dtype=np.float32)


def test_sampling_probs_are_the_tempered_softmax_over_the_top_k() -> None:
    for temperature in (0.25, 0.7, 1.0, 2.0):
        for k in (1, 2, 3, None):
            probs = sampling_probs(LOGITS, temperature, k)
            keep = np.argsort(-LOGITS.astype(np.float64), kind="stable")[: k or len(LOGITS)]
            expected = np.zeros(len(LOGITS))
            weights = np.exp(LOGITS[keep].astype(np.float64) / temperature)
            expected[keep] = weights / weights.sum()
            np.testing.assert_allclose(probs, expected, rtol=1e-12)
    np.testing.assert_allclose(sampling_probs(LOGITS, 1.0), model.softmax(LOGITS.astype(np.float64)))
    assert top_k_mask(LOGITS, 3).tolist() == [True, False, True, True, False, False]  # the tie at 0.5: lower id
    rng = np.random.default_rng(3)
    for _ in range(50):  # with many ties: exactly the first k of a stable sort of −z
        logits = rng.integers(-3, 3, size=40).astype(np.float32)
        for k in (1, 2, 5, 13, 39):
            stable = np.argsort(-logits, kind="stable")[:k]
            assert np.flatnonzero(top_k_mask(logits, k)).tolist() == sorted(stable.tolist())
            assert model.top_order(logits, k).tolist() == stable.tolist()


def test_temperature_zero_and_top_k_one_are_the_argmax() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        logits = rng.normal(size=50).astype(np.float32)
        best = int(np.argmax(logits))
        assert sampling_probs(logits, 0.0, None)[best] == 1.0
        assert sample(logits, 0.0, None, rng) == best
        for temperature in (0.5, 1.0, 2.0):
            assert sample(logits, temperature, 1, rng) == best
            assert sampling_probs(logits, temperature, 1)[best] == 1.0


def test_a_fixed_seed_draws_the_same_tokens_twice() -> None:
    logits = np.random.default_rng(1).normal(size=40).astype(np.float32)
    draws = [[sample(logits, 1.5, None, sample_rng(7, n)) for n in range(30)] for _ in range(2)]
    assert draws[0] == draws[1]
    assert len(set(draws[0])) > 3  # a real draw, not the argmax every time
    assert draws[0] != [sample(logits, 1.5, None, sample_rng(8, n)) for n in range(30)]
    assert sample(logits, 1.5, None, sample_rng(7, 12)) == draws[0][12]  # the 12th on its own: the same


# -- the learner's Place and the screen --------------------------------------------------------------------------


def panel_numbers(app) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    """token → (model p, drawn p) as the next-token panel prints them."""
    from helpers import screen_text

    rows = {}
    for line in screen_text(app, "#next").split("\n"):
        cells = line.split()
        if len(cells) >= 5 and cells[0].isdigit() and cells[-1].endswith(("%", "0")):
            rows[cells[1]] = (cells[-2] if cells[-2].endswith("%") else cells[-3], cells[-1])
    return rows


def percent(p: float) -> str:
    return f"{p:.1%}" if p > 0 else "0"


async def test_the_panel_shows_the_recomputed_softmax_as_temperature_and_top_k_change(store) -> None:
    from helpers import make_app, screen_text, settle

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("unembed")
        await pilot.pause()
        logits = app.main.place.trace.logits[-1]
        tokenizer = app.main.place.trace.tokenizer

        def pieces(token: int) -> str:
            return visible_piece(tokenizer.piece(token))

        for keys, temperature, top_k in [
            ((), 1.0, None),
            (("alt+shift+t",), 0.7, None),
            (("alt+shift+k", "alt+shift+k"), 0.7, 10),
            (("alt+t", "alt+t", "alt+t"), 2.0, 10),
            (("alt+shift+k",) * 2, 2.0, 3),
            (("alt+shift+t",) * 9, 0.0, 3),
        ]:
            await pilot.press(*keys)
            await pilot.pause()
            settings = app.main.place.sampling
            assert (settings.temperature, settings.top_k) == (temperature, top_k)
            raw, drawn = sampling_probs(logits, 1.0), sampling_probs(logits, temperature, top_k)
            shown = panel_numbers(app)
            assert len(shown) >= 10
            order = np.argsort(-logits, kind="stable")
            for token in order[: len(shown)]:
                assert shown[pieces(int(token))] == (percent(raw[token]), percent(drawn[token])), (keys, token)
            text = screen_text(app, "#next")
            assert f"T = {temperature:g}" in text
            if temperature == 0:
                assert "T = 0: p = 1 for the likeliest token" in text
            else:
                assert "pᵢ = exp(zᵢ/T) / Σⱼ exp(zⱼ/T)" in text
                assert (f"among the top {top_k} only" if top_k else "j over all") in text


async def test_pilot_the_sample_key_appends_one_token_computing_one_new_position(store) -> None:
    from helpers import make_app, screen_text, settle

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("unembed")
        await pilot.press("alt+shift+t", "alt+shift+k", "alt+shift+k")  # T = 0.7, top-k = 10
        await settle(pilot)
        gpt, before = app.main.place.gpt, app.main.place.trace
        settings = app.main.place.sampling
        assert (settings.temperature, settings.top_k) == (0.7, 10)
        expected = sample(before.logits[-1], settings.temperature, settings.top_k, sample_rng(settings.seed, 0))
        runs: list[str] = []
        original = gpt.run
        gpt.run = lambda *a, **k: runs.append(a[0]) or original(*a, **k)  # type: ignore[method-assign]
        try:
            await pilot.press("alt+n")
            await settle(pilot)
        finally:
            del gpt.run
        assert runs == []  # no full pass: neither for the draw nor for the prompt box's new text
        after = app.main.place.trace
        assert after.tokens == [*before.tokens, expected]
        assert app.main.typed_prompt == app.main.place.prompt == "猫追狗" + gpt.tokenizer.decode([expected])
        assert_same_trace(after, gpt.run(app.main.place.prompt))  # the panels show the new trace, the whole of it
        assert app.main.place.token == 3
        text = screen_text(app)
        assert "KV cache: computed 1 new position (3 kept)" in text
        piece = gpt.tokenizer.piece(expected)
        raw, drawn = (
            sampling_probs(before.logits[-1], 1.0)[expected],
            sampling_probs(before.logits[-1], 0.7, 10)[expected],
        )
        assert f"Draw #1: “{piece}” · model p {raw:.1%} · drawn p {drawn:.1%} (T=0.7, k=10)" in text
        assert f"{raw:.1%}" != f"{drawn:.1%}"
        assert f"After {piece} (position 3)" in text
        assert "0 猫·" in screen_text(app, "#tokens") and f"3 {piece}·" in screen_text(app, "#tokens")


async def test_pilot_in_chinese_and_out_of_the_panel_a_notice_says_it(store) -> None:
    from helpers import make_app, settle

    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("embed")  # the vectors panel: the next-token panel is out of view
        await settle(pilot)
        await pilot.press("alt+n")
        await settle(pilot)
        notices = [n.message for n in app._notifications]
        assert any("KV 缓存：只算了 1 个新位置（沿用 3 个）" in m for m in notices), notices


async def test_pilot_generating_draws_the_seeds_tokens_one_by_one_and_can_be_stopped(store) -> None:
    from helpers import make_app, screen_text, settle

    from tutor.draw_settings import GENERATE_N

    async def generate(stop_after: int | None) -> tuple[list[int], list[int]]:
        app = make_app(store)
        async with app.run_test(size=(120, 40)) as pilot:
            app.main.generate_pause = 0.3  # time for the test to look between the tokens (and to press Esc)
            await pilot.press("ctrl+u", *"猫追狗")
            await settle(pilot)
            start = list(app.main.place.trace.tokens)
            await pilot.press("alt+n")  # one draw first, so the run starts at draw 1
            await settle(pilot)
            await pilot.press("alt+g")
            lengths = []
            progress = set()
            for _ in range(400):
                await pilot.pause(0.05)
                lengths.append(len(app.main.place.trace.tokens))
                progress |= set(re.findall(r"Generating: (\d+) of 10 drawn", screen_text(app, "#next")))
                if stop_after is not None and len(app.main.place.trace.tokens) >= len(start) + 1 + stop_after:
                    await pilot.press("escape")
                    break
                if app.main.place.sampling.generating is None:
                    break
            await settle(pilot)
            await pilot.pause(0.2)
            assert app.main.place.sampling.generating is None
            assert app.main.typed_prompt == app.main.place.prompt  # the box and the trace agree
            assert app.main.place.trace.tokens[: len(start)] == start
            assert len(progress) >= (2 if stop_after is None else 1)  # the run's progress on screen as it goes
            return app.main.place.trace.tokens[len(start) :], lengths

    full, lengths = await generate(None)
    assert len(full) == 1 + GENERATE_N
    assert len(set(lengths)) > 3  # each token came on screen as it was drawn, not all at the end
    again, _ = await generate(None)
    assert again == full  # the same seed, the same tokens
    stopped, _ = await generate(3)
    assert 1 + 3 <= len(stopped) < 1 + GENERATE_N and stopped == full[: len(stopped)]


async def test_pilot_without_the_cache_the_whole_pass_runs_and_the_screen_says_why(
    store, make_gpt, monkeypatch
) -> None:
    from helpers import make_app, screen_text, settle

    gpt = make_gpt(causal=False)  # no causal mask: the old positions would see the new token
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("unembed")
        monkeypatch.setattr(model, "sample", lambda *args: TOKENIZER.encode("的")[0])  # not a lone byte of UTF-8
        await pilot.press("alt+n")
        await settle(pilot)
        assert app.main.place.prompt == "猫追狗的" and len(app.main.place.trace.tokens) == 4
        assert_same_trace(app.main.place.trace, gpt.run(app.main.place.prompt))
        text = screen_text(app)
        assert "no KV cache: computed all 4 positions" in text
        assert "because without a causal mask the old positions see it too" in text


async def test_pilot_a_token_whose_text_tokenizes_otherwise_is_re_cut_and_run_whole(store, monkeypatch) -> None:
    """<|endoftext|> drawn: the prompt is text, and its text is cut into other tokens; the trace stays the text's."""
    from helpers import make_app, screen_text, settle

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        app.main.goto_step_name("unembed")
        gpt = app.main.place.gpt
        monkeypatch.setattr(model, "sample", lambda *args: gpt.tokenizer.end_of_text)
        await pilot.press("alt+n")
        await settle(pilot)
        prompt = "猫追狗" + gpt.tokenizer.decode([gpt.tokenizer.end_of_text])
        assert app.main.typed_prompt == app.main.place.prompt == prompt
        assert app.main.place.trace.tokens == gpt.tokenizer.encode(prompt) != [*gpt.tokenizer.encode("猫追狗"), 0]
        n = len(app.main.place.trace.tokens)
        text = screen_text(app)
        assert f"no KV cache: computed all {n} positions" in text
        assert "because the text with the new token is cut into other tokens" in text


async def test_pilot_wide_the_side_panel_takes_a_second_pass_of_the_same_prompt(store) -> None:
    """ctrl+r runs the same prompt again with its gradients: a new trace of the same tokens (compared by identity)."""
    from helpers import make_app, screen_text, settle

    app = make_app(store)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗", "alt+shift+t")
        await settle(pilot)
        first = app.main.place.trace
        await pilot.press("ctrl+r")
        for _ in range(100):
            await settle(pilot)
            if app.main.place.trace.has_grads:
                break
        assert app.main.place.trace is not first and app.main.place.trace.has_grads
        assert app.main.place.trace.tokens == first.tokens
        assert "T = 0.7" in screen_text(app, "#side-next")
        await pilot.press("alt+n")
        for _ in range(100):  # the pass with gradients may go to a worker
            await settle(pilot)
            if len(app.main.place.trace.tokens) == 4:
                break
        assert app.main.place.trace.has_grads and len(app.main.place.trace.tokens) == 4
        assert "the backward pass still runs over all 4 positions" in screen_text(app, "#side-next")
