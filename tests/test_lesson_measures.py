"""The claim measures the lessons state about the logit lens, sampling and heads read what the app shows."""

from __future__ import annotations

import numpy as np
import pytest

import model
from model.sampling import sampling_probs, top_order
from tutor.lens import lens_rows
from tutor.lessons.claims import LENS_PROMPT, WALK_PROMPT, lens_points, measure
from tutor.stream_points import residual_points


@pytest.fixture(scope="module")
def tiny() -> model.GPT:
    return model.load("tiny")


def test_the_lens_measures_are_the_residual_tabs_rows(tiny: model.GPT) -> None:
    """Point i of `M.lens` is row i of the tab's lens: the same hooks, the same percentages, ranks and ids."""
    trace = tiny.run(LENS_PROMPT)
    assert lens_points(tiny.config.n_layers) == [point.hook for point in residual_points(trace)]
    assert measure("tiny.lens.points") == len(residual_points(trace))
    for t in range(len(trace.tokens)):
        rows = lens_rows(tiny, trace, t)
        final = rows[-1].top[0][0]
        assert measure(f"tiny.lens.token[{t}].final_id") == final
        for i, row in enumerate(rows):
            assert measure(f"tiny.lens.token[{t}].final_pct[{i}]") == pytest.approx(100 * row.final_p, abs=1e-4)
            assert measure(f"tiny.lens.token[{t}].final_rank[{i}]") == row.final_rank
            assert measure(f"tiny.lens.token[{t}].top_id[{i}]") == row.top[0][0]
            assert measure(f"tiny.lens.token[{t}].top_pct[{i}]") == pytest.approx(100 * row.top[0][2], abs=1e-4)
        leads = [i for i, row in enumerate(rows) if row.final_rank == 1]
        assert measure(f"tiny.lens.token[{t}].leads") == len(leads)
        settled = measure(f"tiny.lens.token[{t}].settled_from")
        assert all(rows[i].final_rank == 1 for i in range(int(settled), len(rows)))
        assert settled == 0 or rows[int(settled) - 1].final_rank > 1
        assert measure(f"tiny.lens.token[{t}].leads_at_end") == len(rows) - settled


def test_the_own_token_measures_read_the_token_itself(tiny: model.GPT) -> None:
    trace = tiny.run(LENS_PROMPT)
    for t, own in enumerate(trace.tokens):
        probs = model.softmax(model.logit_lens(tiny, trace["blocks.0.hook_resid_pre"][t]).astype(np.float64))
        assert measure(f"tiny.lens.token[{t}].own_pct[0]") == pytest.approx(100 * probs[own], abs=1e-4)
        assert measure(f"tiny.lens.token[{t}].own_rank[0]") == int((probs > probs[own]).sum()) + 1


def test_the_sample_measures_are_the_draw_probabilities(tiny: model.GPT) -> None:
    logits = tiny.run(LENS_PROMPT).logits[-1]
    order = top_order(logits, 5)
    assert measure("tiny.sample.top_id") == order[0]
    assert measure("tiny.sample.T0.pct[0]") == 100
    assert measure("tiny.sample.T0.pct[1]") == 0
    for name, temperature, top_k in (("T1", 1.0, None), ("T0_5", 0.5, None), ("T1_k3", 1.0, 3), ("T2_k5", 2.0, 5)):
        probs = sampling_probs(logits, temperature, top_k)
        for i in range(5):
            assert measure(f"tiny.sample.{name}.pct[{i}]") == pytest.approx(100 * probs[order[i]])
    assert sum(measure(f"tiny.sample.T1_k3.pct[{i}]") for i in range(3)) == pytest.approx(100)
    assert measure("tiny.sample.T0_5.pct[0]") > measure("tiny.sample.T1.pct[0]")  # a lower T sharpens


def test_the_head_measures_are_the_weight_on_the_previous_token(tiny: model.GPT) -> None:
    pattern = tiny.run(WALK_PROMPT)["blocks.0.attn.hook_pattern"].astype(np.float64)
    n = pattern.shape[-1]
    for h in range(tiny.config.n_heads):
        previous = [pattern[h, q, q - 1] for q in range(1, n)]
        assert measure(f"tiny.heads.block[0].prev_mean[{h}]") == pytest.approx(np.mean(previous))
        assert measure(f"tiny.heads.block[0].prev_min[{h}]") == pytest.approx(min(previous))
    means = [measure(f"tiny.heads.block[0].prev_mean[{h}]") for h in range(tiny.config.n_heads)]
    best = int(measure("tiny.heads.block[0].prev_head"))
    assert means[best] == max(means)
    assert measure("tiny.heads.block[0].others_max") == max(m for h, m in enumerate(means) if h != best)


def test_the_window_measures_agree_with_the_training_record() -> None:
    """`M.adam`, `M.stream` and `M.shifted_loss` rebuild the depth profile's windows and the start from the seed:
    they must find what training itself wrote down (its depth profile and its last validation loss)."""
    for when in ("init", "trained"):
        for i in range(4):
            record = measure(f"tiny.depth.{when}.param_grad[{i}]")
            assert measure(f"tiny.adam.{when}.block_grad[{i}]") == pytest.approx(record, rel=1e-3)
    # clipping scales every block by the same factor, 1/‖g‖ when ‖g‖ is above the clip of 1
    norm = measure("tiny.adam.init.grad_norm")
    assert norm > 1
    assert measure("tiny.adam.init.clipped[0]") == pytest.approx(
        measure("tiny.adam.init.block_grad[0]") / norm, rel=1e-4
    )
    assert measure("tiny.adam.trained.clip_scale") == pytest.approx(1, abs=1e-6)
    # Adam's first step is g/(|g| + ε): nearly the full step for gradients far above ε, nothing for those below
    assert 95 < measure("tiny.adam.init.first_step[0]") <= 100
    assert measure("noresidual.adam.trained.below_eps[0]") == 100
    assert measure("noresidual.adam.trained.first_step[0]") < 0.01
    for i in range(4):  # the stream after each block is the depth profile's
        assert measure(f"tiny.stream.norm[{2 * i + 2}]") == pytest.approx(
            measure(f"tiny.depth.trained.stream_norm[{i + 1}]")
        )
    assert sum(measure(f"tiny.stream.share[{i}]") for i in range(8)) == pytest.approx(100)
    assert measure("tiny.shifted_loss[0]") == pytest.approx(measure("tiny.val_loss"), abs=1e-4)
    d = measure("tiny.d_model")  # each sine-cosine pair adds 1 to ‖PE‖²; a N(0, std²) row has ‖·‖ ≈ std·√d
    assert measure("tiny.embedding.position_norm") == pytest.approx(np.sqrt(d / 2))
    assert measure("tiny.embedding.token_norm_init") == pytest.approx(
        measure("tiny.recipe.embedding_std") * np.sqrt(d), rel=0.03
    )


def test_the_norm_input_measures_are_each_norms_mean_and_rms() -> None:
    """`M.norm_input` read another way: μ² / mean(x²) = 1 − σ² / mean(x²), from each norm's own input."""
    from helpers import TOKENIZER, random_params, small_config

    from model.gradients import record_forward
    from tutor.lessons.claims import _norm_input

    config = small_config(norm_kind="rms")
    gpt = model.GPT(config, random_params(config), TOKENIZER)
    inputs = np.random.default_rng(0).integers(0, config.vocab_size, (3, 9))
    facts = _norm_input(gpt, inputs)
    _, acts = record_forward(gpt, inputs)
    norms = [s for s in gpt.steps if s.kind == "norm"]
    assert len(facts["mean_share"]) == len(norms) == 2 * config.n_layers + 1
    for i, step in enumerate(norms):
        x = acts[step.in_hook].astype(np.float64)
        assert facts["mean_share"][i] == pytest.approx(100 * (1 - x.var(axis=-1) / (x**2).mean(axis=-1)).mean())
        assert facts["rms"][i] == pytest.approx(np.linalg.norm(x, axis=-1).mean() / np.sqrt(config.d_model))
        assert facts["abs_mean"][i] == pytest.approx(np.abs(x.sum(axis=-1) / config.d_model).mean())
    assert facts["mean_share_rest_max"] == max(facts["mean_share"][1:])


def test_the_seed_measures_compare_tiny_and_rmsnorm_seed_by_seed() -> None:
    tiny = [measure(f"seeds.tiny.loss[{s}]") for s in range(3)]
    rms = [measure(f"seeds.rmsnorm.loss[{s}]") for s in range(3)]
    assert tiny[0] == pytest.approx(measure("tiny.val_loss")) and rms[0] == pytest.approx(measure("rmsnorm.val_loss"))
    assert measure("seeds.rmsnorm.above.tiny") == sum(r > t for r, t in zip(rms, tiny, strict=True))
    assert measure("seeds.tiny.above.rmsnorm") == sum(t > r for r, t in zip(rms, tiny, strict=True))
    assert measure("seeds.rmsnorm.gap.tiny") == pytest.approx(np.mean(rms) - np.mean(tiny))
    assert measure("seeds.tiny.range") == pytest.approx(max(tiny) - min(tiny))


def test_the_timing_measures_are_rmsnorm_over_layernorm(monkeypatch: pytest.MonkeyPatch) -> None:
    from tutor.lessons import claims

    monkeypatch.setattr(claims, "TIMING_REPEATS", 3)
    claims._timing.cache_clear()
    try:  # RMSNorm does less than LayerNorm on the same numbers: the ratio is below 1 even at a few runs
        assert 0 < measure("rmsnorm.timing.rms_over_layer_norms") < 1
        assert 0 < measure("rmsnorm.timing.rms_over_layer_pass") < 1.5
    finally:
        claims._timing.cache_clear()
