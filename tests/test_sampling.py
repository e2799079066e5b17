"""Sampling the next token: temperature and top-k, the seed, one token more through the KV cache —
on the model, on the learner's `Place`, and on the screen."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import TOKENIZER, VARIANTS, variant_id

import model
from model import sample, sample_rng, sampling_probs, top_k_mask

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
