"""Llama-family folders (Llama, Qwen2, Mistral) as a `GPT`, without torch: written here with NumPy and safetensors,
opened by `model.load`; grouped-query attention as the formula quotes it; the KV cache, the logit lens and edits
on such a model; every bad folder refused in one line. (tests/test_hf_llama.py checks the numbers against
`transformers` when torch is installed.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_tutor

import model
from model import AblateHead, BypassNorm, Patch, WeightsError

pytest.importorskip("tokenizers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")
from test_hf_gpt2 import make_tokenizer  # noqa: E402

D, HEADS, KV, LAYERS, D_MLP = 32, 4, 2, 2, 48
HEAD = D // HEADS


def write_llama(folder: Path, family: str = "Qwen2", dtype: str = "float32", **changes: object) -> dict:
    """A random {family}ForCausalLM folder as transformers lays it out: config.json, model.safetensors,
    tokenizer.json."""
    vocab = make_tokenizer(folder)
    rng = np.random.default_rng(0)
    tensors = {"model.embed_tokens.weight": (vocab, D), "model.norm.weight": (D,), "lm_head.weight": (vocab, D)}
    for i in range(LAYERS):
        hf = f"model.layers.{i}."
        tensors |= {
            hf + "input_layernorm.weight": (D,),
            hf + "post_attention_layernorm.weight": (D,),
            hf + "self_attn.q_proj.weight": (HEADS * HEAD, D),
            hf + "self_attn.k_proj.weight": (KV * HEAD, D),
            hf + "self_attn.v_proj.weight": (KV * HEAD, D),
            hf + "self_attn.o_proj.weight": (D, HEADS * HEAD),
            hf + "mlp.gate_proj.weight": (D_MLP, D),
            hf + "mlp.up_proj.weight": (D_MLP, D),
            hf + "mlp.down_proj.weight": (D, D_MLP),
        }
        if family == "Qwen2":
            tensors |= {hf + f"self_attn.{x}_proj.bias": (n * HEAD,) for x, n in (("q", HEADS), ("k", KV), ("v", KV))}
    arrays = {
        name: (1.0 + 0.3 * rng.standard_normal(shape) if "norm" in name else 0.3 * rng.standard_normal(shape))
        for name, shape in tensors.items()
    }
    stored = {name: a.astype(np.float16 if dtype == "float16" else np.float32) for name, a in arrays.items()}
    safetensors_numpy.save_file(stored, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": [f"{family}ForCausalLM"],
        "model_type": family.lower(),
        "vocab_size": vocab,
        "hidden_size": D,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV,
        "intermediate_size": D_MLP,
        "max_position_embeddings": 32,
        "rms_norm_eps": 1e-5,
        "rope_theta": 50.0,
        "tie_word_embeddings": False,
        "hidden_act": "silu",
        **changes,
    }
    (folder / "config.json").write_text(json.dumps(config))
    return stored


@pytest.fixture(scope="module")
def qwen2(tmp_path_factory: pytest.TempPathFactory) -> model.GPT:
    folder = tmp_path_factory.mktemp("qwen2")
    write_llama(folder)
    return model.load(folder)


def test_a_qwen2_folder_opens_as_a_gpt_with_rmsnorm_gqa_gated_mlp_and_half_rope(qwen2: model.GPT) -> None:
    cfg = qwen2.config
    assert (cfg.norm_kind, cfg.kv_heads, cfg.group, cfg.mlp_kind, cfg.rope_style) == ("rms", KV, 2, "gated", "half")
    assert (cfg.biases, cfg.tied, cfg.pos_base, cfg.ln_eps) == ("qkv", False, 50.0, 1e-5)
    trace = qwen2.run("猫追狗 the cat")
    n = len(trace.tokens)
    assert trace["blocks.0.attn.hook_rot_k"].shape == (n, KV, HEAD)
    assert trace["blocks.0.attn.hook_pattern"].shape == (HEADS, n, n)
    assert trace["blocks.1.mlp.hook_pre_linear"].shape == (n, D_MLP)
    assert "blocks.0.ln1.hook_mean" not in trace and trace["blocks.0.ln1.hook_scale"].shape == (n, 1)


def test_grouped_query_attention_as_quoted_is_the_pass_the_model_runs(qwen2: model.GPT) -> None:
    """`model/llama.py: grouped_query_attention` (separate W_Q, W_K, W_V; kv heads repeated) against the GPT's
    `multi_head_attention_kv` (one W_qkv, heads shared by `shared_heads`): the same z and the same output."""
    from model.hooks import Recording
    from model.llama import grouped_query_attention

    trace = qwen2.run("the dog ran")
    p, n = qwen2.params, len(trace.tokens)
    w_qkv, b_qkv = p["blocks.1.attn.w_qkv"], p["blocks.1.attn.b_qkv"]
    cut = [HEADS * HEAD, (HEADS + KV) * HEAD]
    recording = Recording.start()
    out = grouped_query_attention(
        trace["blocks.1.ln1.hook_normalized"], *np.split(w_qkv, cut, axis=1), p["blocks.1.attn.w_out"],
        HEADS, KV, qwen2.position_rows(0, n), tuple(np.split(b_qkv, cut)), recording.__setitem__,
    )  # fmt: skip
    assert np.allclose(out, trace["blocks.1.hook_attn_out"], atol=1e-5)
    assert np.allclose(recording.activations()["hook_z"], trace["blocks.1.attn.hook_z"], atol=1e-6)


def test_the_kv_cache_logit_lens_and_sampling_work_on_it(qwen2: model.GPT) -> None:
    trace = qwen2.run("the cat sat")
    longer = qwen2.extend(trace, 7)  # the new position meets the cached (key/value-head-sized) keys and values
    full = qwen2.run([*trace.tokens, 7])
    for name in ("logits", "blocks.1.attn.hook_rot_k", "blocks.1.attn.hook_pattern", "blocks.1.hook_resid_post"):
        assert np.allclose(longer[name], full[name], atol=1e-5), name
    lens = model.logit_lens(qwen2, full["blocks.1.hook_resid_post"])
    assert np.allclose(lens, full.logits, atol=1e-5)  # the lens at the last stream point is the output
    # cached generation writes what running every window afresh writes (greedy: the likeliest each time)
    text = qwen2.generate("the cat", 6, temperature=0)
    ids, _ = qwen2.prompt_tokens("the cat")
    for _ in range(6):
        ids.append(int(np.argmax(qwen2.forward(np.asarray(ids))[-1])))
    assert text == qwen2.tokenizer.decode(ids[-6:])


def test_edits_and_gradients_run_on_it(qwen2: model.GPT) -> None:
    clean = qwen2.run([5, 17, 30, 2], grads=True)
    assert set(clean.param_grads) == set(qwen2.params)
    assert "blocks.0.attn.b_out" not in clean.param_grads and "blocks.0.mlp.w_gate" in clean.param_grads
    edits = [AblateHead(1, 3), BypassNorm("blocks.0.ln2"), Patch("blocks.1.hook_resid_pre", clean, positions=(0,))]
    run = qwen2.run([5, 19, 31, 2], grads=True, edits=edits)
    assert np.all(run["blocks.1.attn.hook_z"][:, 3] == 0)
    assert not np.allclose(run.logits, qwen2.run([5, 19, 31, 2]).logits)
    # the patching grid runs a batch through the shared key/value heads: each cell is its own edited run
    from model.patching import head_grid, logit_difference

    corrupted = qwen2.run([5, 19, 31, 2])
    grid = head_grid(qwen2, clean, corrupted, 40, 41)
    patched = qwen2.run([5, 19, 31, 2], edits=[Patch("blocks.0.attn.hook_z", clean, positions=(3,), head=1)])
    d_clean, d_corrupted = (float(logit_difference(t.logits, 40, 41)) for t in (clean, corrupted))
    restored = (float(logit_difference(patched.logits, 40, 41)) - d_corrupted) / (d_clean - d_corrupted)
    assert grid[0, 1, 3] == pytest.approx(restored, abs=1e-4) and abs(restored) > 1e-3


def test_an_f16_folder_costs_float32_in_memory_and_says_so_when_it_does_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model import hf_llama

    folder = tmp_path / "m"
    stored = write_llama(folder, dtype="float16")
    gpt = model.load(folder)
    assert all(p.dtype == np.float32 for p in gpt.params.values())
    n_params = sum(a.size for a in stored.values())
    needed, counted = hf_llama.memory_needed(gpt.config, [folder / "model.safetensors"])
    assert counted == n_params
    assert needed == 4 * n_params + (folder / "model.safetensors").stat().st_size  # float32, plus the f16 file
    monkeypatch.setattr(hf_llama, "available_memory", lambda: needed - 1)
    with pytest.raises(WeightsError, match=r"too big for this machine: .* need .* GiB .* available"):
        model.load(folder)
    monkeypatch.setattr(hf_llama, "available_memory", lambda: needed)
    model.load(folder)


def _edit_config(folder: Path, **changes: object) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _shard(folder: Path) -> None:
    """Two shards and their index, then the second shard lost."""
    tensors = dict(safetensors_numpy.load_file(str(folder / "model.safetensors")))
    names = sorted(tensors)
    halves = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for shard, part in halves.items():
        safetensors_numpy.save_file({n: tensors[n] for n in part}, str(folder / shard))
    weight_map = {name: shard for shard, part in halves.items() for name in part}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    (folder / "model.safetensors").unlink()
    (folder / "model-00002-of-00002.safetensors").unlink()


def _bigger_tokenizer(folder: Path) -> None:
    """A tokenizer of 100 tokens more than the model's 300 embeddings (another model's tokenizer.json)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.add_tokens([f"<extra_{i}>" for i in range(100)])
    tokenizer.save(str(folder / "tokenizer.json"))


def _int8_tensor(folder: Path) -> None:
    path = folder / "model.safetensors"
    tensors = dict(safetensors_numpy.load_file(str(path)))
    tensors["model.norm.weight"] = tensors["model.norm.weight"].astype(np.int8)
    safetensors_numpy.save_file(tensors, str(path))


BAD = {
    "missing shard": (_shard, "shard model-00002-of-00002.safetensors is missing: 2 shards are listed"),
    "heads and kv heads": (
        lambda f: _edit_config(f, num_key_value_heads=3),
        "num_attention_heads 4 is not a multiple of num_key_value_heads 3",
    ),
    "hidden and heads": (
        lambda f: _edit_config(f, num_attention_heads=5),
        "hidden_size 32 does not divide into num_attention_heads 5",
    ),
    "tokenizer bigger than the vocabulary": (_bigger_tokenizer, "tokenizer has 400 tokens but the model only 300"),
    "unsupported dtype": (_int8_tensor, "tensor 'model.norm.weight' has dtype int8, expected a float type"),
    "unsupported architecture": (
        lambda f: _edit_config(f, architectures=["FalconForCausalLM"], model_type="falcon"),
        "['FalconForCausalLM'] is not supported (supported: GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM, "
        "MistralForCausalLM)",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_every_bad_llama_folder_is_refused_in_one_line(tmp_path: Path, case: str) -> None:
    break_it, what = BAD[case]
    write_llama(tmp_path / "m", family="Llama")
    break_it(tmp_path / "m")
    with pytest.raises(WeightsError) as error:
        model.load(tmp_path / "m")
    assert "\n" not in str(error.value) and what in str(error.value), str(error.value)


def test_the_cli_refuses_a_bad_folder_with_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    write_llama(tmp_path / "m", family="Mistral", num_key_value_heads=3)
    done = run_tutor("trace", "--model", str(tmp_path / "m"), "the cat", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "not a multiple of num_key_value_heads 3" in done.stderr


def test_convert_writes_a_float32_copy_that_runs_the_same_and_maps_shared(tmp_path: Path) -> None:
    """`tutor convert`: an f16 folder (sharded, to cover the index) becomes float32 files that load as memory-mapped
    views with the same numbers, readable by other accounts under the usual umask; the config says float32."""
    folder, out = tmp_path / "m", tmp_path / "shared" / "m32"
    write_llama(folder, dtype="float16", torch_dtype="float16")
    tensors = dict(safetensors_numpy.load_file(str(folder / "model.safetensors")))
    names = sorted(tensors)
    halves = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for shard, part in halves.items():
        safetensors_numpy.save_file({n: tensors[n] for n in part}, str(folder / shard))
    index = {"metadata": {"total_size": 1}, "weight_map": {n: s for s, part in halves.items() for n in part}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "model.safetensors").unlink()
    done = run_tutor("convert", str(folder), str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"tutor --model {out}" in done.stdout and not (tmp_path / "shared" / "m32.partial").exists()
    from model.weights import safetensors_dtypes

    for shard in halves:
        assert safetensors_dtypes(out / shard) == {"F32"}
        assert (out / shard).stat().st_mode & 0o044 == 0o044  # safetensors alone writes 0600
    assert json.loads((out / "config.json").read_text())["torch_dtype"] == "float32"
    total_size = json.loads((out / "model.safetensors.index.json").read_text())["metadata"]["total_size"]
    assert total_size == sum(4 * t.size for t in tensors.values())  # every tensor as float32, headers left out
    half, full = model.load(folder), model.load(out)
    assert np.array_equal(half.run("the cat").logits, full.run("the cat").logits)
    assert not full.params["blocks.0.mlp.w_gate"].flags.owndata  # a view of the mapped file, not a copy


def test_a_llama3_scaled_folder_keeps_its_scaling_through_convert(tmp_path: Path) -> None:
    """Llama 3.1's `rope_scaling` read into the config (factor, the two wavelength bounds' factors, the original
    context), and kept by `tutor convert`'s float32 copy (its config.json, copied)."""
    folder, out = tmp_path / "m", tmp_path / "m32"
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    write_llama(folder, family="Llama", dtype="float16", rope_scaling=llama3 | {"original_max_position_embeddings": 16})
    done = run_tutor("convert", str(folder), str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    half, full = model.load(folder), model.load(out)
    assert half.config == full.config
    cfg = full.config
    scaling = (cfg.rope_scaling, cfg.rope_factor, cfg.rope_low_freq_factor, cfg.rope_high_freq_factor)
    assert scaling == ("llama3", 8.0, 1.0, 4.0) and (cfg.rope_original_ctx, cfg.pos_base) == (16, 50.0)
    assert np.array_equal(half.run("the cat").logits, full.run("the cat").logits)


BAD_CONVERT = {
    "already float32": (lambda tmp: write_llama(tmp / "m"), "already float32"),
    "not a folder": (lambda tmp: None, "not a folder"),
    "out exists": (lambda tmp: (write_llama(tmp / "m", dtype="float16"), (tmp / "out").mkdir()), "already exists"),
    "unsupported": (
        lambda tmp: (write_llama(tmp / "m", dtype="float16"), _edit_config(tmp / "m", architectures=["X"])),
        "is not supported",
    ),
}


@pytest.mark.parametrize("case", BAD_CONVERT, ids=list(BAD_CONVERT))
def test_convert_refuses_in_one_line(tmp_path: Path, case: str) -> None:
    make, what = BAD_CONVERT[case]
    make(tmp_path)
    done = run_tutor("convert", str(tmp_path / "m"), str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and what in done.stderr, done.stderr
    assert not (tmp_path / "out.partial").exists()
