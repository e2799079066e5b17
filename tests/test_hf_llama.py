"""Llama, Qwen2 and Mistral folders saved by `transformers` (random weights, a tiny shape), opened by `model.load` and
run by `GPT.run`, against `transformers`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.reference  # the whole file: .ci/run's second phase runs it, with the test-ref extra
torch = pytest.importorskip("torch")  # the reference: transformers on torch
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from test_hf_gpt2 import make_tokenizer  # noqa: E402

import model  # noqa: E402
from model.hf_llama import load_hf_llama  # noqa: E402
from model.weights import WeightsError  # noqa: E402

FAMILIES = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}


def write_llama(folder: Path, dtype: object = None, family: str = "llama", **changes: object) -> None:
    """A random {family}ForCausalLM of hidden 64, 2 layers, 4 query heads sharing 2 key/value heads."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = make_tokenizer(folder)
    settings: dict[str, object] = {
        "vocab_size": vocab,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 128,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
    }
    settings.update(changes)
    name = FAMILIES[family]
    config = getattr(transformers, name + "Config")(**settings)
    torch.manual_seed(0)
    hf = getattr(transformers, name + "ForCausalLM")(config).eval()
    with torch.no_grad():  # norms away from 1 and a visible mean: γ and the lack of centring both count
        for name, p in hf.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif name.endswith("bias"):  # Qwen2's q/k/v biases start at 0
                p.copy_(torch.randn_like(p))
            else:
                p.mul_(5.0)
    if dtype is not None:
        hf = hf.to(dtype)
    hf.save_pretrained(folder)


def reference(folder: Path, ids: list[int]) -> tuple[np.ndarray, list[np.ndarray], dict[str, np.ndarray]]:
    """transformers' logits, hidden states (each block's input, then the final norm's output) and each block's
    attention and MLP outputs (as `hook_attn_out`, `hook_mlp_out`), float32."""
    hf = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    outputs: dict[str, np.ndarray] = {}

    def keep(name: str):  # type: ignore[no-untyped-def]
        def hook(_module, _inputs, output) -> None:  # type: ignore[no-untyped-def]
            outputs[name] = (output[0] if isinstance(output, tuple) else output)[0].numpy()

        return hook

    for i, layer in enumerate(hf.model.layers):
        layer.self_attn.register_forward_hook(keep(f"blocks.{i}.hook_attn_out"))
        layer.mlp.register_forward_hook(keep(f"blocks.{i}.hook_mlp_out"))
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_hidden_states=True)
    return out.logits[0].numpy(), [h[0].numpy() for h in out.hidden_states], outputs


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


IDS = [3, 17, 5, 9, 30, 2, 11, 40, 7, 1, 25, 4]


@pytest.mark.parametrize(
    ("family", "tied"), [("llama", False), ("llama", True), ("qwen2", True), ("mistral", False)], ids=str
)
def test_logits_and_every_stream_point_equal_transformers(tmp_path: Path, family: str, tied: bool) -> None:
    # a small RoPE base turns every pair visibly: a base read wrong from config.json shows
    rope = {"rope_type": "default", "rope_theta": 50.0}
    write_llama(tmp_path / "m", family=family, tie_word_embeddings=tied, rope_parameters=rope)
    gpt = model.load(tmp_path / "m")
    cfg = gpt.config
    assert (cfg.n_heads, cfg.kv_heads, cfg.d_head, cfg.tied, cfg.pos_base) == (4, 2, 16, tied, 50.0)
    assert (cfg.norm_kind, cfg.mlp_kind, cfg.rope_style) == ("rms", "gated", "half")
    assert cfg.biases == ("qkv" if family == "qwen2" else "none")
    seen = gpt.run(IDS)
    expected_logits, hidden, outputs = reference(tmp_path / "m", IDS)
    assert seen.logits.dtype == np.float32
    assert relative(seen.logits, expected_logits) <= 1e-4
    for i in range(cfg.n_layers):
        assert relative(seen[f"blocks.{i}.hook_resid_pre"], hidden[i]) <= 1e-4
        for point in ("hook_attn_out", "hook_mlp_out"):
            assert relative(seen[f"blocks.{i}.{point}"], outputs[f"blocks.{i}.{point}"]) <= 1e-4
        after = hidden[i + 1] if i + 1 < cfg.n_layers else seen[f"blocks.{i}.hook_resid_post"]
        assert relative(seen[f"blocks.{i}.hook_resid_post"], after) <= 1e-4
        mid = seen[f"blocks.{i}.hook_resid_pre"] + outputs[f"blocks.{i}.hook_attn_out"]
        assert relative(seen[f"blocks.{i}.hook_resid_mid"], mid) <= 1e-4
    assert relative(seen["ln_final.hook_normalized"], hidden[-1]) <= 1e-4
    assert seen["blocks.0.attn.hook_k"].shape == (len(IDS), 2, 16)  # two key/value heads, shared
    assert seen["blocks.0.attn.hook_rot_q"].shape == (len(IDS), 4, 16)
    assert seen["blocks.1.mlp.hook_pre_linear"].shape == (len(IDS), 128)
    assert seen["blocks.1.ln2.hook_scale"].shape == (len(IDS), 1)
    assert "blocks.1.ln2.hook_mean" not in seen  # RMSNorm does not centre


def test_bf16_weights_are_widened_to_float32_and_match(tmp_path: Path) -> None:
    write_llama(tmp_path / "m", dtype=torch.bfloat16)
    gpt = model.load(tmp_path / "m")
    assert all(p.dtype == np.float32 for p in gpt.params.values())
    expected_logits, _, _ = reference(tmp_path / "m", IDS)  # the same bf16 numbers, run in float32
    assert relative(gpt.run(IDS).logits, expected_logits) <= 1e-4


def test_unsupported_architecture_and_bad_head_counts_say_so_in_one_line(tmp_path: Path) -> None:
    write_llama(tmp_path / "m")
    config_path = tmp_path / "m" / "config.json"
    raw = json.loads(config_path.read_text())
    config_path.write_text(json.dumps({**raw, "architectures": ["FalconForCausalLM"]}))
    with pytest.raises(WeightsError, match=r"FalconForCausalLM.*supported: LlamaForCausalLM") as error:
        load_hf_llama(tmp_path / "m")
    assert "\n" not in str(error.value)
    config_path.write_text(json.dumps({**raw, "num_key_value_heads": 3}))
    with pytest.raises(WeightsError, match=r"num_attention_heads 4 is not a multiple of num_key_value_heads 3"):
        load_hf_llama(tmp_path / "m")


def test_a_sliding_window_caps_the_context_so_it_never_cuts(tmp_path: Path) -> None:
    write_llama(tmp_path / "m", family="mistral", sliding_window=8)
    gpt = model.load(tmp_path / "m")
    assert gpt.config.n_ctx == 8
    ids = IDS[:8]  # within the window, Mistral's sliding mask is the causal mask
    expected_logits, _, _ = reference(tmp_path / "m", ids)
    assert relative(gpt.run(ids).logits, expected_logits) <= 1e-4
    with pytest.raises(model.ContextError, match="9 positions do not fit the context of 8"):
        gpt.forward(np.asarray(IDS[:9]))


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}


@pytest.mark.parametrize("kind", ["llama3", "linear"])
def test_scaled_rope_folders_equal_transformers(tmp_path: Path, kind: str) -> None:
    # original context 32, low 1, high 4: head size 16 at base 50 has wavelengths 6.3 (kept: < 8), 10–27 (blended)
    # and 44–192 (divided by 8: > 32), so each of the three regimes turns a pair
    scaling = {**LLAMA3, "original_max_position_embeddings": 32} if kind == "llama3" else {"rope_type": "linear"}
    rope = {**scaling, "factor": 8.0, "rope_theta": 50.0}
    write_llama(tmp_path / "m", rope_parameters=rope)
    gpt = model.load(tmp_path / "m")
    cfg = gpt.config
    assert (cfg.rope_scaling, cfg.rope_factor, cfg.pos_base) == (kind, 8.0, 50.0)
    wavelength = 2 * np.pi / model.rope_frequencies(cfg.d_head, cfg.pos_base)
    kept, divided = wavelength < 32 / 4, wavelength > 32 / 1
    assert kind != "llama3" or (kept.any() and divided.any() and (~kept & ~divided).any())
    hf = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "m", dtype=torch.float32)
    hf_omega = hf.model.rotary_emb.inv_freq.numpy()
    np.testing.assert_allclose(model.model_rope_frequencies(cfg), hf_omega, rtol=1e-6)  # HF's are float32
    long = [(7 * i + 3) % 50 for i in range(64)]  # the whole context, twice the original one
    for ids in (IDS, long[:40], long):
        expected_logits, hidden, _ = reference(tmp_path / "m", ids)
        seen = gpt.run(ids)
        assert relative(seen.logits, expected_logits) <= 1e-4
        assert relative(seen["blocks.1.hook_resid_pre"], hidden[1]) <= 1e-4
    # the older spelling: rope_scaling, rope_theta beside it; and `tutor convert`'s copy keeps it (config.json)
    config_path = tmp_path / "m" / "config.json"
    raw = json.loads(config_path.read_text())
    del raw["rope_parameters"]
    config_path.write_text(json.dumps({**raw, "rope_scaling": scaling | {"factor": 8.0}, "rope_theta": 50.0}))
    assert model.load(tmp_path / "m").config == cfg


def test_other_rope_scalings_and_a_missing_tensor_are_refused_in_one_line(tmp_path: Path) -> None:
    write_llama(tmp_path / "m")
    config_path = tmp_path / "m" / "config.json"
    raw = json.loads(config_path.read_text())
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}
    config_path.write_text(json.dumps({**raw, "rope_scaling": yarn}))  # as older transformers wrote it
    with pytest.raises(WeightsError, match=r"rope_scaling .*yarn.* is not supported \(RoPE plain, linear or llama3"):
        load_hf_llama(tmp_path / "m")
    config_path.write_text(json.dumps({**raw, "rope_parameters": {"type": "dynamic", "factor": 2.0}}))  # newer
    with pytest.raises(WeightsError, match=r"rope_parameters .*dynamic.* is not supported") as error:
        load_hf_llama(tmp_path / "m")
    assert "\n" not in str(error.value)
    config_path.write_text(json.dumps({**raw, "rope_parameters": {"rope_type": "llama3", "factor": 8.0}}))
    with pytest.raises(WeightsError, match=r"missing key 'low_freq_factor'"):
        load_hf_llama(tmp_path / "m")
    config_path.write_text(json.dumps({**raw, "num_hidden_layers": 3}))
    with pytest.raises(WeightsError, match="the config says n_layers 3, the file holds 2 blocks"):
        load_hf_llama(tmp_path / "m")
