"""A short live training run of a few shipped recipes at once, shared by the experiment screens that train.

`LiveTrainingScreen` is the base of a screen that trains: `start_live(settings)` trains `settings.variants` at a
reduced size with `model.train.run`, side by side, in a background thread (each model in a thread
of its own), and posts a message per step; the mixin's handlers keep `self.live` (a `LiveCurves`)
up to date and call the screen's `live_changed` so it can draw the curves as they come.
`cancel_live` stops the run between two steps; leaving the screen stops it too. Checkpoints go to a
temporary folder that is removed when the run ends, is cancelled, or the screen closes. A failure
is a notice, a divergence is a notice too (a result, not a fault), never a traceback.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from textual import work
from textual.message import Message
from textual.worker import get_current_worker

from model.corpus import load_corpus
from model.train import RECIPES, Progress, Recipe, new_state, run
from tutor.i18n import pick
from tutor.screens.experiments.base import ExperimentScreen

WORDS: dict[str, tuple[str, str]] = {
    "live_preparing": ("Live: reading the corpus…", "现场训练：正在读取语料…"),
    "live_running": (
        "Live: step {step}/{total} {bar} {losses} · {seconds:.0f} s",
        "现场训练：第 {step}/{total} 步 {bar} {losses} · {seconds:.0f} 秒",
    ),
    "live_done": (
        "Live: done in {seconds:.0f} s. {losses}. Press r to run again.",
        "现场训练：用时 {seconds:.0f} 秒完成。{losses}。按 r 再训练一次。",
    ),
    "live_cancelled": (
        "Live: cancelled at step {step}. Press r to start again.",
        "现场训练：在第 {step} 步取消。按 r 重新开始。",
    ),
    "live_failed": ("Live run stopped: {error}", "现场训练停止：{error}"),
    "loss_now": ("{name} {loss:.3f}", "{name} {loss:.3f}"),
    "live_diverged": ("Diverged — a result, not a fault: {what}", "发散了——这是结果，不是故障：{what}"),
    "nothing_to_cancel": ("No live run to cancel.", "没有正在进行的现场训练。"),
    "already_running": ("A live run is already going: c cancels it.", "现场训练已在进行：按 c 取消。"),
}


@dataclass(frozen=True)
class LiveSettings:
    """The live run: the shipped recipes of `variants`, shrunk so that both finish in about a minute."""

    variants: tuple[str, ...] = ("tiny", "noresidual")
    steps: int = 400
    n_ctx: int = 32
    batch_size: int = 8
    warmup_steps: int = 50
    eval_every: int = 20
    eval_windows: int = 16
    seed: int = 0
    stdlib_text: bool = True  # the lessons alone are too little English to learn much from in 400 steps

    def recipe(self, variant: str) -> Recipe:
        return replace(
            RECIPES[variant],
            steps=self.steps,
            n_ctx=self.n_ctx,
            batch_size=self.batch_size,
            warmup_steps=min(self.warmup_steps, max(1, self.steps - 1)) if RECIPES[variant].warmup_steps else 0,
            eval_every=self.eval_every,
            eval_windows=self.eval_windows,
            stdlib_text=self.stdlib_text,
        )

    @property
    def tokens_per_step(self) -> int:
        return self.n_ctx * self.batch_size


@dataclass
class LiveCurves:
    """What the screen knows of a live run: its losses so far, per variant."""

    run_id: int
    settings: LiveSettings
    baselines: dict[str, float] = field(default_factory=dict)
    val_loss: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    steps_done: dict[str, int] = field(default_factory=dict)
    diverged: dict[str, dict[str, object]] = field(default_factory=dict)  # variant → its `diverged` record
    started: float = field(default_factory=time.monotonic)
    finished: bool = False
    cancelled: bool = False

    @property
    def step(self) -> int:
        """Steps done by the slower of the models."""
        return min(self.steps_done.get(name, 0) for name in self.settings.variants)


@dataclass
class LiveStarted(Message):
    """The corpus is read and both models are built; training begins."""

    run_id: int
    baselines: dict[str, float]


@dataclass
class LiveStep(Message):
    """One model finished one step (with a validation loss every `eval_every` steps)."""

    run_id: int
    variant: str
    progress: Progress


@dataclass
class LiveEnded(Message):
    """The run finished, was cancelled, or failed with `error`."""

    run_id: int
    cancelled: bool
    error: str | None = None
    diverged: list[str] = field(default_factory=list)  # a line per run whose loss stopped being finite
    records: dict[str, dict[str, object]] = field(default_factory=dict)  # variant → its `diverged` record


class LiveTrainingScreen(ExperimentScreen):
    """An experiment screen that trains live: `self.live` is what it knows of the latest run."""

    live: LiveCurves | None = None
    _run_counter = 0
    _stop: threading.Event | None = None

    # what the screen draws: override these

    def live_changed(self, curves: bool) -> None:
        """The run moved on: `curves` when a loss was added (or the run began or ended)."""

    def show_live_status(self, text: str) -> None:
        """Show the run's one-line status."""

    # the screen's actions call these

    def start_live(self, settings: LiveSettings) -> bool:
        """Begin a run of `settings`; False (and a notice) if one is going."""
        if self.live is not None and not self.live.finished:
            self.notify(pick(WORDS, "already_running", self.lang), severity="warning")
            return False
        self._run_counter += 1
        self._stop = threading.Event()
        self.live = LiveCurves(self._run_counter, settings)
        self.show_live_status(pick(WORDS, "live_preparing", self.lang))
        self.train_live(self.live.run_id, settings, self._stop)
        return True

    def cancel_live(self) -> None:
        if self.live is None or self.live.finished or self._stop is None:
            self.notify(pick(WORDS, "nothing_to_cancel", self.lang))
            return
        self._stop.set()

    def on_unmount(self) -> None:
        """The screen closes (or the app quits): the run's threads see it at their next step and end; the
        folder goes with them."""
        if self._stop is not None:
            self._stop.set()

    # -- the live run (a thread) ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="live-training", exit_on_error=False)  # errors end the run, not the app
    def train_live(self, run_id: int, settings: LiveSettings, stop: threading.Event) -> None:
        worker = get_current_worker()

        def stopping() -> bool:
            return stop.is_set() or worker.is_cancelled

        try:
            corpus = load_corpus(stdlib_text=settings.stdlib_text)
            with tempfile.TemporaryDirectory(prefix="tutor-live-training-") as folder:
                states = {name: new_state(corpus, settings.recipe(name), settings.seed) for name in settings.variants}
                baselines = next(iter(states.values())).baselines
                self._post(LiveStarted(run_id, baselines))
                with ThreadPoolExecutor(max_workers=len(states), thread_name_prefix="tutor-live") as pool:
                    futures = [
                        pool.submit(
                            run,
                            state,
                            corpus,
                            Path(folder) / f"{name}.safetensors",
                            on_step=self._reporter(run_id, name),
                            should_stop=stopping,
                        )
                        for name, state in states.items()
                    ]
                    ended = [future.result() for future in futures]
        except Exception as error:  # a corpus that cannot be read, no memory, a thread that failed: a notice
            stop.set()
            self._post(LiveEnded(run_id, cancelled=True, error=str(error)))
            return
        diverged = [f"{state.recipe.name}: {state.divergence_line()}" for state in ended if state.diverged]
        records = {state.recipe.name: state.diverged for state in ended if state.diverged}
        self._post(LiveEnded(run_id, cancelled=stopping(), diverged=diverged, records=records))

    def _reporter(self, run_id: int, variant: str) -> Callable[[Progress], None]:
        def report(progress: Progress) -> None:
            self._post(LiveStep(run_id, variant, progress))

        return report

    def _post(self, message: Message) -> None:
        with contextlib.suppress(RuntimeError):  # the app's loop is gone (quitting): nobody is left to tell
            self.post_message(message)

    # -- the run's messages, on the app's thread ----------------------------------------------------

    def on_live_started(self, message: LiveStarted) -> None:
        if self.live is None or message.run_id != self.live.run_id:
            return
        self.live.baselines = message.baselines
        self.live.started = time.monotonic()
        self.show_live_status(self.live_status())
        self.live_changed(curves=True)

    def on_live_step(self, message: LiveStep) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return  # a message from a run that was replaced
        progress = message.progress
        live.steps_done[message.variant] = progress.step
        if progress.val_loss is not None:
            live.val_loss.setdefault(message.variant, []).append((progress.step, progress.val_loss))
        self.show_live_status(self.live_status())
        self.live_changed(curves=progress.val_loss is not None)

    def on_live_ended(self, message: LiveEnded) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return
        live.finished, live.cancelled = True, message.cancelled
        live.diverged = message.records
        if message.error:
            self.notify(pick(WORDS, "live_failed", self.lang, error=message.error), severity="error")
        for line in message.diverged:
            self.notify(pick(WORDS, "live_diverged", self.lang, what=line), severity="warning")
        self.show_live_status(self.live_status())
        self.live_changed(curves=True)

    def live_status(self) -> str:
        """The run's line: a progress bar and the latest losses, or how it ended."""
        live = self.live
        if live is None:
            return ""
        seconds = time.monotonic() - live.started
        losses = " · ".join(
            pick(WORDS, "loss_now", self.lang, name=name, loss=points[-1][1])
            for name in live.settings.variants
            if (points := live.val_loss.get(name))
        )
        if live.finished and live.cancelled:
            return pick(WORDS, "live_cancelled", self.lang, step=live.step)
        if live.finished:
            return pick(WORDS, "live_done", self.lang, seconds=seconds, losses=losses)
        total = live.settings.steps
        filled = round(20 * live.step / total)
        bar = "▕" + "█" * filled + "░" * (20 - filled) + "▏"
        return pick(
            WORDS, "live_running", self.lang, step=live.step, total=total, bar=bar, losses=losses, seconds=seconds
        )
