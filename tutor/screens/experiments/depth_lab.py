"""The depth lab: the depth family side by side, layer by layer, from the records in the shipped checkpoints.

Every figure here is read from the checkpoints' "training" metadata, not recomputed: the validation
curve and the baselines (as the training screen reads them), and the "depth" record that
`model.train.depth_report` writes at the end of a run — at initialisation and trained, at every
point of the residual stream (after the embedding, then after each block): ‖x‖ (`stream_norm`),
‖∂L/∂x‖ (`stream_grad`), the mean cosine between positions (`similarity`), and per block ‖∂L/∂θ‖
(`param_grad`); see `model/depth.py`. A `diverged` record says at which step a run stopped being
finite. Two variants at a time, each with its own keys (1, 2); `r` trains the two live for a short
run (`live_training.LiveTrainingScreen`, as the training screen does), `c` cancels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.events import Resize
from textual.widgets import Static

from model import GPT
from model.sweep import (
    COLLAPSED_SIMILARITY,
    SHIPPED_RESULTS,
    SPIKE_JUMP,
    SPIKE_WINDOW,
    Variant,
    read_results,
    variants,
)
from model.weights import SHIPPED_DIR
from tutor.host import Host
from tutor.i18n import pick, say
from tutor.lessons.links import DEPTH_LAB_VIEWS
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.live_training import LiveSettings, LiveTrainingScreen
from tutor.screens.experiments.training import (
    SERIES_LOOK,
    TrainingRecord,
    baseline_series,
    loss_curve,
    loss_y_range,
    read_training_record,
)
from tutor.widgets.line_chart import LineChart, Series
from tutor.widgets.live_static import LiveStatic

# the 16-block family, then the 4-block models it is measured against
FAMILY = (
    "deep",
    "deep-nowarmup",
    "deep-nonorm",
    "deep-nonorm-nowarmup",
    "deep-postnorm",
    "deep-postnorm-nowarmup",
    "deep-noresidual",
    "deep-lr1e-3",
    "deep-postnorm-lr1e-3",
    "tiny",
    "postnorm",
    "nonorm",
    "noresidual",
)
PAIR = ("deep", "deep-noresidual")  # the gradient highway, with and without
VIEWS = DEPTH_LAB_VIEWS  # and "live" once a run began
LOG_SPAN = 100.0  # a chart of values that span more than this factor gets a log axis
LOSS_STEPS = (0, 100, 200, 300, 500, 1000, 1500, 2000, 2500, 3000)  # the loss table's rows, where recorded
INIT_MARKERS = (".", ":")  # the curves at initialisation (dashed), left and right; trained ones: SERIES_LOOK's
UNIFORM_LOOK = ("#4e4e4e", "~")  # the uniform guess ln V, a third grey beside training's two baselines
NARROW = 100  # below this width the notes are shorter and the table and the chart take turns
# the live run: the pair on screen, half the training screen's steps (16 blocks take four times as long a step)
LIVE = LiveSettings(steps=200, eval_every=10)

KEY_WORDS: dict[str, tuple[str, str]] = {  # action → footer label
    "back": ("Back", "返回"),
    "next_left": ("Left", "左模型"),
    "next_right": ("Right", "右模型"),
    "next_view": ("View", "换视图"),
    "run_live": ("Train", "训练"),
    "cancel_live": ("Cancel", "取消"),
    "drift": ("Drift", "漂移"),
    "toggle_table": ("Chart", "图表"),
}

WORDS: dict[str, tuple[str, str]] = {
    "bad_option": (
        "The depth lab cannot open on {what}: kept what it showed.",
        "深度实验室没法按 {what} 打开：保持原来的显示。",
    ),
    "side_left": ("L (1)", "左（1）"),
    "side_right": ("R (2)", "右（2）"),
    "blocks": ("{n} blocks × {d}", "{n} 块 × {d} 维"),
    "pre": ("pre-norm", "pre-norm"),
    "post": ("post-norm", "post-norm"),
    "none": ("no LayerNorm", "无 LayerNorm"),
    "no_residual": ("no residual", "无残差"),
    "warmup": ("warm-up {n}", "预热 {n} 步"),
    "no_warmup": ("no warm-up", "不预热"),
    "lr": ("lr {lr}", "学习率 {lr}"),
    "loss_span": ("loss {first} → {last}", "损失 {first} → {last}"),
    "diverged": ("diverged at step {step} ({what} became {value})", "在第 {step} 步发散（{what} 变成 {value}）"),
    "diverged_live": ("live run diverged at step {step}", "现场训练在第 {step} 步发散"),
    "not_diverged": ("never diverged", "没有发散"),
    "view_of": ("View {i}/{n} (v):", "视图 {i}/{n}（按 v 换）："),
    "title_loss": ("validation loss while training", "训练时的验证损失"),
    "title_live": ("live validation loss", "现场训练的验证损失"),
    "title_stream_norm": ("‖x‖ per layer", "每层的 ‖x‖"),
    "title_stream_grad": ("‖∂L/∂x‖ per layer", "每层的 ‖∂L/∂x‖"),
    "title_param_grad": ("‖∂L/∂θ‖ per block", "每块的 ‖∂L/∂θ‖"),
    "title_similarity": ("collapse: cos between positions", "塌缩：位置之间的余弦"),
    "title_family": ("the whole family, one model a row", "整个家族，每行一个模型"),
    "note_family": (
        "Each cell: at initialisation → trained; L and R are the pair the other views show.",
        "每格：初始 → 训练后；左、右是其他视图里对比的两个模型。",
    ),
    "short_family": ("Each cell: init → trained.", "每格：初始 → 训练后。"),
    "col_model": ("model", "模型"),
    "col_loss": ("loss", "损失"),
    "col_diverged": ("diverged", "发散"),
    "col_grad_first": ("‖∂L/∂θ‖ B0", "‖∂L/∂θ‖ 块0"),
    "col_grad_last": ("‖∂L/∂θ‖ last", "‖∂L/∂θ‖ 末块"),
    "col_similarity": ("cos, last", "末块 cos"),
    "col_norm": ("‖x‖, last", "末块 ‖x‖"),
    "arrow": ("{a} → {b}", "{a} → {b}"),
    "y_loss": ("loss (nats per token, log scale)", "损失（每个词元的 nats，对数刻度）"),
    "y_stream_norm": ("mean ‖x‖ of a token's stream vector", "每个词元残差流向量的平均 ‖x‖"),
    "y_stream_grad": ("‖∂L/∂x‖ over the batch", "整批的 ‖∂L/∂x‖"),
    "y_param_grad": ("‖∂L/∂θ‖ of the block's weights", "该块全部参数的 ‖∂L/∂θ‖"),
    "y_similarity": ("mean cos(x_s, x_t), s ≠ t", "平均 cos(x_s, x_t)，s ≠ t"),
    "log_scale": (" (log scale)", "（对数刻度）"),
    "x_steps": ("training step →", "训练步数 →"),
    "x_layers": ("block → (−1: after the embedding)", "块 →（−1：嵌入之后）"),
    "x_blocks": ("block →", "块 →"),
    "uniform": ("uniform ln V", "均匀分布 ln V"),
    "init": ("init", "初始"),
    "trained": ("trained", "训练后"),
    "column_init": ("{side} init", "{side}·初始"),
    "column_trained": ("{side} trained", "{side}·训练后"),
    "left": ("L", "左"),
    "right": ("R", "右"),
    "layer": ("layer", "层"),
    "step": ("step", "步"),
    "emb": ("emb", "嵌入"),
    "block": ("B{i}", "块{i}"),
    "absent": ("—", "—"),
    "note_loss": (
        "Start and end of each curve; the dashed lines: unigram baseline {unigram}, bigram {bigram}, "
        "uniform ln {v} = {uniform}.",
        "每条曲线的起点和终点；虚线：一元基线 {unigram}，二元基线 {bigram}，均匀分布 ln {v} = {uniform}。",
    ),
    "note_live": (
        "r trained {a} and {b} for {steps} steps of {tokens} tokens (checkpoints in a temporary folder).",
        "按 r 训练了 {a} 和 {b}，{steps} 步，每步 {tokens} 个词元（检查点在临时文件夹中）。",
    ),
    "note_stream_norm": (
        "After the last block ÷ after the embedding: {ratios}. d opens the drift experiment (30 layers, with and "
        "without LayerNorm).",
        "最后一块之后 ÷ 嵌入之后：{ratios}。按 d 打开漂移实验（30 层，有无 LayerNorm）。",
    ),
    "note_grad": (
        "Block 0 ÷ the last block: {ratios}. Below 1: the first blocks get less of the gradient than the last.",
        "第 0 块 ÷ 最后一块：{ratios}。小于 1：前面的块分到的梯度比后面的少。",
    ),
    "note_similarity": (
        "After the last block: {ratios}. 1.00: every position carries one direction — the stream has collapsed.",
        "最后一块之后：{ratios}。1.00：每个位置都指向同一个方向——残差流塌缩了。",
    ),
    "ratio_pair": ("{name} {init} at init, {trained} trained", "{name} 初始 {init}，训练后 {trained}"),
    "short_stream_norm": ("Last ÷ embedding: {ratios}. d: drift.", "最后一块 ÷ 嵌入：{ratios}。按 d：漂移实验。"),
    "short_grad": ("B0 ÷ last block: {ratios}.", "块0 ÷ 最后一块：{ratios}。"),
    "short_similarity": ("After the last block: {ratios}.", "最后一块之后：{ratios}。"),
    "short_pair": ("{name} {init} → {trained}", "{name} {init} → {trained}"),
    "live_idle": (
        "Live: r trains {a} and {b} side by side, {steps} steps of {tokens} tokens; c cancels.",
        "现场训练：按 r 同时训练 {a} 和 {b}，{steps} 步，每步 {tokens} 个词元；按 c 取消。",
    ),
    "live_idle_short": (
        "Live: r trains both for {steps} steps, c cancels.",
        "现场训练：按 r 把两个模型训练 {steps} 步，按 c 取消。",
    ),
    "left_out": (
        "Left out, no depth record to read: {models}.",
        "以下模型读不出深度记录，没有显示：{models}。",
    ),
    "why": ("{name} ({why})", "{name}（{why}）"),
    "missing": ("not shipped", "没有随附"),
    "no_training": ("no training record", "没有训练记录"),
    "no_depth": ("no depth record", "没有深度记录"),
    "no_blocks": ("no block count in its config", "配置里没有块数"),
    "no_curve": ("no validation curve", "没有验证曲线"),
    "bad_table": ("a profile is not a table", "某个剖面不是一张表"),
    "bad_length": ("{what} is not {n} numbers", "{what} 不是 {n} 个数"),
    "bad_number": ("{what} holds something that is not a number", "{what} 里有不是数的值"),
    "title_seeds": ("the family over seeds: how often", "多个种子下的深度家族：出现了几次"),
    "note_seeds": (
        "Each variant trained with seeds 0, 1, 2 by the same recipe (seed 0 is the shipped model). A result is "
        "robust only when every seed shows it; otherwise read how often. Collapsed: cos between positions after "
        "the last block ≥ {collapse}; a spike: a step's loss more than {jump} nat above the median of the "
        "{window} before.",
        "每个变体用同一个配方、种子 0、1、2 各训练一次（种子 0 就是随附的模型）。只有每个种子都出现的结果才算稳定，"
        "否则要看出现了几次。塌缩：最后一块之后位置之间的 cos ≥ {collapse}；尖峰：某一步的损失比前 {window} 步的中位数"
        "高出 {jump} nats 以上。",
    ),
    "short_seeds": ("Seeds 0, 1, 2; robust only when every seed shows it.", "种子 0、1、2；每个种子都出现才算稳定。"),
    "no_seeds": ("No results over seeds: {problem}", "没有多种子的结果：{problem}"),
    "col_seeds": ("seeds", "种子"),
    "col_losses": ("final loss by seed", "各种子的最终损失"),
    "col_collapsed": ("collapsed", "塌缩"),
    "col_spiked": ("spikes", "尖峰"),
    "every_seed": ("{what} in every seed ({n} of {n})", "{n} 个种子全部{what}（{n}/{n}）"),
    "no_seed": ("{what} in no seed (0 of {n})", "没有一个种子{what}（0/{n}）"),
    "some_seeds": ("{what} in {k} of {n} seeds", "{n} 个种子里有 {k} 个{what}（{k}/{n}）"),
    "what_collapsed": ("collapsed", "塌缩"),
    "what_spiked": ("loss spikes", "出现损失尖峰"),
    "seed_sentence": (
        "{name}: {collapsed}; {spiked}; final loss {losses}.",
        "{name}：{collapsed}；{spiked}；最终损失 {losses}。",
    ),
    "too_few": (
        "The depth lab needs two shipped models with a depth record; it found {n}.",
        "深度实验室需要两个带深度记录的随附模型；只找到 {n} 个。",
    ),
}


def figure(value: float) -> str:
    """Three significant digits in at most eight cells: 163, 1.17, 0.0506, 0.00235, 2.24e-9, 5.82e-42; 1.00."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    exponent = int(f"{value:.2e}".split("e")[1])  # after rounding: 0.99999 counts as 1.00
    if -3 <= exponent < 4:
        return f"{value:.{max(0, 2 - exponent)}f}"
    mantissa, power = f"{value:.2e}".split("e")
    return f"{mantissa}e{int(power)}"


@dataclass(frozen=True)
class DepthProfile:
    """`model.depth.depth_profile`'s figures: one per stream point (embedding, then each block), and one
    per block for the parameters' gradient."""

    loss: float
    stream_norm: tuple[float, ...]
    stream_grad: tuple[float, ...]
    similarity: tuple[float, ...]
    param_grad: tuple[float, ...]

    def values(self, key: str) -> tuple[float, ...]:
        return getattr(self, key)


@dataclass(frozen=True)
class LabRecord:
    """One model in the lab: its training record and its checked depth record."""

    training: TrainingRecord
    init: DepthProfile
    trained: DepthProfile

    @property
    def name(self) -> str:
        return self.training.name

    @property
    def n_layers(self) -> int:
        return len(self.init.param_grad)


class RecordError(ValueError):
    """A record the lab cannot show: `word` names the WORDS entry that says why, filled in with `values`."""

    def __init__(self, word: str, **values: object) -> None:
        super().__init__(pick(WORDS, word, "en", **values))
        self.word, self.values = word, values

    def say(self, lang: str) -> str:
        return pick(WORDS, self.word, lang, **self.values)


def read_profile(raw: object, n_layers: int) -> DepthProfile:
    """A depth profile out of the checkpoint's JSON, checked: RecordError says what is wrong."""
    if not isinstance(raw, dict):
        raise RecordError("bad_table")
    lengths = {"stream_norm": n_layers + 1, "stream_grad": n_layers + 1, "similarity": n_layers + 1}
    lengths["param_grad"] = n_layers
    lists: dict[str, tuple[float, ...]] = {}
    for key, length in lengths.items():
        values = raw.get(key)
        if not isinstance(values, list) or len(values) != length:
            raise RecordError("bad_length", what=key, n=length)
        try:
            lists[key] = tuple(float(v) for v in values)
        except (TypeError, ValueError):
            raise RecordError("bad_number", what=key) from None
    try:
        loss = float(raw.get("loss", math.nan))
    except (TypeError, ValueError):
        raise RecordError("bad_number", what="loss") from None
    return DepthProfile(loss=loss, **lists)


def lab_record(record: TrainingRecord) -> LabRecord:
    """The record with its depth figures checked against the model's depth (RecordError if they do not fit)."""
    depth = record.depth
    if not isinstance(depth, dict):
        raise RecordError("no_depth")
    if record.n_layers <= 0:
        raise RecordError("no_blocks")
    if not record.val_loss:
        raise RecordError("no_curve")
    init, trained = (read_profile(depth.get(when), record.n_layers) for when in ("init", "trained"))
    return LabRecord(record, init, trained)


def load_lab(folder: Path, names: tuple[str, ...] = FAMILY) -> tuple[list[LabRecord], list[tuple[str, RecordError]]]:
    """The family's records from `folder`, in order, and (name, why) for each one that is left out."""
    records: list[LabRecord] = []
    left_out: list[tuple[str, RecordError]] = []
    for name in names:
        path = folder / f"{name}.safetensors"
        training = read_training_record(path) if path.is_file() else None
        if training is None:
            left_out.append((name, RecordError("missing" if not path.is_file() else "no_training")))
            continue
        try:
            records.append(lab_record(training))
        except RecordError as error:
            left_out.append((name, error))
    return records, left_out


def how_often(k: int, n: int, lang: str, what: str) -> str:
    """How often `what` ("collapsed", "spiked") happened over n seeds: "in every seed" only when k = n, "in no
    seed" only when k = 0, else "in k of n seeds"."""
    thing = pick(WORDS, f"what_{what}", lang)
    if n > 0 and k == n:
        return pick(WORDS, "every_seed", lang, n=n, what=thing)
    if k == 0:
        return pick(WORDS, "no_seed", lang, n=n, what=thing)
    return pick(WORDS, "some_seeds", lang, k=k, n=n, what=thing)


def seed_sentence(variant: Variant, lang: str) -> str:
    """One variant over its seeds: how often it collapsed and spiked, and its final losses (— where it diverged)."""
    n = variant.cell.n
    losses = [variant.final_loss(i) for i in range(n)]
    finite = sorted(x for x in losses if x is not None)
    if not finite:
        span = "—"
    elif finite[0] == finite[-1]:
        span = f"{finite[0]:.3f}"
    else:
        span = f"{finite[0]:.3f}–{finite[-1]:.3f}"
    return pick(
        WORDS,
        "seed_sentence",
        lang,
        name=variant.name,
        collapsed=how_often(variant.collapsed, n, lang, "collapsed"),
        spiked=how_often(variant.spiked, n, lang, "spiked"),
        losses=span,
    )


def spread(values: list[float]) -> float:
    """max ÷ min of the positive finite values (1 when there are fewer than two)."""
    positive = [v for v in values if math.isfinite(v) and v > 0]
    return max(positive) / min(positive) if len(positive) > 1 else 1.0


def ratio_text(value: float) -> str:
    return figure(value) if math.isfinite(value) else "—"


def divide(a: float, b: float) -> float:
    return a / b if b else math.inf


class DepthLabScreen(LiveTrainingScreen):
    NAME = "depth"
    BINDINGS = [
        Binding("1", "next_left", "Left"),
        Binding("2", "next_right", "Right"),
        Binding("v", "next_view", "View"),
        Binding("t", "toggle_table", "Chart"),
        Binding("r", "run_live", "Train"),
        Binding("c", "cancel_live", "Cancel"),
        Binding("d", "drift", "Drift"),
    ]
    DEFAULT_CSS = """
    DepthLabScreen #depth-pair { height: auto; padding: 0 1; }
    DepthLabScreen #depth-note { height: auto; padding: 0 1; color: $text-muted; }
    DepthLabScreen #depth-body { height: 1fr; }
    DepthLabScreen #depth-chart { width: 1fr; height: 1fr; padding: 0 1; }
    DepthLabScreen #depth-table-box { width: 40; height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }
    DepthLabScreen #depth-table { width: auto; }
    DepthLabScreen #depth-status { height: auto; padding: 0 1; background: $boost; }
    DepthLabScreen.-narrow #depth-table-box { width: 1fr; padding: 0 1; }
    DepthLabScreen.-narrow.-digits #depth-chart { display: none; }
    DepthLabScreen.-narrow #depth-table-box { display: none; }
    DepthLabScreen.-narrow.-digits #depth-table-box { display: block; }
    DepthLabScreen.-family #depth-chart { display: none; }
    DepthLabScreen.-family #depth-table-box { display: block; width: 1fr; padding: 0 1; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.records, self.left_out = load_lab(SHIPPED_DIR)
        seeds = read_results(SHIPPED_RESULTS / "depth-seeds.jsonl.gz")
        self.seeds, self.seeds_problem = variants(seeds.runs), seeds.problem
        names = [r.name for r in self.records]
        pair = [names.index(n) for n in PAIR if n in names] if all(n in names for n in PAIR) else [0, 1]
        self.left, self.right = pair[0], pair[1]  # indices into `records`
        self.view = 0  # index into `views()`
        self.digits = True  # in a narrow window, the table instead of the chart (t switches)

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def take_options(self, options: dict[str, str]) -> None:
        """A link's `left`, `right` (model names) and `view` (a name of `DEPTH_LAB_VIEWS`); what the lab cannot
        show is one notice, and the rest is taken."""
        names = [r.name for r in self.records]
        wanted = {side: options[side] for side in ("left", "right") if side in options}
        missing = [name for name in wanted.values() if name not in names]
        if missing or len(set(wanted.values())) < len(wanted):
            self.notify(
                self.words("bad_option", what=", ".join(f"{k}={v}" for k, v in wanted.items())), severity="warning"
            )
        else:
            left = names.index(wanted["left"]) if "left" in wanted else self.left
            right = names.index(wanted["right"]) if "right" in wanted else self.right
            if left != right:
                self.left, self.right = left, right
        if "view" in options:
            if options["view"] in VIEWS:
                self.view = VIEWS.index(options["view"])
            else:
                self.notify(self.words("bad_option", what=f"view={options['view']}"), severity="warning")
        unknown = sorted(set(options) - {"left", "right", "view"})
        if unknown:
            self.notify(self.words("bad_option", what=", ".join(unknown)), severity="warning")

    @property
    def usable(self) -> bool:
        return len(self.records) >= 2

    @property
    def pair(self) -> tuple[LabRecord, LabRecord]:
        return self.records[self.left], self.records[self.right]

    def views(self) -> tuple[str, ...]:
        return VIEWS + (("live",) if self.live is not None else ())

    @property
    def view_key(self) -> str:
        return self.views()[self.view % len(self.views())]

    def live_settings(self) -> LiveSettings:
        left, right = self.pair
        return replace(LIVE, variants=(left.name, right.name))

    # -- the widgets --------------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        yield from (Static(id=f"depth-{part}") for part in ("pair", "note"))  # the two models; the view's reading
        with Horizontal(id="depth-body"):
            yield LineChart(id="depth-chart")
            with VerticalScroll(id="depth-table-box"):
                yield Static(id="depth-table")
        yield LiveStatic(id="depth-status")

    def on_mount(self) -> None:
        if self.left_out:  # one notice for all: a checkout without the weights would otherwise show thirteen
            reasons = [self.words("why", name=name, why=why.say(self.lang)) for name, why in self.left_out]
            self.notify(self.words("left_out", models=say(("; ", "；"), self.lang).join(reasons)), severity="warning")
        self.show_live_status(self.idle_text())
        self.redraw()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")
        self.set_class(self.digits, "-digits")
        self.refresh_bindings()
        self.call_after_refresh(self.redraw)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """t only where the chart and the table take turns: in a narrow window."""
        return self.narrow if action == "toggle_table" else True

    def idle_text(self) -> str:
        if not self.usable:
            return ""
        settings = self.live_settings()
        a, b = settings.variants
        key = "live_idle_short" if self.narrow else "live_idle"
        return self.words(key, a=a, b=b, steps=settings.steps, tokens=settings.tokens_per_step)

    @property
    def narrow(self) -> bool:
        return 0 < self.size.width < NARROW

    # -- drawing ------------------------------------------------------------------------------

    def redraw(self) -> None:
        chart = self.query_one("#depth-chart", LineChart)
        if not self.usable:
            self.query_one("#depth-pair", Static).update(self.words("too_few", n=len(self.records)))
            self.query_one("#depth-note", Static).update("")
            self.query_one("#depth-table", Static).update("")
            chart.set_series([])
            return
        self.query_one("#depth-pair", Static).update(Group(*(self.describe(side) for side in ("left", "right"))))
        key = self.view_key
        self.set_class(key in ("family", "seeds"), "-family")
        if key == "family":
            self.draw_family()
        elif key == "seeds":
            self.draw_seeds()
        elif key in ("loss", "live"):
            self.draw_loss(chart, live=key == "live")
        else:
            self.draw_layers(chart, key)

    def describe(self, side: str) -> Text:
        """One line per side: which model, how it is wired and trained, how its loss went, whether it diverged."""
        record = self.records[self.left if side == "left" else self.right]
        training = record.training
        recipe = training.recipe
        # (what, how much it matters): where the line is too long, the least telling go first
        parts = [(self.words("blocks", n=record.n_layers, d=recipe.get("d_model", "?")), 3)]
        parts.append((self.words(str(recipe.get("norm", "pre"))), 9))
        if not recipe.get("residual", True):
            parts.append((self.words("no_residual"), 9))
        warmup = int(recipe.get("warmup_steps", 0) or 0)
        parts.append((self.words("warmup", n=warmup) if warmup else self.words("no_warmup"), 5))
        parts.append((self.words("lr", lr=f"{float(recipe.get('learning_rate', 0)):.0e}".replace("e-0", "e-")), 4))
        first, last = training.val_loss[0][1], training.val_loss[-1][1]
        parts.append((self.words("loss_span", first=f"{first:.2f}", last=f"{last:.3f}"), 2))
        diverged = training.diverged
        live = self.live.diverged.get(record.name) if self.live is not None else None
        if diverged:
            what, value = diverged.get("what"), diverged.get("value")
            parts.append((self.words("diverged", step=diverged.get("step"), what=what, value=value), 10))
        elif live:
            parts.append((self.words("diverged_live", step=live.get("step")), 10))
        else:
            parts.append((self.words("not_diverged"), 1))
        colour, marker = SERIES_LOOK.get(record.name, ("#d0d0d0", "?"))
        comma = say((", ", "，"), self.lang)
        while True:
            line = Text()
            line.append(f"{self.words('side_' + side)} ", style="bold")
            line.append(f"━{marker}━ ", style=f"bold {colour}")
            line.append(record.name, style="bold")
            line.append(say((": ", "："), self.lang) + comma.join(text for text, _ in parts))
            least = min(parts, key=lambda part: part[1])
            if line.cell_len <= self.size.width - 2 or least[1] >= 9:
                return line
            parts.remove(least)

    def view_title(self, key: str, explain: str) -> Text:
        """The view's name in bold, then what to read in it."""
        number = self.words("view_of", i=self.views().index(key) + 1, n=len(self.views()))
        title = Text(f"{number}{say((' ', ''), self.lang)}{self.words(f'title_{key}')}", style="bold")
        if explain:
            title.append(f"{say((' — ', '——'), self.lang)}{explain}", style="")
        return title

    def draw_loss(self, chart: LineChart, live: bool) -> None:
        left, right = self.pair
        if live and self.live is not None:
            settings = self.live.settings
            curves = {name: self.live.val_loss.get(name, []) for name in settings.variants}
            baselines, steps = self.live.baselines, settings.steps
            a, b = settings.variants
            explain = self.words("note_live", a=a, b=b, steps=steps, tokens=settings.tokens_per_step)
        else:
            curves = {left.name: left.training.val_loss, right.name: right.training.val_loss}
            baselines, steps = left.training.baselines, max(left.training.steps, right.training.steps)
            explain = ""
        vocab = left.training.vocab_size
        uniform = math.log(vocab) if vocab > 0 else math.nan
        series = [loss_curve(name, points) for name, points in curves.items()]
        series += baseline_series(baselines, (0, steps), self.lang)
        if math.isfinite(uniform):
            label = f"{self.words('uniform')} {uniform:.3f}"
            series.append(Series(label, (0, steps), (uniform, uniform), *UNIFORM_LOOK, True))
        if not live:
            explain = self.words(
                "note_loss",
                unigram=f"{baselines.get('unigram', math.nan):.3f}",
                bigram=f"{baselines.get('bigram', math.nan):.3f}",
                v=vocab,
                uniform=f"{uniform:.3f}",
            )
        chart.set_series(
            series,
            x_label=self.words("x_steps"),
            y_label=self.words("y_loss"),
            x_range=(0, steps),
            y_range=loss_y_range(series),
            log_y=True,
        )
        self.show_view("live" if live else "loss", explain, self.loss_table(curves, steps if live else None))

    def loss_table(self, curves: dict[str, list[tuple[int, float]]], live_steps: int | None) -> Table:
        """Step | one column per model: the recorded steps of `LOSS_STEPS` (for a live run: ten of its steps)."""
        names = list(curves)
        by_step = {name: dict(points) for name, points in curves.items()}
        recorded = sorted({step for points in by_step.values() for step in points})
        if live_steps is None:
            rows = [s for s in LOSS_STEPS if any(s in by_step[n] for n in names)]
        else:
            every = max(1, math.ceil(len(recorded) / 10))  # ten rows or so, the last one always
            rows = [s for i, s in enumerate(recorded) if i % every == every - 1 or i == len(recorded) - 1]
        table = self.new_table([self.words("step"), *(self.words("left"), self.words("right"))])
        for step in rows:
            cells = [f"{by_step[n][step]:.3f}" if step in by_step[n] else self.words("absent") for n in names]
            table.add_row(str(step), *cells)
        return table

    def show_view(self, key: str, explain: str, table: Table | Group) -> None:
        """The view's title and reading above, the table beside the chart, as wide as its digits (and a scroll
        bar where it is taller than the room). Where the table takes the chart's place (a narrow window) the
        reading goes below the table: so the title is one line and the table's last row still shows."""
        box = self.query_one("#depth-table-box", VerticalScroll)
        note = self.query_one("#depth-note", Static)
        if self.narrow or key in ("family", "seeds"):  # the table takes the width the chart leaves (CSS)
            box.styles.width = None
        else:
            box.styles.width = self.app.console.measure(table).maximum + 3  # the right padding, the scroll bar
        if self.narrow and self.digits and key not in ("family", "seeds"):
            note.update(self.view_title(key, ""))
            self.query_one("#depth-table", Static).update(Group(table, Text(explain, style="dim")))
        else:
            note.update(self.view_title(key, explain))
            self.query_one("#depth-table", Static).update(table)

    def new_table(self, headers: list[str]) -> Table:
        table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
        for header in headers:
            table.add_column(header, justify="right", no_wrap=True)
        return table

    def draw_family(self) -> None:
        """Every model of the lab, a row each: its loss, where it diverged, and the per-layer figures that
        tell the family apart, each at init → trained. Columns that do not fit the width are left out, the
        least telling first."""
        arrow = self.words("arrow", a="{a}", b="{b}")

        def pair(values: tuple[float, float]) -> str:
            return arrow.format(a=figure(values[0]), b=figure(values[1]))

        def diverged(record: LabRecord) -> str:
            step = (record.training.diverged or {}).get("step")
            live = self.live.diverged.get(record.name) if self.live is not None else None
            if step is None and live:
                step = live.get("step")
            return str(step) if step is not None else self.words("absent")

        columns: list[tuple[str, Callable[[LabRecord], str]]] = [
            (
                "col_loss",
                lambda r: arrow.format(a=f"{r.training.val_loss[0][1]:.2f}", b=f"{r.training.val_loss[-1][1]:.3f}"),
            ),
            ("col_diverged", diverged),
            ("col_grad_first", lambda r: pair((r.init.param_grad[0], r.trained.param_grad[0]))),
            ("col_grad_last", lambda r: pair((r.init.param_grad[-1], r.trained.param_grad[-1]))),
            ("col_similarity", lambda r: pair((r.init.similarity[-1], r.trained.similarity[-1]))),
            ("col_norm", lambda r: pair((r.init.stream_norm[-1], r.trained.stream_norm[-1]))),
        ]
        left, right = self.pair
        sides = {left.name: self.words("left"), right.name: self.words("right")}
        rows = [[f"{sides.get(r.name, ' ')} {r.name}", *(cell(r) for _, cell in columns)] for r in self.records]
        room = max(20, self.size.width - 4)
        while True:
            table = self.new_table([self.words("col_model"), *(self.words(key) for key, _ in columns)])
            table.columns[0].justify = "left"
            for row, record in zip(rows, self.records, strict=True):
                table.add_row(*row[: len(columns) + 1], style="bold" if record.name in sides else "")
            if self.app.console.measure(table).maximum <= room or len(columns) <= 2:
                break
            columns.pop()
        explain = self.words("short_family" if self.narrow else "note_family")
        self.show_view("family", explain, table)

    def draw_seeds(self) -> None:
        """The depth family over seeds, a row a variant: how many seeds, the final loss of each, how often it
        collapsed and spiked; below, one sentence a variant (`seed_sentence`)."""
        if not self.seeds:
            self.show_view("seeds", self.words("no_seeds", problem=self.seeds_problem or "—"), self.new_table([]))
            return
        columns = ["col_model", "col_seeds", "col_losses", "col_collapsed", "col_spiked"]
        table = self.new_table([self.words(key) for key in columns])
        table.columns[0].justify = "left"
        for v in self.seeds:
            losses = " ".join("—" if x is None else f"{x:.3f}" for x in map(v.final_loss, range(v.cell.n)))
            n = v.cell.n
            table.add_row(v.name, str(n), losses, f"{v.collapsed}/{n}", f"{v.spiked}/{n}")
        explain = self.words(
            "short_seeds" if self.narrow else "note_seeds",
            collapse=COLLAPSED_SIMILARITY,
            jump=f"{SPIKE_JUMP:g}",
            window=SPIKE_WINDOW,
        )
        sentences = [seed_sentence(v, self.lang) for v in self.seeds]
        box = Group(table, Text(""), *(Text(line) for line in sentences))
        self.show_view("seeds", explain, box)

    def draw_layers(self, chart: LineChart, key: str) -> None:
        """A per-layer figure of both models at init (dashed) and trained, the table of its digits, the reading."""
        left, right = self.pair
        offset = 0 if key == "param_grad" else 1  # stream points start with the embedding, at x = −1
        series: list[Series] = []
        for record, init_marker in ((left, INIT_MARKERS[0]), (right, INIT_MARKERS[1])):
            colour, marker = SERIES_LOOK.get(record.name, ("#d0d0d0", "?"))
            for when, profile in (("init", record.init), ("trained", record.trained)):
                values = profile.values(key)
                xs = [i - offset for i in range(len(values))]
                dashed = when == "init"
                label = f"{record.name} {self.words(when)}"
                series.append(Series(label, xs, values, colour, init_marker if dashed else marker, dashed))
        ys = [y for s in series for y in s.ys]
        log_y = spread(ys) > LOG_SPAN
        y_label = self.words(f"y_{key}") + (self.words("log_scale") if log_y else "")
        depth = max(left.n_layers, right.n_layers)
        y_range = None
        if key == "similarity" and not log_y:
            finite = [y for y in ys if math.isfinite(y)]
            y_range = (min(0.0, min(finite, default=0.0)), 1.0)
        chart.set_series(
            series,
            x_label=self.words("x_blocks" if offset == 0 else "x_layers"),
            y_label=y_label,
            x_range=(-offset, depth - 1),  # a block's parameters start at block 0, the stream at the embedding
            y_range=y_range,
            log_y=log_y,
        )
        self.show_view(key, self.reading(key), self.layer_table(key, offset, depth))

    def layer_table(self, key: str, offset: int, depth: int) -> Table:
        """Layer | L init | L trained | R init | R trained, every figure as digits; a 4-block model has — below."""
        left, right = self.pair
        headers = [self.words("layer")]
        for side in ("left", "right"):
            headers += [self.words(f"column_{when}", side=self.words(side)) for when in ("init", "trained")]
        table = self.new_table(headers)
        columns = [left.init.values(key), left.trained.values(key), right.init.values(key), right.trained.values(key)]
        for row in range(depth + 1 - (1 - offset)):
            label = self.words("emb") if row < offset else self.words("block", i=row - offset)
            cells = [figure(values[row]) if row < len(values) else self.words("absent") for values in columns]
            table.add_row(label, *cells)
        return table

    def reading(self, key: str) -> str:
        """The view's point in one line, with the numbers: a ratio of two layers, or the last layer's figure."""
        short = self.narrow
        pair_word = "short_pair" if short else "ratio_pair"
        parts = []
        for record in self.pair:
            figures = []
            for profile in (record.init, record.trained):
                values = profile.values(key)
                if key == "similarity":
                    figures.append(figure(values[-1]))
                elif key == "stream_norm":
                    figures.append(ratio_text(divide(values[-1], values[0])))
                else:  # the gradients: how much of the last block's reaches the first
                    first = values[0 if key == "param_grad" else 1]
                    figures.append(ratio_text(divide(first, values[-1])))
            parts.append(self.words(pair_word, name=record.name, init=figures[0], trained=figures[1]))
        ratios = say(("; ", "；"), self.lang).join(parts)
        kind = {"stream_norm": "stream_norm", "stream_grad": "grad", "param_grad": "grad", "similarity": "similarity"}
        return self.words(("short_" if short else "note_") + kind[key], ratios=ratios)

    # -- actions ------------------------------------------------------------------------------

    def _next(self, index: int, other: int) -> int:
        """The next model after `index` that is not the other side's."""
        n = len(self.records)
        following = (index + 1) % n
        return (following + 1) % n if following == other else following

    def action_next_left(self) -> None:
        if self.usable:
            self.left = self._next(self.left, self.right)
            self.after_pair_change()

    def action_next_right(self) -> None:
        if self.usable:
            self.right = self._next(self.right, self.left)
            self.after_pair_change()

    def after_pair_change(self) -> None:
        if self.live is None or self.live.finished:
            self.show_live_status(self.idle_text())
        if self.view_key == "live":
            self.view = 0
        self.redraw()

    def action_next_view(self) -> None:
        self.view = (self.view + 1) % len(self.views())
        self.redraw()

    def action_run_live(self) -> None:
        if not self.usable:
            self.notify(self.words("too_few", n=len(self.records)), severity="warning")
            return
        if self.start_live(self.live_settings()):
            self.view = self.views().index("live")
            self.redraw()

    def action_cancel_live(self) -> None:
        self.cancel_live()

    def action_toggle_table(self) -> None:
        self.digits = not self.digits
        self.set_class(self.digits, "-digits")
        self.redraw()

    def action_drift(self) -> None:
        cast(Host, self.app).open_experiment("drift")

    # -- the live run (`LiveTrainingScreen`) ----------------------------------------------------------

    def live_changed(self, curves: bool) -> None:
        if curves and self.view_key == "live":
            self.redraw()
        elif curves and self.live is not None and self.live.finished:
            self.redraw()  # a divergence shows on the pair lines

    def show_live_status(self, text: str) -> None:
        self.query_one("#depth-status", LiveStatic).show_content(text, "status")
