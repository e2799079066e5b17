"""`tutor sweep` and model/sweep.py: the grid, the results file (resumable, cut lines, other formats), the table,
and the shipped results reproduced bit for bit."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from model import sweep
from model.corpus import load_corpus
from model.train import RECIPES
from tutor.cli import main

SHIPPED = Path(sweep.__file__).parent / "data" / "stability.jsonl.gz"


def test_the_grid_crosses_every_axis_with_the_seeds_innermost() -> None:
    specs = sweep.grid(
        norms=("pre", "none"), learning_rates=(0.01, 0.1), warmups=(0.1, 0.0), shapes=("4x64", "16x32"),
        seeds=(0, 1, 2), steps=400, eval_every=25,
    )  # fmt: skip
    assert len(specs) == 2 * 2 * 2 * 2 * 3 and len({s.key() for s in specs}) == len(specs)
    assert [s.seed for s in specs[:4]] == [0, 1, 2, 0]
    first = specs[0].recipe
    assert (first.norm, first.learning_rate, first.min_learning_rate, first.warmup_steps) == ("pre", 0.01, 0.001, 40)
    assert (first.n_layers, first.d_model, first.d_mlp, first.eval_every, specs[0].steps) == (4, 64, 256, 25, 400)
    deep = next(s for s in specs if s.shape == "16x32").recipe
    assert (deep.n_layers, deep.d_model, deep.d_mlp) == (16, 32, 128)
    none = next(s for s in specs if s.recipe.norm == "none" and s.recipe.warmup_steps == 0).recipe
    assert none.name == "tiny+norm=none+warmup=0"  # lr 0.01 is tiny's own
    variants = sweep.grid(variants=("deep", "deep-postnorm"), seeds=(0, 1))
    assert [s.recipe for s in variants[::2]] == [RECIPES["deep"], RECIPES["deep-postnorm"]]  # nothing changed
    assert [s.steps for s in variants] == [RECIPES["deep"].steps] * 4


def test_the_key_ignores_the_name_and_sees_everything_else() -> None:
    spec = sweep.grid(seeds=(0,), steps=10)[0]
    assert replace(spec, recipe=replace(spec.recipe, name="other")).key() == spec.key()
    assert replace(spec, seed=1).key() != spec.key()
    assert replace(spec, recipe=replace(spec.recipe, learning_rate=0.02)).key() != spec.key()
    assert replace(spec, recipe=replace(spec.recipe, steps=10)).key() == spec.key()  # the run's own steps count
    assert replace(spec, steps=11).key() != spec.key()
    fast = RECIPES["nonorm-lr1e-1"]  # a shipped variant is its sweep run
    (run,) = sweep.grid(norms=("none",), learning_rates=(0.1,), warmups=(0.1,), seeds=(0,), steps=400, eval_every=25)
    assert sweep.RunSpec(fast, 0, fast.steps).key() == run.key()


def record(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "key": "k", "shape": "4x64", "norm": "pre", "lr": 0.01, "warmup": 40, "seed": 0, "outcome": "trained",
        "final_val_loss": 2.5, "diverged": None,
    }  # fmt: skip
    return base | changes


def write_results(path: Path, *records: dict[str, object], header: object = None) -> None:
    header = {"format": sweep.FORMAT} if header is None else header
    path.write_text("\n".join(json.dumps(x) for x in [header, *records]) + "\n")


def test_a_missing_empty_foreign_or_cut_file_says_so_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    assert sweep.read_results(path).problem == f"no results file at {path}"
    path.write_text("")
    assert sweep.read_results(path).problem == f"{path} is empty"
    path.write_text("not json\n")
    assert sweep.read_results(path).problem == f"{path} is not a sweep results file"
    write_results(path, record(), header={"format": "tutor-sweep/0"})
    assert "is in format 'tutor-sweep/0', not 'tutor-sweep/1'" in (sweep.read_results(path).problem or "")
    write_results(path, record(key="a"), record(key="b"))
    with open(path, "a") as f:
        f.write('{"key": "c", "outco')  # a run cut off while it was written
    results = sweep.read_results(path)
    assert [r["key"] for r in results.runs] == ["a", "b"]
    assert results.problem == f"{path}: 1 unreadable line(s) left out (a run cut off while it was written?)"
    sweep.start_results(path)  # before appending: the cut line goes
    assert path.read_text().endswith("\n") and sweep.read_results(path).problem is None
    sweep.append_record(path, record(key="c"))
    assert [r["key"] for r in sweep.read_results(path).runs] == ["a", "b", "c"]
    (tmp_path / "dir.jsonl").mkdir()
    assert sweep.read_results(tmp_path / "dir.jsonl").problem == f"{tmp_path / 'dir.jsonl'} is not a regular file"
    os.mkfifo(tmp_path / "fifo.jsonl")  # would block a plain open() for ever
    assert sweep.read_results(tmp_path / "fifo.jsonl").problem == f"{tmp_path / 'fifo.jsonl'} is not a regular file"


def test_a_gzipped_file_reads_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "r.jsonl"
    write_results(plain, record(key="a"), record(key="b", outcome="diverged", final_val_loss=None))
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert sweep.read_results(packed).runs == sweep.read_results(plain).runs
    packed.write_bytes(gzip.compress(plain.read_bytes())[:-20])  # cut short
    assert sweep.read_results(packed).problem is not None


def test_cells_count_outcomes_and_spread_over_seeds() -> None:
    runs = [
        record(seed=0, final_val_loss=2.6),
        record(seed=2, final_val_loss=2.4),
        record(seed=1, outcome="diverged", final_val_loss=None, diverged={"step": 37, "what": "loss"}),
        record(norm="none", seed=0, outcome="stalled", final_val_loss=3.45),
    ]
    pre, none = sweep.cells(runs)
    assert (pre.norm, pre.n, pre.count("diverged"), pre.diverged_steps()) == ("pre", 3, 1, [37])
    assert pre.final_losses() == [2.4, 2.6] and pre.median() == pytest.approx(2.5)
    assert [int(r["seed"]) for r in pre.runs] == [0, 1, 2]
    assert (none.count("stalled"), none.median()) == (1, 3.45)


def test_train_run_records_the_run_and_a_divergence(tmp_path: Path) -> None:
    corpus = load_corpus(None)
    calm, wild = sweep.grid(learning_rates=(0.01, 0.3), norms=("none",), warmups=(0.0,), steps=6, eval_every=3)
    kept = sweep.train_run(calm, corpus, tmp_path, keep=True)
    assert kept is not None and kept["outcome"] == "stalled"  # six steps learn nothing
    assert [step for step, _ in kept["val_loss"]] == [0, 3, 6] and len(kept["train_loss"]) == 6
    assert {k: len(v) for k, v in kept["growth"].items()} == dict.fromkeys(("grad_norm", "max_attn_score",
                                                                           "max_logit", "stream_norm"), 6)  # fmt: skip
    assert (tmp_path / f"{calm.recipe.name}-seed0.safetensors").is_file()
    gone = sweep.train_run(wild, corpus, tmp_path)
    assert gone is not None and gone["outcome"] == "diverged" and gone["final_val_loss"] is None
    assert gone["diverged"]["step"] == len(gone["train_loss"]) + 1 == len(gone["growth"]["grad_norm"])
    failed = [gone["growth"][k][-1] for k in ("grad_norm", "max_logit")]  # the growth of the step that failed
    assert None in failed or max(failed) > 1e6
    assert not list(tmp_path.glob(f"{wild.recipe.name}*"))  # not kept: deleted
    assert sweep.train_run(calm, corpus, tmp_path, should_stop=lambda: True) is None  # stopped: no record


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--norm", "mid"], "unknown norm 'mid'"),
        (["--shape", "3x3"], "unknown shape '3x3'"),
        (["--lr", "-0.1"], "a learning rate must be above 0"),
        (["--warmup", "150%"], "a warm-up must be from 0% to 100%"),
        (["--variant", "gpt5"], "unknown variant 'gpt5'"),
        (["--steps", "0"], "--steps must be from 1"),
        (["--jobs", "0"], "--jobs must be from 1 to 64"),
        (["--seeds", "-1"], "--seeds wants one or more seeds"),
    ],
)
def test_bad_axes_are_one_line(flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["sweep", "--out", str(tmp_path / "r.jsonl"), *flags]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and not (tmp_path / "r.jsonl").exists()


def test_a_foreign_file_is_not_written_over(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "notes.jsonl"
    out.write_text("my own notes\n")
    assert main(["sweep", "--out", str(out), "--steps", "2"]) != 0
    assert "is not a sweep results file" in capsys.readouterr().err
    assert out.read_text() == "my own notes\n"


def sweep_command(out: Path, *extra: str) -> list[str]:
    grid = ["--norm", "pre,none", "--lr", "0.01,0.3", "--warmup", "0", "--seeds", "0", "--steps", "4"]
    return [sys.executable, "-m", "tutor", "sweep", "--out", str(out), *grid, "--eval-every", "2", *extra]


def test_a_killed_sweep_goes_on_where_it_stopped(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(sweep_command(out, "--jobs", "1"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out.exists() and len(sweep.read_results(out).runs) >= 1):
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert 1 <= len(sweep.read_results(out).runs) < 4
    again = subprocess.run(sweep_command(out, "--jobs", "2"), env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "already on file" in again.stdout and "Traceback" not in again.stderr
    runs = sweep.read_results(out).runs
    assert len(runs) == 4 and len({r["key"] for r in runs}) == 4  # none twice, none lost
    table = subprocess.run(
        [sys.executable, "-m", "tutor", "sweep", "--out", str(out), "--report"], capture_output=True, text=True
    )
    assert table.returncode == 0 and "1 of 1" in table.stdout  # no-norm at 0.3 diverges within 4 steps


def shipped_runs() -> list[dict[str, object]]:
    results = sweep.read_results(SHIPPED)
    assert results.problem is None, results.problem
    return results.runs


def test_the_shipped_grid_is_the_stability_preset_whole() -> None:
    from tutor.commands.sweep import PRESETS

    runs = shipped_runs()
    expected = {s.key() for s in sweep.grid(**PRESETS["stability"])}
    assert {r["key"] for r in runs} == expected and len(runs) == len(expected) == 216
    for cell in sweep.cells(runs):
        assert cell.n == 3  # every cell: three seeds


SHIPPED_BLAS_KERNELS = "SkylakeX"  # OpenBLAS's kernels the shipped sweep ran on (an Intel CPU with AVX-512)
SKYLAKEX_NEEDS = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return next((set(line.split(":", 1)[1].split()) for line in text.splitlines() if line.startswith("flags")), set())


def numpy_blas() -> str:
    """The BLAS this NumPy was built with ("scipy-openblas" for the wheels), lower case; "" if it does not say."""
    import numpy

    try:
        return str(numpy.__config__.CONFIG["Build Dependencies"]["blas"]["name"]).lower()
    except (AttributeError, KeyError, TypeError):
        return ""


def test_one_shipped_cell_is_reproduced_bit_for_bit(tmp_path: Path) -> None:
    """`tutor sweep` on no-norm, 4×64, lr 0.3, no warm-up: its three seeds again, line for line (they diverge
    within a few steps). Run as the command is, in a process of its own: a second BLAS thread in this one (numpy
    is loaded here without OPENBLAS_NUM_THREADS) would sum in another order, and these runs go another way. On the
    BLAS kernels the sweep ran on: OpenBLAS picks its kernels by CPU (an AMD EPYC with AVX-512 gets its Haswell
    ones), the step-0 losses then differ in the 8th digit, and these runs blow up along another path."""
    if not cpu_flags() >= SKYLAKEX_NEEDS:
        pytest.skip(f"the shipped sweep ran on OpenBLAS's {SHIPPED_BLAS_KERNELS} kernels, which need AVX-512")
    if "openblas" not in numpy_blas():
        pytest.skip(f"the shipped sweep ran on OpenBLAS; this NumPy uses {numpy_blas() or 'another BLAS'}")
    cell = ("4x64", "none", 0.3, 0)
    runs = sorted((r for r in shipped_runs() if (r["shape"], r["norm"], r["lr"], r["warmup"]) == cell), key=str)
    assert len(runs) == 3
    out = tmp_path / "again.jsonl"
    grid = ["--grid", "stability", "--norm", "none", "--lr", "0.3", "--warmup", "0", "--shape", "4x64"]
    # the command takes one thread whatever it is told; the kernels are OpenBLAS's to choose unless told
    env = os.environ | {"OPENBLAS_NUM_THREADS": "2", "OPENBLAS_CORETYPE": SHIPPED_BLAS_KERNELS}
    done = subprocess.run([sys.executable, "-m", "tutor", "sweep", "--out", str(out), *grid], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    again = sorted(sweep.read_results(out).runs, key=str)
    assert [json.dumps(r, sort_keys=True) for r in again] == [json.dumps(r, sort_keys=True) for r in runs]


# -- what the lessons recompute from the results ----------------------------------------------------


def growth_record(**series: list[float | None]) -> dict[str, object]:
    steps = len(next(iter(series.values())))
    flat = [1.0] * steps
    return {"growth": {k: series.get(k, flat) for k in ("grad_norm", "max_attn_score", "max_logit", "stream_norm")}}


def test_the_first_quantity_to_grow_tenfold_and_the_one_that_grew_most() -> None:
    from tutor.lessons.claims import first_to_grow, grew_most

    base = [1.0] * 5
    attention_first = growth_record(max_attn_score=[*base, 5.0, 12.0, 50.0], grad_norm=[*base, 2.0, 3.0, 11.0])
    assert first_to_grow(attention_first) == ("max_attn_score",)
    assert first_to_grow(growth_record(stream_norm=[*base, 9.0, None], max_logit=[*base, 12.0, 30.0])) == ("max_logit",)
    assert first_to_grow(growth_record(grad_norm=[*base, 10.0], max_logit=[*base, 10.0])) == ("grad_norm", "max_logit")
    assert first_to_grow(growth_record(grad_norm=[*base, 9.9])) == ()  # nothing grew tenfold
    assert first_to_grow(growth_record(grad_norm=[2.0, 15.0, 30.0])) == ("grad_norm",)  # 10 × the first step's 2
    assert grew_most(attention_first | {"train_loss": [3.0] * 7}) == "max_attn_score"  # 12 × at the last finite step
    assert grew_most(attention_first | {"train_loss": [3.0] * 8}) == "max_attn_score"
    logit = growth_record(max_logit=[1.0, 5.0, None], stream_norm=[1.0, 2.0, 9.0])
    assert grew_most(logit | {"train_loss": [3.0, 3.0]}) == "max_logit"  # the failing step does not count


def test_stability_claims_are_read_from_the_results_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tutor.lessons import claims

    growth = growth_record(max_attn_score=[1.0] * 20 + [200.0], grad_norm=[1.0] * 21)["growth"]  # fails at step 21
    runs = [
        record(key="a", norm="none", lr=0.1, seed=0, outcome="diverged", final_val_loss=None,
               diverged={"step": 21, "what": "loss"}, growth=growth, unigram=3.5, train_loss=[3.0] * 20),
        record(key="b", norm="none", lr=0.1, seed=1, final_val_loss=3.0, unigram=3.5),
        record(key="c", norm="none", lr=0.01, seed=0, final_val_loss=2.5, unigram=3.5),
        record(key="d", norm="pre", lr=0.1, seed=0, final_val_loss=2.9, warmup=0, unigram=3.5),
    ]  # fmt: skip
    path = tmp_path / "stability.jsonl"
    write_results(path, *runs)
    (tmp_path / "stability.jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    monkeypatch.setattr(sweep, "SHIPPED_RESULTS", tmp_path)
    for cached in (claims._results, claims._stability_facts):
        cached.cache_clear()
    try:
        assert claims.measure("stability.lr[1]") == 0.1
        assert claims.measure("stability.s4x64.none.warm.lr[1].diverged") == 1
        assert claims.measure("stability.s4x64.none.warm.lr[1].runs") == 2
        assert claims.measure("stability.s4x64.none.warm.lr[1].first_diverged") == 21
        assert claims.measure("stability.s4x64.none.warm.lr[1].median") == 3.0
        assert claims.measure("stability.s4x64.none.warm.stable_lr") == 0.01
        assert claims.measure("stability.s4x64.pre.cold.stable_lr") == 0.1
        assert (
            claims.measure("stability.s4x64.none.all.diverged"),
            claims.measure("stability.s4x64.none.all.runs"),
        ) == (1, 3)
        assert claims.measure("stability.growth.runs") == 1
        assert claims.measure("stability.growth.max_attn_score.first") == 1
        assert claims.measure("stability.growth.max_attn_score.among_first") == 1
        assert claims.measure("stability.growth.grad_norm.first") == 0
        with pytest.raises(claims.ClaimError, match="no 'post' here"):
            claims.measure("stability.s4x64.post.warm.stable_lr")
    finally:
        for cached in (claims._results, claims._stability_facts):
            cached.cache_clear()


@pytest.mark.parametrize("name", ["tiny-lr1e-1", "nonorm-lr1e-1"])
def test_a_shipped_variant_is_its_sweep_run(name: str) -> None:
    """`tutor train --variant nonorm-lr1e-1` and the sweep's run of the same recipe and seed: one run, bit for bit."""
    from model.weights import SHIPPED_DIR, read_safetensors

    recipe = RECIPES[name]
    spec = sweep.RunSpec(recipe, 0, recipe.steps)
    (in_grid,) = [r for r in shipped_runs() if r["key"] == spec.key()]
    trained = sweep.record_from_checkpoint(spec, read_safetensors(SHIPPED_DIR / f"{name}.safetensors")[1])
    assert {k: v for k, v in trained.items() if k != "name"} == {k: v for k, v in in_grid.items() if k != "name"}


def test_help_lists_sweep_without_loading_numpy() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from tutor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        "    main(['sweep', '--help'])\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & {'numpy', 'rich', 'textual'}\n"
        "print('--grid' in out.getvalue() and '--report' in out.getvalue(), sorted(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "True []", result.stderr
