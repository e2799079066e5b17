"""Safetensors files: real ones, memory-mapped, and every kind of broken one refused in one line."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from helpers import TOKENIZER, random_params, small_config

import model
from model import WeightsError, save_checkpoint


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    config = small_config(positional="learned", norm="post")
    path = tmp_path / "small.safetensors"
    save_checkpoint(path, config, random_params(config), TOKENIZER, trained=True, metadata={"name": "small"})
    return path


def test_save_then_load_gives_the_same_model(checkpoint: Path) -> None:
    gpt = model.load(checkpoint)
    assert gpt.name == "small" and gpt.trained
    assert gpt.config == small_config(positional="learned", norm="post")
    reference = random_params(gpt.config)
    for name, value in reference.items():
        assert np.array_equal(gpt.params[name], value)


def test_the_file_is_plain_safetensors(checkpoint: Path) -> None:
    tensors = safetensors.numpy.load_file(checkpoint)  # the official reader agrees
    assert set(tensors) == set(model.parameter_shapes(model.load(checkpoint).config))
    with open(checkpoint, "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    metadata = header["__metadata__"]
    assert metadata["format"] == "tutor-gpt/1" and metadata["trained"] == "true"
    assert model.GPTConfig.from_json(metadata["config"]).norm == "post"
    assert header["wte"]["dtype"] == "F32"


def test_loading_maps_the_file_instead_of_copying_it(checkpoint: Path) -> None:
    gpt = model.load(checkpoint)
    wte = gpt.params["wte"]
    assert not wte.flags.owndata and not wte.flags.writeable
    assert wte.dtype == np.float32 and wte.flags.c_contiguous


def test_float16_checkpoints_load_as_float32(tmp_path: Path) -> None:
    config = small_config()
    path = tmp_path / "half.safetensors"
    params = random_params(config)
    save_checkpoint(path, config, params, TOKENIZER, trained=False, dtype=np.float16)
    gpt = model.load(path)
    assert gpt.params["wte"].dtype == np.float32
    assert np.abs(gpt.params["wte"] - params["wte"]).max() < 1e-3
    full = tmp_path / "full.safetensors"
    save_checkpoint(full, config, params, TOKENIZER, trained=False)
    assert path.stat().st_size < 0.6 * full.stat().st_size
    assert gpt.run("猫").logits.dtype == np.float32


def test_shipped_models_load_by_name_and_are_trained() -> None:
    assert "tiny" in model.shipped_models()
    for name in model.shipped_models():
        gpt = model.load(name)
        assert gpt.name == name and gpt.trained
        assert (model.SHIPPED_DIR / f"{name}.safetensors").stat().st_size <= 3 * 1024 * 1024
    gpt = model.load("tiny")
    assert gpt.config.positional == "sinusoidal" and gpt.config.norm == "pre"
    assert (model.SHIPPED_DIR / "tiny.safetensors").stat().st_size <= 3 * 1024 * 1024


def _rewrite(path: Path, mutate) -> None:
    tensors = safetensors.numpy.load_file(path)
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        metadata = json.loads(f.read(n))["__metadata__"]
    mutate(tensors, metadata)
    safetensors.numpy.save_file(tensors, path, metadata=metadata)


def _message(path: Path) -> str:
    with pytest.raises(WeightsError) as caught:
        model.load(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_truncated_file(checkpoint: Path) -> None:
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[: len(data) - 100])
    assert "truncated" in _message(checkpoint)
    checkpoint.write_bytes(data[:5])
    assert "truncated" in _message(checkpoint)
    checkpoint.write_bytes(b"")
    assert "truncated" in _message(checkpoint)


def test_not_a_safetensors_file(checkpoint: Path) -> None:
    checkpoint.write_bytes(b"PK\x03\x04 this is a zip, or a pickle, or anything else" * 10)
    message = _message(checkpoint)
    assert "truncated" in message or "corrupt" in message
    checkpoint.write_bytes(struct.pack("<Q", 10) + b"{not json!" + b"\0" * 20)
    assert "not JSON" in _message(checkpoint)


def test_missing_tensor(checkpoint: Path) -> None:
    _rewrite(checkpoint, lambda t, m: t.pop("blocks.1.mlp.w_in"))
    assert "missing tensor 'blocks.1.mlp.w_in'" in _message(checkpoint)


def test_extra_tensor(checkpoint: Path) -> None:
    _rewrite(checkpoint, lambda t, m: t.update({"lm_head.weight": np.zeros((2, 2), np.float32)}))
    assert "unexpected tensor 'lm_head.weight'" in _message(checkpoint)


def test_wrong_shape(checkpoint: Path) -> None:
    _rewrite(checkpoint, lambda t, m: t.update({"blocks.0.attn.w_qkv": np.zeros((16, 16), np.float32)}))
    assert "tensor 'blocks.0.attn.w_qkv' has shape [16, 16], expected [16, 48]" in _message(checkpoint)


def test_wrong_dtype(checkpoint: Path) -> None:
    _rewrite(checkpoint, lambda t, m: t.update({"wte": t["wte"].astype(np.int32)}))
    assert "tensor 'wte' has dtype int32" in _message(checkpoint)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_values(checkpoint: Path, bad: float) -> None:
    def poison(tensors, metadata) -> None:
        tensors["blocks.0.ln2.g"] = tensors["blocks.0.ln2.g"].copy()
        tensors["blocks.0.ln2.g"][3] = bad

    _rewrite(checkpoint, poison)
    assert "tensor 'blocks.0.ln2.g' holds NaN or Inf" in _message(checkpoint)


def test_bad_config_or_tokenizer_metadata(checkpoint: Path) -> None:
    _rewrite(checkpoint, lambda t, m: m.update({"config": '{"vocab_size": 3, "norm": "sideways"}'}))
    assert "bad config" in _message(checkpoint)
    _rewrite(checkpoint, lambda t, m: m.pop("config"))
    assert "no model config" in _message(checkpoint)


def test_unknown_name_lists_the_shipped_models(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match=r"shipped: .*tiny"):
        model.load("no-such-model")
    with pytest.raises(WeightsError, match="no such model file"):
        model.load(tmp_path / "missing.safetensors")
