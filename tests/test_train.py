"""Training: corpus and baselines, schedule and optimizer, determinism, resume, NaN, and `tutor train`."""

from __future__ import annotations

import itertools
import json
import math
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import model
from model import train as training
from model.corpus import (
    CorpusError,
    Document,
    build_corpus,
    lesson_documents,
    load_corpus,
    ngram_baselines,
    stdlib_documents,
    validation_windows,
)
from model.train import RECIPES, AdamW, Recipe, TrainingError, load_state, new_state, run
from model.weights import read_safetensors
from tutor.cli import main

SMALL = Recipe(
    name="tiny",
    n_ctx=16,
    d_model=16,
    n_heads=2,
    n_layers=2,
    d_mlp=32,
    batch_size=8,
    steps=40,
    learning_rate=1e-2,
    min_learning_rate=1e-3,
    warmup_steps=5,
    eval_every=10,
    eval_windows=8,
    stdlib_text=False,
)

EN = "The cat chases the dog. The dog chases the ball. A token is a piece of text. " * 12
ZH = "猫追狗。狗追球。词元是一段文字。注意力看见每一个词元。" * 12


@pytest.fixture
def lessons(tmp_path: Path) -> Path:
    for lang, text in (("en", EN), ("zh", ZH)):
        (tmp_path / "content" / lang).mkdir(parents=True)
        (tmp_path / "content" / lang / "01-tokens.md").write_text(text, encoding="utf-8")
    return tmp_path / "content"


@pytest.fixture
def corpus(lessons: Path) -> model.corpus.Corpus:
    return load_corpus(lessons, stdlib_text=False)


# -- corpus and baselines ------------------------------------------------------------------


def test_corpus_splits_the_last_tenth_of_every_document(corpus: model.corpus.Corpus) -> None:
    assert [d.name for d in corpus.documents] == ["zh/01-tokens.md", "en/01-tokens.md"]
    decoded = corpus.tokenizer.decode(corpus.validation.tolist()).split(model.tokenizer.END_OF_TEXT)
    assert decoded[:2] == [ZH[-round(len(ZH) * 0.1) :], EN[-round(len(EN) * 0.1) :]]
    assert corpus.train.size + corpus.validation.size == len(ZH) + len(EN) + 4  # one end-of-text per half
    assert "猫" in corpus.tokenizer.chars and corpus.train.dtype == np.int32


def test_stdlib_docstrings_are_text_python_ships() -> None:
    documents = stdlib_documents()
    assert len(documents) > 50
    assert sum(len(d.text) for d in documents) > 300_000
    assert all(d.name.startswith("stdlib/") and not d.name.startswith("stdlib/_") for d in documents)


def test_missing_and_unreadable_lessons_are_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such lessons folder"):
        lesson_documents(tmp_path / "nowhere")
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "bad.md").write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(CorpusError, match=r"bad\.md: cannot read"):
        lesson_documents(tmp_path)
    with pytest.raises(CorpusError, match="empty"):
        build_corpus([])


def test_baselines_by_hand() -> None:
    train = np.array([1, 2, 1, 2, 1, 2, 1], dtype=np.int32)  # 1 → 2 → 1 → ...
    inputs, targets = np.array([[1, 2]]), np.array([[2, 1]])
    base = ngram_baselines(train, inputs, targets, vocab_size=4)
    p_unigram = [(3 + 1) / (7 + 4), (4 + 1) / (7 + 4)]  # targets 2 and 1
    p_bigram = [(3 + 1) / (3 + 4), (3 + 1) / (3 + 4)]  # 1→2 seen 3 of 3 times, 2→1 3 of 3
    assert base["unigram"] == pytest.approx(-np.mean(np.log(p_unigram)))
    assert base["bigram"] == pytest.approx(-np.mean(np.log(p_bigram)))


def test_validation_windows_predict_each_target_once() -> None:
    stream = np.arange(50, dtype=np.int32)
    inputs, targets = validation_windows(stream, 8, 100)
    assert inputs.shape == targets.shape == (6, 8)
    assert np.array_equal(targets.reshape(-1), np.arange(1, 49))
    with pytest.raises(CorpusError):
        validation_windows(stream[:5], 8, 100)


# -- schedule, optimizer, clipping ---------------------------------------------------------


def test_learning_rate_warms_up_then_follows_a_cosine() -> None:
    r = replace(SMALL, learning_rate=1.0, min_learning_rate=0.1, warmup_steps=4)
    rates = [training.learning_rate(s, r, 24) for s in range(24)]
    assert rates[:4] == [0.25, 0.5, 0.75, 1.0]
    assert rates[23] == pytest.approx(0.1)
    assert rates[4 + 19 // 2] == pytest.approx(0.55, abs=0.05)
    assert all(a >= b for a, b in itertools.pairwise(rates[3:]))


def test_weight_decay_spares_biases_norms_and_embeddings() -> None:
    decayed = {name for name in model.parameter_shapes(SMALL.config(300)) if training.decays(name)}
    assert decayed == {
        f"blocks.{i}.{w}" for i in range(2) for w in ("attn.w_qkv", "attn.w_out", "mlp.w_in", "mlp.w_out")
    }


def test_adamw_first_step_and_decoupled_decay() -> None:
    params = {"blocks.0.mlp.w_in": np.full((2, 2), 2.0, np.float32), "wte": np.full((2, 2), 2.0, np.float32)}
    grads = {k: np.full((2, 2), 0.5, np.float32) for k in params}
    AdamW.zeros_like(params).update(params, grads, 0.1, 1, replace(SMALL, weight_decay=0.5))
    # step 1: m̂ = g, v̂ = g², so the step is lr·g/(|g| + ε) ≈ lr; the matrix also shrinks by lr·λ
    assert params["wte"] == pytest.approx(np.full((2, 2), 2.0 - 0.1), abs=1e-6)
    assert params["blocks.0.mlp.w_in"] == pytest.approx(np.full((2, 2), 2.0 * (1 - 0.05) - 0.1), abs=1e-6)
    assert {p.dtype for p in params.values()} == {np.dtype(np.float32)}


def test_clipping_scales_to_the_global_norm() -> None:
    grads = {"a": np.array([3.0], np.float32), "b": np.array([4.0], np.float32)}
    assert training.clip_global_norm(grads, 1.0) == pytest.approx(5.0)
    assert math.hypot(grads["a"][0], grads["b"][0]) == pytest.approx(1.0, abs=1e-5)
    assert training.clip_global_norm(grads, 10.0) == pytest.approx(1.0, abs=1e-5)  # under the limit: untouched


def test_recipes_change_one_switch_each() -> None:
    tiny = RECIPES["tiny"]
    assert (tiny.positional, tiny.norm, tiny.residual, tiny.d_model, tiny.n_heads, tiny.n_layers, tiny.n_ctx) == (
        "sinusoidal", "pre", True, 64, 4, 4, 64
    )  # fmt: skip
    deep = RECIPES["deep"]
    assert (deep.n_layers, deep.d_model, deep.d_mlp) == (16, 32, 128)
    assert 12 * deep.n_layers * deep.d_model**2 == 12 * tiny.n_layers * tiny.d_model**2  # the same matrix work
    for name, recipe in RECIPES.items():
        family = deep if name.startswith("deep") else tiny
        changed = {k for k, v in vars(recipe).items() if v != vars(family)[k]} - {"name"}
        expected = {"deep-postnorm-nowarmup": 2, "deep-nonorm-nowarmup": 2, "deep-lr1e-3": 2}.get(name, 1)
        expected = 3 if name == "deep-postnorm-lr1e-3" else expected
        expected = {"tiny-lr1e-1": 5, "nonorm-lr1e-1": 6}.get(name, expected)  # the stability sweep's recipe
        assert len(changed) == (0 if recipe in (tiny, deep) else expected), name
        recipe.config(400)  # every recipe builds a valid model
    assert {k for k, v in vars(RECIPES["deep-postnorm-nowarmup"]).items() if v != vars(deep)[k]} == {
        "name",
        "norm",
        "warmup_steps",
    }


# -- training runs -------------------------------------------------------------------------


def test_same_seed_same_losses_bit_for_bit(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    a = run(new_state(corpus, SMALL, seed=3, steps=8), corpus, tmp_path / "a.safetensors")
    b = run(new_state(corpus, SMALL, seed=3, steps=8), corpus, tmp_path / "b.safetensors")
    c = run(new_state(corpus, SMALL, seed=4, steps=8), corpus, tmp_path / "c.safetensors")
    assert a.train_curve == b.train_curve and a.val_curve == b.val_curve
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert a.train_curve != c.train_curve
    moments = [*a.optimizer.m.values(), *a.optimizer.v.values()]
    assert {x.dtype for x in [*a.params.values(), *moments]} == {np.dtype(np.float32)}  # float32 throughout


def test_resume_equals_the_uninterrupted_run(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    whole = run(new_state(corpus, SMALL, seed=1, steps=15), corpus, tmp_path / "whole.safetensors")
    path = tmp_path / "parts.safetensors"
    calls = iter(range(100))
    first = run(new_state(corpus, SMALL, seed=1, steps=15), corpus, path, should_stop=lambda: next(calls) == 6)
    assert first.step == 7 and path.is_file() and training.optimizer_path(path).is_file()
    resumed = run(load_state(path, corpus), corpus, path)
    assert resumed.step == 15
    assert resumed.train_curve == whole.train_curve
    assert all(np.array_equal(resumed.params[k], whole.params[k]) for k in whole.params)
    assert all(np.array_equal(resumed.optimizer.v[k], whole.optimizer.v[k]) for k in whole.params)
    assert set(whole.val_curve) <= set(resumed.val_curve)  # plus the point where it stopped


def test_loss_goes_down_and_beats_the_bigram_baseline(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    path = tmp_path / "small.safetensors"
    state = run(new_state(corpus, replace(SMALL, eval_every=50), seed=0, steps=150), corpus, path)
    assert np.mean(state.train_curve[-10:]) < 0.5 * np.mean(state.train_curve[:5])
    assert [s for s, _ in state.val_curve] == [0, 50, 100, 150]
    first, last = state.val_curve[0][1], state.val_curve[-1][1]
    assert last < first - 3.0
    assert last < state.baselines["bigram"] - 1.0  # the text repeats: context pays


def test_checkpoint_loads_and_carries_its_curves(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    path = tmp_path / "small.safetensors"
    run(new_state(corpus, SMALL, seed=0, steps=10), corpus, path)
    gpt = model.load(path)
    assert gpt.trained and gpt.name == "tiny"
    _, metadata = read_safetensors(path)
    record = json.loads(metadata["training"])
    assert len(record["train_loss"]) == 10 and [s for s, _ in record["val_loss"]] == [0, 10]
    assert set(record["baselines"]) == {"unigram", "bigram"}
    assert record["corpus"]["validation_split"] == "last 10% of each document"
    tensors, opt_meta = read_safetensors(training.optimizer_path(path))
    assert opt_meta["step"] == "10" and len(tensors) == 2 * len(gpt.params)


def test_resume_refuses_another_corpus(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    path = tmp_path / "small.safetensors"
    run(new_state(corpus, SMALL, seed=0, steps=2), corpus, path)
    other = build_corpus([Document("en/x.md", EN + "something new")])
    with pytest.raises(TrainingError, match="corpus changed"):
        load_state(path, other)


def test_nan_is_a_result_the_last_good_checkpoint_records(
    corpus: model.corpus.Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "small.safetensors"
    real = training.loss_and_gradients
    steps = iter(range(100))

    def poisoned(*args: object) -> tuple[float, dict]:
        loss, grads = real(*args)  # type: ignore[arg-type]
        return (float("nan") if next(steps) == 13 else loss), grads

    monkeypatch.setattr(training, "loss_and_gradients", poisoned)
    state = run(new_state(corpus, SMALL, seed=0, steps=20), corpus, path)
    assert state.step == 10 and all(np.isfinite(p).all() for p in state.params.values())
    assert state.diverged is not None and state.diverged["step"] == 14 and state.diverged["what"] == "loss"
    assert len(state.diverged["train_loss_since_checkpoint"]) == 3  # steps 11, 12, 13
    assert state.divergence_line() == "diverged at step 14 (loss became nan); kept the last good checkpoint, step 10"
    saved = load_state(path, corpus)
    assert saved.step == 10 and saved.diverged == state.diverged
    assert saved.depth is not None and saved.depth["trained"]["step"] == 10  # measured on the kept model
    info = json.loads(read_safetensors(path)[1]["training"])
    assert info["diverged"]["step"] == 14  # in the metadata, for the app


def test_nan_before_the_first_checkpoint_keeps_the_start(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    wild = replace(SMALL, learning_rate=1e30, min_learning_rate=1e30, warmup_steps=1, grad_clip=1e30)
    state = run(new_state(corpus, wild, seed=0, steps=6), corpus, tmp_path / "wild.safetensors")
    assert state.step == 0 and state.diverged is not None and state.diverged["value"] in ("nan", "inf")
    assert load_state(tmp_path / "wild.safetensors", corpus).step == 0


def test_a_finished_run_records_its_depth_profile(corpus: model.corpus.Corpus, tmp_path: Path) -> None:
    state = run(new_state(corpus, SMALL, seed=0, steps=30), corpus, tmp_path / "p.safetensors")
    depth = load_state(tmp_path / "p.safetensors", corpus).depth
    assert depth is not None and depth == state.depth
    n = SMALL.n_layers
    assert depth["points"] == ["blocks.0.hook_resid_pre", "blocks.0.hook_resid_post", "blocks.1.hook_resid_post"]
    for when in ("init", "trained"):
        figures = depth[when]
        assert len(figures["stream_norm"]) == len(figures["stream_grad"]) == len(figures["similarity"]) == n + 1
        assert len(figures["param_grad"]) == n and all(g > 0 for g in figures["param_grad"])
        assert all(-1.0 <= c <= 1.0 for c in figures["similarity"])
    assert depth["trained"]["loss"] < depth["init"]["loss"] - 1.0  # 30 steps on repeated text
    assert depth["init"]["loss"] == pytest.approx(state.val_curve[0][1], abs=0.5)  # same model, fewer windows


# -- the command ---------------------------------------------------------------------------


def one_error_line(capsys: pytest.CaptureFixture[str], after_progress: bool = False) -> str:
    """The error, alone on stderr (or after the progress bar's last frame, once training ran)."""
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == (2 if after_progress else 1), err
    last = err.splitlines()[-1]
    assert last.startswith("tutor: error: ")
    return last


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--variant", "gpt5"], "unknown variant 'gpt5'"),
        (["--steps", "0"], "--steps must be at least 1"),
        (["--seed", "-3"], "--seed must not be negative"),
        (["--corpus", "/no/such/folder"], "no such lessons folder"),
        (["--resume"], "nothing to resume"),
    ],
)
def test_train_command_errors(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train", "--out", str(tmp_path / "m.safetensors"), *extra]) != 0
    assert message in one_error_line(capsys)


def test_train_command_rejects_paths_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["train", "--out", str(blocker / "m.safetensors")]) != 0
    assert "cannot write" in one_error_line(capsys)
    assert main(["train", "--out", str(tmp_path)]) != 0
    assert "is a folder" in one_error_line(capsys)
    assert main(["train", "--out", str(blocker)]) != 0
    assert "already exists" in one_error_line(capsys)


def test_train_command_unreadable_lesson(lessons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (lessons / "en" / "02-broken.md").write_bytes(b"\xff\xff")
    assert main(["train", "--corpus", str(lessons), "--out", str(tmp_path / "m.safetensors")]) != 0
    assert "02-broken.md: cannot read" in one_error_line(capsys)


def small_recipes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        training, "RECIPES", {**RECIPES, "tiny": SMALL, "rope": replace(SMALL, name="rope", positional="rope")}
    )


def test_train_command_trains_and_resumes(
    lessons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_recipes(monkeypatch)
    out = tmp_path / "rope.safetensors"
    args = ["train", "--variant", "rope", "--corpus", str(lessons), "--out", str(out), "--lessons-only", "--seed", "2"]
    assert main([*args, "--steps", "4"]) == 0
    assert "finished at step 4/4" in capsys.readouterr().out
    assert model.load(out).config.positional == "rope"
    assert main([*args[:-3], "--steps", "6", "--resume"]) == 0  # no --lessons-only: the checkpoint knows
    assert "finished at step 6/6" in capsys.readouterr().out
    assert main(["train", "--variant", "tiny", "--corpus", str(lessons), "--out", str(out), "--resume"]) != 0
    assert "trains variant 'rope'" in one_error_line(capsys)
    assert main([*args, "--steps", "3", "--resume"]) != 0
    assert "already at step 6; --steps 3 would go back" in one_error_line(capsys)


def test_train_command_reports_divergence_and_exits_0(
    lessons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_recipes(monkeypatch)
    monkeypatch.setattr(training, "loss_and_gradients", lambda *args: (float("nan"), {}))
    out = tmp_path / "m.safetensors"
    assert main(["train", "--corpus", str(lessons), "--out", str(out), "--lessons-only"]) == 0
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    assert "diverged at step 1 (loss became nan); kept the last good checkpoint, step 0" in printed.out
    assert load_state(out, load_corpus(lessons, stdlib_text=False)).diverged["step"] == 1
    assert main(["train", "--corpus", str(lessons), "--out", str(out), "--resume"]) == 0
    assert "resuming would diverge again at the same step" in capsys.readouterr().out


def test_ctrl_c_stops_after_the_step_and_saves(
    lessons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_recipes(monkeypatch)
    real = training.loss_and_gradients
    calls = iter(range(100))

    def interrupted_at_the_third_step(*args: object) -> tuple[float, dict]:
        if next(calls) == 2:
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C sends, mid-step
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(training, "loss_and_gradients", interrupted_at_the_third_step)
    out = tmp_path / "m.safetensors"
    assert main(["train", "--corpus", str(lessons), "--out", str(out), "--lessons-only"]) == 0
    printed = capsys.readouterr().out
    assert "stopped (Ctrl-C) at step 3/40" in printed and "--resume" in printed
    assert load_state(out, load_corpus(lessons, stdlib_text=False)).step == 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back


def test_help_lists_train_without_loading_numpy() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from tutor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        "    main(['train', '--help'])\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & {'numpy', 'rich', 'textual'}\n"
        "print('--variant' in out.getvalue(), sorted(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "True []", result.stderr


# -- the recipe from flags, and what grows before a blow-up ---------------------------------


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--lr", "-1"], "lr must be above 0"),
        (["--lr", "nan"], "lr must be above 0"),
        (["--d-model", "64", "--heads", "3"], "does not split into 3 heads"),
        (["--blocks", "1000000000"], "blocks must be a whole number from 1 to 64"),
        (["--d-model", "100000"], "d-model must be a whole number from 1 to 1024"),
        (["--warmup", "abc"], "--warmup wants a whole number of steps or a percentage"),
        (["--warmup", "120%"], "--warmup wants a whole number of steps or a percentage"),
        (["--clip", "-1"], "clip must be 0 (off) or a positive number"),
        (["--base", "inf"], "base must be a number above 1"),
        (["--positional", "rope", "--d-model", "12", "--heads", "4"], "odd size"),
        (["--min-lr", "0.5"], "min-lr must be from 0 to lr"),
        (["--resume", "--lr", "0.1"], "leave out the recipe flags"),
    ],
)
def test_bad_recipe_flags_are_one_line_before_anything_is_allocated(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(training, "new_state", lambda *a, **k: pytest.fail("allocated before checking"))
    out = tmp_path / "m.safetensors"
    if "--resume" in flags:
        out.write_bytes(b"")
    assert main(["train", "--out", str(out), *flags]) != 0
    assert message in one_error_line(capsys)


def test_recipe_flags_change_the_variant_and_the_checkpoint_records_them(
    lessons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_recipes(monkeypatch)
    out = tmp_path / "m.safetensors"
    flags = ["--norm", "none", "--lr", "0.03", "--warmup", "25%", "--clip", "0", "--blocks", "3", "--d-model", "24"]
    assert main(["train", "--corpus", str(lessons), "--lessons-only", "--out", str(out), "--steps", "8", *flags]) == 0
    info = json.loads(read_safetensors(out)[1]["training"])
    recipe = info["recipe"]
    assert (recipe["norm"], recipe["learning_rate"], recipe["min_learning_rate"]) == ("none", 0.03, 0.003)
    assert (recipe["warmup_steps"], recipe["grad_clip"], recipe["n_layers"], recipe["d_model"]) == (2, 0.0, 3, 24)
    assert recipe["d_mlp"] == 96 and recipe["n_heads"] == SMALL.n_heads
    assert recipe["name"] == "tiny+norm=none+blocks=3+d-model=24+lr=0.03+min-lr=0.003+warmup=2+clip=0"
    assert read_safetensors(out)[1]["name"] == recipe["name"]
    assert model.load(out).config.norm == "none"
    from tutor.model_words import describe_checkpoint  # what `tutor --model FILE` says of it

    said = describe_checkpoint(out, "en")
    assert said is not None and said.startswith("Model m.safetensors: tiny with 3 blocks of width 24, no LayerNorm")
    assert "lr 3e-2, no gradient clipping, trained 8 of 8 steps, validation loss" in said
    assert "没有 LayerNorm" in (describe_checkpoint(out, "zh") or "")
    assert main(["train", "--variant", "tiny", "--corpus", str(lessons), "--out", str(out), "--resume"]) == 0


def test_clip_zero_measures_the_norm_and_leaves_the_gradient() -> None:
    grads = {"a": np.array([30.0], np.float32), "b": np.array([40.0], np.float32)}
    assert training.clip_global_norm(grads, 0.0) == pytest.approx(50.0)
    assert grads["a"][0] == 30.0 and grads["b"][0] == 40.0


def test_growth_figures_by_hand() -> None:
    scores = np.array([[[0.5, -np.inf], [-3.0, 2.0]]], np.float32)  # the masked −∞ is not a score
    acts = {
        "blocks.0.attn.hook_attn_scores": scores,
        "blocks.1.attn.hook_attn_scores": scores / 10,
        "blocks.1.hook_resid_post": np.array([[3.0, 4.0], [0.0, 1.0]], np.float32),
    }
    logits = np.array([[1.0, -7.5], [2.0, 0.0]], np.float32)
    assert training.growth_figures(2, logits, acts) == {"max_attn_score": 3.0, "max_logit": 7.5, "stream_norm": 3.0}


def test_every_step_records_its_growth_and_watching_changes_nothing(
    corpus: model.corpus.Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watched = run(new_state(corpus, SMALL, seed=5, steps=12), corpus, tmp_path / "w.safetensors")
    assert {k: len(v) for k, v in watched.growth.items()} == dict.fromkeys(training.GROWTH, 12)
    assert all(math.isfinite(x) and x > 0 for v in watched.growth.values() for x in v)
    assert watched.growth["max_attn_score"][0] < watched.growth["max_attn_score"][-1]  # q·k grows from GPT-2's init
    saved = load_state(tmp_path / "w.safetensors", corpus)
    assert saved.growth["max_logit"] == [float(f"{x:.4g}") for x in watched.growth["max_logit"]]
    real = training.loss_and_gradients
    monkeypatch.setattr(training, "loss_and_gradients", lambda gpt, i, t, look=None: real(gpt, i, t))
    blind = run(new_state(corpus, SMALL, seed=5, steps=12), corpus, tmp_path / "b.safetensors")
    assert blind.train_curve == watched.train_curve
    assert all(np.array_equal(blind.params[k], watched.params[k]) for k in blind.params)


def test_a_diverging_run_keeps_the_growth_of_the_steps_after_its_checkpoint(
    corpus: model.corpus.Corpus, tmp_path: Path
) -> None:
    wild = replace(SMALL, norm="none", learning_rate=30.0, min_learning_rate=30.0, warmup_steps=0, grad_clip=0.0)
    state = run(new_state(corpus, wild, seed=0, steps=40), corpus, tmp_path / "wild.safetensors")
    assert state.diverged is not None
    since = state.diverged["growth_since_checkpoint"]
    failed_at = state.diverged["step"]
    assert all(len(v) == failed_at - state.step for v in since.values())  # up to and with the failing step
    assert not math.isfinite(since["grad_norm"][-1]) or not math.isfinite(since["max_logit"][-1])
