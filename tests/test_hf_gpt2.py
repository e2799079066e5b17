"""GPT-2 checkpoints from local Hugging Face files: mapped exactly, memory-mapped, found in the cache,
refused in one line when wrong — and, when torch and transformers are installed, equal to the reference."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import model
from model import WeightsError

tokenizers = pytest.importorskip("tokenizers")  # the `gpt2` extra (also in `test`)
safetensors_numpy = pytest.importorskip("safetensors.numpy")

SENTENCES = [
    "The cat chased the dog across the garden.",
    "The dog ran, and the cat sat on the wall.",
    "Residual streams grow; LayerNorm pulls them back.",
    "猫追狗。狗追猫。",
    "Attention: every token asks, every token answers.",
] * 4

D, HEADS, LAYERS, N_CTX = 32, 4, 2, 24


def make_tokenizer(folder: Path) -> int:
    """A byte-level BPE trained on a few sentences, saved as tokenizer.json; returns its vocabulary size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(SENTENCES, trainer)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return tok.get_vocab_size()


def hf_config(vocab_size: int, **changes: object) -> dict[str, object]:
    return {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": vocab_size,
        "n_positions": N_CTX,
        "n_embd": D,
        "n_layer": LAYERS,
        "n_head": HEADS,
        "n_inner": None,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        **changes,
    }


def hf_tensors(
    vocab_size: int,
    seed: int = 0,
    prefix: str = "transformer.",
    buffers: bool = True,
    d: int = D,
    layers: int = LAYERS,
) -> dict:
    """GPT-2 tensors as Hugging Face names them: Conv1D weights [in, out], c_attn = [q | k | v]."""
    rng = np.random.default_rng(seed)

    def normal(*shape: int, scale: float = 0.2, mean: float = 0.0) -> np.ndarray:
        return (mean + scale * rng.standard_normal(shape)).astype(np.float32)

    t = {"wte.weight": normal(vocab_size, d), "wpe.weight": normal(N_CTX, d, scale=0.1)}
    for i in range(layers):
        h = f"h.{i}."
        t |= {
            h + "ln_1.weight": normal(d, mean=1.0),
            h + "ln_1.bias": normal(d),
            h + "attn.c_attn.weight": normal(d, 3 * d),
            h + "attn.c_attn.bias": normal(3 * d),
            h + "attn.c_proj.weight": normal(d, d),
            h + "attn.c_proj.bias": normal(d),
            h + "ln_2.weight": normal(d, mean=1.0),
            h + "ln_2.bias": normal(d),
            h + "mlp.c_fc.weight": normal(d, 4 * d),
            h + "mlp.c_fc.bias": normal(4 * d),
            h + "mlp.c_proj.weight": normal(4 * d, d),
            h + "mlp.c_proj.bias": normal(d),
        }
        if buffers:  # the causal mask as old checkpoints stored it
            t[h + "attn.bias"] = np.tril(np.ones((N_CTX, N_CTX), np.float32))[None, None]
            t[h + "attn.masked_bias"] = np.array(-1e4, np.float32)
    t |= {"ln_f.weight": normal(d, mean=1.0), "ln_f.bias": normal(d)}
    return {prefix + name: value for name, value in t.items()}


def write_folder(
    folder: Path,
    *,
    prefix: str = "transformer.",
    buffers: bool = True,
    d: int = D,
    layers: int = LAYERS,
    **config: object,
) -> dict:
    vocab_size = make_tokenizer(folder)
    tensors = hf_tensors(vocab_size, prefix=prefix, buffers=buffers, d=d, layers=layers)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(hf_config(vocab_size, n_embd=d, n_layer=layers, **config)))
    return {name.removeprefix(prefix): value for name, value in tensors.items()}


def reference_gpt2(t: dict[str, np.ndarray], ids: list[int]) -> tuple[np.ndarray, list[np.ndarray]]:
    """GPT-2 straight from the Hugging Face names, in float64: logits and hidden states
    (the embedding, each block's input, and ln_f of the last block's output, as transformers gives them)."""
    w = {k: v.astype(np.float64) for k, v in t.items()}

    def ln(x: np.ndarray, name: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x: np.ndarray, name: str) -> np.ndarray:
        return x @ w[name + ".weight"] + w[name + ".bias"]

    n = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    hidden = [x]
    for i in range(LAYERS):
        h = f"h.{i}."
        q, k, v = np.split(linear(ln(x, h + "ln_1"), h + "attn.c_attn"), 3, axis=-1)
        q, k, v = (a.reshape(n, HEADS, D // HEADS).transpose(1, 0, 2) for a in (q, k, v))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(D // HEADS) + np.triu(np.full((n, n), -np.inf), 1)
        pattern = np.exp(scores - scores.max(-1, keepdims=True))
        pattern /= pattern.sum(-1, keepdims=True)
        z = (pattern @ v).transpose(1, 0, 2).reshape(n, D)
        x = x + linear(z, h + "attn.c_proj")
        a = linear(ln(x, h + "ln_2"), h + "mlp.c_fc")
        a = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
        x = x + linear(a, h + "mlp.c_proj")
        hidden.append(x)
    hidden[-1] = ln(x, "ln_f")
    return hidden[-1] @ w["wte.weight"].T, hidden


def hidden_states_of(trace: model.Trace) -> list[np.ndarray]:
    """The trace's hooks in transformers' `hidden_states` order."""
    return [trace[f"blocks.{i}.hook_resid_pre"] for i in range(LAYERS)] + [trace["ln_final.hook_normalized"]]


# -- a hand-made checkpoint, no torch --------------------------------------------------------


@pytest.mark.parametrize("prefix", ["transformer.", ""], ids=["save_pretrained-names", "hub-names"])
def test_a_hand_made_checkpoint_matches_gpt2_computed_from_its_own_names(tmp_path: Path, prefix: str) -> None:
    tensors = write_folder(tmp_path / "m", prefix=prefix)
    gpt = model.load(tmp_path / "m")
    cfg = gpt.config
    assert (cfg.positional, cfg.norm, cfg.residual, cfg.causal, cfg.ln_eps) == ("learned", "pre", True, True, 1e-5)
    assert (cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.d_mlp, cfg.n_ctx) == (D, HEADS, LAYERS, 4 * D, N_CTX)
    assert gpt.name == "m" and isinstance(gpt.tokenizer, model.BPETokenizer)
    trace = gpt.run("The cat chased the dog. 猫追狗")
    logits, hidden = reference_gpt2(tensors, trace.tokens)
    assert np.abs(trace.logits - logits).max() < 1e-4
    for ours, theirs in zip(hidden_states_of(trace), hidden, strict=True):
        assert np.abs(ours - theirs).max() < 1e-4
    assert all(a.dtype == np.float32 for a in trace.activations.values())


def test_the_parameters_are_views_over_the_mapped_file(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    gpt = model.load(tmp_path / "m")
    for name, array in gpt.params.items():
        assert not array.flags.owndata and not array.flags.writeable, name
        assert array.dtype == np.float32
    assert gpt.params["blocks.1.attn.w_qkv"].shape == (D, 3 * D)  # Conv1D's [in, out], as x @ w wants


def test_the_model_safetensors_path_opens_its_folder(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    assert model.load(tmp_path / "m" / "model.safetensors").config.positional == "learned"


def test_a_tied_lm_head_is_accepted_and_an_untied_one_refused(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    tensors = write_folder(folder, buffers=False)
    full = {"transformer." + k: v for k, v in tensors.items()}
    safetensors_numpy.save_file({**full, "lm_head.weight": tensors["wte.weight"]}, str(folder / "model.safetensors"))
    model.load(folder)
    safetensors_numpy.save_file(
        {**full, "lm_head.weight": tensors["wte.weight"] + 1}, str(folder / "model.safetensors")
    )
    with pytest.raises(WeightsError, match=r"lm_head\.weight differs"):
        model.load(folder)


def test_vocab_and_merges_give_the_same_tokens_as_tokenizer_json(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    write_folder(folder)
    text = "The dog sat on the cat. 猫追狗\nok"
    expected = model.load(folder).tokenizer.encode(text)
    bpe = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).model
    bpe.save(str(folder))  # vocab.json + merges.txt
    (folder / "tokenizer.json").unlink()
    tok = model.load(folder).tokenizer
    assert tok.encode(text) == expected and tok.decode(expected) == text


def test_pieces_read_as_text_with_spaces_and_partial_characters_visible(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    tok = model.load(tmp_path / "m").tokenizer
    assert isinstance(tok, model.BPETokenizer)
    ids = tok.encode(" the cat")
    assert tok.spelling(ids[0]).startswith("Ġ")  # the vocabulary's spelling
    assert "".join(tok.piece(i) for i in ids) == " the cat" and tok.piece(ids[0]).startswith(" ")
    assert tok.piece(tok.end_of_text) == "<|endoftext|>"
    lone = tok.encode("鼠")  # not in the training text: three bytes, three tokens
    assert [tok.piece(i) for i in lone] == ["<0xE9>", "<0xBC>", "<0xA0>"] and tok.decode(lone) == "鼠"
    from tutor.number_style import visible_piece

    assert visible_piece(tok.piece(ids[0])).startswith("␣")
    for text in ["", "héllo wörld\t\n", "猫追狗 and 🐈", "<|endoftext|> x"]:
        assert tok.decode(tok.encode(text)) == text
    with pytest.raises(model.TokenizerError):
        tok.piece(tok.vocab_size)


def test_trace_pieces_top_k_and_generate_work_with_bpe(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    gpt = model.load(tmp_path / "m")
    trace = gpt.run("The cat")
    assert "".join(trace.pieces) == "The cat"
    top = trace.top_k(5)
    assert len(top) == 5 and all(piece == gpt.tokenizer.piece(i) for i, piece, _ in top)
    assert isinstance(gpt.generate("The cat", 5, temperature=0), str)
    assert gpt.run("").tokens == []


def test_a_padded_embedding_larger_than_the_tokenizer_is_fine(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    vocab = make_tokenizer(folder)
    tensors = hf_tensors(vocab + 8)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(hf_config(vocab + 8)))
    gpt = model.load(folder)
    assert gpt.tokenizer.vocab_size == vocab + 8 and gpt.tokenizer.piece(vocab + 1) == f"<unused:{vocab + 1}>"
    assert len(gpt.run("The cat").top_k(3)) == 3


# -- the Hugging Face cache --------------------------------------------------------------------


def make_cache_entry(cache: Path, repo: str, revision: str = "abc123") -> Path:
    entry = cache / ("models--" + repo.replace("/", "--"))
    snapshot = entry / "snapshots" / revision
    write_folder(snapshot)
    (entry / "refs").mkdir(parents=True)
    (entry / "refs" / "main").write_text(revision)
    return snapshot


def test_a_name_is_found_in_the_hf_cache_at_refs_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "hub"
    make_cache_entry(cache, "gpt2", "new")
    stale = cache / "models--gpt2" / "snapshots" / "old"
    stale.mkdir(parents=True)  # an older, incomplete revision: refs/main wins
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    gpt = model.load("gpt2")
    assert gpt.name == "gpt2" and gpt.config.d_model == D


def test_hf_home_and_owner_prefixed_repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    make_cache_entry(tmp_path / "hf" / "hub", "distilbert/distilgpt2")
    assert model.load("distilgpt2").config.n_layers == LAYERS  # a bare name finds the owner's repo
    assert model.load("distilbert/distilgpt2").name == "distilbert/distilgpt2"


def test_not_found_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(WeightsError) as error:
        model.load("gpt2-nonexistent-size")
    message = str(error.value)
    assert "\n" not in message and str(tmp_path / "hub") in message and "tiny" in message


# -- one line for everything wrong -------------------------------------------------------------


def _edit_config(folder: Path, **changes: object) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _replace_tensor(folder: Path, name: str, value: np.ndarray | None) -> None:
    path = folder / "model.safetensors"
    tensors = dict(safetensors_numpy.load_file(str(path)))
    if value is None:
        del tensors[name]
    else:
        tensors[name] = value
    safetensors_numpy.save_file(tensors, str(path))


BAD_CASES = {
    "no config": (lambda f: (f / "config.json").unlink(), "config.json", "missing"),
    "config not JSON": (lambda f: (f / "config.json").write_text("{"), "config.json", "JSON"),
    "llama": (lambda f: _edit_config(f, model_type="llama"), "config.json", "'llama' is not supported"),
    "relu": (lambda f: _edit_config(f, activation_function="relu"), "config.json", "'relu'"),
    "no n_embd": (lambda f: (f / "config.json").write_text('{"model_type": "gpt2"}'), "config.json", "n_embd"),
    "heads": (lambda f: _edit_config(f, n_head=5), "config.json", "n_heads"),
    "untied": (lambda f: _edit_config(f, tie_word_embeddings=False), "config.json", "untied"),
    "no weights": (lambda f: (f / "model.safetensors").rename(f / "pytorch_model.bin"), "model.safetensors", "pickle"),
    "no tokenizer": (lambda f: (f / "tokenizer.json").unlink(), "tokenizer.json", "missing"),
    "bad tokenizer": (lambda f: (f / "tokenizer.json").write_text("{}"), "tokenizer.json", "tokenizer"),
    "small vocab": (lambda f: _edit_config(f, vocab_size=10), "model.safetensors", "'transformer.wte.weight'"),
    "wrong shape": (
        lambda f: _replace_tensor(f, "transformer.h.1.attn.c_attn.weight", np.zeros((D, D), np.float32)),
        "model.safetensors",
        "'transformer.h.1.attn.c_attn.weight' has shape [32, 32], expected [32, 96]",
    ),
    "missing tensor": (
        lambda f: _replace_tensor(f, "transformer.h.0.mlp.c_fc.bias", None),
        "model.safetensors",
        "missing tensor 'transformer.h.0.mlp.c_fc.bias'",
    ),
    "extra tensor": (
        lambda f: _replace_tensor(f, "transformer.h.2.ln_1.weight", np.ones(D, np.float32)),
        "model.safetensors",
        "unexpected tensor 'transformer.h.2.ln_1.weight'",
    ),
    "NaN": (
        lambda f: _replace_tensor(f, "transformer.ln_f.bias", np.full(D, np.nan, np.float32)),
        "model.safetensors",
        "NaN",
    ),
    "truncated": (
        lambda f: (f / "model.safetensors").write_bytes((f / "model.safetensors").read_bytes()[:-100]),
        "model.safetensors",
        "truncated",
    ),
}


@pytest.mark.parametrize("case", BAD_CASES, ids=list(BAD_CASES))
def test_every_broken_folder_is_refused_in_one_line(tmp_path: Path, case: str) -> None:
    break_it, file_name, what = BAD_CASES[case]
    folder = tmp_path / "m"
    write_folder(folder)
    break_it(folder)
    with pytest.raises(WeightsError) as error:
        model.load(folder)
    message = str(error.value)
    assert "\n" not in message and file_name in message and what in message, message


def test_the_context_length_is_n_positions_or_the_older_n_ctx_and_missing_both_is_a_missing_key() -> None:
    from model.hf_gpt2 import gpt2_config

    path = Path("config.json")
    without = {k: v for k, v in hf_config(100).items() if k != "n_positions"}
    assert gpt2_config(path, hf_config(100)).n_ctx == N_CTX
    assert gpt2_config(path, {**without, "n_ctx": 24}).n_ctx == 24
    for raw in (without, {**without, "n_positions": None}):
        with pytest.raises(WeightsError) as error:
            gpt2_config(path, raw)
        assert str(error.value) == "config.json: missing key 'n_positions'"


def test_a_folder_without_config_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match=r"config\.json: missing"):
        model.load(tmp_path)


def test_without_the_tokenizers_package_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_folder(tmp_path / "m")
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import tokenizers → ImportError
    with pytest.raises(WeightsError, match=r"tutor\[gpt2\]"):
        model.load(tmp_path / "m")


# -- the reference: transformers itself --------------------------------------------------------


@pytest.fixture(scope="module")
def reference_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("hf") / "tiny-gpt2"
    vocab_size = make_tokenizer(folder)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=vocab_size,
        n_positions=N_CTX,
        n_embd=D,
        n_layer=LAYERS,
        n_head=HEADS,
        initializer_range=0.2,
        bos_token_id=0,
        eos_token_id=0,
    )
    hf = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # LayerNorm's γ = 1 and β = 0 at init would hide a swapped γ/β
        for name, param in hf.named_parameters():
            if "ln_" in name:
                param.add_(0.2 * torch.randn_like(param))
    hf.save_pretrained(folder, safe_serialization=True)
    return folder, hf


@pytest.mark.reference
def test_logits_and_every_hidden_state_match_transformers(reference_checkpoint: tuple[Path, object]) -> None:
    import torch

    folder, hf = reference_checkpoint
    gpt = model.load(folder)
    for text in ["The cat chased the dog across the garden.", "猫追狗", "x"]:
        trace = gpt.run(text)
        with torch.no_grad():
            out = hf(torch.tensor([trace.tokens]), output_hidden_states=True)  # type: ignore[operator]
        assert np.abs(trace.logits - out.logits[0].numpy()).max() < 1e-4
        assert len(out.hidden_states) == LAYERS + 1
        for ours, theirs in zip(hidden_states_of(trace), out.hidden_states, strict=True):
            assert np.abs(ours - theirs[0].numpy()).max() < 1e-4


@pytest.mark.reference
def test_the_tokenizer_matches_transformers(reference_checkpoint: tuple[Path, object]) -> None:
    transformers = pytest.importorskip("transformers")
    folder, _ = reference_checkpoint
    theirs = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    ours = model.load(folder).tokenizer
    for text in ["The cat chased the dog.", " leading space", "猫追狗\n\nend"]:
        assert ours.encode(text) == theirs.encode(text)


# -- the app at GPT-2 size -------------------------------------------------------------------


async def _app_with(folder: Path, tmp_path: Path, size: tuple[int, int] = (120, 40)):
    from tutor.app import TutorApp
    from tutor.progress import ProgressStore

    app = TutorApp(model.load(folder), "en", store=ProgressStore(tmp_path / "state.json"), content=Path("/nonexistent"))
    return app, app.run_test(size=size)


def _screen(app: object) -> str:
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


async def _type(pilot: object, app: object, text: str) -> None:
    """The prompt set at once (as a lesson link sets it): one forward pass, not one per key."""
    await pilot.pause()  # type: ignore[attr-defined]
    app.main.set_prompt(text)  # type: ignore[attr-defined]
    await app.workers.wait_for_complete()  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


async def test_a_768_wide_model_points_at_its_largest_dimensions(tmp_path: Path) -> None:
    from tutor.number_style import top_dims
    from tutor.panels.vectors_panel import VectorsPanel
    from tutor.widgets.heatmap import HeatmapGrid

    write_folder(tmp_path / "wide", d=768, layers=1, n_head=12)
    app, running = await _app_with(tmp_path / "wide", tmp_path)
    async with running as pilot:
        await _type(pilot, app, "The cat chased")
        trace = app.main.place.trace
        x = trace["blocks.0.hook_resid_pre"][-1]
        dims = top_dims(x)
        assert abs(dims[0][1]) == np.abs(x).max()
        note = str(app.main.query_one("#vectors-note").render())
        assert f"dim {dims[0][0]} " in note and f" {dims[1][0]} " in note
        grid = app.main.query_one(VectorsPanel).query_one(HeatmapGrid)
        assert grid.virtual_size.width > grid.size.width  # 768 columns: it scrolls
        grid.scroll_to(x=grid.max_scroll_x, animate=False)
        await pilot.pause()
        assert " 767 " in _screen(app)


async def test_twelve_blocks_and_heads_stay_navigable(tmp_path: Path) -> None:
    from tutor.widgets.step_bar import StepBar

    write_folder(tmp_path / "deep", d=48, layers=12, n_head=12)
    app, running = await _app_with(tmp_path / "deep", tmp_path)
    async with running as pilot:
        await _type(pilot, app, "The cat")
        await pilot.press("shift+down")
        await pilot.pause()
        screen = _screen(app)
        assert "B11" in screen and " out " in screen  # the step bar scrolled to the end
        assert app.main.place.trace.steps[app.main.place.step_index].name == "unembed"
        for _ in range(3):
            await pilot.press("pageup")
        assert app.main.place.trace.steps[app.main.place.step_index].name == "blocks.9.ln1"
        await pilot.pause()
        bar = app.main.query_one(StepBar)
        assert "B9" in "".join(s.text for s in bar.render_line(0))
        for _ in range(13):
            await pilot.press("f4")
        assert app.main.place.head == 1  # 12 heads, round and round


async def test_residual_norms_across_orders_of_magnitude_get_log_bars(tmp_path: Path) -> None:
    folder = tmp_path / "massive"
    tensors = write_folder(folder, buffers=False)
    full = {"transformer." + k: v for k, v in tensors.items()}
    full["transformer.h.1.mlp.c_proj.bias"] = np.where(np.arange(D) == 7, 3000.0, 0.0).astype(np.float32)
    safetensors_numpy.save_file(full, str(folder / "model.safetensors"))  # one massive dimension, as in GPT-2
    app, running = await _app_with(folder, tmp_path)
    async with running as pilot:
        await _type(pilot, app, "The cat")
        app.main.goto_step_name("blocks.1.mlp_add")  # the last residual add: the residual panel opens
        await pilot.pause()
        assert app.main.query_one("#panels").active == "residual"
        assert "this step: B1 mlp (log)" in _screen(app)  # the lines on top: a log axis too
        from tutor.panels.residual_panel import ResidualPanel
        from tutor.panels.stream_panel import StreamPanel

        stream = app.main.query_one(StreamPanel)
        stream.scroll_to_widget(stream.query_one(ResidualPanel), animate=False)  # the table, below the lens
        await pilot.pause()
        screen = _screen(app)
        assert "(log)" in screen and "…" not in screen.split("‖x‖ of the residual")[1].split("largest")[0]
        bars = {}
        for line in screen.split("\n"):
            for label in ("embed", "B0 mlp", "B1 mlp"):
                if f" {label} " in line and "█" in line:
                    bars[label] = line.count("█")
        assert 0 < bars["embed"] < bars["B1 mlp"] and bars["B0 mlp"] < bars["B1 mlp"]
        assert "dim 7 +300" in screen and "(100% of ‖x‖²)" in screen  # the massive dimension is named


async def test_a_long_prompt_keeps_the_token_cursor_in_the_strip(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    app, running = await _app_with(tmp_path / "m", tmp_path, size=(80, 24))
    async with running as pilot:
        await _type(pilot, app, "the cat sat on the wall and the dog ran " * 3)
        n = len(app.main.place.trace.tokens)
        assert n > 20
        strip = lambda: str(app.main.query_one("#tokens").render())  # noqa: E731
        assert f"▸{n - 1} " in strip()
        await pilot.press("alt+left", "alt+left")
        assert app.main.place.token == n - 3
        app.main.action_move_token(-n)
        await pilot.pause()
        assert app.main.place.token == 0 and "▸0 " in strip()


def test_a_stale_forward_pass_stops_early(tmp_path: Path) -> None:
    write_folder(tmp_path / "m")
    gpt = model.load(tmp_path / "m")
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(model.Stopped):
        gpt.run("The cat", stop=stop)
    assert len(calls) == 4
    assert gpt.run("The cat", stop=lambda: False).logits.shape[0] == len(gpt.tokenizer.encode("The cat"))


@pytest.mark.reference
def test_gradients_match_transformers_autograd(reference_checkpoint: tuple[Path, object]) -> None:
    """`grads=True` on an HF folder against PyTorch autograd through `GPT2LMHeadModel` on the same weights:
    the loss (transformers' `labels=` loss is the same shifted mean), every parameter's gradient, and
    ∂L/∂(each hidden state) — the stream into every block and the final LayerNorm's output."""
    import torch

    from model.hf_gpt2 import hf_names

    folder, hf = reference_checkpoint
    gpt = model.load(folder)
    names = hf_names(gpt.config)
    for text in ["The cat chased the dog across the garden.", "猫追狗"]:
        trace = gpt.run(text, grads=True)
        hf.zero_grad(set_to_none=True)  # type: ignore[attr-defined]
        ids = torch.tensor([trace.tokens])
        out = hf(ids, labels=ids, output_hidden_states=True)  # type: ignore[operator]
        for hidden in out.hidden_states:
            hidden.retain_grad()
        out.loss.backward()
        assert trace.loss == pytest.approx(out.loss.item(), abs=1e-5)
        for hf_name, param in hf.transformer.named_parameters():  # type: ignore[attr-defined]
            theirs = param.grad.numpy()
            ours = trace.param_grads[names[hf_name]]
            scale = max(float(np.abs(theirs).max()), 1e-6)
            assert np.abs(ours - theirs).max() / scale < 1e-4, hf_name
        for name, hidden in zip(
            [f"blocks.{i}.hook_resid_pre" for i in range(LAYERS)] + ["ln_final.hook_normalized"],
            out.hidden_states,
            strict=True,
        ):
            theirs = hidden.grad[0].numpy()
            assert np.abs(trace[name + "_grad"] - theirs).max() / np.abs(theirs).max() < 1e-4, name
