"""Interventions (`gpt.run(prompt, edits=[…])`) and patching sweeps, each against a computation of its own.

An edit is checked against another way to the same numbers: a head zeroed against W_O's rows for it zeroed,
every residual add dropped against the model wired without residuals, every LayerNorm bypassed against the
model wired without norms, a patch of every position against the source run itself. The backward pass of
an edited run is checked against central differences, in float64, as tests/test_backward.py checks the clean one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from helpers import TOKENIZER, random_params, small_config

import model
from model import backward as bw
from model.attention import multi_head_attention
from model.interventions import (
    PATCHABLE,
    AblateHead,
    BypassNorm,
    DropResidual,
    Edit,
    EditError,
    Patch,
    ScaleHead,
    SkipSublayer,
    edited,
    plan_edits,
)
from model.norm import layer_norm
from model.patching import head_grid, logit_difference, patched_difference, resid_pre_grid, restored_fraction

TOKENS = [3, 1, 4, 1, 5, 9, 2]
OTHER = [2, 7, 1, 8, 2, 8, 1]


def f64(seed: int = 0, **variant: object) -> model.GPT:
    """A small float64 model with weights big enough that every piece matters."""
    config = small_config(**{"n_ctx": 8, "d_model": 8, "n_heads": 2, "n_layers": 2, "d_mlp": 16, **variant})
    params = {name: value.astype(np.float64) for name, value in random_params(config, seed).items()}
    return model.GPT(config, params, TOKENIZER, lay_out=False, dtype=np.float64)


def rewired(gpt: model.GPT, **changes: object) -> model.GPT:
    """The same weights under another wiring (a model without norms has no γ, β)."""
    config = replace(gpt.config, **changes)
    params = {name: value for name, value in gpt.params.items() if name in model.parameter_shapes(config)}
    return model.GPT(config, params, gpt.tokenizer, lay_out=False, dtype=np.float64)


def changed(gpt: model.GPT, **params: np.ndarray) -> model.GPT:
    """`gpt` with some parameters replaced (the others shared)."""
    return model.GPT(gpt.config, {**gpt.params, **params}, gpt.tokenizer, lay_out=False, dtype=np.float64)


def head_rows(gpt: model.GPT, head: int) -> slice:
    d_head = gpt.config.d_head
    return slice(head * d_head, (head + 1) * d_head)


def close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- each edit against an independent computation ------------------------------------------------------------------


def test_zero_ablating_a_head_is_zeroing_its_rows_of_w_o() -> None:
    gpt = f64()
    w_out = gpt.params["blocks.1.attn.w_out"].copy()
    w_out[head_rows(gpt, 1)] = 0.0
    close(
        gpt.run(TOKENS, edits=[AblateHead(1, 1)]).logits,
        changed(gpt, **{"blocks.1.attn.w_out": w_out}).run(TOKENS).logits,
    )


def test_ablating_a_head_at_some_positions_takes_its_share_out_of_those_rows_only() -> None:
    gpt = f64()
    clean = gpt.run(TOKENS)
    run = gpt.run(TOKENS, edits=[AblateHead(0, 0, positions=(2, -1))])
    share = clean["blocks.0.attn.hook_z"][:, 0] @ gpt.params["blocks.0.attn.w_out"][head_rows(gpt, 0)]
    expected = clean["blocks.0.hook_attn_out"].copy()
    expected[[2, 6]] -= share[[2, 6]]
    close(run["blocks.0.hook_attn_out"], expected)
    assert np.all(run["blocks.0.attn.hook_z"][[2, 6], 0] == 0.0)
    close(run["blocks.0.attn.hook_z"][[0, 1, 3, 4, 5]], clean["blocks.0.attn.hook_z"][[0, 1, 3, 4, 5]])


def test_mean_ablation_is_the_mean_through_w_o_in_the_bias() -> None:
    gpt = f64()
    reference = gpt.run(OTHER)
    mean = reference["blocks.0.attn.hook_z"][:, 1].mean(axis=0)
    w_out, b_out = gpt.params["blocks.0.attn.w_out"].copy(), gpt.params["blocks.0.attn.b_out"]
    b_out = b_out + mean @ w_out[head_rows(gpt, 1)]
    w_out[head_rows(gpt, 1)] = 0.0
    expected = changed(gpt, **{"blocks.0.attn.w_out": w_out, "blocks.0.attn.b_out": b_out}).run(TOKENS).logits
    close(gpt.run(TOKENS, edits=[AblateHead(0, 1, mean_from=reference)]).logits, expected)


def test_scaling_a_head_is_scaling_its_rows_of_w_o() -> None:
    gpt = f64()
    w_out = gpt.params["blocks.0.attn.w_out"].copy()
    w_out[head_rows(gpt, 0)] *= 2.5
    close(
        gpt.run(TOKENS, edits=[ScaleHead(0, 0, 2.5)]).logits,
        changed(gpt, **{"blocks.0.attn.w_out": w_out}).run(TOKENS).logits,
    )


@pytest.mark.parametrize("sublayer", ["attn", "mlp"])
def test_skipping_a_sublayer_is_zeroing_its_output_weights(sublayer: str) -> None:
    gpt = f64()
    zeros = {
        f"blocks.1.{sublayer}.{w}": np.zeros_like(gpt.params[f"blocks.1.{sublayer}.{w}"]) for w in ("w_out", "b_out")
    }
    run = gpt.run(TOKENS, edits=[SkipSublayer(1, sublayer)])
    close(run.logits, changed(gpt, **zeros).run(TOKENS).logits)
    assert np.all(run[f"blocks.1.hook_{sublayer}_out"] == 0.0)


def test_dropping_one_residual_add_makes_the_stream_the_sublayer_output() -> None:
    gpt = f64()
    run = gpt.run(TOKENS, edits=[DropResidual(0, "attn")])
    p, x = gpt.params, run["blocks.0.hook_resid_pre"]
    h = layer_norm(x, p["blocks.0.ln1.g"], p["blocks.0.ln1.b"])
    f = multi_head_attention(
        h, p["blocks.0.attn.w_qkv"], p["blocks.0.attn.b_qkv"], p["blocks.0.attn.w_out"], p["blocks.0.attn.b_out"], 2
    )
    close(run["blocks.0.hook_resid_mid"], f)  # y = F(LN(x)), no x +
    close(run["blocks.0.hook_resid_post"], f + run["blocks.0.hook_mlp_out"])  # the MLP's add is still there


@pytest.mark.parametrize("norm", ["pre", "post", "none"])
def test_dropping_every_residual_add_is_the_model_wired_without_residuals(norm: str) -> None:
    gpt = f64(norm=norm)
    drops: list[Edit] = [DropResidual(i, s) for i in range(2) for s in ("attn", "mlp")]
    close(gpt.run(TOKENS, edits=drops).logits, rewired(gpt, residual=False).run(TOKENS).logits)


def test_bypassing_every_layer_norm_is_the_model_wired_without_norms() -> None:
    gpt = f64()
    bypass: list[Edit] = [BypassNorm(f"blocks.{i}.{ln}") for i in range(2) for ln in ("ln1", "ln2")]
    run = gpt.run(TOKENS, edits=[*bypass, BypassNorm("ln_final")])
    close(run.logits, rewired(gpt, norm="none").run(TOKENS).logits)
    assert np.array_equal(run["blocks.1.ln2.hook_normalized"], run["blocks.1.hook_resid_mid"])  # LN(x) = x exactly


def test_a_layer_norm_frozen_from_its_own_run_changes_nothing() -> None:
    gpt = f64(norm="post")
    clean = gpt.run(TOKENS)
    close(gpt.run(TOKENS, edits=[BypassNorm("blocks.0.ln1", frozen_from=clean)]).logits, clean.logits)


def test_a_layer_norm_frozen_from_another_prompt_uses_that_prompts_mean_and_scale() -> None:
    gpt = f64()
    other = gpt.run(OTHER)
    run = gpt.run(TOKENS, edits=[BypassNorm("blocks.1.ln2", frozen_from=other)])
    x, p = run["blocks.1.hook_resid_mid"], gpt.params
    mu, s = other["blocks.1.ln2.hook_mean"], other["blocks.1.ln2.hook_scale"]
    close(run["blocks.1.ln2.hook_normalized"], p["blocks.1.ln2.g"] * (x - mu) / s + p["blocks.1.ln2.b"])
    assert not np.allclose(mu, run["blocks.1.hook_resid_mid"].mean(axis=-1, keepdims=True))  # the stats are not x's


@pytest.mark.parametrize("hook", ["hook_resid_pre", "hook_resid_mid", "hook_resid_post"])
def test_patching_the_stream_at_every_position_gives_the_source_runs_output(hook: str) -> None:
    gpt = f64(positional="rope")
    clean = gpt.run(TOKENS)
    patched = gpt.run(OTHER, edits=[Patch(f"blocks.0.{hook}", clean)])
    close(patched.logits, clean.logits)
    close(patched["blocks.1.hook_resid_post"], clean["blocks.1.hook_resid_post"])


def test_patching_a_sublayer_output_adds_the_sources_output_to_this_stream() -> None:
    gpt = f64()
    source, p = gpt.run(TOKENS), gpt.params
    run = gpt.run(OTHER, edits=[Patch("blocks.1.hook_attn_out", source), Patch("blocks.0.hook_mlp_out", source)])
    close(run["blocks.1.hook_resid_mid"], run["blocks.1.hook_resid_pre"] + source["blocks.1.hook_attn_out"])
    close(run["blocks.0.hook_resid_post"], run["blocks.0.hook_resid_mid"] + source["blocks.0.hook_mlp_out"])
    run = gpt.run(OTHER, edits=[Patch("blocks.0.attn.hook_z", source)])
    z = source["blocks.0.attn.hook_z"].reshape(len(OTHER), -1)
    close(run["blocks.0.hook_attn_out"], z @ p["blocks.0.attn.w_out"] + p["blocks.0.attn.b_out"])


def test_patching_one_head_at_one_position_replaces_that_cell_only() -> None:
    gpt = f64()
    clean, corrupted = gpt.run(TOKENS), gpt.run(OTHER)
    run = gpt.run(OTHER, edits=[Patch("blocks.1.attn.hook_z", clean, positions=(4,), head=1)])
    z, expected = run["blocks.1.attn.hook_z"], corrupted["blocks.1.attn.hook_z"].copy()
    expected[4, 1] = clean["blocks.1.attn.hook_z"][4, 1]
    assert np.array_equal(z, expected)


def test_edits_at_one_hook_compose_in_order() -> None:
    gpt = f64()
    run = gpt.run(TOKENS, edits=[AblateHead(0, 1), ScaleHead(0, 1, 3.0), ScaleHead(0, 0, 0.5), ScaleHead(0, 0, 4.0)])
    clean = gpt.run(TOKENS)
    assert np.all(run["blocks.0.attn.hook_z"][:, 1] == 0.0)
    close(run["blocks.0.attn.hook_z"][:, 0], 2.0 * clean["blocks.0.attn.hook_z"][:, 0])
    other = gpt.run(OTHER)
    run = gpt.run(TOKENS, edits=[AblateHead(1, 0, mean_from=other), ScaleHead(1, 0, 3.0, positions=(0, 1))])
    mean = other["blocks.1.attn.hook_z"][:, 0].mean(axis=0)
    close(run["blocks.1.attn.hook_z"][:, 0], np.array([3 * mean] * 2 + [mean] * 5))  # m₂(m₁a + c₁) + c₂


# -- the edited run is a trace like any other, and the clean one is left alone -------------------------------------


def test_an_edited_trace_has_the_clean_traces_keys_and_its_edits(tiny: model.GPT) -> None:
    clean = tiny.run("猫追狗", grads=True)
    edits: list[Edit] = [
        AblateHead(0, 2),
        DropResidual(1, "mlp"),
        BypassNorm("ln_final"),
        Patch("blocks.2.hook_resid_pre", clean),
    ]
    run = tiny.run("猫追狗", grads=True, edits=edits)
    assert list(run.activations) == list(clean.activations)
    assert set(run.grads) == set(clean.grads) and set(run.param_grads) == set(clean.param_grads)
    assert run.edits == tuple(edits) and clean.edits == ()
    assert all(a.dtype == np.float32 for a in [*run.activations.values(), *run.grads.values()])
    assert run.steps == clean.steps and run.loss != clean.loss


def test_the_clean_trace_is_never_changed() -> None:
    gpt = f64()
    clean = gpt.run(TOKENS, grads=True)
    before = {name: value.copy() for name, value in [*clean.activations.items(), *clean.grads.items()]}
    edits: list[Edit] = [
        Patch(f"blocks.{i}.{hook}", clean, positions=(1, 3)) for i in range(2) for hook in PATCHABLE
    ] + [AblateHead(0, 0, mean_from=clean), BypassNorm("blocks.0.ln1", frozen_from=clean), ScaleHead(1, 1, 0.0)]
    gpt.run(OTHER, grads=True, edits=edits)
    gpt.run(TOKENS, grads=True, edits=edits)
    for name, value in before.items():
        assert np.array_equal(clean[name], value), name
    assert clean.edits == ()
    run = gpt.run(TOKENS, grads=True, edits=edits)
    shared = [a for a in run.activations if any(np.shares_memory(run[a], b) for b in clean.activations.values())]
    assert shared == [
        "hook_pos_embed"
    ]  # the position table's rows, read-only: writing into the edited run cannot reach clean


def test_an_edited_trace_does_not_extend_through_the_cache(tiny: model.GPT) -> None:
    with pytest.raises(ValueError, match="edited trace"):
        tiny.extend(tiny.run("猫追", edits=[AblateHead(0, 2)]), tiny.tokenizer.encode("狗")[0])


# -- the backward pass follows the edited graph --------------------------------------------------------------------


STEP = 1e-3


def central_difference(loss: Callable[[], float], x: np.ndarray, direction: np.ndarray) -> float:
    """∂L/∂x along `direction`, the five-point stencil of tests/test_backward.py (x changed and restored)."""
    values, original = {}, x.copy()
    for k in (-2, -1, 1, 2):
        x[...] = original + (k * STEP / 2) * direction
        values[k] = loss()
    x[...] = original
    return (4 * (values[1] - values[-1]) / STEP - (values[2] - values[-2]) / (2 * STEP)) / 3


def relative_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / max(abs(analytic), abs(numeric), 1e-8)


def edit_cases() -> list[tuple[str, dict, Callable[[model.Trace], list[Edit]]]]:
    """(id, variant, the edits made from another prompt's run)"""
    return [
        ("heads", {}, lambda o: [AblateHead(0, 1, (1, 2)), ScaleHead(1, 0, -1.5), AblateHead(1, 1, mean_from=o)]),
        ("skip+drop", {}, lambda o: [SkipSublayer(0, "mlp", positions=(0, 5)), DropResidual(1, "attn")]),
        ("norms", {}, lambda o: [BypassNorm("blocks.0.ln1"), BypassNorm("blocks.1.ln2", o), BypassNorm("ln_final")]),
        ("patches", {}, lambda o: [Patch(f"blocks.{i}.{h}", o, (2, 4)) for i in range(2) for h in PATCHABLE]),
        ("patch-head", {"positional": "rope"}, lambda o: [Patch("blocks.0.attn.hook_z", o, (3,), head=0)]),
        (
            "postnorm",
            {"norm": "post"},
            lambda o: [BypassNorm("blocks.0.ln2", o), DropResidual(1, "mlp"), AblateHead(1, 0)],
        ),
        ("nonorm", {"norm": "none"}, lambda o: [DropResidual(0, "attn"), Patch("blocks.1.hook_resid_mid", o, (6,))]),
        (
            "rms-norms",
            {"norm_kind": "rms"},
            lambda o: [BypassNorm("blocks.0.ln1"), BypassNorm("blocks.1.ln2", o), BypassNorm("ln_final", o)],
        ),
        ("rms-postnorm", {"norm": "post", "norm_kind": "rms"}, lambda o: [BypassNorm("blocks.0.ln2", o)]),
    ]


@pytest.mark.parametrize(
    ("variant", "make_edits"), [case[1:] for case in edit_cases()], ids=[c[0] for c in edit_cases()]
)
def test_gradients_of_an_edited_run_against_finite_differences(
    variant: dict, make_edits: Callable[[model.Trace], list[Edit]]
) -> None:
    """∂L/∂θ for every parameter and ∂L/∂a for every activation of an edited run, each along a random direction."""
    gpt = f64(**variant)
    edits = make_edits(gpt.run(OTHER))
    tokens = np.asarray(TOKENS)
    run = gpt.run(TOKENS, grads=True, edits=edits)

    def loss(hook: model.hooks.Hook = model.hooks.no_hook) -> float:
        runner = edited(gpt, plan_edits(gpt, len(TOKENS), edits))  # a plan per pass: a nudge may not outlive it
        return float(bw.position_losses_and_backward(runner.forward(tokens, hook=hook), tokens)[0].mean())

    assert run.loss == pytest.approx(loss(), rel=1e-12)
    rng = np.random.default_rng(7)
    errors = {}
    for name, value in gpt.params.items():
        direction = rng.normal(size=value.shape)
        errors[name] = relative_error(
            float(np.vdot(run.param_grads[name], direction)), central_difference(loss, value, direction)
        )
    for name, value in run.activations.items():
        if name == "hook_pos_embed":
            continue  # a read-only view of the table; its gradient is hook_embed's
        direction = rng.normal(size=value.shape)
        direction[~np.isfinite(value)] = 0.0
        nudge = np.zeros(1)

        def nudged(
            hook_name: str, array: np.ndarray, name: str = name, direction: np.ndarray = direction, nudge=nudge
        ) -> None:
            if hook_name == name:
                array += nudge[0] * direction

        numeric = central_difference(lambda nudged=nudged: loss(nudged), nudge, np.ones(1))
        errors[name] = relative_error(float(np.vdot(np.nan_to_num(run[name + "_grad"]), direction)), numeric)
    worst = max(errors, key=errors.__getitem__)
    assert errors[worst] <= 1e-6, f"{worst}: {errors[worst]:.2e}"


@pytest.mark.parametrize("norm", ["pre", "post", "none"])
def test_residual_paths_of_an_edited_run_add_up_and_know_what_was_edited(norm: str) -> None:
    gpt = f64(norm=norm)
    other = gpt.run(OTHER)
    edits: list[Edit] = [DropResidual(0, "attn"), Patch("blocks.1.hook_resid_mid", other, (2, 5))]
    run = gpt.run(TOKENS, grads=True, edits=edits)
    steps = {step.name: step for step in run.steps}
    identity, through_f, total = run.residual_paths(steps["blocks.0.attn_add"])
    assert np.all(identity == 0.0) and np.array_equal(through_f, total)  # the add is gone: all of ∂L/∂x is F's
    identity, through_f, total = run.residual_paths(steps["blocks.0.mlp_add"])
    close(identity, run[steps["blocks.0.mlp_add"].out_hook + "_grad"])  # an add left alone: ∂L/∂y
    identity, through_f, total = run.residual_paths(steps["blocks.1.attn_add"])
    if norm != "post":  # pre- and no-norm: y is resid_mid, patched at positions 2 and 5, which pass nothing back
        assert np.all(identity[[2, 5]] == 0.0) and np.any(identity[[0, 1, 3, 4, 6]] != 0.0)


def test_an_edit_changes_the_gradients() -> None:
    """The check above would pass on the clean backward if the edits changed nothing: they must change it."""
    gpt = f64()
    clean = gpt.run(TOKENS, grads=True)
    run = gpt.run(TOKENS, grads=True, edits=[SkipSublayer(1, "mlp")])
    assert np.all(run.param_grads["blocks.1.mlp.w_in"] == 0.0) and np.any(clean.param_grads["blocks.1.mlp.w_in"] != 0.0)


# -- bad edits: one line, one exception type -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "edit", "message"),
    [
        ({}, AblateHead(0, 2), "head 2 is out of range"),
        ({}, ScaleHead(0, -1, 2.0), "head -1 is out of range"),
        ({}, AblateHead(2, 0), "block 2 is out of range"),
        ({}, ScaleHead(0, 0, float("nan")), "finite"),
        ({}, SkipSublayer(0, "ffn"), "'attn' or 'mlp'"),
        ({}, AblateHead(0, 0, positions=(7,)), "position 7 is out of range"),
        ({"residual": False}, DropResidual(0, "attn"), "no residual add"),
        ({"norm": "post"}, BypassNorm("ln_final"), "no LayerNorm 'ln_final'"),
        ({"norm": "none"}, BypassNorm("blocks.0.ln1"), "no LayerNorm 'blocks.0.ln1'"),
        ({}, BypassNorm("blocks.0.ln3"), "no LayerNorm"),
        ({}, Patch("blocks.0.attn.hook_pattern", None), "cannot patch"),  # type: ignore[arg-type]
        ({}, Patch("hook_embed", None), "cannot patch"),  # type: ignore[arg-type]
        ({}, Patch("blocks.5.hook_resid_pre", None), "block 5 is out of range"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_edit_is_one_line(variant: dict, edit: Edit, message: str) -> None:
    gpt = f64(**variant)
    with pytest.raises(EditError, match=message) as error:
        gpt.run(TOKENS, edits=[edit])
    assert "\n" not in str(error.value)


def test_a_patch_from_a_prompt_of_another_length_is_refused() -> None:
    gpt = f64()
    short = gpt.run(TOKENS[:4])
    for edit in (Patch("blocks.0.hook_resid_pre", short), BypassNorm("blocks.0.ln1", frozen_from=short)):
        with pytest.raises(EditError, match="4 positions and this prompt 7"):
            gpt.run(TOKENS, edits=[edit])
    with pytest.raises(EditError, match=r"only blocks\.i\.attn\.hook_z has heads"):
        gpt.run(TOKENS, edits=[Patch("blocks.0.hook_resid_pre", gpt.run(OTHER), head=0)])
    with pytest.raises(EditError, match="per position"):  # a source from a model of another width
        gpt.run(TOKENS, edits=[Patch("blocks.0.hook_resid_pre", f64(d_model=16, n_layers=2).run(OTHER))])


# -- patching sweeps -----------------------------------------------------------------------------------------------


def fractions(
    gpt: model.GPT, clean: model.Trace, corrupted: model.Trace, answer: int, wrong: int, patch: Patch
) -> float:
    d_clean = float(logit_difference(clean.logits, answer, wrong))
    d_corrupted = float(logit_difference(corrupted.logits, answer, wrong))
    return float(
        restored_fraction(np.array(patched_difference(gpt, corrupted, patch, answer, wrong)), d_clean, d_corrupted)
    )


def test_patching_all_positions_restores_everything_and_none_nothing(tiny: model.GPT) -> None:
    clean, corrupted = tiny.run("猫追狗"), tiny.run("狗追猫")
    cat, dog = tiny.tokenizer.encode("猫")[0], tiny.tokenizer.encode("狗")[0]
    all_positions = fractions(tiny, clean, corrupted, cat, dog, Patch("blocks.0.hook_resid_pre", clean))
    no_position = fractions(tiny, clean, corrupted, cat, dog, Patch("blocks.0.hook_resid_pre", clean, positions=()))
    assert all_positions == pytest.approx(1.0, abs=1e-5) and no_position == 0.0
    grid = resid_pre_grid(tiny, clean, corrupted, cat, dog)
    assert grid[0, 1] == pytest.approx(0.0, abs=1e-5)  # 追 at position 1 in both: block 0 has nothing to patch in there


@pytest.mark.parametrize(
    "variant",
    [{}, {"norm": "post"}, {"norm": "none"}, {"positional": "rope"}, {"residual": False}, {"positional": "none"}],
)
def test_the_grids_are_one_patched_run_per_cell(variant: dict) -> None:
    gpt = f64(seed=2, **variant)
    clean, corrupted = gpt.run(TOKENS), gpt.run(OTHER)
    answer, wrong = 5, 11
    grid, heads = resid_pre_grid(gpt, clean, corrupted, answer, wrong), head_grid(gpt, clean, corrupted, answer, wrong)
    assert grid.shape == (2, 7) and heads.shape == (2, 2, 7)
    for i in range(2):
        for p in range(7):
            expected = fractions(gpt, clean, corrupted, answer, wrong, Patch(f"blocks.{i}.hook_resid_pre", clean, (p,)))
            assert grid[i, p] == pytest.approx(expected, rel=1e-9, abs=1e-9)
            for h in range(2):
                patch = Patch(f"blocks.{i}.attn.hook_z", clean, (p,), head=h)
                assert heads[i, h, p] == pytest.approx(
                    fractions(gpt, clean, corrupted, answer, wrong, patch), rel=1e-9, abs=1e-9
                )


def test_a_sweep_refuses_what_it_cannot_measure() -> None:
    gpt = f64()
    clean = gpt.run(TOKENS)
    with pytest.raises(EditError, match="7 and 4 positions"):
        resid_pre_grid(gpt, clean, gpt.run(OTHER[:4]), 1, 2)
    with pytest.raises(EditError, match="nothing to restore"):
        head_grid(gpt, clean, gpt.run(TOKENS), 1, 2)
    with pytest.raises(EditError, match="without edits"):
        resid_pre_grid(gpt, clean, gpt.run(OTHER, edits=[AblateHead(0, 0)]), 1, 2)
    with pytest.raises(EditError, match="outside the vocabulary"):
        resid_pre_grid(gpt, clean, gpt.run(OTHER), 1, 10_000)


# -- against TransformerLens (the `test-ref` extra) ---------------------------------------------------------------


@pytest.mark.reference
def test_zero_ablation_and_resid_pre_patching_equal_transformer_lens(tmp_path: Path) -> None:
    """On one HF GPT-2 folder: head 1 of block 1 zeroed at hook_z, and hook_resid_pre of block 1 at position 2
    patched from another prompt, through TransformerLens' `run_with_hooks`, as its patching demos write them."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    bridge_module = pytest.importorskip("transformer_lens.model_bridge")  # TransformerLens ≥ 4
    from test_hf_gpt2 import write_folder

    write_folder(tmp_path)
    hf = transformers.GPT2LMHeadModel.from_pretrained(tmp_path, attn_implementation="eager").eval()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    lens = bridge_module.TransformerBridge.boot_transformers(
        str(tmp_path), hf_model=hf, tokenizer=tokenizer, device="cpu"
    )
    gpt = model.load(str(tmp_path))
    clean_ids, corrupted_ids = (
        gpt.tokenizer.encode("The cat chased the dog."),
        gpt.tokenizer.encode("The dog chased the cat."),
    )
    assert len(clean_ids) == len(corrupted_ids)

    def zero_head(z: torch.Tensor, hook: object) -> torch.Tensor:  # z: [batch, pos, head, d_head]
        z = z.clone()
        z[:, :, 1] = 0.0
        return z

    with torch.no_grad():
        _, cache = lens.run_with_cache(torch.tensor([clean_ids]))

        def patch(x: torch.Tensor, hook: object) -> torch.Tensor:
            x = x.clone()
            x[:, 2] = cache["blocks.1.hook_resid_pre"][:, 2]
            return x

        ablated = lens.run_with_hooks(torch.tensor([clean_ids]), fwd_hooks=[("blocks.1.attn.hook_z", zero_head)])
        patched = lens.run_with_hooks(torch.tensor([corrupted_ids]), fwd_hooks=[("blocks.1.hook_resid_pre", patch)])
    clean = gpt.run(clean_ids)
    ours_ablated = gpt.run(clean_ids, edits=[AblateHead(1, 1)]).logits
    ours_patched = gpt.run(corrupted_ids, edits=[Patch("blocks.1.hook_resid_pre", clean, positions=(2,))]).logits
    np.testing.assert_allclose(ours_ablated, ablated[0].numpy(), atol=2e-5)
    np.testing.assert_allclose(ours_patched, patched[0].numpy(), atol=2e-5)
    assert np.abs(ours_ablated - clean.logits).max() > 0.1  # the edits change what they are compared on
    assert np.abs(ours_patched - gpt.run(corrupted_ids).logits).max() > 0.1
