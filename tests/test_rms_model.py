"""The project's GPT with RMSNorm in place of LayerNorm (`GPTConfig.norm_kind = "rms"`): its config, parameters,
trace, files, edits and training recipe. Its gradients are checked with every other variant's in
tests/test_backward.py (`RMS_VARIANTS`), its edited runs' in tests/test_interventions.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from helpers import TOKENIZER, random_params, small_config

import model
from model.config import ConfigError, GPTConfig
from model.interventions import BypassNorm
from model.train import FLAG_NAMES, Recipe, recipe_changes, recipe_problem
from model.weights import WeightsError, read_safetensors, save_checkpoint


def rms_gpt(**changes: object) -> model.GPT:
    config = small_config(norm_kind="rms", **changes)
    return model.GPT(config, random_params(config), TOKENIZER)


def test_norm_kind_is_checked_in_one_line_and_defaults_to_layer() -> None:
    with pytest.raises(ConfigError, match=r"^norm_kind must be one of layer, rms, got 'batch'$"):
        small_config(norm_kind="batch")
    old = json.loads(small_config().to_json())
    del old["norm_kind"]  # a file written before the field existed
    assert GPTConfig.from_dict(old).norm_kind == "layer"


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_an_rms_model_has_gamma_and_no_beta(norm: str) -> None:
    shapes = model.parameter_shapes(small_config(norm=norm, norm_kind="rms"))
    layer = model.parameter_shapes(small_config(norm=norm))
    assert set(layer) - set(shapes) == {n for n in layer if n.endswith(".b") and ".ln" in "." + n}
    assert all(n.rsplit(".", 1)[0] + ".g" in shapes for n in set(layer) - set(shapes))
    assert set(model.init_params(small_config(norm=norm, norm_kind="rms"))) == set(shapes)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_every_norm_of_an_rms_model_is_rms_norm(norm: str) -> None:
    gpt = rms_gpt(norm=norm)
    trace = gpt.run("猫追狗的人")
    norms = [s.name for s in gpt.steps if s.kind == "norm"]
    assert len(norms) == 2 * gpt.config.n_layers + (norm == "pre")
    assert not [name for name in trace.activations if name.endswith("hook_mean")]
    for name in norms:
        step = next(s for s in gpt.steps if s.name == name)
        x = trace[step.in_hook].astype(np.float64)
        rms = np.sqrt((x * x).mean(axis=-1, keepdims=True) + gpt.config.ln_eps)  # no μ taken away
        np.testing.assert_allclose(trace[name + ".hook_scale"], rms, rtol=1e-5)
        np.testing.assert_allclose(trace[name + ".hook_xhat"], x / rms, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(trace[name + ".hook_normalized"], gpt.params[name + ".g"] * x / rms, atol=1e-5)


def test_an_rms_model_saves_and_loads(tmp_path: Path) -> None:
    gpt = rms_gpt(norm="post")
    path = tmp_path / "rms.safetensors"
    save_checkpoint(path, gpt.config, gpt.params, TOKENIZER, trained=True)
    again = model.load(path)
    assert again.config == gpt.config
    assert np.array_equal(again.run("猫追狗").logits, gpt.run("猫追狗").logits)


def _rewritten(tmp_path: Path, norm_kind: str, mutate) -> Path:  # type: ignore[no-untyped-def]
    config = small_config(norm_kind=norm_kind)
    path = tmp_path / f"{norm_kind}.safetensors"
    save_checkpoint(path, config, random_params(config), TOKENIZER, trained=True)
    tensors = safetensors.numpy.load_file(path)
    metadata = read_safetensors(path)[1]
    mutate(tensors)
    safetensors.numpy.save_file(tensors, path, metadata=metadata)
    return path


def test_a_beta_in_an_rms_file_and_none_in_a_layer_file_are_one_line_each(tmp_path: Path) -> None:
    extra = _rewritten(tmp_path, "rms", lambda t: t.update({"blocks.1.ln2.b": np.zeros(16, np.float32)}))
    with pytest.raises(WeightsError, match=r"norm_kind rms \(RMSNorm has no β\) but the file holds 'blocks.1.ln2.b'"):
        model.load(extra)
    lacking = _rewritten(tmp_path, "layer", lambda t: t.pop("ln_final.b"))
    with pytest.raises(WeightsError, match=r"norm_kind layer but the file lacks LayerNorm β 'ln_final.b'") as caught:
        model.load(lacking)
    assert "\n" not in str(caught.value)


def test_bypassing_an_rms_norm_freezes_the_rms_alone() -> None:
    """Frozen from another prompt: y = γ · x / rms₀, with x this run's stream, uncentred, and rms₀ the other's."""
    gpt = rms_gpt()
    other = gpt.run("一是在不了有")
    run = gpt.run("猫追狗的人我", edits=[BypassNorm("blocks.1.ln1", frozen_from=other)])
    x, rms = run["blocks.1.hook_resid_pre"], other["blocks.1.ln1.hook_scale"]
    assert not np.allclose(rms, gpt.run("猫追狗的人我")["blocks.1.ln1.hook_scale"])  # not this run's own rms
    np.testing.assert_allclose(run["blocks.1.ln1.hook_normalized"], gpt.params["blocks.1.ln1.g"] * x / rms, rtol=1e-5)
    assert "blocks.1.ln1.hook_mean" not in run
    identity = gpt.run("猫追狗", edits=[BypassNorm("ln_final")])
    assert np.array_equal(identity["ln_final.hook_normalized"], identity["blocks.1.hook_resid_post"])


def test_the_recipe_and_the_flag_name_norm_kind() -> None:
    rms = Recipe(norm_kind="rms")
    assert rms.config(10).norm_kind == "rms"
    assert recipe_changes(rms, Recipe()) == ["norm-kind=rms"] and FLAG_NAMES["norm_kind"] == "norm-kind"
    assert recipe_problem(Recipe(norm_kind="batch")) == "norm-kind must be layer or rms, got 'batch'"  # type: ignore[arg-type]
    from tutor.commands.train import recipe_from_flags

    parser = argparse.ArgumentParser()
    from tutor.commands.train import add_arguments

    add_arguments(parser)
    recipe, problem = recipe_from_flags(parser.parse_args(["--norm-kind", "rms"]), Recipe())
    assert problem is None and recipe.norm_kind == "rms" and recipe.name == "tiny+norm-kind=rms"


def test_a_sweep_key_names_rmsnorm_and_a_layernorm_key_is_as_before() -> None:
    from model.sweep import RunSpec

    layer, rms = RunSpec(Recipe(), 0, 10).key(), RunSpec(Recipe(norm_kind="rms"), 0, 10).key()
    assert "norm_kind" not in layer  # the shipped results' keys, written before the field, still match
    assert json.loads(rms)["recipe"]["norm_kind"] == "rms" and rms != layer
