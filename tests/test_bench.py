"""The benchmark command keeps working: a quick run of its cheap rows, and its references compute what we do.

No time is asserted anywhere: these check that the figures exist and are measured on the right thing.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import model
from tutor.bench.__main__ import main as bench_main
from tutor.bench.measure import percentile
from tutor.bench.terminal import mapping_memory, memory

ROOT = Path(__file__).resolve().parent.parent


def quick_rows(groups: str) -> list[list[str]]:
    """`python -m tutor.bench --quick --only GROUPS`: the cells of every row of its table; each row's ratio is
    that of two measured figures."""
    result = subprocess.run(
        [sys.executable, "-m", "tutor.bench", "--quick", "--only", groups],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        cwd=ROOT,  # tutor/bench/ is a checkout's (the wheel leaves it out): run from the checkout, as a developer does
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ") and "figure" not in line]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    assert all(cells[3] == "—" or float(cells[3]) > 0 for cells in rows)  # "—": a row with no ratio
    return rows


def test_quick_run_prints_one_row_per_figure() -> None:
    rows = [" | ".join(cells) for cells in quick_rows("trace,keys")]
    # three trace sizes, three backward sizes; typing, stepping and stepping backwards at two window sizes;
    # the CPU time of a typed character and of a step key at 120×40
    assert len(rows) == 3 + 3 + 6 + 2
    assert sum("backward step key" in row for row in rows) == 2
    assert any("backward trace" in row and "ratio ≤ 3.0" in row for row in rows)
    assert any("120×40" in row for row in rows) and any("80×24" in row for row in rows)
    assert all("≤ 3× minimal" in row for row in rows if "keystroke" in row)
    cpu = [row for row in rows if row.startswith("CPU time per key")]
    assert len(cpu) == 2 and all("tiny, 120×40" in row and "process CPU" in row and "p50 ≤ 15 ms" in row for row in cpu)
    assert any("typing a character" in row for row in cpu) and any("step key" in row for row in cpu)


def test_edit_rows_time_alt_x_with_and_without_the_bar_coming() -> None:
    rows = [" | ".join(cells) for cells in quick_rows("edits")]
    assert len(rows) == 2 and all("edit key → edited run drawn" in row and "p95 ≤ 33 ms" in row for row in rows)
    assert "the edits bar comes and goes" in rows[0] and "beside another edit" in rows[1]
    assert all(
        "(pilot, 12 keys)" in row for row in rows
    )  # quick: block 0's 6 steps with a piece to take out, on and off


def test_patching_rows_time_both_grids_against_one_run_per_cell() -> None:
    rows = quick_rows("patching")
    assert [cells[0] for cells in rows] == [
        "patching grid (block × position at hook_resid_pre), tiny, 8 tokens",
        "patching grid (block × head × position at hook_z), tiny, 8 tokens",
    ]
    assert all(cells[2].startswith("one edited run per cell") and cells[4] == "median ≤ 100 ms" for cells in rows)


def test_crowd_rows_start_and_type_into_three_tutors() -> None:
    rows = quick_rows("crowd")
    assert [cells[0].split(":")[0] for cells in rows] == [
        "3 tutors started at once in ptys",
        "3 tutors",
        "3 tutors",
        "3 tutors typing together",
        "3 tutors after typing together",
    ]
    typing = rows[-2]
    # four characters into each of three tutors, against one tutor alone; the CPU is the tutors' own, per key
    assert "12 keys" in typing[0] and "key written to the pty → shown" in typing[0]
    assert "CPU per key" in typing[1] and "one tutor alone" in typing[2] and typing[4] == "p50 ≤ 60 ms"
    after = rows[-1]  # the memory the typing left, beside the first screen's
    assert after[1].startswith("PSS ") and " MB a tutor)" in after[1] and after[2].startswith("at their first screen")


def test_task_cpu_counts_every_thread_of_a_process() -> None:
    import threading
    import time

    from tutor.bench.terminal import task_cpu

    burnt: list[float] = []

    counted: list[float] = []
    done = threading.Event()

    def burn() -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.05:
            pass
        burnt.append(time.thread_time() - start)
        counted.append(task_cpu(os.getpid()))  # while this thread is alive: an ended thread leaves /proc/PID/task
        done.set()

    before = task_cpu(os.getpid())
    thread = threading.Thread(target=burn)
    thread.start()
    done.wait(10)
    thread.join()
    assert counted[0] - before >= 0.9 * burnt[0]  # the thread's CPU, though it is not the main one


def test_echo_rows_type_into_a_gpt2_sized_model() -> None:
    rows = quick_rows("echo")
    assert len(rows) == 2 and "GPT-2 small shape" in rows[0][0] and "4 keys" in rows[0][0]


def test_unknown_group_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main(["--only", "forwrd"]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "forwrd" in out


def test_percentile_is_nearest_rank() -> None:
    samples = [float(n) for n in range(1, 101)]
    assert percentile(samples, 0.5) == 50.0
    assert percentile(samples, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0


def test_memory_reads_this_process_and_its_weights_mapping() -> None:
    gpt = model.load("tiny")
    rss, pss = memory(os.getpid())
    assert 0 < pss <= rss
    wte = gpt.params["wte"]
    assert wte.sum() != 0  # reads every page of the embedding from the mapped file
    weights_rss, weights_pss = mapping_memory(os.getpid(), "tiny.safetensors")
    # at least the pages just read (other tests' models may map the file too, so no upper bound)
    assert weights_rss >= wte.nbytes - 2 * 4096
    assert 0 < weights_pss <= weights_rss


MALLOC_PROBE = """
import ctypes, sys
from tutor.process_tuning import keep_freed_memory

NAMES = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"

class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2 (2.33 and later)
    _fields_ = [(n, ctypes.c_size_t) for n in NAMES.split()]

libc = ctypes.CDLL(None)
if not hasattr(libc, "mallinfo2"):
    print("no mallinfo2"); sys.exit(0)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
if sys.argv[1] == "set":
    assert keep_freed_memory() is True
before = libc.mallinfo2()
block = libc.malloc(3 << 20)  # 3 MB: a logits table's size, above glibc's default 128 KB mmap threshold
during = libc.mallinfo2()
libc.free(block)
after = libc.mallinfo2()
blocks = [libc.malloc(3 << 20) for _ in range(40)]  # 120 MB: a 64-token trace of a SmolLM-135M-shaped model
for b in blocks:
    libc.free(b)
trace_kept = libc.mallinfo2().arena - before.arena
print(during.hblkhd - before.hblkhd, during.arena - before.arena, after.arena - before.arena, trace_kept)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
@pytest.mark.parametrize("thresholds", ["set", "default"])
def test_malloc_thresholds_keep_a_freed_trace_in_the_heap(thresholds: str) -> None:
    """With keep_freed_memory() a 3 MB block comes from the heap, and the heap keeps it once freed, and keeps a
    whole dropped trace of 120 MB too (a trim threshold below it gave it back after every pass); without it,
    glibc maps the block and unmaps it again. Measured in a fresh process: glibc raises its mmap threshold by
    itself after freeing a mapped block, so a process that has run a while would pass either way."""
    result = subprocess.run(
        [sys.executable, "-c", MALLOC_PROBE, thresholds], capture_output=True, text=True, timeout=60, check=True
    )
    if result.stdout.strip() == "no mallinfo2":
        pytest.skip("glibc older than 2.33 has no mallinfo2")
    mapped, heap_grew, heap_kept, trace_kept = (int(n) for n in result.stdout.split())
    if thresholds == "set":
        assert mapped == 0 and heap_grew >= 3 << 20 and heap_kept >= 3 << 20, result.stdout
        assert trace_kept >= 120 << 20, result.stdout
    else:  # what the thresholds change: without them the block is a mapping of its own
        assert mapped >= 3 << 20 and heap_kept < 3 << 20, result.stdout


@pytest.mark.reference
def test_torch_reference_computes_the_same_logits() -> None:
    pytest.importorskip("torch")
    from tutor.bench.reference import max_abs_difference, torch_forward

    gpt = model.load("tiny")
    ids = np.arange(300, 340, dtype=np.intp)
    assert max_abs_difference(gpt.forward(ids), torch_forward(gpt)(ids)) < 1e-4


@pytest.mark.reference
def test_torch_training_model_starts_from_our_weights() -> None:
    torch = pytest.importorskip("torch")
    from model.gradients import loss_and_gradients
    from model.params import init_params
    from model.train import RECIPES
    from tutor.bench.reference import torch_training_model

    tokenizer = model.load("tiny").tokenizer
    vocab = tokenizer.vocab_size
    config = RECIPES["tiny"].config(vocab)
    params = init_params(config, 3)
    windows = np.random.default_rng(0).integers(0, vocab, (2, config.n_ctx + 1))
    ours = loss_and_gradients(model.GPT(config, params, tokenizer), windows[:, :-1], windows[:, 1:])[0]
    tokens = torch.from_numpy(windows.astype(np.int64))
    logits = torch_training_model(config, params)(tokens[:, :-1])
    theirs = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1)).item()
    assert abs(float(ours) - theirs) < 1e-4


def test_spread_prints_best_median_and_p95() -> None:
    from tutor.bench.measure import spread_text

    assert spread_text([0.003, 0.001, 0.002, 0.010], 1e-3) == "best 1.0, median 2.5, p95 10.0 ms"


@pytest.mark.reference
def test_the_peer_row_times_a_gpt2_folder_against_transformers(tmp_path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from tutor.bench.peer import SHAPES, measure, write_folder

    folder = write_folder(tmp_path / "tiny", SHAPES["tiny shape"])
    assert model.load(folder).config.d_model == 64  # the folder is one `tutor --model DIR` opens
    result = measure(folder, threads=1, repeats=2)
    assert set(result) == {"16", "64"}
    for figures in result.values():
        assert len(figures["ours"]) == len(figures["theirs"]) == 2  # type: ignore[arg-type]
        assert figures["difference"] < 1e-4  # the same weights give the same logits


@pytest.mark.reference
def test_the_llama_row_times_a_llama_folder_against_transformers(tmp_path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from tutor.bench.peer import LLAMA_SHAPES, measure, write_llama_folder

    folder = write_llama_folder(tmp_path / "tiny", LLAMA_SHAPES["tiny Llama shape"])
    gpt = model.load(folder)  # the folder is one `tutor --model DIR` opens, as a Llama: RMSNorm, shared kv heads
    assert (gpt.config.d_model, gpt.config.norm_kind, gpt.config.kv_heads) == (64, "rms", 2)
    result = measure(folder, threads=1, repeats=2)
    assert set(result) == {"16", "64"}
    for figures in result.values():
        assert len(figures["ours"]) == len(figures["theirs"]) == 2  # type: ignore[arg-type]
        assert figures["difference"] < 1e-4  # the same weights give the same logits


def test_a_keys_measurement_waits_for_its_first_byte_without_spinning(monkeypatch) -> None:
    """`_last_output` must sleep in select until the app's first byte: a zero-timeout select spins a core that the
    measured app needs (2 cores shared), so a slow key would look slower still."""
    import os
    import select
    import threading
    import time

    from tutor.bench import terminal

    read_end, write_end = os.pipe()

    class Pipe:
        master = read_end

        def pump(self, ready: tuple[bytes, ...]) -> int:
            return len(os.read(read_end, 1 << 16))

    selects = 0
    real_select = select.select

    def counting_select(*args: object) -> object:
        nonlocal selects
        selects += 1
        return real_select(*args)

    monkeypatch.setattr(terminal.select, "select", counting_select)
    written = time.perf_counter()
    drawer = threading.Timer(3 * terminal.KEY_QUIET, os.write, args=(write_end, b"frame"))
    drawer.start()
    try:
        last = terminal._last_output(Pipe(), (), written)  # type: ignore[arg-type]
    finally:
        drawer.join()
        os.close(read_end)
        os.close(write_end)
    assert last - written >= 3 * terminal.KEY_QUIET
    assert selects < 20  # one wait for the byte, a few for the quiet after it; thousands when spinning
