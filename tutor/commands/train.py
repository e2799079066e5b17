"""`tutor train`: train a recipe on the project's own text, with a progress bar; Ctrl-C keeps the work.

Imports NumPy, the model and Rich only when the command runs, so `tutor --help` stays fast.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from types import FrameType
from typing import Any

from tutor.catalogue import MODEL_VARIANTS as VARIANTS  # model/variants.toml's names, read without NumPy
from tutor.commands.common import fail

HELP = "train a model variant, or your own recipe, on the frozen corpus (the lessons and Python's docstrings)"
DESCRIPTION = (
    "Train a model variant with NumPy on the project's frozen corpus and write a checkpoint. "
    "The recipe flags change the variant's recipe (tutor train --norm none --lr 0.1 is tiny without LayerNorm "
    "at ten times its learning rate); the checkpoint records the recipe. "
    "Ctrl-C stops after the current step and saves; --resume goes on from there."
)
RECIPE_FLAGS = (
    "norm",
    "norm_kind",
    "no_residual",
    "positional",
    "base",
    "blocks",
    "d_model",
    "heads",
    "lr",
    "min_lr",
    "warmup",
    "clip",
)


def add_arguments(train: argparse.ArgumentParser) -> None:
    train.add_argument("--variant", default="tiny", metavar="NAME", help=f"one of {', '.join(VARIANTS)} (default tiny)")
    train.add_argument("--steps", type=int, metavar="N", help="total optimizer steps (default: the recipe's)")
    train.add_argument("--seed", type=int, default=0, metavar="S", help="seed for the weights and batches (default 0)")
    train.add_argument("--out", metavar="PATH", help="checkpoint to write (default: ./NAME.safetensors)")
    train.add_argument("--resume", action="store_true", help="go on from the checkpoint at --out")
    train.add_argument(
        "--corpus",
        metavar="DIR",
        help="train on this lessons folder (zh/, en/) instead of the frozen snapshot's lessons",
    )
    train.add_argument("--lessons-only", action="store_true", help="leave out the standard library's docstrings")
    add_recipe_arguments(train.add_argument_group("recipe (each changes the variant's; the checkpoint records it)"))


def add_recipe_arguments(group: Any) -> None:
    """The flags that change a recipe: `tutor train` has them, `tutor sweep`'s axes use the same names."""
    group.add_argument(
        "--norm", choices=("pre", "post", "none"), help="LayerNorm before each sublayer, after the add, or none"
    )
    group.add_argument(
        "--norm-kind", choices=("layer", "rms"), help="LayerNorm, or RMSNorm (no mean, no β: Llama's norm)"
    )
    group.add_argument("--no-residual", action="store_true", help="drop the residual adds: x → F(x)")
    group.add_argument("--positional", choices=("sinusoidal", "learned", "rope", "none"), help="how position enters")
    group.add_argument("--base", type=float, metavar="B", help="the sinusoidal table's or RoPE's base (10000)")
    group.add_argument("--blocks", type=int, metavar="N", help="number of blocks")
    group.add_argument("--d-model", type=int, metavar="D", help="width of the stream (the MLP is 4 × D wide)")
    group.add_argument("--heads", type=int, metavar="H", help="attention heads (D must be a multiple of H)")
    group.add_argument("--lr", type=float, metavar="LR", help="peak learning rate (tiny: 0.01)")
    group.add_argument("--min-lr", type=float, metavar="LR", help="learning rate at the last step (default: lr / 10)")
    group.add_argument("--warmup", metavar="N|P%", help="warm-up steps, or a percentage of the steps (tiny: 300)")
    group.add_argument("--clip", type=float, metavar="C", help="clip the gradient's global norm to C; 0 = off (1)")


def recipe_from_flags(args: argparse.Namespace, base: Any) -> tuple[Any, str | None]:
    """The variant's recipe changed by the flags given, named `variant+change+…`; or a one-line problem."""
    from dataclasses import replace

    from model.train import recipe_changes, recipe_problem

    changes: dict[str, Any] = {}
    for flag, field in (
        ("norm", "norm"),
        ("norm_kind", "norm_kind"),
        ("positional", "positional"),
        ("base", "pos_base"),
    ):
        if getattr(args, flag) is not None:
            changes[field] = getattr(args, flag)
    if args.no_residual:
        changes["residual"] = False
    for flag, field in (("blocks", "n_layers"), ("heads", "n_heads"), ("lr", "learning_rate"), ("clip", "grad_clip")):
        if getattr(args, flag) is not None:
            changes[field] = getattr(args, flag)
    if args.d_model is not None:
        changes |= {"d_model": args.d_model, "d_mlp": 4 * args.d_model if args.d_model > 0 else args.d_model}
    if args.lr is not None and args.min_lr is None:
        changes["min_learning_rate"] = args.lr / 10 if args.lr > 0 else 0.0
    if args.min_lr is not None:
        changes["min_learning_rate"] = args.min_lr
    steps = args.steps if args.steps is not None else base.steps  # --steps sets the run's length, as before
    if args.warmup is not None:
        warmup = warmup_steps(args.warmup, steps)
        if warmup is None:
            return base, f"--warmup wants a whole number of steps or a percentage from 0% to 100%, got {args.warmup!r}"
        changes["warmup_steps"] = warmup
    if changes.get("d_mlp", 1) > 4096:  # the 4 × D MLP of a D that LIMITS refuses anyway
        changes["d_mlp"] = base.d_mlp
    recipe = replace(base, **changes)
    problem = recipe_problem(recipe)
    if problem:
        return base, problem
    named = recipe_changes(recipe, base)
    return replace(recipe, name="+".join([base.name, *named])), None


def warmup_steps(text: str, steps: int) -> int | None:
    """ "40" → 40 steps; "10%" → 10 % of `steps`, rounded down; None if it is neither."""
    text = text.strip()
    try:
        if text.endswith("%"):
            percent = float(text[:-1])
            return int(steps * percent / 100) if 0 <= percent <= 100 else None
        return int(text)
    except ValueError:
        return None


def run(args: argparse.Namespace) -> int:
    if args.variant not in VARIANTS:
        return fail(f"unknown variant {args.variant!r} (choose from {', '.join(VARIANTS)})")
    if args.steps is not None and args.steps < 1:
        return fail(f"--steps must be at least 1, got {args.steps}")
    if args.seed < 0:
        return fail(f"--seed must not be negative, got {args.seed}")
    out = Path(args.out if args.out else f"{args.variant}.safetensors").expanduser()  # flags: name it with --out
    problem = _output_problem(out, resume=args.resume)
    if problem:
        return fail(problem)

    # One BLAS thread measured faster than two for these small matrices on the 2-core target;
    # it only takes effect if NumPy is not loaded yet, and an explicit setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from dataclasses import replace

    from model.corpus import CorpusError, load_corpus
    from model.train import RECIPES, TrainingError, load_state, new_state, saved_recipe

    recipe = RECIPES[args.variant]
    if args.resume and any(getattr(args, flag) not in (None, False) for flag in RECIPE_FLAGS):
        return fail("--resume goes on with the checkpoint's own recipe: leave out the recipe flags")
    if not args.resume:
        recipe, problem = recipe_from_flags(args, recipe)
        if problem:
            return fail(problem)
    if args.lessons_only:
        recipe = replace(recipe, stdlib_text=False)
    corpus_dir = Path(args.corpus).expanduser() if args.corpus else None
    try:
        if args.resume:  # the corpus the checkpoint was trained on, whatever the flags say now
            recipe = saved_recipe(out)
        corpus = load_corpus(corpus_dir, stdlib_text=recipe.stdlib_text)
        if args.resume:
            state = load_state(out, corpus, args.steps)
            if state.recipe.name.split("+")[0] != args.variant:
                return fail(f"{out} trains variant {state.recipe.name!r}, not {args.variant!r}")
            if state.total_steps < state.step:
                return fail(f"{out} is already at step {state.step}; --steps {state.total_steps} would go back")
            if state.diverged is not None:  # the run is deterministic: it would diverge again at the same step
                print(f"{out}: {state.divergence_line()}; resuming would diverge again at the same step")
                return 0
        else:
            state = new_state(corpus, recipe, args.seed, args.steps)
        state = _train_with_progress(state, corpus, out)
    except (CorpusError, TrainingError) as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"{out}: cannot write: {error.strerror or error}")

    _, val = state.val_curve[-1]
    base = state.baselines
    if state.diverged is not None:
        print(
            f"{state.divergence_line()}: validation loss there {val:.3f} "
            f"(unigram {base['unigram']:.3f}, bigram {base['bigram']:.3f}); wrote {out}"
        )
        return 0
    done = "finished" if state.step >= state.total_steps else "stopped (Ctrl-C)"
    print(
        f"{done} at step {state.step}/{state.total_steps} in {state.seconds:.0f} s: "
        f"validation loss {val:.3f} (unigram {base['unigram']:.3f}, bigram {base['bigram']:.3f}); wrote {out}"
    )
    if state.step < state.total_steps:
        print(f"go on with: tutor train --variant {args.variant} --out {out} --resume")
    return 0


def _output_problem(out: Path, *, resume: bool) -> str | None:
    """Why `out` cannot be written (or resumed from), before any time is spent training."""
    if out.is_dir():
        return f"{out}: is a folder; --out wants a file path"
    if resume:
        return None if out.is_file() else f"{out}: nothing to resume (no such checkpoint)"
    if out.exists():
        return f"{out}: already exists; pass --resume to go on training it, or choose another --out"
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        return f"{out}: cannot write: {parent} is not a folder"
    probe = parent / f".{out.name}.{os.getpid()}.probe"
    try:
        probe.touch()
        probe.unlink()
    except OSError as error:
        return f"{out}: cannot write: {error.strerror or error}"
    return None


def _train_with_progress(state: Any, corpus: Any, out: Path) -> Any:
    """Run the training loop under a Rich progress bar, turning the first Ctrl-C into a clean stop."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from model.train import run

    console = Console(stderr=True)
    interrupted = False

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        if interrupted:  # a second Ctrl-C: stop now, the last checkpoint stays
            raise KeyboardInterrupt
        interrupted = True
        console.print("[yellow]stopping after this step and saving… (Ctrl-C again to quit without saving)[/]")

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}  val {task.fields[val]}  {task.fields[speed]} tok/s"),
        TimeRemainingColumn(),
    )
    speeds: list[float] = []
    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        with Progress(*columns, console=console) as progress:
            last_val = f"{state.val_curve[-1][1]:.3f}" if state.val_curve else "-"
            task = progress.add_task(
                state.recipe.name, total=state.total_steps, completed=state.step, loss="-", val=last_val, speed="-"
            )

            def on_step(p: Any) -> None:
                speeds.append(p.tokens_per_second)
                recent = sorted(speeds[-20:])[len(speeds[-20:]) // 2]  # a median: saving steps are not typical
                val = f"{state.val_curve[-1][1]:.3f}" if state.val_curve else "-"  # run() keeps it up to date
                progress.update(task, completed=p.step, loss=f"{p.loss:.3f}", val=val, speed=f"{recent:,.0f}")

            return run(state, corpus, out, on_step=on_step, should_stop=lambda: interrupted)
    finally:
        signal.signal(signal.SIGINT, previous)
