"""Training: the shipped variants' stored loss curves at once, and a short live run of two models.

The stored curves come from each shipped model's safetensors metadata ("training" JSON, written by
`model.train.save_state`). The live run trains `tiny` and `noresidual` at a reduced size with
`model.train.run`, both at once, in a background thread, and draws their validation losses as they
come: the seed lesson's "remove the residuals and watch the loss". Checkpoints go to a temporary
folder that is removed when the run ends, is cancelled, or the screen closes.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from model import GPT
from model.corpus import CorpusError, load_corpus
from model.train import RECIPES, Progress, Recipe, TrainingError, new_state, run
from model.weights import SHIPPED_DIR, WeightsError, read_safetensors, shipped_models
from tutor.i18n import pick
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.base import ExperimentScreen
from tutor.widgets.line_chart import LineChart, Series
from tutor.widgets.live_static import LiveStatic

KEY_WORDS: dict[str, tuple[str, str]] = {  # action → footer label
    "back": ("Back", "返回"),
    "run_live": ("Run live", "现场训练"),
    "cancel_live": ("Cancel", "取消"),
    "toggle_view": ("Stored/live", "已存/现场"),
    "next_family": ("Curves", "曲线"),
}

WORDS: dict[str, tuple[str, str]] = {
    "stored_title": (
        "Validation loss while the shipped models trained ({steps} steps of {tokens} tokens)",
        "各发布模型训练时的验证损失（{steps} 步，每步 {tokens} 个词元）",
    ),
    "family_note": ("Curves: {family} — f shows {following}.", "曲线：{family} —— 按 f 换成 {following}。"),
    "family_pair": ("{a} vs {b}", "{a} 对比 {b}"),
    "family_depth": ("the {n} models of {blocks} blocks", "{blocks} 块的 {n} 个模型"),
    "no_stored": ("No shipped model carries a training record.", "没有发布模型带有训练记录。"),
    "x_label": ("training step →", "训练步数 →"),
    "y_label": ("loss (nats per token, log scale)", "损失（每个词元的 nats，对数刻度）"),
    "unigram": ("unigram baseline", "一元基线"),
    "bigram": ("bigram baseline", "二元基线"),
    "live_idle": (
        "Live: r trains tiny and noresidual side by side, {steps} steps of {tokens} tokens.",
        "现场训练：按 r 同时训练 tiny 和 noresidual，{steps} 步，每步 {tokens} 个词元。",
    ),
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
    "live_title": (
        "Live validation loss, {steps} steps of {tokens} tokens (model checkpoints in a temporary folder)",
        "现场验证损失，{steps} 步，每步 {tokens} 个词元（检查点在临时文件夹中）",
    ),
    "loss_now": ("{name} {loss:.3f}", "{name} {loss:.3f}"),
    "live_diverged": ("Diverged — a result, not a fault: {what}", "发散了——这是结果，不是故障：{what}"),
    "nothing_to_cancel": ("No live run to cancel.", "没有正在进行的现场训练。"),
    "already_running": ("A live run is already going: c cancels it.", "现场训练已在进行：按 c 取消。"),
    "stored_view": ("Stored", "已存"),
    "live_view": ("Live", "现场"),
}

# variant → (colour, marker for NO_COLOR and the legend). No two alike: the colours are points of the
# xterm 256-colour cube, so a terminal of 256 colours shows them as they are (named colours such as
# "red" and "magenta" go through the terminal's theme and may come out as one), and within a family
# (see `families`) they are far apart in hue.
SERIES_LOOK: dict[str, tuple[str, str]] = {
    "tiny": ("#00d700", "*"),
    "learned": ("#00d7d7", "+"),
    "rope": ("#d75fd7", "o"),
    "nope": ("#d7d700", "x"),
    "postnorm": ("#5f87ff", "#"),
    "noresidual": ("#ff5f5f", "@"),
    "nonorm": ("#ff8700", "%"),
    "base10": ("#af87ff", "1"),
    "base1e6": ("#ff87af", "6"),
    "deep": ("#87d700", "D"),
    "deep-postnorm": ("#8787ff", "P"),
    "deep-postnorm-nowarmup": ("#ff5fd7", "W"),
    "deep-nowarmup": ("#00afff", "w"),
    "deep-nonorm-nowarmup": ("#d7875f", "n"),
    "deep-nonorm": ("#ffaf00", "N"),
    "deep-noresidual": ("#d70000", "R"),
    "deep-lr1e-3": ("#d7af87", "d"),
    "deep-postnorm-lr1e-3": ("#5fd7af", "p"),
}
BASELINE_LOOK = {"unigram": ("#a8a8a8", "-"), "bigram": ("#767676", "=")}  # two greys: which line is which
PAIR = ("tiny", "noresidual")  # the lesson's comparison: with and without the residual connections


@dataclass(frozen=True)
class TrainingRecord:
    """What a checkpoint says about its training: the curves and the baselines on its corpus."""

    name: str
    val_loss: list[tuple[int, float]]
    baselines: dict[str, float]
    steps: int
    tokens_per_step: int
    n_layers: int = 0  # from the checkpoint's config: the families go by depth


def read_training_record(path: Path) -> TrainingRecord | None:
    """The "training" metadata of a tutor checkpoint, or None if it has none or cannot be read."""
    try:
        _, metadata = read_safetensors(path)
        info = json.loads(metadata["training"])
        return TrainingRecord(
            name=metadata.get("name", path.stem),
            val_loss=[(int(step), float(loss)) for step, loss in info["val_loss"]],
            baselines={k: float(v) for k, v in info["baselines"].items()},
            steps=int(info["step"]),
            tokens_per_step=int(info["tokens_per_step"]),
            n_layers=int(json.loads(metadata.get("config", "{}")).get("n_layers", 0)),
        )
    except (WeightsError, KeyError, TypeError, ValueError, AttributeError):
        return None


def shipped_records() -> list[TrainingRecord]:
    """Every shipped model's training record, in the recipes' order."""
    order = {name: i for i, name in enumerate(RECIPES)}
    names = sorted(shipped_models(), key=lambda n: (order.get(n, len(order)), n))
    records = [read_training_record(SHIPPED_DIR / f"{name}.safetensors") for name in names]
    return [r for r in records if r is not None]


@dataclass(frozen=True)
class Family:
    """Curves shown together: few enough for a legend and a plot that 80×24 can read."""

    key: str  # a WORDS key
    names: tuple[str, ...]
    values: dict[str, object] = field(default_factory=dict)

    def label(self, lang: str) -> str:
        return pick(WORDS, self.key, lang, **self.values)


def families(records: list[TrainingRecord]) -> list[Family]:
    """The lesson's pair (tiny vs noresidual), then the models of each depth: together they show every
    curve, and none holds more than a legend and a plot that 80×24 can read (all eighteen at once
    leave the plot four rows there)."""
    names = [r.name for r in records]
    found: list[Family] = []
    if all(name in names for name in PAIR):
        found.append(Family("family_pair", PAIR, {"a": PAIR[0], "b": PAIR[1]}))
    for blocks in sorted({r.n_layers for r in records}):
        group = tuple(r.name for r in records if r.n_layers == blocks)
        found.append(Family("family_depth", group, {"n": len(group), "blocks": blocks}))
    return found


@dataclass(frozen=True)
class LiveSettings:
    """The live run: the shipped recipes of `variants`, shrunk so that both finish in about a minute."""

    variants: tuple[str, ...] = PAIR
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
            warmup_steps=min(self.warmup_steps, max(1, self.steps - 1)),
            eval_every=self.eval_every,
            eval_windows=self.eval_windows,
            stdlib_text=self.stdlib_text,
        )

    @property
    def tokens_per_step(self) -> int:
        return self.n_ctx * self.batch_size


LIVE = LiveSettings()


@dataclass
class LiveCurves:
    """What the screen knows of a live run: its losses so far, per variant."""

    run_id: int
    settings: LiveSettings
    baselines: dict[str, float] = field(default_factory=dict)
    val_loss: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    steps_done: dict[str, int] = field(default_factory=dict)
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


class TrainingScreen(ExperimentScreen):
    NAME = "training"
    BINDINGS = [
        Binding("r", "run_live", "Run live"),
        Binding("c", "cancel_live", "Cancel"),
        Binding("v", "toggle_view", "Stored/live"),
        Binding("f", "next_family", "Curves"),
    ]
    DEFAULT_CSS = """
    TrainingScreen #training-note { height: auto; padding: 0 1; color: $text-muted; }
    TrainingScreen #training-chart { height: 1fr; padding: 0 1; }
    TrainingScreen #training-status { height: auto; padding: 0 1; background: $boost; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.records = shipped_records()
        self.showing_live = False
        self.families = families(self.records)
        self.family = 0  # the lesson's pair first: lesson 7 links here to compare tiny and noresidual
        self.live: LiveCurves | None = None
        self._run_counter = 0
        self._stop = threading.Event()

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose_body(self) -> ComposeResult:
        yield Static(id="training-note")
        yield LineChart(id="training-chart")
        yield LiveStatic(self.words("live_idle", steps=LIVE.steps, tokens=LIVE.tokens_per_step), id="training-status")

    def on_mount(self) -> None:
        self.redraw()

    def on_unmount(self) -> None:
        self._stop.set()  # the run's threads see it at their next step and end; the folder goes with them

    # -- the chart ----------------------------------------------------------------------------

    def redraw(self) -> None:
        if self.showing_live and self.live is not None:
            self._draw_live(self.live)
        else:
            self._draw_stored()

    def _draw_stored(self) -> None:
        note = self.query_one("#training-note", Static)
        chart = self.query_one("#training-chart", LineChart)
        if not self.families:
            note.update(self.words("no_stored"))
            chart.set_series([])
            return
        family = self.families[self.family]
        records = [r for r in self.records if r.name in family.names]
        first = records[0]
        title = self.words("stored_title", steps=first.steps, tokens=first.tokens_per_step)
        following = self.families[(self.family + 1) % len(self.families)]
        shown = self.words("family_note", family=family.label(self.lang), following=following.label(self.lang))
        note.update(f"{title}\n{shown}")
        series = [self._curve(r.name, r.val_loss) for r in records]
        series += self._baselines(first.baselines, (0, first.steps))
        chart.set_series(
            series,
            x_label=self.words("x_label"),
            y_label=self.words("y_label"),
            x_range=(0, max(r.steps for r in records)),
            y_range=self._y_range(series),
            log_y=True,
        )

    def _draw_live(self, live: LiveCurves) -> None:
        settings = live.settings
        self.query_one("#training-note", Static).update(
            self.words("live_title", steps=settings.steps, tokens=settings.tokens_per_step)
        )
        series = [self._curve(name, live.val_loss.get(name, [])) for name in settings.variants]
        series += self._baselines(live.baselines, (0, settings.steps))
        self.query_one("#training-chart", LineChart).set_series(
            series,
            x_label=self.words("x_label"),
            y_label=self.words("y_label"),
            x_range=(0, settings.steps),
            y_range=self._y_range(series),
            log_y=True,
        )

    def _curve(self, name: str, points: list[tuple[int, float]]) -> Series:
        colour, marker = SERIES_LOOK.get(name, ("#d0d0d0", "?"))
        label = f"{name} {points[-1][1]:.3f}" if points else name
        return Series(label, [p[0] for p in points], [p[1] for p in points], colour, marker)

    def _baselines(self, baselines: dict[str, float], x_span: tuple[int, int]) -> list[Series]:
        return [
            Series(
                f"{self.words(key)} {baselines[key]:.3f}",
                x_span,
                (baselines[key], baselines[key]),
                *BASELINE_LOOK[key],
                True,
            )
            for key in ("unigram", "bigram")
            if key in baselines
        ]

    @staticmethod
    def _y_range(series: list[Series]) -> tuple[float, float] | None:
        """Every loss, the first (about 10 nats, higher for some) and the last, with a little room: on the
        log axis the start and the small differences near the end both show."""
        ys = [y for s in series for y in s.ys if y > 0]
        if not ys:
            return None
        return (min(ys) / 1.05, max(ys) * 1.05)

    # -- actions ------------------------------------------------------------------------------

    def action_toggle_view(self) -> None:
        self.showing_live = not self.showing_live
        self.redraw()

    def action_next_family(self) -> None:
        """f: the next family of stored curves (the live run's pair is always the pair)."""
        if self.families:
            self.family = (self.family + 1) % len(self.families)
        self.showing_live = False
        self.redraw()

    def action_run_live(self) -> None:
        if self.live is not None and not self.live.finished:
            self.notify(self.words("already_running"), severity="warning")
            return
        self._run_counter += 1
        self._stop = threading.Event()
        self.live = LiveCurves(self._run_counter, LIVE)
        self.showing_live = True
        self.query_one("#training-status", LiveStatic).show_content(self.words("live_preparing"), "status")
        self.redraw()
        self.train_live(self.live.run_id, LIVE, self._stop)

    def action_cancel_live(self) -> None:
        if self.live is None or self.live.finished:
            self.notify(self.words("nothing_to_cancel"))
            return
        self._stop.set()

    # -- the live run (a thread) ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="live-training")
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
        except (TrainingError, CorpusError, OSError, ValueError) as error:
            stop.set()
            self._post(LiveEnded(run_id, cancelled=True, error=str(error)))
            return
        diverged = [f"{state.recipe.name}: {state.divergence_line()}" for state in ended if state.diverged]
        self._post(LiveEnded(run_id, cancelled=stopping(), diverged=diverged))

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
        self._show_status()
        self.redraw()

    def on_live_step(self, message: LiveStep) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return  # a message from a run that was replaced
        progress = message.progress
        live.steps_done[message.variant] = progress.step
        if progress.val_loss is not None:
            live.val_loss.setdefault(message.variant, []).append((progress.step, progress.val_loss))
            if self.showing_live:
                self.redraw()
        self._show_status()

    def on_live_ended(self, message: LiveEnded) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return
        live.finished, live.cancelled = True, message.cancelled
        if message.error:
            self.notify(self.words("live_failed", error=message.error), severity="error")
        for line in message.diverged:
            self.notify(self.words("live_diverged", what=line), severity="warning")
        self._show_status()
        self.redraw()

    def _show_status(self) -> None:
        live = self.live
        if live is None:
            return
        seconds = time.monotonic() - live.started
        losses = " · ".join(
            self.words("loss_now", name=name, loss=points[-1][1])
            for name in live.settings.variants
            if (points := live.val_loss.get(name))
        )
        if live.finished and live.cancelled:
            text = self.words("live_cancelled", step=live.step)
        elif live.finished:
            text = self.words("live_done", seconds=seconds, losses=losses)
        else:
            total = live.settings.steps
            filled = round(20 * live.step / total)
            bar = "▕" + "█" * filled + "░" * (20 - filled) + "▏"
            text = self.words("live_running", step=live.step, total=total, bar=bar, losses=losses, seconds=seconds)
        self.query_one("#training-status", LiveStatic).show_content(text, "status")
