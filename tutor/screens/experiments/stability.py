"""The stability lab: what LayerNorm buys, measured over seeds — the range of learning rates that train at all.

At the default learning rate a model without LayerNorm trains about as well as one with it; the difference
shows as the peak learning rates at which runs still train. The lab reads `tutor sweep`'s results file
(the shipped one is model/data/stability.jsonl.gz, `--grid stability`: wiring × peak learning rate ×
warm-up × shape × 3 seeds) and shows, for one shape and warm-up at a time:

- the chart: the final validation loss against the peak learning rate (log axis), a curve per wiring through
  the median over seeds, a bar from the lowest to the highest final loss, × where runs diverged (at the top of
  the chart, at their rate), ○ for runs that stalled (ended within `STALLED_MARGIN` of the unigram loss), and
  the unigram loss as a dashed line;
- the table of every cell: k of n diverged (at which steps), stalled, median and range of the final loss;
- a picked run (cell and seed): its validation and training loss and the four growth figures
  (`model.train.GROWTH`) against the step, the divergence step marked; `o` opens it in the main screen when
  a shipped variant (`model.train.RECIPES`) is that run;
- a small sweep trained live (`r`): pre-norm and no LayerNorm × five peak rates, 150 steps, through the same
  `model.sweep.grid` and `model.sweep.train_run` as `tutor sweep`, one run at a time in a thread.

Sentences made from numbers come from `stability_words`, one function per kind.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

import model.sweep
from model import GPT
from model.sweep import STALLED_MARGIN, Cell, Results, RunSpec, cells, read_results
from model.train import GROWTH, RECIPES
from model.weights import SHIPPED_DIR, WeightsError, read_safetensors
from tutor.host import Host
from tutor.i18n import pick
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.base import ExperimentScreen
from tutor.screens.experiments.stability_words import (
    WIRINGS,
    cell_sentence,
    growth_sentence,
    growth_series,
    loss_text,
    rate_sentence,
    rate_text,
    run_sentence,
    trains_sentence,
    warmup_text,
    wiring_name,
)
from tutor.screens.experiments.stability_words import words as say
from tutor.widgets.line_chart import LineChart, Series
from tutor.widgets.live_static import LiveStatic

RESULTS_FILE = Path(model.sweep.__file__).parent / "data" / "stability.jsonl.gz"  # `tutor sweep --grid stability`'s
SHAPES = ("4x64", "16x32")  # the grid's shapes (`model.sweep.SHAPES`), the first one shown first
# the wirings' looks: tiny's, postnorm's and nonorm's in the training screen (colour, marker without colour)
WIRING_LOOK = {"pre": ("#00d700", "*"), "post": ("#5f87ff", "#"), "none": ("#ff8700", "%")}
DODGE = {"pre": -0.05, "post": 0.0, "none": 0.05}  # decades: the wirings' points side by side at one rate
DIVERGED_GLYPH, STALLED_GLYPH = "×", "○"
UNIGRAM_LOOK = ("#a8a8a8", "-")
GROWTH_LOOK = {  # the growth figures' looks in the run view
    "grad_norm": ("#ff5f5f", "g"),
    "max_attn_score": ("#00d7d7", "a"),
    "max_logit": ("#d7d700", "l"),
    "stream_norm": ("#af87ff", "x"),
}
LOSS_LOOK = {"val": ("#00d700", "v"), "train": ("#767676", "t")}
LOG_SPAN = 100.0  # a run's growth figures that span more than this factor are drawn on a log axis
COMPACT_WIDTH, COMPACT_HEIGHT = 110, 32  # below either, the halves of a view take turns (t, g)
# the live sweep: the same grid function as `tutor sweep`, small enough to watch (a test makes it smaller)
LIVE_GRID: dict[str, Any] = {
    "variants": ("tiny",),
    "norms": ("pre", "none"),
    "learning_rates": (0.01, 0.03, 0.1, 0.3, 1.0),
    "warmups": (0.1,),
    "shapes": ("4x64",),
    "seeds": (0,),
    "steps": 150,
    "eval_every": 25,
}

KEY_WORDS: dict[str, tuple[str, str]] = {  # action → footer label
    "back": ("Back", "返回"),
    "next_rate(1)": ("Rate", "学习率"),
    "next_wiring(1)": ("Wiring", "LN 位置"),
    "next_seed": ("Seed", "种子"),
    "next_view": ("View", "视图"),
    "toggle_warmup": ("Warm-up", "预热"),
    "next_shape": ("Shape", "形状"),
    "toggle_table": ("Table", "表格"),
    "toggle_growth": ("Loss/growth", "损失/增长"),
    "open_run": ("Open", "打开"),
    "live": ("Live", "现场"),
    "toggle_source": ("File/live", "文件/现场"),
}

WORDS: dict[str, tuple[str, str]] = {
    "bad_option": (
        "The stability lab cannot open on {what}: kept what it showed.",
        "稳定性实验室没法按 {what} 打开：保持原来的显示。",
    ),
    "problem": ("Results file: {problem}", "结果文件：{problem}"),
    "no_runs": (
        "No runs to show for {shape}, {warmup}.",
        "{shape}、{warmup}：没有可显示的训练。",
    ),
    "showing": (
        "{source}: {shape} (s), {warmup} (w) · {runs} runs, {seeds} seeds a cell, {steps} steps each",
        "{source}：{shape}（s），{warmup}（w）· 共 {runs} 次训练，每格 {seeds} 个种子，每次 {steps} 步",
    ),
    "showing_short": ("{shape} (s), {warmup} (w) · {runs} runs", "{shape}（s），{warmup}（w）· 共 {runs} 次训练"),
    "showing_live": (
        "{source}: {shape}, {warmup} · {runs} run(s), {seeds} seed a cell, {steps} steps each (l: the shipped results)",
        "{source}：{shape}，{warmup} · 共 {runs} 次训练，每格 {seeds} 个种子，每次 {steps} 步（按 l 回到随附的结果）",
    ),
    "showing_short_live": (
        "{source}: {runs} runs, {steps} steps (l: shipped)",
        "{source}：{runs} 次，每次 {steps} 步（l：随附结果）",
    ),
    "source_file": ("Shipped sweep", "随附的网格实验结果"),
    "source_live": ("Live sweep", "现场小网格实验"),
    "with_warmup": ("with warm-up", "有预热"),
    "shape": ("{n} blocks × {d}", "{n} 块 × {d} 维"),
    "x_rate": ("peak learning rate (log scale) →", "峰值学习率（对数刻度）→"),
    "y_final": ("final validation loss (nats per token)", "最终验证损失（每个词元的 nats）"),
    "median": ("{wiring}: median", "{wiring}：中位数"),
    "diverged_legend": ("diverged (top row)", "发散（最上一行）"),
    "stalled_legend": ("stalled (not {margin} below unigram)", "停滞（没比一元基线低 {margin}）"),
    "range_legend": ("lowest–highest over seeds", "各种子的最低–最高"),
    "unigram": ("unigram loss {loss}", "一元基线 {loss}"),
    "col_wiring": ("wiring", "LN 位置"),
    "col_lr": ("lr", "学习率"),
    "col_diverged": ("diverged (at step)", "发散（在第几步）"),
    "col_stalled": ("stalled", "停滞"),
    "col_loss": ("final loss (range)", "最终损失（范围）"),
    "picked": ("Picked: {cell}", "选中：{cell}"),
    "shipped": (
        "o opens it in the main screen: it is the shipped model {name}.",
        "按 o 在主界面打开：它就是随附模型 {name}。",
    ),
    "not_shipped": ("No shipped model is this run.", "没有随附模型对应这次训练。"),
    "no_run": ("No run to pick here.", "这里没有可选的训练。"),
    "title_loss": ("loss while training", "训练中的损失"),
    "title_growth": ("what grew, step by step", "各增长量随训练步数的变化"),
    "x_steps": ("training step →", "训练步数 →"),
    "nats": (" (nats per token)", "（每个词元的 nats）"),
    "y_growth": ("growth figures", "增长量"),
    "log_scale": (" (log scale)", "（对数刻度）"),
    "val_loss": ("validation loss", "验证损失"),
    "train_loss": ("training loss", "训练损失"),
    "diverged_at": ("┊ diverged at step {step}", "┊ 第 {step} 步发散"),
    "live_idle": (
        "Live: r trains {wirings} × {rates} peak rates, {steps} steps each, one run after another, seed 0.",
        "现场训练：按 r 依次训练 {wirings} × {rates} 个峰值学习率，每次 {steps} 步，种子 0。",
    ),
    "live_idle_short": (
        "Live: r trains {wirings} × {rates} rates, {steps} steps each.",
        "现场训练：按 r 训练 {wirings} × {rates} 个学习率，每次 {steps} 步。",
    ),
    "live_preparing": ("Live: reading the corpus…", "现场训练：正在读取语料…"),
    "live_running": (
        "Live: run {i}/{n} ({wiring}, lr {lr}) step {step}/{total} {bar} {seconds:.0f} s · r or Esc cancels",
        "现场训练：第 {i}/{n} 次（{wiring}，学习率 {lr}）第 {step}/{total} 步 {bar} {seconds:.0f} 秒 · r 或 Esc 取消",
    ),
    "live_done": (
        "Live: {k} runs in {seconds:.0f} s ({each:.1f} s a run). l: the shipped results again.",
        "现场训练：{k} 次，用时 {seconds:.0f} 秒（每次 {each:.1f} 秒）。按 l 回到随附的结果。",
    ),
    "live_cancelled": (
        "Live: cancelled after {k} of {n} runs. r starts again.",
        "现场训练：完成 {n} 次中的 {k} 次后取消。按 r 重新开始。",
    ),
    "live_failed": ("Live run {name} failed: {error}", "现场训练 {name} 失败：{error}"),
}


@dataclass
class SweepRunStep(Message):
    run_id: int
    index: int
    step: int
    total: int


@dataclass
class SweepRunEnded(Message):
    run_id: int
    index: int
    record: dict[str, object] | None
    error: str | None = None


@dataclass
class SweepEnded(Message):
    run_id: int
    cancelled: bool


@dataclass
class LiveSweep:
    """What the screen knows of the live sweep: its runs so far and where the current one is."""

    run_id: int
    specs: list[RunSpec]
    records: list[dict[str, object]] = field(default_factory=list)
    index: int = 0
    step: int = 0
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    finished: bool = False
    cancelled: bool = False


class CellTableBox(VerticalScroll, can_focus=False):
    """The cell table's scroll box: it never takes the focus, so the arrows pick a cell instead of scrolling."""


def diverged_cell(cell: Cell) -> str:
    """The table's "k/n (steps)": how many of the cell's runs diverged, and at which steps."""
    steps = cell.diverged_steps()
    return f"{len(steps)}/{cell.n}" + (f" ({', '.join(map(str, steps))})" if steps else "")


def shape_words(shape: str, lang: str) -> str:
    n, _, d = shape.partition("x")
    return pick(WORDS, "shape", lang, n=n, d=d) if n.isdigit() and d.isdigit() else shape


def shipped_variant(run: dict[str, object]) -> str | None:
    """The shipped model that is this run: a recipe of `model.train.RECIPES` whose run with the record's seed
    and steps has the record's key, and whose checkpoint in model/weights/ says it was trained with them."""
    try:
        seed, steps = int(run["seed"]), int(run["steps"])  # type: ignore[call-overload]
    except (KeyError, TypeError, ValueError):
        return None
    for name, recipe in RECIPES.items():
        path = SHIPPED_DIR / f"{name}.safetensors"
        if RunSpec(recipe, seed, steps).key() != run.get("key") or not path.is_file():
            continue
        try:
            info = json.loads(read_safetensors(path)[1]["training"])
            if int(info["seed"]) == seed and int(info["total_steps"]) == steps:
                return name
        except (WeightsError, KeyError, TypeError, ValueError):
            continue
    return None


class StabilityScreen(ExperimentScreen):
    NAME = "stability"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="Esc"),
        Binding("right", "next_rate(1)", "Rate", key_display="←→"),
        Binding("left", "next_rate(-1)", "Rate", show=False),
        Binding("down", "next_wiring(1)", "Wiring", key_display="↑↓"),
        Binding("up", "next_wiring(-1)", "Wiring", show=False),
        Binding("v", "next_view", "View"),
        Binding("r", "live", "Live"),
        Binding("o", "open_run", "Open"),
        Binding("t", "toggle_table", "Table"),
        Binding("g", "toggle_growth", "Loss/growth"),
        Binding("n", "next_seed", "Seed"),
        Binding("w", "toggle_warmup", "Warm-up"),
        Binding("s", "next_shape", "Shape"),
        Binding("l", "toggle_source", "File/live"),
    ]
    DEFAULT_CSS = """
    StabilityScreen #stab-head { height: auto; padding: 0 1; }
    StabilityScreen #stab-note { height: auto; padding: 0 1; color: $text-muted; }
    StabilityScreen #stab-rates { height: 1fr; }
    StabilityScreen #stab-chart { width: 1fr; height: 1fr; padding: 0 1; }
    StabilityScreen #stab-table-box { height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }
    StabilityScreen #stab-table { width: auto; }
    StabilityScreen #stab-run { height: 1fr; display: none; }
    StabilityScreen #stab-growth, StabilityScreen #stab-loss { height: 1fr; padding: 0 1; }
    StabilityScreen #stab-status { height: auto; padding: 0 1; background: $boost; }
    StabilityScreen.-run #stab-rates { display: none; }
    StabilityScreen.-run #stab-run { display: block; }
    StabilityScreen.-compact #stab-table-box { display: none; width: 1fr; padding: 0 1; }
    StabilityScreen.-compact.-table #stab-table-box { display: block; }
    StabilityScreen.-compact.-table #stab-chart { display: none; }
    StabilityScreen.-compact #stab-loss { display: none; }
    StabilityScreen.-compact.-loss #stab-loss { display: block; }
    StabilityScreen.-compact.-loss #stab-growth { display: none; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str, results_path: Path | None = None) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.results: Results = read_results(results_path or RESULTS_FILE)
        self.file_cells: list[Cell] = cells(self.results.runs)
        # the grid's shapes (a link may name one the file has no runs of yet: the lab says so), then any other
        self.shapes = [*SHAPES, *sorted({c.shape for c in self.file_cells} - set(SHAPES))]
        self.shape = next((s for s in self.shapes if any(c.shape == s for c in self.file_cells)), SHAPES[0])
        self.warmup_on = True
        self.wiring = 0  # index into WIRINGS
        self.lr: float | None = None  # the picked rate (None: the first one shown)
        self.seed = 0  # index into the picked cell's runs
        self.run_view = False
        self.table_shown = False  # in a compact window: the table instead of the chart
        self.loss_shown = False  # in a compact window: the run's loss instead of its growth figures
        self.live: LiveSweep | None = None
        self.show_live = False
        self._stop: threading.Event | None = None
        self._runs = 0

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def take_options(self, options: dict[str, str]) -> None:
        """A link's `shape` (a shape of the results: 4x64, 16x32) and `warmup` (on, off); what the lab
        cannot show is one notice, the rest is taken."""
        bad = []
        if "shape" in options:
            if options["shape"] in self.shapes:
                self.shape = options["shape"]
            else:
                bad.append(f"shape={options['shape']}")
        if "warmup" in options:
            if options["warmup"] in ("on", "off"):
                self.warmup_on = options["warmup"] == "on"
            else:
                bad.append(f"warmup={options['warmup']}")
        bad += sorted(set(options) - {"shape", "warmup"})
        if bad:
            self.notify(self.words("bad_option", what=", ".join(bad)), severity="warning")

    # -- what is shown ---------------------------------------------------------------------------

    @property
    def compact(self) -> bool:
        width, height = self.size
        return 0 < width < COMPACT_WIDTH or 0 < height < COMPACT_HEIGHT

    def shown_cells(self) -> list[Cell]:
        """The cells of the chart: the live sweep's, or the file's of one shape and warm-up."""
        if self.show_live and self.live is not None:
            return cells(self.live.records)
        return [c for c in self.file_cells if c.shape == self.shape and (c.warmup > 0) == self.warmup_on]

    def rates(self, shown: list[Cell]) -> list[float]:
        return sorted({c.lr for c in shown})

    def picked_cell(self, shown: list[Cell]) -> Cell | None:
        rates = self.rates(shown)
        if not rates:
            return None
        if self.lr not in rates:
            self.lr = min(rates, key=lambda r: abs(math.log(r) - math.log(self.lr))) if self.lr else rates[0]
        norm = WIRINGS[self.wiring]
        return next((c for c in shown if c.lr == self.lr and c.norm == norm), None)

    def picked_run(self) -> dict[str, object] | None:
        cell = self.picked_cell(self.shown_cells())
        if cell is None or not cell.runs:
            return None
        return cell.runs[self.seed % cell.n]

    # -- the widgets ------------------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        yield Static(id="stab-head")
        yield Static(id="stab-note")
        with Horizontal(id="stab-rates"):
            yield LineChart(id="stab-chart")
            with CellTableBox(id="stab-table-box"):
                yield Static(id="stab-table")
        with Vertical(id="stab-run"):
            yield LineChart(id="stab-growth")
            yield LineChart(id="stab-loss")
        yield LiveStatic(id="stab-status")

    def on_mount(self) -> None:
        self.show_status(self.idle_text())
        self.redraw()

    def on_resize(self, event: Resize) -> None:
        self.set_classes()
        self.refresh_bindings()
        self.call_after_refresh(self.redraw)

    def set_classes(self) -> None:
        self.set_class(self.run_view, "-run")
        self.set_class(self.compact, "-compact")
        self.set_class(self.table_shown, "-table")
        self.set_class(self.loss_shown, "-loss")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_table":
            return self.compact and not self.run_view
        if action == "toggle_growth":
            return self.compact and self.run_view
        if action == "open_run":
            run = self.picked_run()
            return self.run_view and run is not None and shipped_variant(run) is not None
        if action == "toggle_source":
            return self.live is not None and bool(self.live.records)
        if action in ("toggle_warmup", "next_shape"):
            return not self.show_live
        return True

    def idle_text(self) -> str:
        wirings = " / ".join(wiring_name(n, self.lang) for n in LIVE_GRID["norms"])
        return self.words(
            "live_idle_short" if self.compact else "live_idle",
            wirings=wirings,
            rates=len(LIVE_GRID["learning_rates"]),
            steps=LIVE_GRID["steps"],
        )

    def show_status(self, text: str) -> None:
        self.query_one("#stab-status", LiveStatic).show_content(text, "status")

    # -- drawing ---------------------------------------------------------------------------------

    def redraw(self) -> None:
        self.set_classes()
        shown = self.shown_cells()
        head = Text()
        if self.results.problem and not self.show_live:
            head.append(self.words("problem", problem=self.results.problem) + "\n", style="bold yellow")
        if not shown:
            head.append(self.words("no_runs", shape=shape_words(self.shape, self.lang), warmup=self.warmup_words()))
            self.query_one("#stab-head", Static).update(head)
            self.query_one("#stab-note", Static).update("")
            self.query_one("#stab-table", Static).update("")
            for chart in self.query(LineChart):
                chart.set_series([])
            return
        cell = self.picked_cell(shown)
        assert self.lr is not None
        head.append(self.describe_source(shown), style="bold")
        if not self.run_view:  # what the chart says; the run view gives its room to the run's two charts
            head.append("\n" + trains_sentence(shown, self.lang) + "\n")
            head.append(rate_sentence(shown, self.lr, self.lang))
        self.query_one("#stab-head", Static).update(head)
        if self.run_view:
            self.draw_run(cell)
        else:
            self.draw_rates(shown, cell)

    def warmup_words(self) -> str:
        if self.show_live:
            return self.words("source_live")
        return self.words("with_warmup") if self.warmup_on else warmup_text(0, self.lang)

    def describe_source(self, shown: list[Cell]) -> str:
        runs = [r for c in shown for r in c.runs]
        warmups = {c.warmup for c in shown}
        warmup = warmup_text(max(warmups), self.lang) if len(warmups) == 1 else warmup_text(0, self.lang)
        steps = sorted({int(r["steps"]) for r in runs})  # type: ignore[call-overload]
        key = "showing_short" if self.compact else "showing"
        return self.words(
            key + ("_live" if self.show_live else ""),
            source=self.words("source_live" if self.show_live else "source_file"),
            shape=shape_words(shown[0].shape, self.lang),
            warmup=warmup,
            runs=len(runs),
            seeds=max(c.n for c in shown),
            steps="/".join(map(str, steps)),
        )

    def draw_rates(self, shown: list[Cell], picked: Cell | None) -> None:
        chart = self.query_one("#stab-chart", LineChart)
        rates = self.rates(shown)
        losses = [loss for c in shown for loss in c.final_losses()]
        unigrams = [float(r["unigram"]) for c in shown for r in c.runs if r.get("unigram") is not None]  # type: ignore[arg-type]
        unigram = sorted(unigrams)[len(unigrams) // 2] if unigrams else math.nan
        low = min([*losses, unigram] if math.isfinite(unigram) else losses or [0.0])
        high = max([*losses, unigram] if math.isfinite(unigram) else losses or [1.0])
        pad = max(0.05, (high - low) * 0.08)
        top = high + 2 * pad  # the row of the diverged marks, above every loss
        x0, x1 = math.log10(rates[0]) - 0.2, math.log10(rates[-1]) + 0.2
        series: list[Series] = []
        marks: list[Series] = []
        for norm in WIRINGS:
            own = [c for c in shown if c.norm == norm]
            if not own:
                continue
            colour, marker = WIRING_LOOK[norm]
            dodge = DODGE[norm]
            medians = [(math.log10(c.lr) + dodge, c.median()) for c in own if c.median() is not None]
            name = self.words("median", wiring=wiring_name(norm, self.lang))
            series.append(Series(name, [x for x, _ in medians], [y for _, y in medians], colour, marker))
            for c in own:
                final = c.final_losses()
                x = math.log10(c.lr) + dodge
                if len(final) > 1:
                    series.append(Series("", [x, x], [final[0], final[-1]], colour, marker, legend=False))
                stalled = [float(r["final_val_loss"]) for r in c.runs if r["outcome"] == "stalled"]  # type: ignore[arg-type]
                if stalled:
                    marks.append(
                        Series("", [x] * len(stalled), stalled, colour, STALLED_GLYPH, legend=False, points=True)
                    )
                if c.diverged_steps():
                    marks.append(Series("", [x], [top], colour, DIVERGED_GLYPH, legend=False, points=True))
        marks.append(Series(self.words("diverged_legend"), [], [], "white", DIVERGED_GLYPH, points=True))
        margin = f"{STALLED_MARGIN:g}"
        marks.append(Series(self.words("stalled_legend", margin=margin), [], [], "white", STALLED_GLYPH, points=True))
        marks.append(Series(self.words("range_legend"), [], [], "white", "│", points=True))
        if math.isfinite(unigram):
            label = self.words("unigram", loss=f"{unigram:.3f}")
            series.append(Series(label, (x0, x1), (unigram, unigram), *UNIGRAM_LOOK, dashed=True))
        chart.set_series(
            marks + series,
            x_label=self.words("x_rate"),
            y_label=self.words("y_final"),
            x_range=(x0, x1),
            y_range=(low - pad, top),
            x_ticks=[(math.log10(r), rate_text(r)) for r in rates],
            x_marker=math.log10(self.lr) if self.lr else None,
        )
        note = self.words("picked", cell=cell_sentence(picked, self.lang)) if picked is not None else ""
        if self.compact and not self.table_shown:  # the room goes to the chart; the sentence heads the table
            note = ""
        self.query_one("#stab-note", Static).display = bool(note)
        self.query_one("#stab-note", Static).update(note)
        table = self.cell_table(shown, picked)
        box = self.query_one("#stab-table-box", CellTableBox)
        # beside the chart the table is as wide as its digits (and the scroll bar); alone, as wide as the window
        box.styles.width = None if self.compact else self.app.console.measure(table).maximum + 2
        self.query_one("#stab-table", Static).update(table)

    def cell_table(self, shown: list[Cell], picked: Cell | None) -> Table:
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        for key in ("col_wiring", "col_lr", "col_diverged", "col_stalled", "col_loss"):
            table.add_column(self.words(key), justify="left" if key == "col_wiring" else "right", no_wrap=True)
        for c in shown:
            _, marker = WIRING_LOOK.get(c.norm, ("", "?"))
            table.add_row(
                f"{marker} {c.norm}",
                rate_text(c.lr),
                diverged_cell(c),
                f"{c.count('stalled')}/{c.n}",
                loss_text(c),
                style="reverse" if c is picked else "",
            )
        return table

    def draw_run(self, cell: Cell | None) -> None:
        growth_chart = self.query_one("#stab-growth", LineChart)
        loss_chart = self.query_one("#stab-loss", LineChart)
        run = self.picked_run()
        note = self.query_one("#stab-note", Static)
        if cell is None or run is None:
            note.display = True
            note.update(self.words("no_run"))
            growth_chart.set_series([])
            loss_chart.set_series([])
            return
        diverged = run.get("diverged")
        step = int(diverged["step"]) if isinstance(diverged, dict) else None
        lines = [run_sentence(cell, self.seed % cell.n, self.lang), growth_sentence(run, self.lang)]
        name = shipped_variant(run)
        if name or not self.compact:
            lines.append(self.words("shipped", name=name) if name else self.words("not_shipped"))
        note.display = True
        note.update("\n".join(lines))
        steps = int(run.get("steps", 0) or 0)  # type: ignore[call-overload]
        if step is not None:  # what matters is before the blow-up: the steps after it are not on file
            steps = min(steps, max(10, math.ceil(step * 1.5) + 1))  # 10 at least: whole steps on the axis
        series = []
        for key in GROWTH:
            values = growth_series(run, key)
            colour, marker = GROWTH_LOOK[key]
            label = say(key, self.lang)
            # figure i was read in update i + 1's forward pass: the failing update's at the divergence step
            series.append(Series(label, list(range(1, len(values) + 1)), values, colour, marker))
        ys = [y for s in series for y in s.ys if math.isfinite(y) and y > 0]
        log_y = bool(ys) and max(ys) / min(ys) > LOG_SPAN
        title = self.words("title_growth") + (self.words("log_scale") if log_y else "")
        if step is not None:
            title += "  " + self.words("diverged_at", step=step)
        growth_chart.set_series(
            series, x_label=self.words("x_steps"), y_label=title, x_range=(0, steps), log_y=log_y, x_marker=step
        )
        train = [math.nan if v is None else float(v) for v in cast(list, run.get("train_loss") or [])]
        val = cast(list, run.get("val_loss") or [])
        loss_series = [
            Series(self.words("val_loss"), [p[0] for p in val], [p[1] for p in val], *LOSS_LOOK["val"]),
            Series(self.words("train_loss"), list(range(1, len(train) + 1)), train, *LOSS_LOOK["train"]),
        ]
        unigram = run.get("unigram")
        if isinstance(unigram, (int, float)):
            label = self.words("unigram", loss=f"{unigram:.3f}")
            loss_series.append(Series(label, (0, steps), (unigram, unigram), *UNIGRAM_LOOK, dashed=True))
        losses = [y for s in loss_series for y in s.ys if math.isfinite(y) and y > 0]
        log_loss = bool(losses) and max(losses) / min(losses) > LOG_SPAN  # a loss that blew up to 3e7
        loss_title = self.words("title_loss") + self.words("nats") + (self.words("log_scale") if log_loss else "")
        loss_chart.set_series(
            loss_series,
            x_label=self.words("x_steps"),
            y_label=loss_title,
            x_range=(0, steps),
            x_marker=step,
            log_y=log_loss,
        )

    # -- actions ---------------------------------------------------------------------------------

    def after_pick(self) -> None:
        self.refresh_bindings()
        self.redraw()

    def action_next_rate(self, delta: int) -> None:
        rates = self.rates(self.shown_cells())
        if rates:
            index = rates.index(self.lr) if self.lr in rates else 0
            self.lr = rates[(index + delta) % len(rates)]
            self.after_pick()

    def action_next_wiring(self, delta: int) -> None:
        """The next wiring that has runs on show (all three in the shipped grid; the live sweep has two)."""
        present = {c.norm for c in self.shown_cells()}
        for _ in WIRINGS:
            self.wiring = (self.wiring + delta) % len(WIRINGS)
            if WIRINGS[self.wiring] in present or not present:
                break
        self.after_pick()

    def action_next_seed(self) -> None:
        self.seed += 1
        self.after_pick()

    def action_next_view(self) -> None:
        self.run_view = not self.run_view
        self.after_pick()

    def action_toggle_table(self) -> None:
        self.table_shown = not self.table_shown
        self.redraw()

    def action_toggle_growth(self) -> None:
        self.loss_shown = not self.loss_shown
        self.redraw()

    def action_toggle_warmup(self) -> None:
        self.warmup_on = not self.warmup_on
        self.after_pick()

    def action_next_shape(self) -> None:
        self.shape = self.shapes[(self.shapes.index(self.shape) + 1) % len(self.shapes)]
        self.after_pick()

    def action_open_run(self) -> None:
        run = self.picked_run()
        name = shipped_variant(run) if run is not None else None
        if name is not None:
            cast(Host, self.app).show_model(name)

    def action_back(self) -> None:
        if self.live is not None and not self.live.finished:
            self.cancel_live()  # Esc stops the live sweep first; a second Esc leaves
            return
        super().action_back()

    def action_toggle_source(self) -> None:
        if self.live is not None and self.live.records:
            self.show_live = not self.show_live
            self.after_pick()

    def action_live(self) -> None:
        if self.live is not None and not self.live.finished:
            self.cancel_live()
        else:
            self.start_live()

    # -- the live sweep ---------------------------------------------------------------------------

    def start_live(self) -> None:
        from model.sweep import grid

        self._runs += 1
        self._stop = threading.Event()
        self.live = LiveSweep(self._runs, grid(**LIVE_GRID))
        self.show_status(self.words("live_preparing"))
        self.sweep_live(self.live.run_id, self.live.specs, self._stop)

    def cancel_live(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def on_unmount(self) -> None:
        """Leaving the screen (or the app) stops the sweep at its next step."""
        self.cancel_live()

    @work(thread=True, exclusive=True, group="stability-live", exit_on_error=False)  # errors end the sweep only
    def sweep_live(self, run_id: int, specs: list[RunSpec], stop: threading.Event) -> None:
        from model.corpus import load_corpus
        from model.sweep import train_run

        worker = get_current_worker()

        def stopping() -> bool:
            return stop.is_set() or worker.is_cancelled

        try:
            corpus = load_corpus(None, stdlib_text=specs[0].recipe.stdlib_text)
        except Exception as error:  # a corpus that cannot be read: a notice, the screen goes on
            self._post(SweepRunEnded(run_id, 0, None, str(error)))
            self._post(SweepEnded(run_id, cancelled=True))
            return
        with tempfile.TemporaryDirectory(prefix="tutor-live-sweep-") as folder:
            for index, spec in enumerate(specs):
                if stopping():
                    break

                def on_step(progress: Any, index: int = index) -> None:
                    self._post(SweepRunStep(run_id, index, progress.step, progress.total_steps))

                try:
                    record = train_run(spec, corpus, Path(folder), on_step=on_step, should_stop=stopping)
                except Exception as error:  # one run that fails is a notice; the sweep goes on with the next
                    self._post(SweepRunEnded(run_id, index, None, f"{type(error).__name__}: {error}"))
                    continue
                self._post(SweepRunEnded(run_id, index, record))
        self._post(SweepEnded(run_id, cancelled=stopping()))

    def _post(self, message: Message) -> None:
        with contextlib.suppress(RuntimeError):  # the app's loop is gone (quitting): nobody is left to tell
            self.post_message(message)

    def on_sweep_run_step(self, message: SweepRunStep) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return
        live.index, live.step = message.index, message.step
        self.show_status(self.live_status())

    def on_sweep_run_ended(self, message: SweepRunEnded) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return
        if message.error is not None:
            name = live.specs[message.index].recipe.name if message.index < len(live.specs) else "?"
            self.notify(self.words("live_failed", name=name, error=message.error), severity="error", markup=False)
        if message.record is not None:
            live.records.append(message.record)
            if not self.show_live:  # the first point: the chart turns to the live sweep
                self.show_live = True
            self.after_pick()
        self.show_status(self.live_status())

    def on_sweep_ended(self, message: SweepEnded) -> None:
        live = self.live
        if live is None or message.run_id != live.run_id:
            return
        live.finished, live.cancelled, live.ended = True, message.cancelled, time.monotonic()
        self.show_status(self.live_status())
        self.refresh_bindings()

    def live_status(self) -> str:
        live = self.live
        if live is None:
            return self.idle_text()
        k, n = len(live.records), len(live.specs)
        seconds = (live.ended or time.monotonic()) - live.started
        if live.finished and live.cancelled:
            return self.words("live_cancelled", k=k, n=n)
        if live.finished:
            return self.words("live_done", k=k, seconds=seconds, each=seconds / max(1, k))
        spec = live.specs[min(live.index, n - 1)]
        total = spec.steps
        filled = round(20 * live.step / max(1, total))
        bar = "▕" + "█" * filled + "░" * (20 - filled) + "▏"
        return self.words(
            "live_running",
            i=live.index + 1,
            n=n,
            wiring=wiring_name(spec.recipe.norm, self.lang),
            lr=rate_text(spec.recipe.learning_rate),
            step=live.step,
            total=total,
            bar=bar,
            seconds=seconds,
        )
