"""Activation patching sweeps: where does a clean prompt carry what a corrupted one lacks?

Run the corrupted prompt (狗追猫), but at one point put back what the clean prompt (猫追狗) had there, and
see how much of the clean answer comes back. The metric is TransformerLens' patching demos':

    diff     = logit[answer] − logit[wrong]           at the last position
    restored = (diff_patched − diff_corrupted) / (diff_clean − diff_corrupted)

0 where the patch changes nothing, 1 where it brings the clean difference back whole. A grid has one
cell per point patched: `resid_pre_grid` per (block, position) at `hook_resid_pre` (TransformerLens'
`get_act_patch_resid_pre`), `head_grid` per (block, head, position) at `hook_z`
(`get_act_patch_attn_head_out_by_pos`). Each cell equals `patched_difference` of one `Patch` edit;
the grids run all the cells of a block as one batch, from that block on (the blocks before it are the
corrupted run's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from model.hooks import no_hook
from model.interventions import EditError, Patch
from model.trace import Trace

if TYPE_CHECKING:
    from model.gpt import GPT


def logit_difference(logits: np.ndarray, answer: int, wrong: int) -> np.ndarray:
    """diff = logit[answer] − logit[wrong] at the last position (`logits` is `[…, pos, vocab]`)."""
    return logits[..., -1, answer] - logits[..., -1, wrong]


def restored_fraction(patched: np.ndarray, clean: float, corrupted: float) -> np.ndarray:
    """restored = (diff_patched − diff_corrupted) / (diff_clean − diff_corrupted)."""
    return (patched - corrupted) / (clean - corrupted)


def patched_difference(gpt: GPT, corrupted: Trace, patch: Patch, answer: int, wrong: int) -> float:
    """diff of the corrupted prompt run with one `patch`: one cell of a grid, the slow and plain way."""
    logits = gpt.run(corrupted.tokens, edits=[patch]).logits
    return float(logit_difference(logits, answer, wrong))


def _check(gpt: GPT, clean: Trace, corrupted: Trace, answer: int, wrong: int) -> tuple[float, float]:
    """The clean and corrupted differences, once the two traces are known to fit a sweep."""
    if clean.edits or corrupted.edits:
        raise EditError("a patching sweep starts from two runs of the model as trained, without edits")
    if len(clean.tokens) != len(corrupted.tokens):
        lengths = f"{len(clean.tokens)} and {len(corrupted.tokens)}"
        raise EditError(f"the clean and the corrupted prompt have {lengths} positions: they must match")
    for token in (answer, wrong):
        if not 0 <= token < gpt.config.vocab_size:
            raise EditError(f"token id {token} is outside the vocabulary (0..{gpt.config.vocab_size - 1})")
    d_clean = float(logit_difference(clean.logits, answer, wrong))
    d_corrupted = float(logit_difference(corrupted.logits, answer, wrong))
    if d_clean == d_corrupted:
        raise EditError("the clean and corrupted runs have the same logit difference: there is nothing to restore")
    return d_clean, d_corrupted


def _finish(gpt: GPT, start: int, x: np.ndarray, answer: int, wrong: int) -> np.ndarray:
    """diff of every sequence of the batch `x` `[batch, pos, d]`, run from block `start` to the logits (only the
    last position is read out)."""
    n = x.shape[-2]
    rope_pe = gpt.position_rows(0, n) if gpt.config.positional == "rope" else None
    for i in range(start, gpt.config.n_layers):
        x = gpt.block(i, x, rope_pe, None, no_hook)
    logits = gpt.read_out(x[:, -1:])
    return logit_difference(logits, answer, wrong)


def resid_pre_grid(gpt: GPT, clean: Trace, corrupted: Trace, answer: int, wrong: int) -> np.ndarray:
    """restored for the corrupted run with `blocks.i.hook_resid_pre` at position p taken from the clean run:
    `[block, position]`."""
    d_clean, d_corrupted = _check(gpt, clean, corrupted, answer, wrong)
    n = len(clean.tokens)
    grid = np.empty((gpt.config.n_layers, n))
    cells = np.arange(n)
    for i in range(gpt.config.n_layers):
        name = f"blocks.{i}.hook_resid_pre"
        x = np.repeat(corrupted[name][None], n, axis=0)  # sequence p of the batch: position p patched
        x[cells, cells] = clean[name]
        grid[i] = _finish(gpt, i, x, answer, wrong)
    return restored_fraction(grid, d_clean, d_corrupted)


def head_grid(gpt: GPT, clean: Trace, corrupted: Trace, answer: int, wrong: int) -> np.ndarray:
    """restored for the corrupted run with head h's z at position p in block i taken from the clean run:
    `[block, head, position]`."""
    d_clean, d_corrupted = _check(gpt, clean, corrupted, answer, wrong)
    cfg = gpt.config
    n, heads = len(clean.tokens), cfg.n_heads
    grid = np.empty((cfg.n_layers, heads, n))
    head, pos = np.divmod(np.arange(heads * n), n)  # sequence k of the batch: head k // n at position k % n
    for i in range(cfg.n_layers):
        b = f"blocks.{i}."
        z = np.repeat(corrupted[b + "attn.hook_z"][None], heads * n, axis=0)
        z[np.arange(heads * n), pos, head] = clean[b + "attn.hook_z"][pos, head]
        attn_out = gpt.heads_out(i, z)

        def patched_attention(_h: np.ndarray, out: np.ndarray = attn_out) -> np.ndarray:
            return out

        def feed_forward(h: np.ndarray, i: int = i) -> np.ndarray:
            return gpt.mlp(i, h, no_hook)

        x = gpt.sublayer(i, "attn", "ln1", patched_attention, corrupted[b + "hook_resid_pre"], no_hook)
        x = gpt.sublayer(i, "mlp", "ln2", feed_forward, x, no_hook)
        grid[i] = _finish(gpt, i + 1, x, answer, wrong).reshape(heads, n)
    return restored_fraction(grid, d_clean, d_corrupted)
