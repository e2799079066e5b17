"""Scaled RoPE (`GPTConfig.rope_scaling`): Llama 3.1's NTK-by-parts frequencies against values worked by hand in
each regime, "linear" as positions divided by the factor, the config's checks and its round trip through a
checkpoint. NumPy only; tests/test_hf_llama.py checks a llama3-scaled folder against `transformers`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import TOKENIZER, random_params, small_config

import model
from model.config import ConfigError, GPTConfig
from model.positions import angle_table, model_rope_frequencies, ntk_by_parts_frequencies, rope_frequencies
from model.weights import load_checkpoint, save_checkpoint

LLAMA3 = dict(rope_scaling="llama3", rope_factor=8.0, rope_low_freq_factor=1.0, rope_high_freq_factor=4.0)


def test_ntk_by_parts_keeps_divides_and_blends_as_worked_by_hand() -> None:
    # L = 32, low 1, high 4: wavelengths below 32/4 = 8 are kept, above 32/1 = 32 divided by 8, between blended
    wavelengths = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    omega = 2 * np.pi / wavelengths
    scaled = ntk_by_parts_frequencies(omega, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_ctx=32)
    by_hand = [
        np.pi / 2,  # λ 4 < 8: kept, 2π/4
        np.pi / 4,  # λ 8: blended with s = (32/8 − 1)/3 = 1, so kept: the two regimes meet
        5 * np.pi / 96,  # λ 16: s = (32/16 − 1)/3 = 1/3; (2/3)·(π/8)/8 + (1/3)·(π/8) = π/96 + π/24
        np.pi / 128,  # λ 32: s = 0, so divided: (2π/32)/8
        np.pi / 256,  # λ 64 > 32: divided, (2π/64)/8
    ]
    np.testing.assert_allclose(scaled, by_hand, rtol=1e-12)


def test_a_llama3_model_turns_its_pairs_by_the_scaled_frequencies() -> None:
    cfg = small_config(positional="rope", d_model=32, n_heads=2, pos_base=50.0, rope_original_ctx=32, **LLAMA3)
    omega = rope_frequencies(16, 50.0)
    wavelength = 2 * np.pi / omega
    kept, divided = wavelength < 8, wavelength > 32
    assert kept.any() and divided.any() and (~kept & ~divided).any()  # all three regimes in one head
    scaled = model_rope_frequencies(cfg)
    assert np.array_equal(scaled[kept], omega[kept]) and np.allclose(scaled[divided], omega[divided] / 8)
    blended = ~kept & ~divided
    assert np.all((scaled[blended] < omega[blended]) & (scaled[blended] > omega[blended] / 8))
    gpt = model.GPT(cfg, random_params(cfg), TOKENIZER)
    table = gpt.position_rows(0, cfg.n_ctx)
    angles = np.arange(cfg.n_ctx)[:, None] * scaled
    np.testing.assert_allclose(table[:, 0::2], np.sin(angles), atol=1e-6)
    np.testing.assert_allclose(table[:, 1::2], np.cos(angles), atol=1e-6)


def test_linear_scaling_is_positions_divided_by_the_factor() -> None:
    cfg = small_config(positional="rope", rope_scaling="linear", rope_factor=4.0)
    plain = small_config(positional="rope")
    scaled = model.GPT(cfg, random_params(cfg), TOKENIZER).position_rows(0, cfg.n_ctx)
    unscaled = model.GPT(plain, random_params(plain), TOKENIZER).position_rows(0, cfg.n_ctx)
    np.testing.assert_allclose(scaled[::4], unscaled[: cfg.n_ctx // 4], atol=1e-6)  # position 4p turns as p did
    np.testing.assert_allclose(unscaled, angle_table(cfg.n_ctx, rope_frequencies(cfg.d_head)), atol=1e-6)
    assert not np.allclose(scaled, unscaled, atol=1e-3)


def test_a_scaled_config_round_trips_through_a_checkpoint_and_older_files_load_unscaled(tmp_path: Path) -> None:
    cfg = small_config(positional="rope", rope_style="half", rope_original_ctx=32, **LLAMA3)
    save_checkpoint(tmp_path / "m.safetensors", cfg, random_params(cfg), TOKENIZER, trained=True)
    assert load_checkpoint(tmp_path / "m.safetensors")[0] == cfg
    old = json.loads(small_config().to_json())
    for name in [k for k in old if k.startswith("rope_") and k != "rope_style"]:
        del old[name]  # a file written before the fields existed
    assert GPTConfig.from_dict(old).rope_scaling == "none"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rope_scaling": "yarn"}, "rope_scaling must be one of none, linear, llama3, got 'yarn'"),
        ({"rope_factor": 0.5}, "rope_factor must be a finite number of at least 1, got 0.5"),
        ({"rope_factor": math.inf}, "rope_factor must be a finite number of at least 1"),
        ({"rope_low_freq_factor": 4.0}, r"rope_low_freq_factor \(4.0\) must be less than rope_high_freq_factor"),
        ({"rope_high_freq_factor": -1.0}, "rope_high_freq_factor must be a positive finite number"),
        ({"rope_original_ctx": 0}, "rope_original_ctx must be a positive integer, got 0"),
        ({"rope_original_ctx": 8.5}, "rope_original_ctx must be a positive integer, got 8.5"),
    ],
)
def test_bad_scaling_settings_are_refused_in_one_line(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        small_config(positional="rope", **changes)
