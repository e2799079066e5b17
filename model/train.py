"""Training: AdamW on random windows of the corpus, warm-up then cosine learning rate, clipping,
periodic validation and checkpoints that resume bit for bit. Float32 throughout.

Choices, written down:

- AdamW (β₁ 0.9, β₂ 0.95, ε 1e-8) with decoupled weight decay θ ← θ − lr·λ·θ applied to the
  blocks' weight matrices only (W_QKV, W_O, W_in, W_out): biases, LayerNorm γ/β and the
  embeddings (token, learned position) are not pulled towards zero — γ → 0 would switch a norm
  off, and a rare character's embedding would shrink just for being rare.
- Token embeddings start at std 0.3, not GPT-2's 0.02 (the rest of `init_params` is GPT-2's).
  The sinusoidal table adds vectors of norm √(d/2) ≈ 5.7 at d = 64 and the forward does not
  scale embeddings by √d (as Vaswani et al. do), so a token vector of norm 0.16 is a whisper
  under the position: measured, `tiny` sat at the unigram loss (3.3) for 500 steps, while
  `nope` and `learned` passed 2.7 in 200. At 0.3 `tiny` reaches 2.6 in 200 steps.
- Learning rate: linear warm-up from lr/warmup to lr, then a cosine down to lr/10 at the last step.
  The warm-up is long (300 steps) for post-norm's sake: with 100 steps at lr 1e-2, `postnorm`
  stayed at the unigram loss for 500 steps; with 300 it reached 2.17 (measured on the
  docstring corpus), as the pre-norm models do.
- Gradients are clipped to a global L2 norm of 1 before the update (`grad_clip`; 0 turns it off).
- Every step records what grows before a run blows up (`growth`): the global gradient norm before
  clipping, the largest |attention score| q·k/√d_head, the largest |logit| and the mean ‖x‖ of the
  stream after the last block — read from the step's own forward pass, so watching changes nothing.
- Step s trains on windows drawn by `np.random.default_rng([seed, s])`: no generator state to
  carry, so a resumed run draws exactly the windows the uninterrupted one would have.
- A checkpoint is two safetensors files: the model (`save_checkpoint`, with the recipe, the
  corpus description, the baselines and the loss curves as JSON in its metadata under
  "training") and, beside it, `<path>.optim` with AdamW's moments. Never pickle.
"""

from __future__ import annotations

import json
import math
import os
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np

from model.config import GPTConfig, NormKind, NormPlacement, PositionalEncoding
from model.corpus import Corpus, ngram_baselines, validation_windows
from model.depth import DepthProfile, depth_profile, stream_points
from model.gpt import GPT
from model.gradients import Grads, loss_and_gradients, loss_only
from model.params import Params, init_params
from model.tokenizer import CharTokenizer
from model.weights import WeightsError, load_checkpoint, read_safetensors, save_checkpoint

OPTIMIZER_FORMAT = "tutor-adamw/1"
DEPTH_WINDOWS = 16  # validation windows the depth profile is measured on (`model/depth.py`)


class TrainingError(Exception):
    """Training cannot start or go on; the message says why and where the last checkpoint is."""


@dataclass(frozen=True)
class Recipe:
    """A model's shape and wiring plus everything about how it is trained."""

    name: str = "tiny"
    positional: PositionalEncoding = "sinusoidal"
    pos_base: float = 10000.0
    norm: NormPlacement = "pre"
    norm_kind: NormKind = "layer"  # LayerNorm, or RMSNorm (no μ, no β)
    residual: bool = True
    n_ctx: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    d_mlp: int = 256
    batch_size: int = 16
    steps: int = 3000
    learning_rate: float = 1e-2
    min_learning_rate: float = 1e-3
    warmup_steps: int = 300
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    adam_eps: float = 1e-8
    grad_clip: float = 1.0
    embedding_std: float = 0.3
    eval_every: int = 100
    eval_windows: int = 128
    stdlib_text: bool = True

    def config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(
            vocab_size=vocab_size,
            n_ctx=self.n_ctx,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            d_mlp=self.d_mlp,
            positional=self.positional,
            pos_base=self.pos_base,
            norm=self.norm,
            residual=self.residual,
            norm_kind=self.norm_kind,
        )


VARIANTS_FILE = Path(__file__).with_name("variants.toml")  # the variants, one a line: their names are declared there
NOT_RECIPE = ("from", "look")  # a line's base, and the tutor's colour and marker: not fields of the recipe


def read_recipes(path: Path = VARIANTS_FILE) -> dict[str, Recipe]:
    """Every line of `variants.toml` as a Recipe: the variant it starts `from` (one above it; without one, the
    defaults), changed as the line says. A field that is not the recipe's, or a `from` not above, raises."""
    decimal = {f.name for f in fields(Recipe) if f.type == "float"}  # TOML's 0 is an int: 0.0 here
    recipes: dict[str, Recipe] = {}
    for name, line in tomllib.loads(path.read_text(encoding="utf-8")).items():
        base = recipes[line["from"]] if "from" in line else Recipe()
        changes: dict[str, Any] = {k: float(v) if k in decimal else v for k, v in line.items() if k not in NOT_RECIPE}
        recipes[name] = replace(base, name=name, **changes)
    return recipes


RECIPES: dict[str, Recipe] = read_recipes()  # "tiny" first: the seed lesson's model, and every default's


# What a recipe may ask for, checked before anything is allocated (a typo of 10⁹ blocks is one line, not a swap storm).
LIMITS = {"n_layers": 64, "d_model": 1024, "n_heads": 64, "n_ctx": 1024, "d_mlp": 4096, "batch_size": 512}
MAX_STEPS = 1_000_000
MAX_LEARNING_RATE = 10.0
FLAG_NAMES = {  # the `tutor train` flag that sets each recipe field, to name a change the way it was asked for
    "norm": "norm",
    "norm_kind": "norm-kind",
    "residual": "residual",
    "positional": "positional",
    "pos_base": "base",
    "n_layers": "blocks",
    "d_model": "d-model",
    "n_heads": "heads",
    "learning_rate": "lr",
    "min_learning_rate": "min-lr",
    "warmup_steps": "warmup",
    "grad_clip": "clip",
}


def recipe_problem(recipe: Recipe) -> str | None:
    """Why `recipe` cannot be trained, in one line, or None. Only numbers are looked at: nothing is allocated."""

    def finite(x: object) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    for name, most in LIMITS.items():
        value = getattr(recipe, name)
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most):
            return f"{FLAG_NAMES.get(name, name)} must be a whole number from 1 to {most}, got {value!r}"
    if recipe.d_model % recipe.n_heads:
        return (
            f"d-model {recipe.d_model} does not split into {recipe.n_heads} heads (d-model must be a multiple of heads)"
        )
    if recipe.positional == "rope" and (recipe.d_model // recipe.n_heads) % 2:
        return f"rope turns pairs of coordinates: a head of {recipe.d_model // recipe.n_heads} has an odd size"
    if recipe.norm not in ("pre", "post", "none"):
        return f"norm must be pre, post or none, got {recipe.norm!r}"
    if recipe.norm_kind not in ("layer", "rms"):
        return f"norm-kind must be layer or rms, got {recipe.norm_kind!r}"
    if recipe.positional not in ("sinusoidal", "learned", "rope", "none"):
        return f"positional must be sinusoidal, learned, rope or none, got {recipe.positional!r}"
    if not (finite(recipe.pos_base) and recipe.pos_base > 1):
        return f"base must be a number above 1, got {recipe.pos_base!r}"
    if not (finite(recipe.learning_rate) and 0 < recipe.learning_rate <= MAX_LEARNING_RATE):
        return f"lr must be above 0 and at most {MAX_LEARNING_RATE:g}, got {recipe.learning_rate!r}"
    if not (finite(recipe.min_learning_rate) and 0 <= recipe.min_learning_rate <= recipe.learning_rate):
        return f"min-lr must be from 0 to lr ({recipe.learning_rate:g}), got {recipe.min_learning_rate!r}"
    if not (isinstance(recipe.steps, int) and 1 <= recipe.steps <= MAX_STEPS):
        return f"steps must be a whole number from 1 to {MAX_STEPS:,}, got {recipe.steps!r}"
    if not (isinstance(recipe.warmup_steps, int) and 0 <= recipe.warmup_steps <= MAX_STEPS):
        return f"warmup must be a whole number of steps from 0 to {MAX_STEPS:,}, got {recipe.warmup_steps!r}"
    if not (finite(recipe.grad_clip) and recipe.grad_clip >= 0):
        return f"clip must be 0 (off) or a positive number, got {recipe.grad_clip!r}"
    if not (isinstance(recipe.eval_every, int) and recipe.eval_every >= 1):
        return f"eval_every must be a positive whole number, got {recipe.eval_every!r}"
    return None


def recipe_changes(recipe: Recipe, base: Recipe) -> list[str]:
    """`recipe`'s differences from `base` as flags would say them: ["norm=none", "lr=0.03"]."""
    changes = []
    for name, flag in FLAG_NAMES.items():
        value, was = getattr(recipe, name), getattr(base, name)
        if value != was and name == "residual":
            changes.append("residual" if value else "no-residual")
        elif value != was:
            changes.append(f"{flag}={value:g}" if isinstance(value, float) else f"{flag}={value}")
    return changes


def learning_rate(step: int, recipe: Recipe, total_steps: int) -> float:
    """Linear warm-up over `warmup_steps`, then a half cosine from the peak to the minimum at the last step."""
    if step < recipe.warmup_steps:
        return recipe.learning_rate * (step + 1) / recipe.warmup_steps
    progress = (step - recipe.warmup_steps) / max(1, total_steps - 1 - recipe.warmup_steps)
    cosine = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return recipe.min_learning_rate + (recipe.learning_rate - recipe.min_learning_rate) * cosine


def decays(name: str) -> bool:
    """Weight decay on the blocks' weight matrices only (see the module's notes)."""
    return name.endswith(("attn.w_qkv", "attn.w_out", "mlp.w_in", "mlp.w_out"))


def clip_global_norm(grads: Grads, max_norm: float) -> float:
    """Scale every gradient by max_norm/‖g‖ when the global norm ‖g‖ = √(Σ ‖gᵢ‖²) exceeds it; returns ‖g‖.

    max_norm 0 (or less) turns clipping off: the norm is still measured.
    """
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if 0 < max_norm < norm:
        scale = max_norm / (norm + 1e-6)
        for g in grads.values():
            g *= scale
    return norm


@dataclass
class AdamW:
    """Adam's moment estimates per parameter, and the update with decoupled weight decay:

    m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  θ ← θ − lr·λ·θ (decayed ones) − lr·m̂/(√v̂ + ε)
    with m̂ = m/(1−β₁ᵗ) and v̂ = v/(1−β₂ᵗ) at update t (from 1).
    """

    m: dict[str, np.ndarray]
    v: dict[str, np.ndarray]

    @classmethod
    def zeros_like(cls, params: Params) -> AdamW:
        return cls({k: np.zeros_like(p) for k, p in params.items()}, {k: np.zeros_like(p) for k, p in params.items()})

    def update(self, params: Params, grads: Grads, lr: float, t: int, recipe: Recipe) -> None:
        b1, b2 = recipe.beta1, recipe.beta2
        m_correction, v_correction = 1.0 - b1**t, 1.0 - b2**t  # Python floats: float32 stays float32
        for name, g in grads.items():
            m, v, p = self.m[name], self.v[name], params[name]
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            if decays(name):
                p *= 1.0 - lr * recipe.weight_decay
            p -= (lr / m_correction) * m / (np.sqrt(v / v_correction) + recipe.adam_eps)


GROWTH = ("grad_norm", "max_attn_score", "max_logit", "stream_norm")  # what `growth_figures` reads, in order


def growth_figures(n_layers: int, logits: np.ndarray, acts: dict[str, np.ndarray]) -> dict[str, float]:
    """What grows before a run blows up, read from one step's forward pass (any batch axes):

    max_attn_score = max |q·k/√d_head| over every block, head and allowed (unmasked) pair
    max_logit      = max |logit|
    stream_norm    = mean over positions of ‖x‖, x the stream after the last block
    (the fourth, the gradient norm before clipping, comes from `clip_global_norm`).
    """
    scores = [acts[f"blocks.{i}.attn.hook_attn_scores"] for i in range(n_layers)]
    last = acts[f"blocks.{n_layers - 1}.hook_resid_post"]
    with np.errstate(over="ignore", invalid="ignore"):
        return {
            "max_attn_score": max(float(np.abs(s, where=np.isfinite(s), out=np.zeros_like(s)).max()) for s in scores),
            "max_logit": float(np.abs(logits).max()),
            "stream_norm": float(np.linalg.norm(last, axis=-1).mean()),
        }


def batch(stream: np.ndarray, n_ctx: int, batch_size: int, seed: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Step `step`'s (inputs, targets) `[batch, n_ctx]`: random windows of n_ctx + 1 tokens of the stream."""
    starts = np.random.default_rng([seed, step]).integers(0, stream.size - n_ctx, batch_size)
    windows = stream[starts[:, None] + np.arange(n_ctx + 1)]
    return windows[:, :-1], windows[:, 1:]


class Divergence(TypedDict):
    """Where a run's loss or gradient stopped being finite (`run`), kept in its last good checkpoint."""

    step: int  # the step that failed
    what: str  # "loss" or "gradient norm"
    value: str  # what it became: "nan", "inf"
    train_loss_since_checkpoint: list[float]  # the steps after the checkpoint, all finite
    growth_since_checkpoint: NotRequired[dict[str, list[float]]]  # and the step that failed; not in older files


class TrainedDepth(DepthProfile):
    step: int  # the updates done when it was measured


class DepthReport(TypedDict):
    """`depth_report`: the depth figures at initialisation and as trained, on the same windows."""

    windows: str
    points: list[str]
    init: DepthProfile
    trained: TrainedDepth


@dataclass
class TrainState:
    """Everything a run needs to go on: the model, the optimizer, where it stands, what it measured."""

    recipe: Recipe
    config: GPTConfig
    tokenizer: CharTokenizer
    params: Params
    optimizer: AdamW
    seed: int
    total_steps: int
    step: int = 0  # updates done
    train_curve: list[float] = field(default_factory=list)  # the loss of every step
    val_curve: list[tuple[int, float]] = field(default_factory=list)  # (updates done, validation loss)
    corpus: dict[str, object] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0  # training time so far, across resumes
    diverged: Divergence | None = None  # where the loss or gradient stopped being finite (see `run`)
    growth: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in GROWTH})  # per step (`GROWTH`)
    depth: DepthReport | None = None  # per-layer figures at initialisation and at the end (`depth_report`)
    model: GPT = field(init=False, repr=False)  # over `params` as they are: AdamW changes them in place

    def __post_init__(self) -> None:
        self.model = GPT(self.config, self.params, self.tokenizer, self.recipe.name, lay_out=False)

    def divergence_line(self) -> str | None:
        """One line for a learner, or None if the run never diverged."""
        if self.diverged is None:
            return None
        d = self.diverged
        kept = f"kept the last good checkpoint, step {self.step}"
        return f"diverged at step {d['step']} ({d['what']} became {d['value']}); {kept}"

    def training_metadata(self) -> str:
        return json.dumps(
            {
                "recipe": asdict(self.recipe),
                "seed": self.seed,
                "step": self.step,
                "total_steps": self.total_steps,
                "seconds": round(self.seconds, 3),
                "tokens_per_step": self.recipe.batch_size * self.recipe.n_ctx,
                "corpus": self.corpus,
                "baselines": self.baselines,
                "train_loss": self.train_curve,
                "val_loss": self.val_curve,
                "growth": {k: [float(f"{x:.4g}") for x in v] for k, v in self.growth.items()},  # 4 digits: a record
            }
            | ({"diverged": self.diverged} if self.diverged is not None else {})
            | ({"depth": self.depth} if self.depth is not None else {}),
            ensure_ascii=False,
        )


def initial_params(recipe: Recipe, config: GPTConfig, seed: int) -> Params:
    """Where training starts: GPT-2's initialisation, token embeddings at `embedding_std` (see the notes)."""
    params = init_params(config, seed)
    params["wte"] = np.random.default_rng([seed, 1]).normal(0.0, recipe.embedding_std, params["wte"].shape)
    params["wte"] = params["wte"].astype(np.float32)
    return params


def new_state(corpus: Corpus, recipe: Recipe, seed: int, steps: int | None = None) -> TrainState:
    config = recipe.config(corpus.tokenizer.vocab_size)
    params = initial_params(recipe, config, seed)
    inputs, targets = validation_windows(corpus.validation, config.n_ctx, recipe.eval_windows)
    _check_corpus_size(corpus, config.n_ctx)
    return TrainState(
        recipe=recipe,
        config=config,
        tokenizer=corpus.tokenizer,
        params=params,
        optimizer=AdamW.zeros_like(params),
        seed=seed,
        total_steps=steps if steps is not None else recipe.steps,
        corpus=corpus.describe(),
        baselines=ngram_baselines(corpus.train, inputs, targets, corpus.tokenizer.vocab_size),
    )


def _check_corpus_size(corpus: Corpus, n_ctx: int) -> None:
    if corpus.train.size < n_ctx + 1:
        raise TrainingError(f"the training text has {corpus.train.size} tokens, fewer than a window of {n_ctx + 1}")


def optimizer_path(path: Path) -> Path:
    """`<path>.optim`: not `*.safetensors`, so a shipped-models folder never lists it as a model."""
    return path.with_name(path.name + ".optim")


def save_state(state: TrainState, path: Path) -> None:
    """The optimizer first, then the model, each written atomically; both carry the step number."""
    from safetensors.numpy import save_file  # only writers need the package

    opt = optimizer_path(path)
    tensors = {f"m.{k}": v for k, v in state.optimizer.m.items()} | {f"v.{k}": v for k, v in state.optimizer.v.items()}
    tmp = opt.with_name(f".{opt.name}.{os.getpid()}.tmp")
    try:
        save_file(tensors, str(tmp), metadata={"format": OPTIMIZER_FORMAT, "step": str(state.step)})
        os.replace(tmp, opt)
    finally:
        tmp.unlink(missing_ok=True)
    save_checkpoint(
        path,
        state.config,
        state.params,
        state.tokenizer,
        trained=state.step > 0,
        metadata={"name": state.recipe.name, "training": state.training_metadata()},
    )


def saved_recipe(path: Path) -> Recipe:
    """The recipe a checkpoint was trained by (to rebuild its corpus before resuming)."""
    try:
        _, metadata = read_safetensors(path)
        return Recipe(**json.loads(metadata["training"])["recipe"])
    except WeightsError as error:
        raise TrainingError(f"cannot resume: {error}") from None
    except (KeyError, TypeError, json.JSONDecodeError):
        raise TrainingError(f"cannot resume: {path} has no training record (not written by tutor train?)") from None


def load_state(path: Path, corpus: Corpus, steps: int | None = None) -> TrainState:
    """A run saved by `save_state`, ready to go on; the corpus must be the one it was trained on."""
    try:
        config, params, tokenizer, metadata = load_checkpoint(path)
        opt_tensors, opt_meta = read_safetensors(optimizer_path(path))
    except WeightsError as error:
        raise TrainingError(f"cannot resume: {error}") from None
    try:
        info = json.loads(metadata["training"])
        recipe = Recipe(**info["recipe"])
    except (KeyError, TypeError, json.JSONDecodeError):
        raise TrainingError(f"cannot resume: {path} has no training record (not written by tutor train?)") from None
    if opt_meta.get("format") != OPTIMIZER_FORMAT or opt_meta.get("step") != str(info["step"]):
        raise TrainingError(f"cannot resume: {optimizer_path(path)} does not belong to step {info['step']} of {path}")
    if info["corpus"].get("fingerprint") != corpus.fingerprint():
        raise TrainingError(f"cannot resume: the corpus changed since {path} was written")
    try:
        m = {k: np.array(opt_tensors[f"m.{k}"], dtype=np.float32) for k in params}
        v = {k: np.array(opt_tensors[f"v.{k}"], dtype=np.float32) for k in params}
    except KeyError as error:
        raise TrainingError(f"cannot resume: {optimizer_path(path)} lacks tensor {error}") from None
    return TrainState(
        recipe=recipe,
        config=config,
        tokenizer=tokenizer,
        params={k: np.array(p, dtype=np.float32) for k, p in params.items()},  # writable copies of the mapping
        optimizer=AdamW(m, v),
        seed=int(info["seed"]),
        total_steps=steps if steps is not None else int(info["total_steps"]),
        step=int(info["step"]),
        train_curve=[float(x) for x in info["train_loss"]],
        val_curve=[(int(s), float(x)) for s, x in info["val_loss"]],
        corpus=info["corpus"],
        baselines=info["baselines"],
        seconds=float(info["seconds"]),
        diverged=info.get("diverged"),
        depth=info.get("depth"),
        growth={k: [float(x) for x in info["growth"][k]] for k in GROWTH}
        if "growth" in info
        else {k: [math.nan] * int(info["step"]) for k in GROWTH},  # written before growth was recorded
    )


def _diverged(state: TrainState, corpus: Corpus, path: Path, what: str, value: float) -> TrainState:
    """The last good checkpoint, rewritten with the record of where the run after it diverged."""
    good = load_state(path, corpus, state.total_steps)
    good.diverged = {
        "step": state.step + 1,
        "what": what,
        "value": str(value),
        "train_loss_since_checkpoint": state.train_curve[good.step :],  # the steps after it, all finite
        "growth_since_checkpoint": {k: v[good.step :] for k, v in state.growth.items()},  # and the step that failed
    }
    good.seconds = state.seconds
    good.depth = depth_report(good, corpus)
    save_state(good, path)
    return good


def depth_report(state: TrainState, corpus: Corpus) -> DepthReport:
    """`depth_profile` on the first `DEPTH_WINDOWS` validation windows, of the model at its
    initialisation (rebuilt from the seed) and as it stands."""
    inputs, targets = validation_windows(corpus.validation, state.config.n_ctx, DEPTH_WINDOWS)
    start = GPT(state.config, initial_params(state.recipe, state.config, state.seed), state.tokenizer, lay_out=False)
    with np.errstate(over="ignore", invalid="ignore"):
        return {
            "windows": f"{len(inputs)} validation windows of {state.config.n_ctx} tokens",
            "points": stream_points(state.config.n_layers),
            "init": depth_profile(start, inputs, targets),
            "trained": {**depth_profile(state.model, inputs, targets), "step": state.step},
        }


def validation_loss(state: TrainState, corpus: Corpus) -> float:
    """Mean cross-entropy over the fixed validation windows, in batches of the training batch size."""
    inputs, targets = validation_windows(corpus.validation, state.config.n_ctx, state.recipe.eval_windows)
    size = state.recipe.batch_size
    total = 0.0
    for start in range(0, len(inputs), size):
        chunk = slice(start, start + size)
        total += loss_only(state.model, inputs[chunk], targets[chunk]) * targets[chunk].size
    return total / targets.size


@dataclass
class Progress:
    """What a progress display gets after every step."""

    step: int
    total_steps: int
    loss: float
    val_loss: float | None
    tokens_per_second: float
    learning_rate: float


def run(
    state: TrainState,
    corpus: Corpus,
    path: Path,
    *,
    on_step: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainState:
    """Train from `state.step` to `state.total_steps`, validating and checkpointing every
    `eval_every` steps and at the end; `should_stop()` (say, after Ctrl-C) ends the run
    between two steps with a checkpoint.

    A loss or gradient that is not finite is a result, not a failure: the run stops and returns the
    last good checkpoint (a fresh run writes one at step 0), now marked `diverged` with the step, what
    became non-finite and the training losses since that checkpoint — in its metadata for the app.
    """
    recipe, n_ctx = state.recipe, state.config.n_ctx
    _check_corpus_size(corpus, n_ctx)
    if not state.val_curve or state.val_curve[-1][0] != state.step:
        state.val_curve.append((state.step, validation_loss(state, corpus)))
    if not path.exists():
        save_state(state, path)  # so that there is always a last good checkpoint to go back to
    saved_step = state.step
    figures: dict[str, float] = {}  # this step's `growth_figures`, read by `look` from its forward pass

    def look(logits: np.ndarray, acts: dict[str, np.ndarray]) -> None:
        figures.update(growth_figures(state.config.n_layers, logits, acts))

    started = time.perf_counter()
    while state.step < state.total_steps:
        inputs, targets = batch(corpus.train, n_ctx, recipe.batch_size, state.seed, state.step)
        figures.clear()
        with np.errstate(over="ignore", invalid="ignore"):  # overflow ends as a non-finite loss, caught below
            loss, grads = loss_and_gradients(state.model, inputs, targets, look)
            grad_norm = clip_global_norm(grads, recipe.grad_clip)
        for name, value in (figures | {"grad_norm": grad_norm}).items():
            state.growth[name].append(value)
        if not (math.isfinite(loss) and math.isfinite(grad_norm)):
            what, value = ("loss", loss) if not math.isfinite(loss) else ("gradient norm", grad_norm)
            return _diverged(state, corpus, path, what, value)
        lr = learning_rate(state.step, recipe, state.total_steps)
        state.optimizer.update(state.params, grads, lr, state.step + 1, recipe)
        state.step += 1
        state.train_curve.append(loss)
        now = time.perf_counter()
        state.seconds += now - started
        elapsed, started = now - started, now
        val = None
        stopping = should_stop is not None and should_stop()
        if state.step % recipe.eval_every == 0 or state.step == state.total_steps or stopping:
            val = validation_loss(state, corpus)
            state.val_curve.append((state.step, val))
            save_state(state, path)
            saved_step = state.step
            started = time.perf_counter()  # validation and saving are not training time
        if on_step is not None:
            tokens_per_second = recipe.batch_size * n_ctx / max(elapsed, 1e-9)
            on_step(Progress(state.step, state.total_steps, loss, val, tokens_per_second, lr))
        if stopping:
            break
    if state.step >= state.total_steps:
        state.depth = depth_report(state, corpus)
        save_state(state, path)
    elif saved_step != state.step:
        save_state(state, path)
    return state
