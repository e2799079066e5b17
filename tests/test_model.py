"""The whole model: every variant runs, records every hook, and agrees with independent computations."""

from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest
from helpers import TOKENIZER, VARIANTS, random_params, small_config, variant_id

import model
from model import GPT, ContextError, GPTConfig


def expected_hooks(cfg: GPTConfig, n: int) -> dict[str, tuple[int, ...]]:
    """Every hook a model wired as `cfg` must record for n tokens, with its shape (written from the spec)."""
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    hooks: dict[str, tuple[int, ...]] = {"hook_embed": (n, d)}
    if cfg.positional in ("sinusoidal", "learned"):
        hooks["hook_pos_embed"] = (n, d)

    def norm(prefix: str) -> None:
        hooks.update(
            {
                prefix + ".hook_mean": (n, 1),
                prefix + ".hook_scale": (n, 1),
                prefix + ".hook_xhat": (n, d),
                prefix + ".hook_normalized": (n, d),
            }
        )

    for i in range(cfg.n_layers):
        b = f"blocks.{i}."
        hooks[b + "hook_resid_pre"] = (n, d)
        for sub, ln in (("attn", "ln1"), ("mlp", "ln2")):
            if cfg.norm != "none":
                norm(b + ln)
            if sub == "attn":
                hooks.update(
                    {
                        b + "attn.hook_q": (n, h, dh),
                        b + "attn.hook_k": (n, h, dh),
                        b + "attn.hook_v": (n, h, dh),
                        b + "attn.hook_attn_scores": (h, n, n),
                        b + "attn.hook_pattern": (h, n, n),
                        b + "attn.hook_z": (n, h, dh),
                    }
                )
                if cfg.positional == "rope":
                    hooks.update({b + "attn.hook_rot_q": (n, h, dh), b + "attn.hook_rot_k": (n, h, dh)})
            else:
                hooks.update({b + "mlp.hook_pre": (n, cfg.d_mlp), b + "mlp.hook_post": (n, cfg.d_mlp)})
            hooks[b + f"hook_{sub}_out"] = (n, d)
            if cfg.norm == "post" and cfg.residual:
                hooks[b + f"hook_{sub}_add"] = (n, d)
        hooks[b + "hook_resid_mid"] = (n, d)
        hooks[b + "hook_resid_post"] = (n, d)
    if cfg.norm == "pre":
        norm("ln_final")
    hooks["logits"] = (n, cfg.vocab_size)
    return hooks


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_every_variant_records_every_hook_in_float32(make_gpt, variant) -> None:
    gpt = make_gpt(**variant)
    trace = gpt.run("猫追狗的人")
    expected = expected_hooks(gpt.config, 5)
    assert set(trace.hook_names) == set(expected)
    for name, shape in expected.items():
        assert trace[name].shape == shape, name
        assert trace[name].dtype == np.float32, name
        assert np.isfinite(trace[name]).all() or name.endswith("hook_attn_scores"), name
    for step in trace.steps:  # every step reads and writes hooks that exist
        assert step.in_hook in trace and step.out_hook in trace
        assert step.added_hook is None or step.added_hook in trace


def test_tiny_trace_names_follow_transformerlens(tiny) -> None:
    trace = tiny.run("猫追狗")
    assert trace["hook_embed"].shape == (3, 64)
    assert trace["blocks.0.attn.hook_pattern"].shape == (4, 3, 3)
    assert trace["blocks.3.ln2.hook_scale"].shape == (3, 1)
    assert trace.logits.shape == (3, tiny.config.vocab_size)
    assert trace.tokens == tiny.tokenizer.encode("猫追狗") and trace.pieces == ["猫", "追", "狗"]
    resid = trace["blocks.0.hook_resid_pre"]
    assert resid == pytest.approx(trace["hook_embed"] + trace["hook_pos_embed"])
    ln = trace["blocks.0.ln1" + ".hook_scale"]
    assert ln[:, 0] == pytest.approx(np.sqrt(resid.var(axis=-1) + 1e-5), rel=1e-5)
    with pytest.raises(KeyError, match="did you mean"):
        trace["blocks.0.attn.hook_patern"]


def _steps(**variant) -> list[tuple[str, str, str]]:
    return [(s.name, s.in_hook, s.out_hook) for s in model.build_steps(small_config(n_layers=1, **variant))]


def test_steps_of_a_pre_norm_block() -> None:
    assert [name for name, _, _ in _steps()] == [
        "embed",
        "blocks.0.ln1",
        "blocks.0.attn",
        "blocks.0.attn_add",
        "blocks.0.ln2",
        "blocks.0.mlp",
        "blocks.0.mlp_add",
        "ln_final",
        "unembed",
    ]


def test_steps_of_a_post_norm_block_put_the_norm_after_the_add() -> None:
    assert _steps(norm="post") == [
        ("embed", "hook_embed", "blocks.0.hook_resid_pre"),
        ("blocks.0.attn", "blocks.0.hook_resid_pre", "blocks.0.hook_attn_out"),
        ("blocks.0.attn_add", "blocks.0.hook_resid_pre", "blocks.0.hook_attn_add"),
        ("blocks.0.ln1", "blocks.0.hook_attn_add", "blocks.0.ln1.hook_normalized"),
        ("blocks.0.mlp", "blocks.0.hook_resid_mid", "blocks.0.hook_mlp_out"),
        ("blocks.0.mlp_add", "blocks.0.hook_resid_mid", "blocks.0.hook_mlp_add"),
        ("blocks.0.ln2", "blocks.0.hook_mlp_add", "blocks.0.ln2.hook_normalized"),
        ("unembed", "blocks.0.hook_resid_post", "logits"),
    ]


def test_steps_without_residual_or_norm() -> None:
    assert [n for n, _, _ in _steps(residual=False)] == [
        "embed",
        "blocks.0.ln1",
        "blocks.0.attn",
        "blocks.0.ln2",
        "blocks.0.mlp",
        "ln_final",
        "unembed",
    ]
    assert [n for n, _, _ in _steps(norm="none", positional="rope")] == [
        "embed",
        "blocks.0.attn",
        "blocks.0.attn_add",
        "blocks.0.mlp",
        "blocks.0.mlp_add",
        "unembed",
    ]


def test_steps_have_known_kinds(tiny) -> None:
    for step in tiny.steps:  # their words are tutor/'s: tests/test_step_words.py
        assert step.kind in model.trace.STEP_KINDS


# -- the blocks against an independent few-line computation ----------------------------------


def reference_logits(gpt: GPT, tokens: list[int]) -> np.ndarray:
    """The forward pass in float64, written out plainly, head by head."""
    cfg, p = gpt.config, {k: v.astype(np.float64) for k, v in gpt.params.items()}
    n, d, dh = len(tokens), cfg.d_model, cfg.d_head

    def ln(x: np.ndarray, name: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + cfg.ln_eps) * p[name + ".g"] + p[name + ".b"]

    def attn(x: np.ndarray, b: str) -> np.ndarray:
        qkv = x @ p[b + "attn.w_qkv"] + p[b + "attn.b_qkv"]
        heads = []
        for h in range(cfg.n_heads):
            q, k, v = (qkv[:, j * d + h * dh : j * d + (h + 1) * dh] for j in range(3))
            s = q @ k.T / math.sqrt(dh)
            s = np.where(np.tril(np.ones((n, n))) > 0, s, -1e30) if cfg.causal else s
            w = np.exp(s - s.max(-1, keepdims=True))
            heads.append((w / w.sum(-1, keepdims=True)) @ v)
        return np.concatenate(heads, axis=-1) @ p[b + "attn.w_out"] + p[b + "attn.b_out"]

    def ff(x: np.ndarray, b: str) -> np.ndarray:
        a = x @ p[b + "mlp.w_in"] + p[b + "mlp.b_in"]
        a = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
        return a @ p[b + "mlp.w_out"] + p[b + "mlp.b_out"]

    pos = np.arange(n)[:, None] / cfg.pos_base ** (2 * (np.arange(d) // 2) / d)
    pe = np.where(np.arange(d) % 2 == 0, np.sin(pos), np.cos(pos))
    x = p["wte"][tokens] + pe
    for i in range(cfg.n_layers):
        b = f"blocks.{i}."
        if cfg.norm == "pre" and cfg.residual:
            x = x + attn(ln(x, b + "ln1"), b)
            x = x + ff(ln(x, b + "ln2"), b)
        elif cfg.norm == "pre":
            x = attn(ln(x, b + "ln1"), b)
            x = ff(ln(x, b + "ln2"), b)
        elif cfg.norm == "post" and cfg.residual:
            x = ln(x + attn(x, b), b + "ln1")
            x = ln(x + ff(x, b), b + "ln2")
        else:
            raise AssertionError("not a wiring this reference covers")
    if cfg.norm == "pre":
        x = ln(x, "ln_final")
    return x @ p["wte"].T


@pytest.mark.parametrize(
    "wiring",
    [dict(norm="pre"), dict(norm="post"), dict(norm="pre", residual=False), dict(norm="pre", causal=False)],
    ids=["pre-norm", "post-norm", "no-residual", "no-mask"],
)
def test_blocks_match_an_independent_computation(make_gpt, wiring) -> None:
    gpt = make_gpt(**wiring)
    tokens = TOKENIZER.encode("猫追狗的人在")
    ours = gpt.run(tokens).logits
    assert np.abs(ours - reference_logits(gpt, tokens)).max() < 1e-4 * max(1.0, np.abs(ours).max())


def test_the_reference_notices_a_wrong_wiring(make_gpt) -> None:
    pre, post = make_gpt(norm="pre"), make_gpt(norm="post")
    tokens = TOKENIZER.encode("猫追狗")
    assert np.abs(pre.run(tokens).logits - reference_logits(post, tokens)).max() > 1e-2


# -- what attention can and cannot see -------------------------------------------------------


def test_without_positions_or_mask_permuting_the_input_permutes_every_output(make_gpt) -> None:
    gpt = make_gpt(positional="none", causal=False)
    text = "猫追狗的人在"
    perm = np.array([3, 0, 5, 1, 4, 2])
    plain, shuffled = gpt.run(text), gpt.run("".join(text[i] for i in perm))
    for name in plain.hook_names:
        a, b = plain[name], shuffled[name]
        if name.endswith(("hook_pattern", "hook_attn_scores")):  # [head, q, k]: both axes move
            assert b == pytest.approx(a[:, perm][:, :, perm], abs=1e-5), name
        else:
            assert b == pytest.approx(a[perm], abs=1e-5), name


@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rope"])
def test_with_positions_the_order_shows(make_gpt, positional) -> None:
    gpt = make_gpt(positional=positional, causal=False)
    a, b = gpt.run("猫追狗"), gpt.run("狗追猫")
    assert np.abs(a.logits[[2, 1, 0]] - b.logits).max() > 1e-3


def _same_last_row(a, b, names) -> list[str]:
    return [n for n in names if not np.allclose(a[n][-1], b[n][-1], atol=1e-5)]


def test_with_mask_and_no_positions_one_layer_sees_only_the_set_before_the_last_token(make_gpt) -> None:
    gpt = make_gpt(positional="none", causal=True, n_layers=1)
    a, b = gpt.run("猫追狗"), gpt.run("追猫狗")
    rows = [n for n in a.hook_names if not n.endswith(("hook_pattern", "hook_attn_scores"))]
    assert _same_last_row(a, b, rows) == []
    assert np.abs(a.logits[0] - b.logits[0]).max() > 1e-3  # earlier positions do differ
    # how much of each token a position sees still leaks in: 猫 after {狗, 猫} is not 猫 after {狗, 猫, 猫}
    c = gpt.run("狗猫猫")
    assert np.abs(c.logits[2] - c.logits[1]).max() > 1e-3


def test_with_mask_and_no_positions_deeper_blocks_can_tell_the_order(make_gpt) -> None:
    """Block 1 reads the earlier positions' block-0 outputs, and those saw different prefixes:
    from the second block on, the last position's output depends on the order after all."""
    gpt = make_gpt(positional="none", causal=True, n_layers=2)
    a, b = gpt.run("猫追狗"), gpt.run("追猫狗")
    block0 = [n for n in a.hook_names if n.startswith("blocks.0.") and not n.endswith(("pattern", "scores"))]
    assert _same_last_row(a, b, block0) == []
    assert "blocks.1.hook_attn_out" in _same_last_row(a, b, ["blocks.1.hook_attn_out"])
    assert np.abs(a.logits[-1] - b.logits[-1]).max() > 1e-3


def test_with_mask_and_positions_the_order_before_the_last_token_matters(make_gpt) -> None:
    gpt = make_gpt(positional="sinusoidal", causal=True)
    assert np.abs(gpt.run("猫追狗").logits[-1] - gpt.run("追猫狗").logits[-1]).max() > 1e-3


# -- KV cache and generation -----------------------------------------------------------------


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v["causal"]], ids=variant_id)
def test_kv_cache_token_by_token_matches_the_full_pass(make_gpt, variant) -> None:
    gpt = make_gpt(**variant)
    tokens = np.array(TOKENIZER.encode("猫追狗的人在中国大"))
    full = gpt.forward(tokens)
    cache = gpt.new_cache()
    steps = [gpt.forward(tokens[i : i + 1], cache)[0] for i in range(len(tokens))]
    rounding = 1e-5 * max(1.0, np.abs(full).max() / 10)  # float32: one token or nine take other BLAS kernels
    assert np.abs(np.stack(steps) - full).max() <= rounding
    chunked = gpt.new_cache()
    parts = [gpt.forward(tokens[:4], chunked), gpt.forward(tokens[4:], chunked)]
    assert np.abs(np.concatenate(parts) - full).max() <= rounding
    assert chunked.length == len(tokens)


def test_kv_cache_refuses_to_overflow_and_non_causal_models(make_gpt) -> None:
    gpt = make_gpt()
    cache = gpt.new_cache()
    gpt.forward(np.zeros(16, dtype=np.intp), cache)
    with pytest.raises(ContextError):
        gpt.forward(np.zeros(1, dtype=np.intp), cache)
    with pytest.raises(ValueError, match="causal"):
        make_gpt(causal=False).new_cache()


def test_generate_is_seeded_and_reproducible(tiny, make_gpt) -> None:
    first = tiny.generate("猫追", 12, temperature=1.0, top_k=20, seed=7)
    assert first == tiny.generate("猫追", 12, temperature=1.0, top_k=20, seed=7)
    assert first != tiny.generate("猫追", 12, temperature=1.0, top_k=20, seed=8)
    gpt = make_gpt()
    greedy = gpt.generate("猫", 40, temperature=0)  # runs past the 16-token context: the window slides
    assert greedy == gpt.generate("猫", 40, temperature=0)
    assert len(TOKENIZER.encode(greedy)) >= 1
    assert make_gpt(causal=False).generate("猫", 20, temperature=0.8, seed=1)


def test_generate_draws_token_n_as_the_app_does(tiny) -> None:
    """Token n comes from `sample_rng(seed, n)`, the app's rule for its n-th draw (tutor/screens/main.py)."""
    from model import sample, sample_rng

    tokens = tiny.tokenizer.encode("猫追")
    for n in range(6):
        tokens.append(sample(tiny.run(tokens).logits[-1], 1.0, 20, sample_rng(7, n)))
    assert tiny.generate("猫追", 6, temperature=1.0, top_k=20, seed=7) == tiny.tokenizer.decode(tokens[2:])


def test_greedy_generation_follows_the_full_pass(make_gpt) -> None:
    gpt = make_gpt()
    tokens = TOKENIZER.encode("猫追")
    for _ in range(20):  # past the context of 16: the window slides
        tokens.append(int(np.argmax(gpt.run(tokens[-16:]).logits[-1])))
    assert gpt.generate("猫追", 20, temperature=0) == TOKENIZER.decode(tokens[2:])


# -- prompts at the edges ----------------------------------------------------------------------


def test_long_prompt_keeps_the_last_tokens_that_fit(make_gpt) -> None:
    gpt = make_gpt()
    trace = gpt.run("猫" * 10 + "追狗的人在中国大我们")
    assert trace.dropped == 4 and len(trace.tokens) == 16
    assert TOKENIZER.decode(trace.tokens).endswith("中国大我们")


def test_empty_prompt_gives_an_empty_trace(tiny) -> None:
    trace = tiny.run("")
    assert trace.tokens == [] and trace.logits.shape == (0, tiny.config.vocab_size)
    assert trace["blocks.0.attn.hook_pattern"].shape == (4, 0, 0)
    assert trace.top_k() == []


def test_token_ids_outside_the_vocabulary_are_refused(tiny) -> None:
    with pytest.raises(model.TokenizerError, match="outside the vocabulary"):
        tiny.run([1, 2, tiny.config.vocab_size])


def test_changed_base_is_a_new_wiring_over_the_same_weights(tiny) -> None:
    other = tiny.with_config(pos_base=10.0)
    assert other.params is tiny.params
    assert np.abs(other.run("猫追狗")["hook_pos_embed"] - tiny.run("猫追狗")["hook_pos_embed"]).max() > 0.1


def test_parameters_must_be_float32() -> None:
    config = small_config()
    params = {k: v.astype(np.float64) if k == "wte" else v for k, v in random_params(config).items()}
    with pytest.raises(ValueError, match="wte is float64"):
        GPT(config, params, TOKENIZER)


def test_configs_that_cannot_work_are_refused() -> None:
    with pytest.raises(model.ConfigError, match="n_heads"):
        small_config(d_model=10, n_heads=3)
    with pytest.raises(model.ConfigError, match="positional"):
        small_config(positional="alibi")
    with pytest.raises(model.ConfigError, match="even head size"):
        small_config(d_model=6, n_heads=2, positional="rope")


@pytest.mark.parametrize("variant", [VARIANTS[0], dict(positional="learned", norm="post", residual=True, causal=True)])
def test_weights_laid_out_for_openblas_change_no_number(monkeypatch, variant) -> None:
    from model import layout

    config = small_config(**variant)
    params = random_params(config)
    small = GPT(config, params, TOKENIZER)  # tiny's layout: only W_Eᵀ gets a contiguous copy
    monkeypatch.setattr(layout, "MIN_ELEMENTS", 1)
    big = GPT(config, params, TOKENIZER)  # GPT-2's layout: every matrix turned round
    w_in = big._weights["blocks.0.mlp.w_in"]
    assert isinstance(w_in, layout.WeightMatrix) and w_in.T.flags.c_contiguous
    assert w_in.shape == params["blocks.0.mlp.w_in"].shape and np.array_equal(w_in, params["blocks.0.mlp.w_in"])
    assert small._weights["blocks.0.mlp.w_in"] is params["blocks.0.mlp.w_in"]  # small matrices stay as they are
    assert big.params["blocks.0.mlp.w_in"] is params["blocks.0.mlp.w_in"]  # the raw parameters, as given
    for gpt in (small, big):
        wte = gpt._weights["wte"]
        assert isinstance(wte, layout.TokenEmbedding) and np.shares_memory(wte, params["wte"])
        assert np.array_equal(wte.T, params["wte"].T) and type(wte[[3, 4]]) is np.ndarray
        assert np.array_equal((wte * 2).T, 2 * params["wte"].T)  # a derived array has no stale transpose
    ours, theirs = big.run("猫追狗的一是"), small.run("猫追狗的一是")
    assert list(ours.activations) == list(theirs.activations)
    for name, value in ours.activations.items():
        assert type(value) is np.ndarray and value.dtype == np.float32, name
        np.testing.assert_allclose(value, theirs[name], rtol=1e-5, atol=1e-5, err_msg=name)  # float32 rounding
    assert big.generate("猫", 6, temperature=0) == small.generate("猫", 6, temperature=0)
    assert big.with_config(pos_base=10.0)._weights["blocks.0.mlp.w_in"] is w_in  # turned once, not again


def test_a_dropped_trace_frees_its_arrays_without_the_garbage_collector(tiny) -> None:
    """A trace's arrays go when the trace goes (a keystroke's pass reuses the memory of the last one),
    not when Python's cycle collector comes round; with gradients and after `extend` too."""
    gc.disable()
    try:
        for make in (
            lambda: tiny.run("hello"),
            lambda: tiny.run("hello", grads=True),
            lambda: tiny.extend(tiny.run("hell"), 3),
        ):
            trace = make()
            kept = weakref.ref(trace["blocks.0.mlp.hook_pre"])
            del trace
            assert kept() is None
    finally:
        gc.enable()
