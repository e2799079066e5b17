"""Training: the shipped variants' stored loss curves at once, and a short live run of two models.

The stored curves come from each shipped model's safetensors metadata ("training" JSON, written by
`model.train.save_state`). The live run trains `tiny` and `noresidual` at a reduced size with
`model.train.run`, both at once, in a background thread, and draws their validation losses as they
come: the seed lesson's "remove the residuals and watch the loss". Checkpoints go to a temporary
folder that is removed when the run ends, is cancelled, or the screen closes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from model import GPT
from model.train import RECIPES
from model.weights import SHIPPED_DIR, WeightsError, read_safetensors, shipped_models
from tutor.catalogue import VARIANT_LIST
from tutor.i18n import pick
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.live_training import LiveCurves, LiveSettings, LiveTrainingScreen
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
    "live_title": (
        "Live validation loss, {steps} steps of {tokens} tokens (model checkpoints in a temporary folder)",
        "现场验证损失，{steps} 步，每步 {tokens} 个词元（检查点在临时文件夹中）",
    ),
    "stored_view": ("Stored", "已存"),
    "live_view": ("Live", "现场"),
}

# variant → (colour, marker for NO_COLOR and the legend), as model/variants.toml declares them beside each recipe
SERIES_LOOK: dict[str, tuple[str, str]] = {variant.name: (variant.colour, variant.marker) for variant in VARIANT_LIST}
BASELINE_LOOK = {"unigram": ("#a8a8a8", "-"), "bigram": ("#767676", "=")}  # two greys: which line is which
PAIR = ("tiny", "noresidual")  # the lesson's comparison: with and without the residual connections
# two runs of the stability sweep (400 steps at lr 0.1): a family of their own, not drawn beside 3000-step curves
SWEEP_PAIR = ("tiny-lr1e-1", "nonorm-lr1e-1")


@dataclass(frozen=True)
class TrainingRecord:
    """What a checkpoint says about its training: the curves and the baselines on its corpus."""

    name: str
    val_loss: list[tuple[int, float]]
    baselines: dict[str, float]
    steps: int
    tokens_per_step: int
    n_layers: int = 0  # from the checkpoint's config: the families go by depth
    vocab_size: int = 0
    recipe: dict[str, object] = field(default_factory=dict)
    diverged: dict[str, object] | None = None  # where the run stopped being finite (`model.train.run`)
    depth: object = None  # the per-layer figures at init and trained (`model.train.depth_report`), unchecked


def read_training_record(path: Path) -> TrainingRecord | None:
    """The "training" metadata of a tutor checkpoint, or None if it has none or cannot be read."""
    try:
        _, metadata = read_safetensors(path)
        info = json.loads(metadata["training"])
        config = json.loads(metadata.get("config", "{}"))
        return TrainingRecord(
            name=metadata.get("name", path.stem),
            val_loss=[(int(step), float(loss)) for step, loss in info["val_loss"]],
            baselines={k: float(v) for k, v in info["baselines"].items()},
            steps=int(info["step"]),
            tokens_per_step=int(info["tokens_per_step"]),
            n_layers=int(config.get("n_layers", 0)),
            vocab_size=int(config.get("vocab_size", 0)),
            recipe=dict(info.get("recipe", {})),
            diverged=dict(info["diverged"]) if info.get("diverged") else None,
            depth=info.get("depth"),
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
    """The lesson's pair (tiny vs noresidual), then the models of each depth, then the stability sweep's pair
    (400 steps at lr 0.1): together they show every curve, and none holds more than a legend and a plot that
    80×24 can read (all twenty at once leave the plot four rows there)."""
    names = [r.name for r in records]
    found: list[Family] = []
    if all(name in names for name in PAIR):
        found.append(Family("family_pair", PAIR, {"a": PAIR[0], "b": PAIR[1]}))
    for blocks in sorted({r.n_layers for r in records}):
        group = tuple(r.name for r in records if r.n_layers == blocks and r.name not in SWEEP_PAIR)
        found.append(Family("family_depth", group, {"n": len(group), "blocks": blocks}))
    if all(name in names for name in SWEEP_PAIR):
        found.append(Family("family_pair", SWEEP_PAIR, {"a": SWEEP_PAIR[0], "b": SWEEP_PAIR[1]}))
    return found


LIVE = LiveSettings(variants=PAIR)


def loss_curve(name: str, points: list[tuple[int, float]]) -> Series:
    """A model's validation losses, named with the last one."""
    colour, marker = SERIES_LOOK.get(name, ("#d0d0d0", "?"))
    label = f"{name} {points[-1][1]:.3f}" if points else name
    return Series(label, [p[0] for p in points], [p[1] for p in points], colour, marker)


def baseline_series(baselines: dict[str, float], x_span: tuple[int, int], lang: str) -> list[Series]:
    """The unigram and bigram baselines as dashed level lines across `x_span`."""
    return [
        Series(
            f"{pick(WORDS, key, lang)} {baselines[key]:.3f}",
            x_span,
            (baselines[key], baselines[key]),
            *BASELINE_LOOK[key],
            True,
        )
        for key in ("unigram", "bigram")
        if key in baselines
    ]


def loss_y_range(series: list[Series]) -> tuple[float, float] | None:
    """Every loss, the first (about 10 nats, higher for some) and the last, with a little room: on the
    log axis the start and the small differences near the end both show."""
    ys = [y for s in series for y in s.ys if y > 0]
    if not ys:
        return None
    return (min(ys) / 1.05, max(ys) * 1.05)


class TrainingScreen(LiveTrainingScreen):
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

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose_body(self) -> ComposeResult:
        yield Static(id="training-note")
        yield LineChart(id="training-chart")
        yield LiveStatic(self.words("live_idle", steps=LIVE.steps, tokens=LIVE.tokens_per_step), id="training-status")

    def on_mount(self) -> None:
        self.redraw()

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
        series = [loss_curve(r.name, r.val_loss) for r in records]
        series += baseline_series(first.baselines, (0, first.steps), self.lang)
        chart.set_series(
            series,
            x_label=self.words("x_label"),
            y_label=self.words("y_label"),
            x_range=(0, max(r.steps for r in records)),
            y_range=loss_y_range(series),
            log_y=True,
        )

    def _draw_live(self, live: LiveCurves) -> None:
        settings = live.settings
        self.query_one("#training-note", Static).update(
            self.words("live_title", steps=settings.steps, tokens=settings.tokens_per_step)
        )
        series = [loss_curve(name, live.val_loss.get(name, [])) for name in settings.variants]
        series += baseline_series(live.baselines, (0, settings.steps), self.lang)
        self.query_one("#training-chart", LineChart).set_series(
            series,
            x_label=self.words("x_label"),
            y_label=self.words("y_label"),
            x_range=(0, settings.steps),
            y_range=loss_y_range(series),
            log_y=True,
        )

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
        if self.start_live(LIVE):
            self.showing_live = True
            self.redraw()

    def action_cancel_live(self) -> None:
        self.cancel_live()

    # -- the live run (`LiveTrainingScreen`) ----------------------------------------------------------

    def live_changed(self, curves: bool) -> None:
        if curves and self.showing_live:
            self.redraw()

    def show_live_status(self, text: str) -> None:
        self.query_one("#training-status", LiveStatic).show_content(text, "status")
