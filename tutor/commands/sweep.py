"""`tutor sweep`: train a grid of recipes × seeds (model/sweep.py) with a progress bar; Ctrl-C keeps what finished.

`--grid stability` is the grid whose results ship with the tutor (the stability lab and lessons 7 and 9
read them); `--grid depth` is the depth family over seeds. Axis flags narrow a preset or make a grid of
their own. Running the same command again skips the runs already in the results file.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from typing import Any

from tutor.commands.common import fail

HELP = "train a grid of recipes over several seeds and write one results file (resumable)"
DESCRIPTION = (
    "Train every combination of the axes given (wiring, peak learning rate, warm-up, shape) with each seed, "
    "and append each run's record to one JSON Lines file: recipe, validation curve, every step's loss and the "
    "quantities that grow before a run blows up. Ctrl-C (or a kill) loses at most the runs in progress: the same "
    "command goes on where it stopped. --report prints a results file's table without training."
)
# The shipped grids (model/data/*.jsonl.gz): `tutor sweep --grid NAME` writes them again, line for line.
PRESETS: dict[str, dict[str, Any]] = {
    "stability": {
        "variants": ("tiny",),
        "norms": ("pre", "post", "none"),
        "learning_rates": (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1),
        "warmups": (0.1, 0.0),
        "shapes": ("4x64", "16x32"),
        "seeds": (0, 1, 2),
        "steps": 400,
        "eval_every": 25,
    },
    "depth": {
        "variants": ("deep", "deep-postnorm", "deep-nonorm", "deep-nowarmup", "deep-postnorm-nowarmup"),
        "seeds": (0, 1, 2),
    },
}


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"want numbers separated by commas, got {text!r}") from None


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"want whole numbers separated by commas, got {text!r}") from None


def _words(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _warmups(text: str) -> tuple[float, ...]:
    """Warm-ups as fractions of the steps: "10%,0" → (0.1, 0.0)."""
    out = []
    for part in _words(text):
        try:
            value = float(part[:-1]) / 100 if part.endswith("%") else float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"want percentages such as 10%,0 — got {text!r}") from None
        out.append(value)
    return tuple(out)


def add_arguments(sweep: argparse.ArgumentParser) -> None:
    sweep.add_argument("--grid", choices=tuple(PRESETS), help="a shipped grid (the axes below narrow it)")
    sweep.add_argument("--out", metavar="PATH", help="results file to write or go on with (default ./sweep.jsonl)")
    sweep.add_argument("--variant", type=_words, metavar="A,B", help="recipes to start from (default tiny)")
    sweep.add_argument("--norm", type=_words, metavar="pre,post,none", help="norm placements")
    sweep.add_argument("--lr", type=_floats, metavar="1e-3,1e-2", help="peak learning rates (the minimum is a tenth)")
    sweep.add_argument("--warmup", type=_warmups, metavar="10%,0", help="warm-ups, as percentages of the steps")
    sweep.add_argument("--shape", type=_words, metavar="4x64,16x32", help="blocks × width")
    sweep.add_argument("--seeds", type=_ints, metavar="0,1,2", help="seeds of each cell (default 0,1,2)")
    sweep.add_argument("--steps", type=int, metavar="N", help="steps of each run (default: the recipe's)")
    sweep.add_argument("--eval-every", type=int, metavar="N", help="validate every N steps (default: the recipe's)")
    sweep.add_argument("--jobs", type=int, metavar="J", help="runs at once (default: the cores, at most 2)")
    sweep.add_argument("--keep", metavar="DIR", help="keep each run's checkpoint in DIR (default: they are deleted)")
    sweep.add_argument("--report", action="store_true", help="print the table of the results file at --out and stop")
    sweep.add_argument("--markdown", action="store_true", help="with --report: the table as Markdown")


def axes_of(args: argparse.Namespace) -> dict[str, Any]:
    """The grid's axes: the preset's, each replaced by its flag where one is given."""
    axes: dict[str, Any] = dict(PRESETS[args.grid]) if args.grid else {"seeds": (0, 1, 2)}
    for flag, axis in (
        ("variant", "variants"),
        ("norm", "norms"),
        ("lr", "learning_rates"),
        ("warmup", "warmups"),
        ("shape", "shapes"),
        ("seeds", "seeds"),
        ("steps", "steps"),
        ("eval_every", "eval_every"),
    ):
        if getattr(args, flag) is not None:
            axes[axis] = getattr(args, flag)
    return axes


def grid_problem(axes: dict[str, Any]) -> str | None:
    """Why the axes make no grid, in one line, before anything is trained."""
    from model.sweep import SHAPES
    from model.train import RECIPES

    for name in axes.get("variants", ()):
        if name not in RECIPES:
            return f"unknown variant {name!r} (choose from {', '.join(RECIPES)})"
    for norm in axes.get("norms", ()):
        if norm not in ("pre", "post", "none"):
            return f"unknown norm {norm!r} (choose from pre, post, none)"
    for shape in axes.get("shapes", ()):
        if shape not in SHAPES:
            return f"unknown shape {shape!r} (choose from {', '.join(SHAPES)})"
    for lr in axes.get("learning_rates", ()):
        if not 0 < lr <= 10:
            return f"a learning rate must be above 0 and at most 10, got {lr:g}"
    for warmup in axes.get("warmups", ()):
        if not 0 <= warmup <= 1:
            return f"a warm-up must be from 0% to 100% of the steps, got {warmup:.0%}"
    if any(seed < 0 for seed in axes.get("seeds", ())) or not axes.get("seeds"):
        return "--seeds wants one or more seeds, none negative"
    if axes.get("steps") is not None and not 1 <= axes["steps"] <= 1_000_000:
        return f"--steps must be from 1 to 1,000,000, got {axes['steps']}"
    if axes.get("eval_every") is not None and axes["eval_every"] < 1:
        return f"--eval-every must be at least 1, got {axes['eval_every']}"
    return None


def run(args: argparse.Namespace) -> int:
    # One BLAS thread, whatever the environment says: a matrix product split over two threads sums in another
    # order, and a run at the edge of diverging goes another way (measured: no-norm at 0.1 diverged at step 49
    # with one thread, 37 with two). Before anything loads NumPy: then it takes.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    out = Path(args.out or "sweep.jsonl").expanduser()
    if args.report:
        return _report(out, markdown=args.markdown)
    axes = axes_of(args)
    problem = grid_problem(axes)
    if problem:
        return fail(problem)
    jobs = args.jobs if args.jobs is not None else min(2, os.cpu_count() or 1)
    if not 1 <= jobs <= 64:
        return fail(f"--jobs must be from 1 to 64, got {jobs}")
    if out.is_dir() or not (out.parent if str(out.parent) else Path(".")).is_dir():
        return fail(f"{out}: --out wants a file in an existing folder")
    keep = Path(args.keep).expanduser() if args.keep else None
    if keep is not None and not keep.is_dir():
        return fail(f"{keep}: --keep wants an existing folder")

    from model.sweep import grid, read_results, start_results
    from model.train import recipe_problem

    specs = grid(**axes)
    for spec in specs:
        problem = recipe_problem(spec.recipe)
        if problem:
            return fail(f"{spec.recipe.name}: {problem}")
    try:
        start_results(out)
    except OSError as error:
        return fail(f"{out}: cannot write: {error.strerror or error}")
    results = read_results(out)
    if results.problem and not results.runs and out.stat().st_size > 0 and "unreadable" not in results.problem:
        return fail(f"{results.problem}; choose another --out")
    done = results.keys()
    todo = [s for s in specs if s.key() not in done]
    print(f"{out}: {len(specs)} runs in the grid, {len(specs) - len(todo)} already on file, {len(todo)} to train")
    if todo:
        finished = _run_all(todo, out, jobs, keep)
        if finished < len(todo):
            print(f"stopped: {finished} of {len(todo)} runs written; the same command goes on from here")
            return 130
    return _report(out)


# -- running the grid ------------------------------------------------------------------------------

_queue: Any = None  # a worker's line to the progress display


def _worker_start(queue: Any) -> None:
    global _queue
    _queue = queue
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    from tutor.process_tuning import hang_up_with_parent

    hang_up_with_parent()  # a killed sweep takes its workers with it


_corpora: dict[bool, Any] = {}


def _train_one(spec: Any, keep: Path | None) -> dict[str, object] | None:
    """One run in a worker: its record, with the progress of its steps sent to the parent."""
    import tempfile

    from model.corpus import load_corpus
    from model.sweep import train_run

    stdlib = spec.recipe.stdlib_text
    if stdlib not in _corpora:
        _corpora[stdlib] = load_corpus(None, stdlib_text=stdlib)
    pid = os.getpid()

    def on_step(p: Any) -> None:
        if _queue is not None and (p.step % 5 == 0 or p.step == p.total_steps):
            _queue.put((pid, spec.recipe.name, spec.seed, p.step, p.total_steps))

    if keep is not None:
        return train_run(spec, _corpora[stdlib], keep, on_step=on_step, keep=True)
    with tempfile.TemporaryDirectory(prefix="tutor-sweep-") as workdir:
        return train_run(spec, _corpora[stdlib], Path(workdir), on_step=on_step)


def _train_one_star(job: tuple[Any, Path | None]) -> dict[str, object] | None:
    return _train_one(*job)


def _run_all(specs: list[Any], out: Path, jobs: int, keep: Path | None) -> int:
    """Train `specs` on `jobs` processes, appending each record as it comes; the number written."""
    import multiprocessing
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from model.sweep import append_record

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    console = Console(stderr=True)
    written = 0
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console
    ) as progress:
        overall = progress.add_task("[bold]runs", total=len(specs))
        lines: dict[int, Any] = {}
        stop = threading.Event()

        def show_steps() -> None:
            while not stop.is_set():
                try:
                    pid, name, seed, step, total = queue.get(timeout=0.2)
                except Exception:  # queue.Empty, or the queue closed at the end
                    continue
                if pid not in lines:
                    lines[pid] = progress.add_task("", total=total)
                progress.update(lines[pid], description=f"  {name} seed {seed}", completed=step, total=total)

        reader = threading.Thread(target=show_steps, daemon=True)
        reader.start()
        pool = context.Pool(jobs, initializer=_worker_start, initargs=(queue,))
        try:
            for record in pool.imap_unordered(_train_one_star, [(s, keep) for s in specs]):
                if record is not None:
                    append_record(out, record)
                    written += 1
                progress.advance(overall)
            pool.close()
        except KeyboardInterrupt:
            console.print("[yellow]stopping: the runs in progress are dropped, the finished ones are on file")
            pool.terminate()
        finally:
            pool.join()
            stop.set()
            reader.join(timeout=1)
    return written


# -- the table --------------------------------------------------------------------------------------


REPORT_COLUMNS = ("shape", "norm", "warm-up", "peak lr", "runs", "diverged (at step)", "stalled", "final loss")


def report_rows(runs: list[dict[str, object]]) -> list[list[str]]:
    """A row a cell: k of n diverged (and at which steps), k of n stalled, the median and range of the final loss."""
    from model.sweep import cells

    rows = []
    for cell in cells(runs):
        losses = cell.final_losses()
        if not losses:
            loss = "—"
        elif len(losses) == 1:
            loss = f"{losses[0]:.3f}"
        else:
            loss = f"{cell.median():.3f} ({losses[0]:.3f}–{losses[-1]:.3f})"
        steps = cell.diverged_steps()
        diverged = f"{len(steps)} of {cell.n}" + (f" ({', '.join(map(str, steps))})" if steps else "")
        stalled = f"{cell.count('stalled')} of {cell.n}"
        rows.append([cell.shape, cell.norm, str(cell.warmup), f"{cell.lr:g}", str(cell.n), diverged, stalled, loss])
    return rows


def _report(out: Path, markdown: bool = False) -> int:
    from rich.console import Console
    from rich.table import Table

    from model.sweep import read_results

    results = read_results(out)
    if results.problem:
        print(results.problem)
    if not results.runs:
        return 1 if results.problem else 0
    rows = report_rows(results.runs)
    if markdown:
        print("| " + " | ".join(REPORT_COLUMNS) + " |")
        print("|" + "---|" * len(REPORT_COLUMNS))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    table = Table(title=f"{out}: {len(results.runs)} runs")
    for column in REPORT_COLUMNS:
        table.add_column(column, justify="right" if column in ("peak lr", "runs") else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    Console(width=max(Console().width, 110)).print(table)
    return 0
