"""Claims a lesson makes about the shipped models, recomputed from their weights and metadata.

A lesson writes a number in its text ("a vocabulary of 1044") and, in a `tutor-claims` block (not
shown to the learner), says what it measures:

    ```tutor-claims
    "1044" = "tiny.vocab_size"
    "266 880" = "tiny.parameters"
    "1.64" = { measure = "tiny.val_loss", tolerance = 0.01 }
    "2.2e-9" = "deep-postnorm.depth.trained.param_grad[0]"
    ```

A claim's text may go on after its number to say which of several equal numbers it is
(`"3 of 3 at 1e-1" = "stability.s4x64.none.warm.lr[4].diverged"`: the first 3); the whole text must be in
the lesson (line breaks count as spaces). `tutor lessons --check` finds each text in the lesson and
recomputes its measure: a retrain that moves a number fails the check instead of leaving the lesson stale.
The tolerance is half a unit of the last digit written (1.638 ± 0.0005; 2.2e-9 ± 0.05e-9) unless the claim gives one.

Measures, for any shipped model M: `M.vocab_size`, `M.d_model`, `M.n_layers`, `M.n_heads`,
`M.d_mlp`, `M.n_ctx`, `M.d_head` (d_model / n_heads), `M.pass_steps` (the steps of one forward pass, as
the step bar lists them), `M.parameters` (all of them), `M.uniform` (ln of the vocabulary size: the loss
of an even guess), `M.val_loss` (the last validation loss), `M.start_loss` (the first, at step 0),
`M.unigram`, `M.bigram` (the baselines), `M.steps`, `M.recipe.…` (the training recipe's numbers:
`learning_rate`, `warmup_steps`, `embedding_std`, `batch_size`, …), for learned positions `M.positions.neighbour_cos`,
`.cos_8_apart`, `.first_cos`, `.norm[p]`, `.mean_norm`, and `M.depth.init.…` / `M.depth.trained.…`
(`model/depth.py`'s figures: `loss`, `stream_norm[i]`, `stream_grad[i]`, `similarity[i]`,
`param_grad[i]`; index −1 is the last), and `M.walk.…`: the backward view of the lessons' walk
prompt `WALK_PROMPT` — `loss`, `cursor_grad[i]` (‖∂L/∂x‖ of the token the backward cursor opens on,
the last one scored, at stream point i: the embedding, then each block's output), `stream_grad[i]`
(over all tokens), `similarity[i]` (mean cos between two different positions), and at the j-th
residual add of the pass (0: block 0's attention add) the cursor token's two paths, `add_identity[j]`,
`add_through_f[j]`, and their sum `add_sum[j]` (`Trace.residual_paths`).

`M.lens.…`: the logit lens of the Residual tab on `LENS_PROMPT`, in percent as the tab prints them.
`points` (how many stream points it reads: the embedding, then each block's attention and MLP add),
and for token t, `token[t].…`: `final_id` (the model's final guess: its top token at the last point,
whose id the token strip prints), at point i `final_pct[i]`, `final_rank[i]` (1: the lens's top
guess), `top_id[i]` and `top_pct[i]` (the lens's top guess), `own_pct[i]` and `own_rank[i]` (the
token itself), `leads` (at how many points the final guess is the top guess), `settled_from` (the
first point from which it is the top guess at every later one) and `leads_at_end` (how many points
that is: the final guess leads at the last `leads_at_end` points in a row).

`M.sample.SETTING.pct[i]`: on `LENS_PROMPT`'s last token, the probability in percent that the i-th
likeliest token (by the model's own logits) is drawn with (`model.sampling.sampling_probs`), for every
setting the keys reach (`tutor.draw_settings`): `T1` is T = 1, `T0_5` T = 0.5, `T0` T = 0 (the argmax),
`T1_k3` T = 1 with top-k = 3; `M.sample.top_id` is that likeliest token's id.

`stability.…`: the shipped learning-rate sweep (model/data/stability.jsonl.gz, `tutor sweep --grid stability`).
`stability.lr[i]` is the i-th peak learning rate of the grid (smallest first); a cell is
`stability.SHAPE.NORM.WARMUP.lr[i]` with SHAPE `s4x64` or `s16x32`, NORM `pre`, `post` or `none`, WARMUP `warm`
(10 % of the steps) or `cold` (none), and it has `runs`, `diverged`, `stalled`, `trained` (how many seeds),
`median`, `min`, `max` (the final validation losses of the runs that did not diverge), `first_diverged`,
`last_diverged` (the earliest and latest step at which a run diverged), `peak_train` (the largest finite training
loss any of its runs passed through). Per wiring, `….WARMUP.stable_lr` is the
largest peak rate at which every seed trained (0 if none did), and `….WARMUP.best_lr` / `best_median` where the
median final loss is lowest; `….NORM.all.runs`, `.diverged`, `.stalled` count over both warm-ups and every rate.
`stability.unigram` is the unigram loss.
`stability.growth.…`: over every diverged run of the grid, for each quantity Q of `model.train.GROWTH`,
`Q.first` (in how many runs Q alone was the first to reach ten times its value at the first step),
`Q.among_first` (the same, counting runs where others got there in the same step), `Q.most` (in how many runs
Q had grown by the largest factor by the last finite step) and `runs` (how many diverged runs there are).
`seeds.VARIANT.…` (VARIANT with `_` for `-`, e.g. `deep_postnorm`): the depth family over seeds
(model/data/depth-seeds.jsonl.gz) and tiny against rmsnorm over seeds (model/data/norm-seeds.jsonl.gz): `runs`,
`collapsed` (last-block cos ≥ 0.9), `spiked` (runs with a loss spike), `stalled`, `diverged`, `median`, `mean`,
`min`, `max`, `range` (max − min), per seed `loss[s]`, `similarity[s]`, `spikes[s]`, and against OTHER, a variant
of the same file: `above.OTHER` (in how many seeds its final loss is above OTHER's with the same seed) and
`gap.OTHER` (its mean minus OTHER's).

Measured on the validation windows the depth profile uses (`model.train.DEPTH_WINDOWS`), for a shipped model M
with a training record: `M.adam.init.…` (the model rebuilt at its initialisation from its seed) and
`M.adam.trained.…` — how AdamW with global-norm clipping (`model/train.py`) would take one update from that
gradient: `grad_norm` (the global norm before clipping), `clip_scale` (what clipping multiplies every gradient
by: 1 when the norm is within the clip), and for block i `block_params[i]`, `block_grad[i]` (‖∂L/∂θ‖ before
clipping), `raw_rms[i]` (its root mean square per coordinate), `clipped[i]` (‖∂L/∂θ‖ after clipping),
`coord_rms[i]` (the clipped gradient's root mean square per coordinate), `below_eps[i]` (the percent of its
coordinates smaller than Adam's ε) and `first_step[i]` (Adam's first update, m̂/(√v̂ + ε) = g/(|g| + ε), as a
percent of the learning rate, averaged over its coordinates).
`M.embedding.token_norm` (the mean ‖W_E[t]‖ over the tokens of those windows, as they occur), `.token_norm_init`
(the same at initialisation) and `.position_norm` (the mean ‖row‖ of the position table added to them, sinusoidal
or learned). `M.stream.norm[i]` (the mean ‖x‖ at the logit lens's points: the embedding, then each block's
attention and MLP add) and `M.stream.share[i]` (the percent of the growth from the first point to the last that
the i-th add makes: 0 is block 0's attention add). `M.shifted_loss[k]`: the validation loss on the evaluation
windows laid 16·k tokens later in the validation text (`shifted_loss[0]` is `val_loss`).

`M.heads.block[b].…`: block b's attention on `WALK_PROMPT`, over every query but the first,
`prev_mean[h]` and `prev_min[h]` (head h's weight on the token just before the query: mean, least),
`prev_head` (the head with the largest mean) and `others_max` (the largest mean of the other heads).

`M.patching.…`: the patching view (tutor/patch_sweep.py) of `PATCH_CLEAN` patched into `PATCH_CORRUPTED`, one
point at a time at every block's input: `block[b].restored[p]` (the share of logit[answer] − logit[wrong] that
patching position p of block b's input brings back), `clean_diff`, `corrupted_diff` (that difference in the two
runs) and `others_max` (the largest share, in size, at a position other than the last).

`M.what_if.…`: the loss on the same validation windows with one piece of the trained model taken out (the edits
of model/interventions.py, as alt+x makes them): `clean` (nothing taken out), and for block b `block[b].head[h]`
(head h silenced), `.skip_attn`, `.skip_mlp` (a sublayer adding nothing), `.drop_attn`, `.drop_mlp` (a residual
add taken out: y = F(x)), `.bypass_ln1`, `.bypass_ln2` (a LayerNorm as the identity; pre-norm models);
`bypass_ln_final`, `.ln1_in_norm`, `.ln1_out_norm`, `.ln2_in_norm`, `.ln2_out_norm` (the mean ‖x‖ a LayerNorm
reads and the mean ‖LN(x)‖ its sublayer gets; bypassed, the sublayer gets the first); and over every block
`drop_min`, `drop_max`, `bypass_min`, `bypass_max` (ln_final among them), `later_heads_max` (the most any one
head of blocks 1 … costs: the largest of their losses).

`M.norm_input.…`: what each of M's norms reads on the same validation windows, norm i in the pass's order (0 is
block 0's first): `abs_mean[i]` (the mean over tokens of |μ|, the mean LayerNorm takes away and RMSNorm leaves in),
`rms[i]` (the mean of √(mean(x²))), `mean_share[i]` (the percent of mean(x²) = μ² + σ² that μ² makes, averaged over
tokens) and `mean_share_rest_max` (the largest `mean_share` of the norms after the first).
`M.timing.…`: M's weights with RMSNorm and with LayerNorm (β = 0 where M has none), timed in turns on the machine that
checks (the fastest of many runs): `rms_over_layer_pass` (a forward pass over 64 tokens of `WALK_PROMPT`, RMSNorm's
time over LayerNorm's) and `rms_over_layer_norms` (the norms alone, on the inputs M's own pass gives them).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from dataclasses import replace
from functools import cache
from typing import Any

from tutor.sentences import settled_from

WALK_PROMPT = "猫追狗的一只猫"  # the prompt of the lessons' walks through the backward view
LENS_PROMPT = "猫追狗"  # the prompt of the lessons' logit lens and sampling examples
PATCH_CLEAN, PATCH_CORRUPTED = "猫追狗", "狗追猫"  # the lessons' patching: the first patched into the second
CONFIG_MEASURES = ("vocab_size", "d_model", "n_layers", "n_heads", "d_mlp", "n_ctx")
_PATH_PART = re.compile(r"(?P<key>[A-Za-z_]\w*)(?:\[(?P<index>-?\d+)\])?$")
_NUMBER = re.compile(r"[-−]?\d+(?:[ \u2009\u202f,]\d{3})*(?:\.\d+)?(?:e[-−+]?\d+)?$")
_LEADING_NUMBER = re.compile(r"[-−]?\d+(?:[\u2009\u202f,]\d{3})*(?:\.\d+)?(?:e[-−+]?\d+)?(?=\D|$)")


class ClaimError(ValueError):
    """A claim that cannot be read or measured; the message says which and why."""


@cache
def _training_info(name: str) -> dict[str, Any]:
    """A shipped model's training record (empty when it has none)."""
    import model
    from model.weights import SHIPPED_DIR, WeightsError, read_safetensors

    if name not in model.shipped_models():
        raise ClaimError(f"no shipped model {name!r} (shipped: {', '.join(model.shipped_models())})")
    try:
        return json.loads(read_safetensors(SHIPPED_DIR / f"{name}.safetensors")[1].get("training", "{}"))
    except (WeightsError, json.JSONDecodeError):
        return {}


@cache
def _model_facts(name: str) -> dict[str, Any]:
    import model
    from model.trace import build_steps

    info = _training_info(name)  # first: it says when there is no such shipped model
    gpt = model.load(name)
    facts: dict[str, Any] = {key: getattr(gpt.config, key) for key in CONFIG_MEASURES}
    facts["d_head"] = gpt.config.d_model // gpt.config.n_heads
    facts["pass_steps"] = len(build_steps(gpt.config))
    facts["parameters"] = sum(int(p.size) for p in gpt.params.values())
    facts["uniform"] = math.log(gpt.config.vocab_size)  # the loss of a guess spread evenly over the vocabulary
    if "wpe" in gpt.params:
        facts["positions"] = _learned_positions(gpt.params["wpe"])
    facts["walk"] = _walk(gpt)
    facts["lens"] = _lens(gpt)
    facts["sample"] = _sample(gpt)
    facts["heads"] = _heads(gpt)
    facts["patching"] = _patching(gpt)
    if info:
        facts |= {
            "val_loss": info["val_loss"][-1][1],
            "start_loss": info["val_loss"][0][1],
            "unigram": info["baselines"]["unigram"],
            "bigram": info["baselines"]["bigram"],
            "steps": info["step"],
            "recipe": {
                key: value
                for key, value in info.get("recipe", {}).items()
                if isinstance(value, (int, float)) and not isinstance(value, bool)
            },
        }
        if "depth" in info:
            facts["depth"] = info["depth"]
    return facts


def _walk(gpt: Any) -> dict[str, Any]:
    """What the backward view shows for `WALK_PROMPT` on `gpt`, at each point of `model.depth.stream_points`."""
    import numpy as np

    from model.depth import mean_position_similarity, stream_points

    trace = gpt.run(WALK_PROMPT, grads=True)
    points = stream_points(gpt.config.n_layers)
    cursor = len(trace.tokens) - 2  # backwards the cursor opens on the last scored token (tutor.place)
    grads = [trace[p + "_grad"].astype(np.float64) for p in points]
    adds = [
        [float(np.linalg.norm(path[cursor].astype(np.float64))) for path in trace.residual_paths(step)]
        for step in trace.steps
        if step.kind == "residual"
    ]
    return {
        "add_identity": [identity for identity, _, _ in adds],
        "add_through_f": [through_f for _, through_f, _ in adds],
        "add_sum": [total for _, _, total in adds],
        "loss": trace.loss,
        "cursor_grad": [float(np.linalg.norm(g[cursor])) for g in grads],
        "stream_grad": [float(np.linalg.norm(g)) for g in grads],
        "similarity": [mean_position_similarity(trace[p][None].astype(np.float64)) for p in points],
    }


def lens_points(n_layers: int) -> list[str]:
    """The stream points the Residual tab's lens reads: the embedding, then after each attention and MLP add."""
    return ["blocks.0.hook_resid_pre"] + [
        f"blocks.{i}.hook_resid_{at}" for i in range(n_layers) for at in ("mid", "post")
    ]


def _lens(gpt: Any) -> dict[str, Any]:
    """What the logit lens reads at every stream point for every token of `LENS_PROMPT` (percent)."""
    import numpy as np

    from model import logit_lens, softmax

    trace = gpt.run(LENS_PROMPT)
    points = lens_points(gpt.config.n_layers)
    tokens = []
    for t, own in enumerate(trace.tokens):
        probs = softmax(logit_lens(gpt, np.stack([trace[p][t] for p in points])).astype(np.float64))
        final = int(np.argmax(trace.logits[t]))
        final_rank = [int((row > row[final]).sum()) + 1 for row in probs]
        settled = settled_from(final_rank)
        tokens.append(
            {
                "final_id": final,
                "final_pct": [100 * float(row[final]) for row in probs],
                "final_rank": final_rank,
                "top_id": [int(np.argmax(row)) for row in probs],
                "top_pct": [100 * float(row.max()) for row in probs],
                "own_pct": [100 * float(row[own]) for row in probs],
                "own_rank": [int((row > row[own]).sum()) + 1 for row in probs],
                "leads": sum(rank == 1 for rank in final_rank),
                "settled_from": settled,
                "leads_at_end": len(points) - settled,
            }
        )
    return {"points": len(points), "token": tokens}


def _setting_name(temperature: float, top_k: int | None) -> str:
    """T1, T0_5, T1_k3: a sampling setting as one part of a measure's path."""
    return f"T{temperature:g}".replace(".", "_") + ("" if top_k is None else f"_k{top_k}")


def _sample(gpt: Any, shown: int = 5) -> dict[str, Any]:
    """For every setting the keys reach, the draw probabilities of `LENS_PROMPT`'s `shown` likeliest next tokens."""
    from model.sampling import sampling_probs, top_order
    from tutor.draw_settings import TEMPERATURES, TOP_KS

    logits = gpt.run(LENS_PROMPT).logits[-1]
    order = top_order(logits, shown)
    settings: dict[str, Any] = {"top_id": int(order[0])}
    for temperature in TEMPERATURES:
        for top_k in TOP_KS:
            probs = sampling_probs(logits, temperature, top_k)
            settings[_setting_name(temperature, top_k)] = {"pct": [100 * float(probs[i]) for i in order]}
    return settings


def _heads(gpt: Any) -> dict[str, Any]:
    """Each block's heads on `WALK_PROMPT`: how much weight each query gives the token just before it."""
    import numpy as np

    trace = gpt.run(WALK_PROMPT)
    blocks = []
    for i in range(gpt.config.n_layers):
        pattern = trace[f"blocks.{i}.attn.hook_pattern"].astype(np.float64)  # [head, query, key]
        previous = np.diagonal(pattern, offset=-1, axis1=1, axis2=2)  # [head, query − 1]: query q, key q − 1
        means = previous.mean(axis=1)
        blocks.append(
            {
                "prev_mean": [float(m) for m in means],
                "prev_min": [float(m) for m in previous.min(axis=1)],
                "prev_head": int(np.argmax(means)),
                "others_max": float(np.sort(means)[-2]) if len(means) > 1 else 0.0,
            }
        )
    return {"block": blocks}


def _patching(gpt: Any) -> dict[str, Any]:
    """The patching view of `PATCH_CLEAN` patched into `PATCH_CORRUPTED` (tutor/patch_sweep.py, as the app draws it)."""
    from tutor.patch_sweep import patch_sweep

    sweep = patch_sweep(gpt, PATCH_CLEAN, gpt.run(PATCH_CLEAN), gpt.run(PATCH_CORRUPTED))
    if sweep.grid is None:
        return {}
    grid = sweep.grid
    return {
        "clean_diff": sweep.source_difference,
        "corrupted_diff": sweep.prompt_difference,
        "block": [{"restored": [float(v) for v in row]} for row in grid],
        "others_max": float(abs(grid[:, :-1]).max()),  # the largest share, in size, of a position but the last
    }


def _learned_positions(wpe: Any) -> dict[str, Any]:
    """What a learned position table looks like: how alike neighbouring rows are, and its norms."""
    import numpy as np

    w = np.asarray(wpe, dtype=np.float64)
    unit = w / np.linalg.norm(w, axis=1, keepdims=True)
    return {
        "neighbour_cos": float((unit[:-1] * unit[1:]).sum(axis=1).mean()),  # cos(W_P[p], W_P[p+1]), mean over p
        "cos_8_apart": float((unit[:-8] * unit[8:]).sum(axis=1).mean()),
        "first_cos": float((unit[0] @ unit[1:].T).mean()),  # position 0 against every other position
        "norm": [float(n) for n in np.linalg.norm(w, axis=1)],
        "mean_norm": float(np.linalg.norm(w, axis=1).mean()),
    }


WINDOW_MEASURES = ("adam", "embedding", "stream", "shifted_loss", "what_if", "norm_input")  # on validation windows
SHIFT = 16  # tokens between two window sets of `shifted_loss`
SHIFTS = 4


@cache
def _corpus(stdlib_text: bool) -> Any:
    from model.corpus import load_corpus

    return load_corpus(None, stdlib_text=stdlib_text)


@cache
def _windows(name: str) -> tuple[Any, Any, Any, Any, Any, Any]:
    """The model trained as `name`, its recipe, its corpus, the depth profile's windows (inputs, targets) and the
    model rebuilt at its initialisation from its seed."""
    import model
    from model.corpus import validation_windows
    from model.gpt import GPT
    from model.train import DEPTH_WINDOWS, Recipe, initial_params

    info = _training_info(name)
    if "recipe" not in info or "seed" not in info:
        raise ClaimError(f"{name} has no training record to rebuild its windows and its start from")
    gpt = model.load(name)
    recipe = Recipe(**info["recipe"])
    corpus = _corpus(recipe.stdlib_text)
    inputs, targets = validation_windows(corpus.validation, gpt.config.n_ctx, DEPTH_WINDOWS)
    start = GPT(gpt.config, initial_params(recipe, gpt.config, int(info["seed"])), gpt.tokenizer, lay_out=False)
    return gpt, recipe, corpus, inputs, targets, start


@cache
def _window_facts(name: str, key: str) -> Any:
    """One family of the measures read on validation windows (the module's docstring), computed only when a
    lesson names it (`shifted_loss` has its own, `_shifted_loss`, one window set at a time)."""
    import numpy as np

    from model.gradients import record_forward

    gpt, recipe, _, inputs, targets, start = _windows(name)
    if key == "adam":
        return {"init": _adam_step(start, recipe, inputs, targets), "trained": _adam_step(gpt, recipe, inputs, targets)}
    if key == "embedding":
        facts = {
            "token_norm": _row_norm(gpt.params["wte"], inputs),
            "token_norm_init": _row_norm(start.params["wte"], inputs),
        }
        if gpt.config.positional in ("sinusoidal", "learned"):
            table = gpt.position_rows(0, gpt.config.n_ctx).astype(np.float64)
            facts["position_norm"] = float(np.linalg.norm(table, axis=1).mean())
        return facts
    if key == "stream":
        _, acts = record_forward(gpt, inputs)
        points = lens_points(gpt.config.n_layers)
        norms = [float(np.linalg.norm(acts[p].astype(np.float64), axis=-1).mean()) for p in points]
        growth = norms[-1] - norms[0]
        return {
            "norm": norms,
            "share": [100 * (b - a) / growth for a, b in itertools.pairwise(norms)] if growth else [],
        }
    if key == "what_if":
        return _what_if(gpt, inputs, targets)
    if key == "norm_input":
        return _norm_input(gpt, inputs)
    raise ClaimError(f"no window measure {key!r}")


def _norm_input(gpt: Any, inputs: Any) -> dict[str, Any]:
    """What each norm of `gpt` reads (see `M.norm_input` in the docstring): its mean, its rms, the mean's share."""
    import numpy as np

    from model.gradients import record_forward

    _, acts = record_forward(gpt, inputs)
    facts: dict[str, list[float]] = {"abs_mean": [], "rms": [], "mean_share": []}
    for step in (s for s in gpt.steps if s.kind == "norm"):
        x = acts[step.in_hook].astype(np.float64)
        mu, mean_square = x.mean(axis=-1), (x * x).mean(axis=-1)
        facts["abs_mean"].append(float(np.abs(mu).mean()))
        facts["rms"].append(float(np.sqrt(mean_square).mean()))
        facts["mean_share"].append(float(100 * (mu * mu / mean_square).mean()))
    return facts | {"mean_share_rest_max": max(facts["mean_share"][1:], default=math.nan)}


TIMING_REPEATS = 200  # the fastest of this many runs: what the machine can do, not what else it was doing


@cache
def _timing(name: str) -> dict[str, Any]:
    """`name`'s pass over 64 tokens and its norms, against the same weights with the other norm (`M.timing`):
    RMSNorm's time over LayerNorm's (β = 0 where the model has none; dropped where it has one), each the fastest of
    `TIMING_REPEATS` runs taken in turns, so that whatever else the machine is doing slows both alike."""
    import time

    import numpy as np

    import model
    from model.gpt import GPT
    from model.gradients import record_forward
    from model.norm import layer_norm, rms_norm

    _training_info(name)  # first: it says when there is no such shipped model
    gpt = model.load(name)
    ids = gpt.tokenizer.encode(WALK_PROMPT * gpt.config.n_ctx)[: gpt.config.n_ctx]
    tokens = np.asarray(ids, dtype=np.intp)
    norms = [step for step in gpt.steps if step.kind == "norm"]
    gammas = {key: p for key, p in gpt.params.items() if key.rsplit(".", 1)[-1] == "g"}
    betas = {key[:-1] + "b": np.zeros_like(p) for key, p in gammas.items()}
    weights = {**betas, **gpt.params}  # the model's own β where it has them
    twins = {
        kind: GPT(
            replace(gpt.config, norm_kind=kind),
            {k: v for k, v in weights.items() if kind == "layer" or k not in betas},
            gpt.tokenizer,
        )  # laid out as the app's own pass is
        for kind in ("rms", "layer")
    }
    _, acts = record_forward(gpt, tokens)
    eps = gpt.config.ln_eps

    def norm_calls(kind: str) -> Any:
        inputs = [(acts[s.in_hook], s.out_hook.rsplit(".", 1)[0]) for s in norms]
        if kind == "rms":
            return lambda: [rms_norm(x, weights[p + ".g"], eps) for x, p in inputs]
        return lambda: [layer_norm(x, weights[p + ".g"], weights[p + ".b"], eps) for x, p in inputs]

    def fastest_in_turns(a: Any, b: Any) -> tuple[float, float]:
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(TIMING_REPEATS):
            for call, into in ((a, times[0]), (b, times[1])):
                start = time.perf_counter()
                call()
                into.append(time.perf_counter() - start)
        return min(times[0]), min(times[1])

    rms_pass, layer_pass = fastest_in_turns(
        lambda: twins["rms"].forward(tokens), lambda: twins["layer"].forward(tokens)
    )
    rms_norms, layer_norms = fastest_in_turns(norm_calls("rms"), norm_calls("layer"))
    return {"rms_over_layer_pass": rms_pass / layer_pass, "rms_over_layer_norms": rms_norms / layer_norms}


def _what_if(gpt: Any, inputs: Any, targets: Any) -> dict[str, Any]:
    """The validation loss of `gpt` with one piece taken out at a time (see `M.what_if` in the docstring)."""
    import numpy as np

    import model
    from model.gradients import loss_only
    from model.interventions import edited, plan_edits

    n, cfg = inputs.shape[-1], gpt.config

    def loss(*edits: Any) -> float:
        return loss_only(edited(gpt, plan_edits(gpt, n, edits)) if edits else gpt, inputs, targets)

    blocks = []
    for b in range(cfg.n_layers):
        block: dict[str, Any] = {"head": [loss(model.AblateHead(block=b, head=h)) for h in range(cfg.n_heads)]}
        for sublayer in ("attn", "mlp"):
            block[f"skip_{sublayer}"] = loss(model.SkipSublayer(block=b, sublayer=sublayer))
            if cfg.residual:
                block[f"drop_{sublayer}"] = loss(model.DropResidual(block=b, sublayer=sublayer))
        if cfg.norm == "pre":
            for norm in ("ln1", "ln2"):
                block[f"bypass_{norm}"] = loss(model.BypassNorm(norm=f"blocks.{b}.{norm}"))
        blocks.append(block)
    if cfg.norm == "pre":  # what a sublayer reads with its LayerNorm and without: the mean ‖LN(x)‖ and ‖x‖
        from model.gradients import record_forward

        _, acts = record_forward(gpt, inputs)
        for b, block in enumerate(blocks):
            for norm, stream in (("ln1", "hook_resid_pre"), ("ln2", "hook_resid_mid")):
                out = acts[f"blocks.{b}.{norm}.hook_normalized"].astype(np.float64)
                block[f"{norm}_out_norm"] = float(np.linalg.norm(out, axis=-1).mean())
                block[f"{norm}_in_norm"] = float(np.linalg.norm(acts[f"blocks.{b}.{stream}"], axis=-1).mean())
    facts: dict[str, Any] = {"clean": loss(), "block": blocks}
    facts["later_heads_max"] = max((h for block in blocks[1:] for h in block["head"]), default=math.nan)
    if cfg.residual:
        drops = [block[f"drop_{s}"] for block in blocks for s in ("attn", "mlp")]
        facts |= {"drop_min": min(drops), "drop_max": max(drops)}
    if cfg.norm == "pre":
        facts["bypass_ln_final"] = loss(model.BypassNorm(norm="ln_final"))
        bypasses = [block[f"bypass_{n}"] for block in blocks for n in ("ln1", "ln2")] + [facts["bypass_ln_final"]]
        facts |= {"bypass_min": min(bypasses), "bypass_max": max(bypasses)}
    return facts


@cache
def _shifted_loss(name: str, k: int) -> float:
    """The validation loss on the evaluation windows laid SHIFT·k tokens later (one set: hundreds of windows)."""
    from model.corpus import validation_windows
    from model.gradients import loss_only

    gpt, recipe, corpus, *_ = _windows(name)
    windows, after = validation_windows(corpus.validation[SHIFT * k :], gpt.config.n_ctx, recipe.eval_windows)
    size = recipe.batch_size  # as `model.train.validation_loss` batches them
    total = sum(
        loss_only(gpt, windows[i : i + size], after[i : i + size]) * after[i : i + size].size
        for i in range(0, len(windows), size)
    )
    return total / after.size


def _squared(g: Any) -> float:
    import numpy as np

    g = np.asarray(g, dtype=np.float64)
    return float(np.vdot(g, g))


def _row_norm(wte: Any, tokens: Any) -> float:
    """The mean ‖W_E[t]‖ over `tokens` as they occur (a common token counts as often as it occurs)."""
    import numpy as np

    return float(np.linalg.norm(np.asarray(wte, dtype=np.float64)[tokens.ravel()], axis=1).mean())


def _adam_step(gpt: Any, recipe: Any, inputs: Any, targets: Any) -> dict[str, Any]:
    """How the training step (`model/train.py`: clipping, then AdamW) treats `gpt`'s gradient on these windows,
    block by block, at the first update (m̂ = g, v̂ = g²): a step of g/(|g| + ε) times the learning rate."""
    from dataclasses import replace

    import numpy as np

    from model.gradients import loss_and_gradients
    from model.train import AdamW, clip_global_norm

    _, grads = loss_and_gradients(gpt, inputs, targets)
    blocks = [{k: g for k, g in grads.items() if k.startswith(f"blocks.{i}.")} for i in range(gpt.config.n_layers)]
    before = [float(np.sqrt(sum(_squared(g) for g in block.values()))) for block in blocks]
    norm = clip_global_norm(grads, recipe.grad_clip)  # scales `grads` in place, as a training step does
    params = {k: np.zeros_like(g) for k, g in grads.items()}  # from zero, the update is the step itself
    AdamW.zeros_like(params).update(params, grads, 1.0, 1, replace(recipe, weight_decay=0.0))
    after = float(np.sqrt(sum(_squared(g) for g in grads.values())))
    figures: dict[str, Any] = {"grad_norm": norm, "clip_scale": after / norm if norm else 1.0}
    for key in ("block_params", "block_grad", "raw_rms", "clipped", "coord_rms", "below_eps", "first_step"):
        figures[key] = []
    for i, block in enumerate(blocks):
        flat = np.concatenate([g.astype(np.float64).ravel() for g in block.values()])
        steps = np.concatenate([np.abs(params[k].astype(np.float64)).ravel() for k in block])
        clipped = float(np.linalg.norm(flat))
        figures["block_params"].append(flat.size)
        figures["block_grad"].append(before[i])
        figures["raw_rms"].append(before[i] / np.sqrt(flat.size))
        figures["clipped"].append(clipped)
        figures["coord_rms"].append(clipped / np.sqrt(flat.size))
        figures["below_eps"].append(100 * float((np.abs(flat) < recipe.adam_eps).mean()))
        figures["first_step"].append(100 * float(steps.mean()))
    return figures


GROWTH_FACTOR = 10.0  # "grew": ten times its own value at the run's first step


def first_to_grow(record: dict[str, Any]) -> tuple[str, ...]:
    """The growth quantities of a run that first reached GROWTH_FACTOR × their value at the first step (a value
    that is not finite counts as reached): one name, or several that got there in the same step, or none."""
    from model.train import GROWTH

    firsts: dict[str, int] = {}
    for name in GROWTH:
        values = record["growth"].get(name) or []
        if not values or values[0] is None or values[0] <= 0:
            continue
        limit = GROWTH_FACTOR * values[0]
        crossed = next((i for i, x in enumerate(values) if x is None or x >= limit), None)
        if crossed is not None:
            firsts[name] = crossed
    earliest = min(firsts.values(), default=None)
    return tuple(name for name in GROWTH if earliest is not None and firsts.get(name) == earliest)


def grew_most(record: dict[str, Any]) -> str | None:
    """The growth quantity with the largest ratio of its value at the run's last finite step to its first."""
    from model.train import GROWTH

    last = len(record.get("train_loss") or []) - 1  # the losses stop before the step that was not finite
    ratios = {}
    for name in GROWTH:
        values = record["growth"].get(name) or []
        if 0 <= last < len(values) and values[0] and values[last] is not None:
            ratios[name] = values[last] / values[0]
    return max(ratios, key=lambda name: ratios[name]) if ratios else None


@cache
def _results(name: str) -> list[dict[str, Any]]:
    from model.sweep import SHIPPED_RESULTS, read_results

    path = SHIPPED_RESULTS / f"{name}.jsonl.gz"
    results = read_results(path)
    if results.problem:
        raise ClaimError(f"shipped results: {results.problem}")
    return results.runs


def _cell_facts(cell: Any) -> dict[str, Any]:
    losses = cell.final_losses()
    steps = cell.diverged_steps()
    return {
        "runs": cell.n,
        "diverged": cell.count("diverged"),
        "stalled": cell.count("stalled"),
        "trained": cell.count("trained"),
        **({"median": cell.median(), "min": losses[0], "max": losses[-1]} if losses else {}),
        **({"first_diverged": steps[0], "last_diverged": steps[-1]} if steps else {}),
        "peak_train": max((x for r in cell.runs for x in r.get("train_loss") or [] if x is not None), default=math.nan),
    }


@cache
def _stability_facts() -> dict[str, Any]:
    from model.sweep import cells
    from model.train import GROWTH

    runs = _results("stability")
    lrs = sorted({float(r["lr"]) for r in runs})
    facts: dict[str, Any] = {"lr": lrs, "unigram": float(runs[0]["unigram"]) if runs else math.nan}
    for cell in cells(runs):
        wiring = facts.setdefault(f"s{cell.shape}", {}).setdefault(cell.norm, {})
        warm = wiring.setdefault("warm" if cell.warmup else "cold", {"lr": [{} for _ in lrs]})
        warm["lr"][lrs.index(cell.lr)] = _cell_facts(cell)
    for shape in [v for k, v in facts.items() if k.startswith("s")]:
        for wiring in shape.values():
            cells_of_wiring = [c for warm in wiring.values() for c in warm["lr"] if c]
            wiring["all"] = {key: sum(c[key] for c in cells_of_wiring) for key in ("runs", "diverged", "stalled")}
            for warm in [w for name, w in wiring.items() if name != "all"]:
                trained = [lr for lr, c in zip(lrs, warm["lr"], strict=True) if c and c["trained"] == c["runs"]]
                warm["stable_lr"] = max(trained, default=0.0)
                medians = [(c["median"], lr) for lr, c in zip(lrs, warm["lr"], strict=True) if c.get("median")]
                if medians:
                    warm["best_median"], warm["best_lr"] = min(medians)
    diverged = [r for r in runs if r["diverged"]]
    firsts = [first_to_grow(r) for r in diverged]
    most = [grew_most(r) for r in diverged]
    facts["growth"] = {"runs": len(diverged)} | {
        name: {
            "first": sum(f == (name,) for f in firsts),
            "among_first": sum(name in f for f in firsts),
            "most": most.count(name),
        }
        for name in GROWTH
    }
    return facts


SEED_FILES = ("depth-seeds", "norm-seeds")  # model/data/: variants over seeds, each file a comparison of its own


@cache
def _seed_facts() -> dict[str, Any]:
    import statistics

    from model.sweep import variants

    facts: dict[str, Any] = {}
    for file in SEED_FILES:
        found = variants(_results(file))
        losses = {v.name: [math.nan if x is None else x for x in map(v.final_loss, range(v.cell.n))] for v in found}
        for v in found:
            mine = losses[v.name]
            facts[v.name.replace("-", "_")] = _cell_facts(v.cell) | {
                "collapsed": v.collapsed,
                "spiked": v.spiked,
                "loss": mine,
                "mean": statistics.fmean(mine) if mine else math.nan,
                "range": max(mine) - min(mine) if mine else math.nan,
                "similarity": v.similarity,
                "spikes": [len(s) for s in v.spikes],
                "above": {
                    other.replace("-", "_"): sum(a > b for a, b in zip(mine, theirs, strict=True))
                    for other, theirs in losses.items()
                    if other != v.name and len(theirs) == len(mine)
                },
                "gap": {
                    other.replace("-", "_"): statistics.fmean(mine) - statistics.fmean(theirs)
                    for other, theirs in losses.items()
                    if other != v.name and mine and theirs
                },
            }
    return facts


def measure(path: str) -> float:
    """The value of a measure `MODEL.what[.more][i]` (see the module's docstring)."""
    name, _, rest = path.partition(".")
    if not rest:
        raise ClaimError(f"measure {path!r} must be MODEL.WHAT, e.g. tiny.vocab_size")
    facts = {"stability": _stability_facts, "seeds": _seed_facts}
    if name in facts:
        value: Any = facts[name]()
    elif (key := rest.partition(".")[0].partition("[")[0]) == "timing":
        value = {key: _timing(name)}
    elif key == "shifted_loss":
        match = _PATH_PART.match(rest)
        wanted = int(match.group("index")) if match and match.group("index") is not None else None
        value = {key: [_shifted_loss(name, k) if k == wanted else math.nan for k in range(SHIFTS)]}
    elif key in WINDOW_MEASURES:
        value = {key: _window_facts(name, key)}
    else:
        value = _model_facts(name)
    for part in rest.split("."):
        match = _PATH_PART.match(part)
        if match is None or not isinstance(value, dict) or match.group("key") not in value:
            known = ", ".join(sorted(value)) if isinstance(value, dict) else "nothing"
            raise ClaimError(f"measure {path!r}: no {part!r} here (known: {known})")
        value = value[match.group("key")]
        if match.group("index") is not None:
            index = int(match.group("index"))
            if not isinstance(value, list) or not -len(value) <= index < len(value):
                raise ClaimError(f"measure {path!r}: index {index} is out of range")
            value = value[index]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ClaimError(f"measure {path!r} is not a number")
    return float(value)


def claimed_number(written: str) -> str:
    """The number of a claim's text: all of it ("1.638", "2,648,866"), or the number it starts with when more
    follows to say which of several equal numbers is meant ("3 of 3 at 1e-1": the first 3; "57)": 57)."""
    if _NUMBER.match(written):
        return written
    leading = _LEADING_NUMBER.match(written)
    return leading.group(0) if leading else written


def squashed(text: str) -> str:
    """Runs of white space as one space: a claim's words may be wrapped across lines in the lesson."""
    return re.sub(r"\s+", " ", text)


def written_number(text: str) -> tuple[float, float]:
    """The number a lesson writes ("266 880", "1.638", "−0.5", "2.2e-9") and half a unit of its last digit."""
    if not _NUMBER.match(text):
        raise ClaimError(f"claim {text!r} is not a number as a lesson writes one")
    plain = re.sub(r"[ \u2009\u202f,]", "", text).replace("−", "-")
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return float(plain), 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def check_claims(text: str, body_without_blocks: str) -> list[tuple[int, str]]:
    """A `tutor-claims` block's problems as (line within the block, message)."""
    try:
        claims = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return [(0, f"tutor-claims is not valid TOML: {error}")]
    lines = text.split("\n")
    problems: list[tuple[int, str]] = []
    for written, spec in claims.items():
        line = next((n for n, row in enumerate(lines, 1) if row.strip().startswith(f'"{written}"')), 0)
        problems += [(line, message) for message in claim_problems(written, spec, body_without_blocks)]
    return problems


def claim_problems(written: str, spec: object, text: str, where: str = "the lesson's text") -> list[str]:
    """One claim's problems: `written` must be in `text` and its number what `spec` (a measure, or a table with
    `measure` and `tolerance`) recomputes. Also the claims of an exercise's answer (tutor/lessons/answers.py)."""
    if isinstance(spec, dict):
        path, tolerance = spec.get("measure"), spec.get("tolerance")
    else:
        path, tolerance = spec, None
    try:
        if not isinstance(path, str):
            raise ClaimError(f'claim {written!r} needs a measure, e.g. "tiny.vocab_size"')
        claimed, half_unit = written_number(claimed_number(written))
        actual = measure(path)
    except ClaimError as error:
        return [str(error)]
    problems = []
    allowed = float(tolerance) if isinstance(tolerance, (int, float)) else half_unit
    if squashed(written) not in squashed(text):
        problems.append(f"claim {written!r} does not appear in {where}")
    if not math.isclose(actual, claimed, rel_tol=0.0, abs_tol=allowed * (1 + 1e-9)):
        problems.append(f"claim {written!r} = {path} is {actual:.6g} on the shipped weights (±{allowed:g})")
    return problems
