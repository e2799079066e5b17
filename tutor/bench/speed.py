"""The model's own figures: forward with and without the trace, and training, each beside PyTorch.

Ours and the reference take turns call by call, so that a neighbour's load on the machine falls on both.
Each row prints the best, the median and the p95 of its calls, and compares the medians: the best run is
the least disturbed, but the median is what a learner waits for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from model import GPT, Tokenizer
from tutor.bench.measure import median


@dataclass
class Pair:
    ours_times: list[float]  # seconds of every timed call
    reference_times: list[float]
    note: str = ""

    @property
    def ours(self) -> float:
        """The median call: what the ratio compares."""
        return median(self.ours_times)

    @property
    def reference(self) -> float:
        return median(self.reference_times)


def alternate(ours: Callable[[], object], reference: Callable[[], object], repeats: int, warmup: int = 3) -> Pair:
    """Best seconds of each, calling them in turn `repeats` times after `warmup` untimed rounds."""
    for _ in range(warmup):
        ours()
        reference()
    ours_times, reference_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        ours()
        middle = time.perf_counter()
        reference()
        reference_times.append(time.perf_counter() - middle)
        ours_times.append(middle - start)
    return Pair(ours_times, reference_times)


def forward_against_torch(gpt: GPT, n_tokens: int, repeats: int) -> Pair:
    """`gpt.run` (the forward pass with every activation recorded) against PyTorch's forward."""
    from tutor.bench.reference import max_abs_difference, torch_forward

    reference = torch_forward(gpt)
    ids = np.random.default_rng(n_tokens).integers(0, gpt.config.vocab_size, n_tokens).astype(np.intp)
    difference = max_abs_difference(gpt.forward(ids), reference(ids))
    pair = alternate(lambda: gpt.run(ids), lambda: reference(ids), repeats)
    pair.note = f"logits agree to {difference:.0e}"
    return pair


def trace_overhead(gpt: GPT, n_tokens: int, repeats: int) -> Pair:
    """`gpt.run` against the bare `gpt.forward` on the same tokens."""
    ids = np.random.default_rng(n_tokens).integers(0, gpt.config.vocab_size, n_tokens).astype(np.intp)
    return alternate(lambda: gpt.run(ids), lambda: gpt.forward(ids), repeats)


def backward_against_forward(gpt: GPT, n_tokens: int, repeats: int) -> Pair:
    """`gpt.run(grads=True)` (forward, loss, every activation's and parameter's gradient) against `gpt.run`."""
    ids = np.random.default_rng(n_tokens).integers(0, gpt.config.vocab_size, n_tokens).astype(np.intp)
    return alternate(lambda: gpt.run(ids, grads=True), lambda: gpt.run(ids), repeats)


def patching_against_one_run_per_cell(gpt: GPT, n_tokens: int, repeats: int, heads: bool) -> Pair:
    """A patching grid (`model.patching`: every block × position at hook_resid_pre, or × head at hook_z) against
    the same grid made the plain way, one `gpt.run(corrupted, edits=[Patch(…)])` per cell; both from the clean
    and corrupted traces, which a learner's screen already has."""
    from model.interventions import Patch
    from model.patching import head_grid, patched_difference, resid_pre_grid

    rng = np.random.default_rng(n_tokens)
    clean_ids = rng.integers(0, gpt.config.vocab_size, n_tokens).tolist()
    corrupted_ids = [clean_ids[1], clean_ids[0], *clean_ids[2:]]  # two tokens swapped, as 猫追狗 and 狗追猫
    clean, corrupted = gpt.run(clean_ids), gpt.run(corrupted_ids)
    answer, wrong = clean_ids[0], clean_ids[1]
    grid = head_grid if heads else resid_pre_grid
    hooks = [f"blocks.{i}.{'attn.hook_z' if heads else 'hook_resid_pre'}" for i in range(gpt.config.n_layers)]
    cells = [
        (hook, p, h)
        for hook in hooks
        for p in range(n_tokens)
        for h in (range(gpt.config.n_heads) if heads else [None])
    ]

    def one_run_per_cell() -> None:
        for hook, p, h in cells:
            patched_difference(gpt, corrupted, Patch(hook, clean, (p,), h), answer, wrong)

    return alternate(lambda: grid(gpt, clean, corrupted, answer, wrong), one_run_per_cell, repeats, warmup=1)


def training_against_torch(batch: int, steps: int) -> Pair:
    """Seconds per training step (forward, backward, clipping, AdamW), `tiny`'s shape, batch × 64 tokens."""
    import torch

    from model.gradients import loss_and_gradients
    from model.params import init_params
    from model.train import RECIPES, AdamW, clip_global_norm
    from tutor.bench.reference import torch_training_model

    recipe = RECIPES["tiny"]
    config = recipe.config(shipped_tokenizer().vocab_size)
    params = init_params(config, 0)
    optimizer = AdamW.zeros_like(params)
    net = torch_training_model(config, params)
    gpt = GPT(config, params, shipped_tokenizer(), lay_out=False)  # AdamW changes `params` in place
    torch_optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(0)
    windows = [rng.integers(0, config.vocab_size, (batch, config.n_ctx + 1)) for _ in range(steps + 3)]
    torch_windows = [torch.from_numpy(w.astype(np.int64)) for w in windows]
    count = {"ours": 0, "torch": 0}

    def numpy_step() -> None:
        i = count["ours"]
        count["ours"] += 1
        grads = loss_and_gradients(gpt, windows[i][:, :-1], windows[i][:, 1:])[1]
        clip_global_norm(grads, 1.0)
        optimizer.update(params, grads, 1e-3, i + 1, recipe)

    def torch_step() -> None:
        i = count["torch"]
        count["torch"] += 1
        logits = net(torch_windows[i][:, :-1])
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, config.vocab_size), torch_windows[i][:, 1:].reshape(-1)
        )
        torch_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        torch_optimizer.step()

    pair = alternate(numpy_step, torch_step, steps)
    pair.note = f"batch {batch} × {config.n_ctx} tokens"
    return pair


def shipped_tokenizer() -> Tokenizer:
    """The shipped `tiny` model's tokenizer (the training shape is the shipped one)."""
    import model

    return model.load("tiny").tokenizer
