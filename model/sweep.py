"""A sweep: the same short training over a grid of recipes and seeds, one results file for all of them.

A comparison of trainings is a distribution, not a run: each cell of the grid (wiring × peak learning
rate × warm-up × shape) is trained with several seeds, and a cell's result is how many of them
diverged or learned nothing, and the spread of the final loss. `tutor sweep` runs a grid; the
stability lab reads the file and can run a small grid live, through the same `train_run`.

The results file is JSON Lines: a header line `{"format": FORMAT}`, then one line per finished run
(`run_record`), appended and flushed as each run ends. So an interrupted sweep loses at most the runs
in progress, and running the same grid again skips the runs already on file (`RunSpec.key`). A line
cut short by a kill is dropped when read. A file ending in `.gz` is read the same way (the shipped one).

Stored per run: the recipe, the seed, the validation curve, every step's training loss (5 significant
digits), every step's `model.train.GROWTH` figures (4 digits), where it diverged if it did, and the
final validation loss. `train_loss[i]` and `growth[k][i]` belong to step i + 1; a diverged run's growth
has one entry more than its losses: the step whose loss or gradient was not finite (None where a figure
was not finite either). Times are not stored: the same grid writes the same lines on any run.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Literal, NotRequired, Protocol, TypedDict, cast

from model.config import NormPlacement
from model.corpus import Corpus
from model.train import (
    GROWTH,
    RECIPES,
    DepthReport,
    Divergence,
    Progress,
    Recipe,
    new_state,
    recipe_changes,
    run,
)

FORMAT = "tutor-sweep/1"
SHIPPED_RESULTS = Path(__file__).parent / "data"  # stability.jsonl.gz, depth-seeds.jsonl.gz


class Shape(TypedDict):
    n_layers: int
    d_model: int
    d_mlp: int


# The two shapes of the grid: tiny's 4 blocks of 64, and the depth family's 16 of 32 (the same 12·L·d² weights).
SHAPES: dict[str, Shape] = {
    "4x64": {"n_layers": 4, "d_model": 64, "d_mlp": 256},
    "16x32": {"n_layers": 16, "d_model": 32, "d_mlp": 128},
}
STALLED_MARGIN = 0.1  # a finished run that ends within this many nats of the unigram loss learned nothing more
COLLAPSED_SIMILARITY = 0.9  # mean cos between positions after the last block: above it, one vector for every token
SPIKE_JUMP = 1.0  # nats above the median of the previous SPIKE_WINDOW steps' losses: a loss spike
SPIKE_WINDOW = 50
MAX_LINE = 4_000_000  # bytes: no honest run writes a longer line (2000 steps ≈ 200 kB)
MAX_FILE = 64_000_000  # bytes read at most (the shipped grid is ~4 MB unpacked)


class SweepError(Exception):
    """A grid that cannot be run, or a results file that cannot be written."""


Outcome = Literal["trained", "stalled", "diverged"]


class DivergedAt(TypedDict):
    step: int
    what: str


class RunRecord(TypedDict):
    """One line of a results file: what `run_record` keeps of a run (see the module's docstring)."""

    key: str
    name: str
    shape: str
    norm: str
    residual: bool
    lr: float
    warmup: int
    seed: int
    steps: int
    outcome: Outcome
    final_val_loss: float | None  # None when it diverged
    last_good_val_loss: float
    unigram: float
    diverged: DivergedAt | None
    val_loss: list[list[float]]  # [updates done, validation loss]
    train_loss: list[float | None]
    growth: dict[str, list[float | None]]
    last_block_similarity: NotRequired[float]  # runs with a depth report that did not diverge


class FinishedRun(Protocol):
    """What `run_record` reads of a run: a `model.train.TrainState`, or what a checkpoint's metadata says of one."""

    step: int
    train_curve: list[float]
    val_curve: list[tuple[int, float]]
    baselines: dict[str, float]
    diverged: Divergence | None
    growth: dict[str, list[float]]
    depth: DepthReport | None


@dataclass(frozen=True)
class RunSpec:
    """One training of the grid: a recipe, a seed and a number of steps."""

    recipe: Recipe
    seed: int
    steps: int
    shape: str = ""  # the grid's name for the recipe's shape ("4x64"), for tables

    def key(self) -> str:
        """What identifies the run in a results file: the whole recipe (its name and planned steps aside: the run's
        own `steps` count), the seed, the steps. A shipped variant trained for its steps has its sweep run's key."""
        recipe = asdict(self.recipe)
        recipe.pop("name")
        recipe.pop("steps")
        if recipe["norm_kind"] == "layer":  # a LayerNorm run keeps the key it had before RMSNorm was a choice
            recipe.pop("norm_kind")
        return json.dumps({"recipe": recipe, "seed": self.seed, "steps": self.steps}, sort_keys=True)


def shape_of(recipe: Recipe) -> str:
    """The grid's name for a shape: "4x64" is 4 blocks of d_model 64."""
    return f"{recipe.n_layers}x{recipe.d_model}"


def grid(
    *,
    variants: Iterable[str] = ("tiny",),
    norms: Iterable[NormPlacement | None] = (None,),
    learning_rates: Iterable[float | None] = (None,),
    warmups: Iterable[float | None] = (None,),
    shapes: Iterable[str | None] = (None,),
    seeds: Iterable[int] = (0,),
    steps: int | None = None,
    eval_every: int | None = None,
) -> list[RunSpec]:
    """Every combination, seeds innermost. None keeps the variant's own setting; a warm-up is a fraction
    of the steps (0.1 = 10 %); a learning rate's minimum is a tenth of it, as in the shipped recipes."""
    specs = []
    for variant, shape, norm, lr, warmup, seed in product(variants, shapes, norms, learning_rates, warmups, seeds):
        base = RECIPES[variant]
        total = steps if steps is not None else base.steps
        recipe = base
        if shape is not None:
            recipe = replace(recipe, **SHAPES[shape])
        if norm is not None:
            recipe = replace(recipe, norm=norm)
        if lr is not None:
            recipe = replace(recipe, learning_rate=lr, min_learning_rate=lr / 10)
        if warmup is not None:
            recipe = replace(recipe, warmup_steps=round(total * warmup))
        if eval_every is not None:
            recipe = replace(recipe, eval_every=eval_every)
        recipe = replace(recipe, name="+".join([variant, *recipe_changes(recipe, base)]))
        specs.append(RunSpec(recipe, seed, total, shape_of(recipe)))
    return specs


def _digits(values: Iterable[float], digits: int) -> list[float | None]:
    """Rounded to `digits` significant digits for the record; a value that is not finite becomes None."""
    return [float(f"{x:.{digits}g}") if math.isfinite(x) else None for x in values]


def run_record(spec: RunSpec, s: FinishedRun) -> RunRecord:
    """What the results file keeps of a finished (or diverged) run `s` (a `model.train.TrainState`)."""
    train_loss, growth = list(s.train_curve), {k: list(v) for k, v in s.growth.items()}
    diverged: DivergedAt | None = None
    if s.diverged is not None:  # the steps between the last checkpoint and the failing one
        d = s.diverged
        train_loss += [float(x) for x in d["train_loss_since_checkpoint"]]
        for k, v in d.get("growth_since_checkpoint", {}).items():
            growth[k] = growth[k][: s.step] + [float(x) for x in v]
        diverged = {"step": int(d["step"]), "what": d["what"]}
    final = s.val_curve[-1][1] if s.diverged is None else None
    unigram = float(s.baselines["unigram"])
    outcome: Outcome = "diverged"
    if final is not None:  # not diverged
        outcome = "stalled" if final >= unigram - STALLED_MARGIN else "trained"
    record: RunRecord = {
        "key": spec.key(),
        "name": spec.recipe.name,
        "shape": spec.shape or shape_of(spec.recipe),
        "norm": spec.recipe.norm,
        "residual": spec.recipe.residual,
        "lr": spec.recipe.learning_rate,
        "warmup": spec.recipe.warmup_steps,
        "seed": spec.seed,
        "steps": spec.steps,
        "outcome": outcome,
        "final_val_loss": final,
        "last_good_val_loss": s.val_curve[-1][1],
        "unigram": unigram,
        "diverged": diverged,
        "val_loss": [[int(step), float(v)] for step, v in s.val_curve],
        "train_loss": _digits(train_loss, 5),
        "growth": {k: _digits(growth[k], 4) for k in GROWTH},
    }
    if s.depth is not None and s.diverged is None:
        trained = s.depth["trained"]
        record["last_block_similarity"] = float(trained["similarity"][-1])
    return record


def loss_spikes(train_loss: list[float | None]) -> list[int]:
    """The steps (from 1) whose training loss jumped SPIKE_JUMP nats above the median of the SPIKE_WINDOW before."""
    spikes = []
    for t in range(1, len(train_loss)):
        loss = train_loss[t]
        window = sorted(x for x in train_loss[max(0, t - SPIKE_WINDOW) : t] if x is not None)
        if loss is not None and window and loss - window[len(window) // 2] > SPIKE_JUMP:
            spikes.append(t + 1)
    return spikes


@dataclass
class _CheckpointedRun:
    """A `FinishedRun` read from a checkpoint's metadata."""

    step: int
    train_curve: list[float]
    val_curve: list[tuple[int, float]]
    baselines: dict[str, float]
    diverged: Divergence | None
    growth: dict[str, list[float]]
    depth: DepthReport | None


def record_from_checkpoint(spec: RunSpec, metadata: dict[str, str]) -> RunRecord:
    """`run_record` of a run `tutor train` wrote (its checkpoint's metadata): for runs trained before growth was
    recorded, whose growth lists then hold None."""
    info = json.loads(metadata["training"])
    step = int(info["step"])
    growth = info.get("growth") or {k: [math.nan] * step for k in GROWTH}
    state = _CheckpointedRun(
        train_curve=[float(x) for x in info["train_loss"]],
        growth={k: [float(x) for x in growth[k]] for k in GROWTH},
        diverged=info.get("diverged"),
        val_curve=[(int(a), float(b)) for a, b in info["val_loss"]],
        baselines=info["baselines"],
        depth=info.get("depth"),
        step=step,
    )
    return run_record(spec, state)


def train_run(
    spec: RunSpec,
    corpus: Corpus,
    workdir: Path,
    *,
    on_step: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    keep: bool = False,
) -> RunRecord | None:
    """Train one run of the grid into `workdir` and return its record; None if `should_stop` ended it first.

    The checkpoint goes (a diverging run goes back to its last good one, `model.train.run`) unless `keep`.
    """
    path = workdir / f"{spec.recipe.name}-seed{spec.seed}.safetensors"
    optim = path.with_name(path.name + ".optim")
    for leftover in (path, optim):
        leftover.unlink(missing_ok=True)  # a run cut off before: start it again from its seed
    try:
        state = new_state(corpus, spec.recipe, spec.seed, spec.steps)
        state = run(state, corpus, path, on_step=on_step, should_stop=should_stop)
        if state.step < state.total_steps and state.diverged is None:
            return None
        return run_record(spec, state)
    finally:
        if not keep:
            for leftover in (path, optim):
                leftover.unlink(missing_ok=True)


# -- the results file ------------------------------------------------------------------------------


@dataclass
class Results:
    """The runs of a results file, and what was wrong with the file, if anything (one line, or None)."""

    runs: list[RunRecord] = field(default_factory=list)
    problem: str | None = None

    def keys(self) -> set[str]:
        return {str(r["key"]) for r in self.runs}


def read_results(path: Path) -> Results:
    """Every complete run on file. Never raises: a missing, cut or foreign file says so in `problem`."""
    try:
        if not path.exists():
            return Results(problem=f"no results file at {path}")
        if not path.is_file():  # a folder, a FIFO, a device: nothing to read, and nothing to wait for
            return Results(problem=f"{path} is not a regular file")
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            lines = f.read(MAX_FILE).split(b"\n")
    except (OSError, EOFError) as error:
        return Results(problem=f"cannot read {path}: {getattr(error, 'strerror', None) or error}")
    if not lines or not lines[0].strip():
        return Results(problem=f"{path} is empty")
    try:
        header = json.loads(lines[0])
    except ValueError:
        return Results(problem=f"{path} is not a sweep results file")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else None
        return Results(problem=f"{path} is in format {found!r}, not {FORMAT!r}: run the sweep again to rewrite it")
    results = Results()
    cut = 0
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            record = json.loads(line) if len(line) <= MAX_LINE else None
        except ValueError:
            record = None
        if not isinstance(record, dict) or "key" not in record or "outcome" not in record:
            cut += 1
            continue
        results.runs.append(cast(RunRecord, record))  # a line of this format: a `run_record`
    if cut:
        results.problem = f"{path}: {cut} unreadable line(s) left out (a run cut off while it was written?)"
    return results


def start_results(path: Path) -> None:
    """A new file with its header, or an existing one made to end on a whole line (a kill may have cut one)."""
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps({"format": FORMAT}) + "\n")
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def append_record(path: Path, record: RunRecord) -> None:
    """One line, flushed to the disk before the next run starts."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


# -- what a cell of the grid says ----------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """The runs of one grid cell (everything but the seed equal): how many of each outcome, the final losses."""

    shape: str
    norm: str
    lr: float
    warmup: int
    runs: tuple[RunRecord, ...]

    @property
    def n(self) -> int:
        return len(self.runs)

    def count(self, outcome: str) -> int:
        return sum(r["outcome"] == outcome for r in self.runs)

    def final_losses(self) -> list[float]:
        """The final validation losses of the runs that did not diverge, smallest first."""
        return sorted(float(r["final_val_loss"]) for r in self.runs if r["final_val_loss"] is not None)

    def median(self) -> float | None:
        losses = self.final_losses()
        if not losses:
            return None
        mid = len(losses) // 2
        return losses[mid] if len(losses) % 2 else (losses[mid - 1] + losses[mid]) / 2

    def diverged_steps(self) -> list[int]:
        return sorted(int(r["diverged"]["step"]) for r in self.runs if r["diverged"])


def cells(runs: Iterable[RunRecord]) -> list[Cell]:
    """The runs grouped by (shape, norm, residual, lr, warm-up), in that order."""
    groups: dict[tuple, list[RunRecord]] = {}
    for r in runs:
        groups.setdefault((r["shape"], r["norm"], r["lr"], r["warmup"]), []).append(r)
    return [
        Cell(str(shape), str(norm), float(lr), int(warmup), tuple(sorted(rs, key=lambda r: int(r["seed"]))))
        for (shape, norm, lr, warmup), rs in sorted(groups.items(), key=lambda kv: _cell_order(kv[0]))
    ]


def _cell_order(key: tuple) -> tuple:
    shape, norm, lr, warmup = key
    return (str(shape), ("pre", "post", "none").index(norm) if norm in ("pre", "post", "none") else 3, -warmup, lr)


@dataclass(frozen=True)
class Variant:
    """One variant's runs over seeds (the depth family): its cell, and per seed the figures that tell a
    healthy run from a sick one: the cos between positions after the last block, the loss spikes."""

    name: str
    cell: Cell

    @property
    def similarity(self) -> list[float]:
        return [float(r.get("last_block_similarity", math.nan)) for r in self.cell.runs]

    @property
    def spikes(self) -> list[list[int]]:
        return [loss_spikes(r["train_loss"]) for r in self.cell.runs]

    @property
    def collapsed(self) -> int:
        return sum(s >= COLLAPSED_SIMILARITY for s in self.similarity)

    @property
    def spiked(self) -> int:
        return sum(bool(s) for s in self.spikes)

    def final_loss(self, seed_index: int) -> float | None:
        value = self.cell.runs[seed_index]["final_val_loss"]
        return None if value is None else float(value)


def variants(runs: Iterable[RunRecord]) -> list[Variant]:
    """The runs grouped by recipe name, in the order the names first appear."""
    names: dict[str, list[RunRecord]] = {}
    for r in runs:
        names.setdefault(str(r["name"]), []).append(r)
    return [Variant(name, cells(rs)[0]) for name, rs in names.items() if len(cells(rs)) == 1]
