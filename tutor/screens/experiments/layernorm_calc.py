"""The LayerNorm calculator: type a vector (and γ, β, ε), see every line of LayerNorm worked out.

The numbers are `model.norm.layer_norm`'s own, read from its hooks (μ, √(σ²+ε), x̂, γ·x̂+β), in
float64 so that the lesson's hand-worked example comes out digit for digit. alt+r turns it into an RMSNorm
calculator (`model.norm.rms_norm`: rms = √(mean(x²)+ε), x̂ = x / rms, γ·x̂; no μ taken away, no β), the mode
it opens in for a model whose norms are RMSNorm. alt+v turns to a prompt's whole [tokens × d_model] matrix,
through LayerNorm and BatchNorm side by side (see `norm_axes`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, Input, Label, Static

from model import GPT, layer_norm, rms_norm
from tutor.i18n import pick
from tutor.lessons.links import LAYERNORM_CALC_VIEWS
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.base import ExperimentScreen
from tutor.screens.experiments.norm_axes import NormAxesView
from tutor.sentences import epsilon_against
from tutor.step_words import step_label
from tutor.widgets.live_static import LiveStatic

# action → footer label; short, so that all five keys of the vector view fit beside the palette key at 80 columns
KEY_WORDS: dict[str, tuple[str, str]] = {
    "back": ("Back", "返回"),
    "example": ("Example", "示例"),
    "from_model": ("Model", "模型"),
    "toggle_view": ("BatchNorm", "对比 BN"),
    "toggle_kind": ("RMSNorm", "改用 RMSNorm"),
    "next_norm(1)": ("Norm", "归一化层"),
    "pick_token(1)": ("Token", "词元"),
    "change_token(1)": ("Change it", "换掉它"),
}
VIEW_KEY_WORDS: dict[str, tuple[str, str]] = {"toggle_view": ("One vector", "单个向量")}  # alt+v in the BatchNorm view
RMS_KEY_WORDS: dict[str, tuple[str, str]] = {"toggle_kind": ("LayerNorm", "改用 LayerNorm")}  # alt+r in RMSNorm mode
KINDS = ("layer", "rms")  # the calculator's modes: LayerNorm, RMSNorm
VIEWS = LAYERNORM_CALC_VIEWS  # a link's `view`

WORDS: dict[str, tuple[str, str]] = {
    "x_placeholder": ("numbers, e.g. 1 2 3 4 or 1, -2.5, 3e2", "数字，例如 1 2 3 4 或 1, -2.5, 3e2"),
    "gamma_placeholder": ("γ: empty = all 1", "γ：留空 = 全为 1"),
    "beta_placeholder": ("β: empty = all 0", "β：留空 = 全为 0"),
    "eps_placeholder": ("ε: empty = 1e-5", "ε：留空 = 1e-5"),
    "empty": ("Type at least one number for x.", "请为 x 至少输入一个数。"),
    "not_number": ("{name}: “{word}” is not a number.", "{name}：“{word}” 不是数字。"),
    "not_finite": (
        "{name}: numbers must be finite (no inf or nan).",
        "{name}：数字必须是有限值（不能是 inf 或 nan）。",
    ),
    "wrong_length": (
        "{name} has {n} numbers but x has {d}: give one number, {d} numbers, or leave it empty.",
        "{name} 有 {n} 个数，而 x 有 {d} 个：请给一个数、{d} 个数，或留空。",
    ),
    "bad_eps": ("ε must be one number ≥ 0, e.g. 1e-5.", "ε 必须是一个 ≥ 0 的数，例如 1e-5。"),
    "too_big": ("These numbers are too large: (x − μ)² overflows.", "这些数太大：(x − μ)² 溢出。"),
    "zero_scale": (
        "σ² + ε = 0: every x is the same and ε is 0, so x̂ would divide by zero. Use ε > 0.",
        "σ² + ε = 0：所有 x 都相同且 ε 为 0，x̂ 会除以零。请用 ε > 0。",
    ),
    "step_mean": ("1 mean", "1 均值"),
    "step_var": ("2 variance", "2 方差"),
    "step_scale": ("3 scale", "3 缩放"),
    "step_xhat": ("4 normalise", "4 归一化"),
    "step_y": ("5 γ and β", "5 γ 与 β"),
    "xhat_formula": ("x̂ = (x − μ) / √(σ² + ε): the x̂ column", "x̂ = (x − μ) / √(σ² + ε)：见 x̂ 列"),
    "y_formula": ("y = γ · x̂ + β: the y column", "y = γ · x̂ + β：见 y 列"),
    # ‖x̂‖ against √d: which of the three cases the numbers are (see `norm_sentence`)
    "norm_close": (
        "‖x̂‖ = {norm} against √d = √{d} = {root}: x̂ has mean {mean} and variance σ²/(σ²+ε) = {ratio}, "
        "so Σ x̂ⱼ² = d · {ratio} ≈ d.",
        "‖x̂‖ = {norm}，对比 √d = √{d} = {root}：x̂ 的均值为 {mean}，方差 σ²/(σ²+ε) = {ratio}，"
        "所以 Σ x̂ⱼ² = d · {ratio} ≈ d。",
    ),
    "norm_constant": (
        "‖x̂‖ = {norm}, not √d = √{d} = {root}: every xⱼ equals μ, so σ = 0 and every x − μ is 0; "
        "x̂ = 0 / √(0 + ε) = 0. ε = {eps} is what keeps this division finite (without it: 0 / 0).",
        "‖x̂‖ = {norm}，不是 √d = √{d} = {root}：每个 xⱼ 都等于 μ，所以 σ = 0，每个 x − μ 都是 0；"
        "x̂ = 0 / √(0 + ε) = 0。是 ε = {eps} 让这个除法保持有限（没有它就是 0 / 0）。",
    ),
    "norm_rounding": (
        "‖x̂‖ = {norm} ≈ 0, not √d = √{d} = {root}: every xⱼ is the same number, so σ² is 0 but for "
        "float rounding ({var}); x̂ = (x − μ) / √(σ² + ε) ≈ 0 / √ε ≈ 0. ε = {eps} is what keeps this division "
        "finite.",
        "‖x̂‖ = {norm} ≈ 0，不是 √d = √{d} = {root}：每个 xⱼ 都是同一个数，σ² 只剩浮点舍入误差（{var}），"
        "本应是 0；x̂ = (x − μ) / √(σ² + ε) ≈ 0 / √ε ≈ 0。是 ε = {eps} 让这个除法保持有限。",
    ),
    "norm_between": (
        "‖x̂‖ = {norm}, below √d = √{d} = {root}: {against}, so x̂'s variance "
        "σ²/(σ²+ε) = {ratio} is below 1 and ‖x̂‖ = √(d · {ratio}). With ε = 0 it would be √d exactly.",
        "‖x̂‖ = {norm}，小于 √d = √{d} = {root}：{against}，所以 x̂ 的方差 "
        "σ²/(σ²+ε) = {ratio} 小于 1，‖x̂‖ = √(d · {ratio})。若 ε = 0，它正好是 √d。",
    ),
    "smaller": ("σ² = {var} is smaller than ε = {eps}", "σ² = {var} 小于 ε = {eps}"),
    "not_negligible": ("ε = {eps} is not negligible next to σ² = {var}", "ε = {eps} 相对 σ² = {var} 不可忽略"),
    "source": (
        "Computed by model.norm.layer_norm (its hooks hook_mean, hook_scale, hook_xhat, hook_normalized), in float64.",
        "由 model.norm.layer_norm 计算（读取它的钩子 hook_mean、hook_scale、hook_xhat、hook_normalized），float64。",
    ),
    "model_source": (
        "x is {model}'s vector entering {step} at token {pos} “{piece}” of “{prompt}”; γ, β are that LayerNorm's. "
        "The model's own y differs by at most {diff} (it computes in float32).",
        "x 是 {model} 在 “{prompt}” 的第 {pos} 个词元 “{piece}” 处进入 {step} 的向量；γ、β 是这个 LayerNorm 的。"
        "与模型自己算出的 y 最多相差 {diff}（模型用 float32 计算）。",
    ),
    "no_model_norm": ("{model} has no LayerNorm to take a vector from.", "{model} 没有 LayerNorm，无法取向量。"),
    "no_prompt": ("The main screen's prompt is empty: type one there first.", "主界面的提示词为空：请先在那里输入。"),
    "column_j": ("j", "j"),
    # the RMSNorm mode (alt+r): no μ taken away, no β
    "rms_heading": (
        "RMSNorm: y = γ · x / √(mean(x²) + ε) — LayerNorm without the mean: nothing centred, no β",
        "RMSNorm：y = γ · x / √(mean(x²) + ε)——去掉均值的 LayerNorm：不做中心化，也没有 β",
    ),
    "rms_step_squares": ("1 mean square", "1 均方"),
    "rms_step_scale": ("2 rms", "2 均方根"),
    "rms_step_xhat": ("3 normalise", "3 归一化"),
    "rms_step_y": ("4 γ", "4 γ"),
    "rms_xhat_formula": ("x̂ = x / rms: the x̂ column (nothing subtracted)", "x̂ = x / rms：见 x̂ 列（什么也不减）"),
    "rms_y_formula": ("y = γ · x̂: the y column (no β to add)", "y = γ · x̂：见 y 列（没有 β 可加）"),
    "rms_zero_scale": (
        "mean(x²) + ε = 0: every x is 0 and ε is 0, so x̂ would divide by zero. Use ε > 0.",
        "mean(x²) + ε = 0：所有 x 都是 0，ε 也是 0，x̂ 会除以零。请用 ε > 0。",
    ),
    "rms_too_big": ("These numbers are too large: x² overflows.", "这些数太大：x² 溢出。"),
    # ‖x̂‖ against √d for RMSNorm: mean(x̂²) = mean(x²)/(mean(x²)+ε) (see `rms_norm_sentence`)
    "rms_norm_close": (
        "‖x̂‖ = {norm} against √d = √{d} = {root}: mean(x̂²) = mean(x²)/(mean(x²)+ε) = {ratio}, "
        "so Σ x̂ⱼ² = d · {ratio} ≈ d.",
        "‖x̂‖ = {norm}，对比 √d = √{d} = {root}：mean(x̂²) = mean(x²)/(mean(x²)+ε) = {ratio}，"
        "所以 Σ x̂ⱼ² = d · {ratio} ≈ d。",
    ),
    "rms_norm_zero": (
        "‖x̂‖ = {norm}, not √d = √{d} = {root}: every xⱼ is 0, so x̂ = 0 / √(0 + ε) = 0. "
        "ε = {eps} is what keeps this division finite (without it: 0 / 0).",
        "‖x̂‖ = {norm}，不是 √d = √{d} = {root}：每个 xⱼ 都是 0，所以 x̂ = 0 / √(0 + ε) = 0。"
        "是 ε = {eps} 让这个除法保持有限（没有它就是 0 / 0）。",
    ),
    "rms_norm_between": (
        "‖x̂‖ = {norm}, below √d = √{d} = {root}: mean(x²) = {ms} is not large next to ε = {eps}, so "
        "mean(x̂²) = mean(x²)/(mean(x²)+ε) = {ratio} is below 1 and ‖x̂‖ = √(d · {ratio}). "
        "With ε = 0 it would be √d exactly.",
        "‖x̂‖ = {norm}，小于 √d = √{d} = {root}：mean(x²) = {ms} 相对 ε = {eps} 不算大，所以 "
        "mean(x̂²) = mean(x²)/(mean(x²)+ε) = {ratio} 小于 1，‖x̂‖ = √(d · {ratio})。若 ε = 0，它正好是 √d。",
    ),
    "rms_centre": (
        "x̂ has mean {m} = μ / rms, with μ = {mu} the mean of x: RMSNorm takes no mean away, so x̂ keeps x's "
        "own (LayerNorm's x̂ has mean 0).",
        "x̂ 的均值是 {m} = μ / rms，μ = {mu} 是 x 的均值：RMSNorm 不减均值，x 原有的均值就留在 x̂ 里"
        "（LayerNorm 的 x̂ 均值为 0）。",
    ),
    "rms_source": (
        "Computed by model.norm.rms_norm (its hooks hook_scale, hook_xhat, hook_normalized), in float64.",
        "由 model.norm.rms_norm 计算（读取它的钩子 hook_scale、hook_xhat、hook_normalized），float64。",
    ),
    "rms_model_source": (
        "x is {model}'s vector entering {step} at token {pos} “{piece}” of “{prompt}”; γ is that RMSNorm's. "
        "The model's own y differs by at most {diff} (it computes in float32).",
        "x 是 {model} 在 “{prompt}” 的第 {pos} 个词元 “{piece}” 处进入 {step} 的向量；γ 是这个 RMSNorm 的。"
        "与模型自己算出的 y 最多相差 {diff}（模型用 float32 计算）。",
    ),
    "bad_option": (
        "layernorm-calc: no {what} (views: vector, batchnorm)",
        "layernorm-calc：没有 {what}（视图：vector、batchnorm）",
    ),
}

_SEPARATORS = re.compile(r"[\s,，;；]+")


class InputProblem(ValueError):
    """Input that cannot be used; the message is for the learner, in their language."""


def parse_numbers(text: str) -> list[float]:
    """Numbers separated by spaces or commas (also Chinese commas); "−" counts as a minus sign.
    Raises `ValueError` naming the first word that is not a number."""
    words = [w for w in _SEPARATORS.split(text.strip().strip("[]()")) if w]
    numbers = []
    for word in words:
        try:
            numbers.append(float(word.replace("−", "-")))
        except ValueError:
            raise ValueError(word) from None
    return numbers


def number_text(value: float, decimals: int = 4) -> str:
    """A number as a lesson writes it: at most `decimals` decimals, no trailing zeros, "−" for minus."""
    if value != 0 and (abs(value) >= 1e7 or abs(value) < 10 ** (-decimals)):
        text = f"{value:.{decimals}g}"
    else:
        text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text.replace("-", "−")


@dataclass(frozen=True)
class Worked:
    """One LayerNorm worked out: the inputs and what each hook recorded; or one RMSNorm (`kind` "rms")."""

    x: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray  # an RMSNorm's: 0 (it has none)
    eps: float
    mean: float  # hook_mean; an RMSNorm's: x's own mean, which it leaves in
    var: float  # mean((x − μ)²), the line the hooks do not record; an RMSNorm's: mean(x²)
    scale: float  # hook_scale = √(σ² + ε); an RMSNorm's: rms = √(mean(x²) + ε)
    x_hat: np.ndarray  # hook_xhat
    y: np.ndarray  # hook_normalized
    kind: str = "layer"


def work_out(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> Worked:
    """Run `model.norm.layer_norm` on one vector and keep what its hooks saw."""
    seen: dict[str, np.ndarray] = {}

    def hook(name: str, value: np.ndarray) -> np.ndarray:
        seen[name] = value
        return value

    with np.errstate(all="ignore"):  # overflow and 0/0 show up as non-finite numbers, checked by the caller
        layer_norm(x, gamma, beta, eps, hook)
        mean = float(seen["hook_mean"][0])
        var = float(((x - mean) ** 2).mean())
    return Worked(
        x, gamma, beta, eps, mean, var, float(seen["hook_scale"][0]), seen["hook_xhat"], seen["hook_normalized"]
    )


def work_out_rms(x: np.ndarray, gamma: np.ndarray, eps: float) -> Worked:
    """Run `model.norm.rms_norm` on one vector and keep what its hooks saw (`var` is mean(x²), `mean` x's μ)."""
    seen: dict[str, np.ndarray] = {}

    def hook(name: str, value: np.ndarray) -> np.ndarray:
        seen[name] = value
        return value

    with np.errstate(all="ignore"):
        rms_norm(x, gamma, eps, hook)
        mean_square = float((x * x).mean())
    return Worked(
        x,
        gamma,
        np.zeros_like(x),
        eps,
        float(x.mean()),
        mean_square,
        float(seen["hook_scale"][0]),
        seen["hook_xhat"],
        seen["hook_normalized"],
        "rms",
    )


CLOSE = 0.999  # ‖x̂‖ / √d from here on is "≈ √d": σ² is at least about 500 ε


def norm_sentence(w: Worked, lang: str) -> str:
    """What ‖x̂‖ says, against √d, in words chosen by the numbers themselves: close to √d (σ² ≫ ε), 0
    (a constant vector: σ = 0, and ε alone keeps x̂ = 0 / √(0 + ε) finite), or in between (σ² not large
    next to ε, which then shrinks x̂)."""
    d = len(w.x)
    norm, root = float(np.linalg.norm(w.x_hat)), math.sqrt(d)
    values = dict(
        norm=number_text(norm),
        d=d,
        root=number_text(root),
        mean=number_text(round(float(w.x_hat.mean()), 10)),  # 1e-17 is rounding, not a mean
        ratio=number_text(float((w.x_hat**2).mean()), 6),  # x̂'s variance, σ²/(σ²+ε), from x̂ itself
        var=number_text(w.var),
        eps=f"{w.eps:g}",
    )
    if w.var == 0:
        key = "norm_constant"
    elif bool(np.all(w.x == w.x[0])):  # the same number d times, yet μ came out a rounding off it
        key = "norm_rounding"
    elif norm >= CLOSE * root:
        key = "norm_close"
    else:
        key = "norm_between"
        against = epsilon_against(values["var"], values["eps"])  # the two numbers as the sentence shows them
        values["against"] = pick(WORDS, against.key, lang, **values)
    return pick(WORDS, key, lang, **values)


def rms_norm_sentence(w: Worked, lang: str) -> str:
    """RMSNorm's ‖x̂‖ against √d, in words chosen by the numbers: mean(x̂²) = mean(x²)/(mean(x²)+ε), so close to
    √d when mean(x²) ≫ ε, 0 for x = 0 (ε alone keeps 0 / √ε finite), in between otherwise."""
    d = len(w.x)
    norm, root = float(np.linalg.norm(w.x_hat)), math.sqrt(d)
    values = dict(
        norm=number_text(norm),
        d=d,
        root=number_text(root),
        ratio=number_text(float((w.x_hat**2).mean()), 6),  # mean(x̂²), from x̂ itself
        ms=number_text(w.var),
        eps=f"{w.eps:g}",
    )
    if w.var == 0:
        key = "rms_norm_zero"
    elif norm >= CLOSE * root:
        key = "rms_norm_close"
    else:
        key = "rms_norm_between"
    return pick(WORDS, key, lang, **values)


def rms_centre_sentence(w: Worked, lang: str) -> str:
    """What RMSNorm leaves of x's mean: x̂'s mean is μ / rms (0 only when x's own mean is)."""
    m = number_text(round(float(w.x_hat.mean()), 10))  # 1e-17 is rounding, not a mean
    return pick(WORDS, "rms_centre", lang, m=m, mu=number_text(round(w.mean, 10)))


def steps_grid(*rows: tuple[str, str]) -> Table:
    """The worked steps, one (name, computation) a row."""
    steps = Table.grid(padding=(0, 2))
    steps.add_column(style="bold")
    steps.add_column()
    for name, computation in rows:
        steps.add_row(name, computation)
    return steps


def values_table(headers: tuple[str, ...], rows: Iterable[tuple[float, ...]]) -> Table:
    """Every coordinate j with its values, one row each, right-aligned under `headers` (the first is j's)."""
    table = Table(box=None, padding=(0, 1), header_style="bold", show_edge=False)
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    for j, values in enumerate(rows):
        table.add_row(str(j), *(number_text(v) for v in values))
    return table


class LayerNormCalcScreen(ExperimentScreen):
    NAME = "layernorm-calc"
    BINDINGS = [
        # alt+letters, as the main screen's alt+n and alt+t (F2, F3, F4 keep their meaning everywhere; not alt+b:
        # a terminal sends ESC b, which Textual reads as ctrl+left); priority: the fields would type the letter
        Binding("alt+v", "toggle_view", "BatchNorm", key_display="alt+v", priority=True),
        Binding("alt+e", "example", "Example", key_display="alt+e", priority=True),
        Binding("alt+m", "from_model", "Model", key_display="alt+m", priority=True),
        Binding("alt+r", "toggle_kind", "RMSNorm", key_display="alt+r", priority=True),
        Binding("f6", "next_norm(1)", "Norm"),
        Binding("shift+f6", "next_norm(-1)", show=False),
        # priority: the prompt would move its cursor with these keys
        Binding("alt+right", "pick_token(1)", "Token", key_display="alt+←→", priority=True),
        Binding("alt+left", "pick_token(-1)", show=False, priority=True),
        Binding("alt+up", "change_token(1)", "Change it", key_display="alt+↑↓", priority=True),
        Binding("alt+down", "change_token(-1)", show=False, priority=True),
    ]
    VECTOR_ACTIONS = ("example", "from_model", "toggle_kind")
    BATCH_ACTIONS = ("next_norm", "pick_token", "change_token")
    DEFAULT_CSS = """
    LayerNormCalcScreen .ln-row { height: 1; padding: 0 1; margin-top: 1; }
    LayerNormCalcScreen .ln-row Label { width: 3; }
    LayerNormCalcScreen .ln-row Input { width: 1fr; margin-right: 1; }
    LayerNormCalcScreen #ln-eps { width: 16; }
    LayerNormCalcScreen #ln-problem { height: auto; padding: 0 1; color: $warning; }
    LayerNormCalcScreen #ln-scroll { height: 1fr; padding: 0 1; }
    LayerNormCalcScreen ContentSwitcher, LayerNormCalcScreen #ln-vector { height: 1fr; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, {**KEY_WORDS, **RMS_KEY_WORDS} if gpt.config.is_rms else KEY_WORDS, lang)
        self.worked: Worked | None = None
        self.model_note = ""
        self.view = VIEWS[0]
        self.kind = "rms" if gpt.config.is_rms else "layer"  # opens on the model's own norm

    def words(self, key: str, **values: object) -> str:
        return pick(WORDS, key, self.lang, **values)

    def compose_body(self) -> ComposeResult:
        with ContentSwitcher(initial=f"ln-{self.view}"):
            with Vertical(id="ln-vector"):
                with Horizontal(classes="ln-row"):
                    yield Label("x")
                    yield Input("1 2 3 4", placeholder=self.words("x_placeholder"), id="ln-x", compact=True)
                with Horizontal(classes="ln-row"):
                    yield Label("γ")
                    yield Input(placeholder=self.words("gamma_placeholder"), id="ln-gamma", compact=True)
                    yield Label("β", id="ln-beta-label")
                    yield Input(placeholder=self.words("beta_placeholder"), id="ln-beta", compact=True)
                    yield Label("ε")
                    yield Input("1e-5", placeholder=self.words("eps_placeholder"), id="ln-eps", compact=True)
                yield Static("", id="ln-problem")
                with VerticalScroll(id="ln-scroll"):
                    yield LiveStatic(id="ln-result")
            yield NormAxesView(self.gpt, self.prompt, self.lang, id="ln-batchnorm")

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = False  # blinking costs bandwidth over SSH
        self.show_kind()
        self.recompute(notify=False)
        self.show_view()

    def key_words(self) -> dict[str, tuple[str, str]]:
        """The footer's words for the view and the mode shown."""
        batch = VIEW_KEY_WORDS if self.view == "batchnorm" else {}
        return {**KEY_WORDS, **batch, **(RMS_KEY_WORDS if self.kind == "rms" else {})}

    def show_kind(self) -> None:
        """β's field only where there is a β: LayerNorm's mode."""
        for selector in ("#ln-beta", "#ln-beta-label"):
            self.query_one(selector).display = self.kind == "layer"

    def action_toggle_kind(self) -> None:
        """alt+r: LayerNorm ↔ RMSNorm on the same x, γ and ε."""
        self.kind = KINDS[1 - KINDS.index(self.kind)]
        self.model_note = ""
        self.show_kind()
        localize_bindings(self, self.key_words(), self.lang)
        self.refresh_bindings()
        self.recompute(notify=True)

    def take_options(self, options: dict[str, str]) -> None:
        """A link's `view`: `vector` (the calculator) or `batchnorm` (the prompt through both norms)."""
        if "view" in options and options["view"] in VIEWS:
            self.view = options["view"]
        elif "view" in options:
            self.notify(self.words("bad_option", what=f"view={options['view']}"), severity="warning")
        unknown = sorted(set(options) - {"view"})
        if unknown:
            self.notify(self.words("bad_option", what=", ".join(unknown)), severity="warning")

    def show_view(self) -> None:
        """The view in `self.view`, its field focused and its keys in the footer."""
        self.query_one(ContentSwitcher).current = f"ln-{self.view}"
        self.query_one("#bn-prompt" if self.view == "batchnorm" else "#ln-x", Input).focus()
        localize_bindings(self, self.key_words(), self.lang)
        self.refresh_bindings()

    def action_toggle_view(self) -> None:
        self.view = VIEWS[1 - VIEWS.index(self.view)]
        self.show_view()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Each view's keys in the footer, the other's hidden."""
        hidden = self.BATCH_ACTIONS if self.view == "vector" else self.VECTOR_ACTIONS
        return action not in hidden

    def axes(self) -> NormAxesView:
        return self.query_one(NormAxesView)

    def action_next_norm(self, step: int) -> None:
        self.axes().next_norm(step)

    def action_pick_token(self, step: int) -> None:
        self.axes().pick_token(step)

    def action_change_token(self, step: int) -> None:
        self.axes().change_token(step)

    # -- input ------------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self.model_note = ""
        self.recompute(notify=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.recompute(notify=True)

    def read_inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """x, γ, β and ε from the four fields; raises `InputProblem` with the first thing wrong."""
        x = self._vector("x", self.query_one("#ln-x", Input).value, None)
        d = len(x)
        gamma = self._vector("γ", self.query_one("#ln-gamma", Input).value, d, default=1.0)
        beta = self._vector("β", self.query_one("#ln-beta", Input).value, d, default=0.0)
        eps_text = self.query_one("#ln-eps", Input).value.strip()
        try:
            eps_values = parse_numbers(eps_text) if eps_text else [1e-5]
        except ValueError:
            raise InputProblem(self.words("bad_eps")) from None
        if len(eps_values) != 1 or not math.isfinite(eps_values[0]) or eps_values[0] < 0:
            raise InputProblem(self.words("bad_eps"))
        return x, gamma, beta, eps_values[0]

    def _vector(self, name: str, text: str, d: int | None, default: float = 0.0) -> np.ndarray:
        try:
            values = parse_numbers(text)
        except ValueError as error:
            raise InputProblem(self.words("not_number", name=name, word=str(error))) from None
        if d is None and not values:
            raise InputProblem(self.words("empty"))
        if not all(math.isfinite(v) for v in values):
            raise InputProblem(self.words("not_finite", name=name))
        if d is not None:
            if not values:
                values = [default]
            if len(values) == 1:
                values = values * d
            if len(values) != d:
                raise InputProblem(self.words("wrong_length", name=name, n=len(values), d=d))
        return np.array(values, dtype=np.float64)

    def recompute(self, notify: bool) -> None:
        problem = self.query_one("#ln-problem", Static)
        rms = self.kind == "rms"
        try:
            x, gamma, beta, eps = self.read_inputs()
            worked = work_out_rms(x, gamma, eps) if rms else work_out(x, gamma, beta, eps)
            if not math.isfinite(worked.var):
                raise InputProblem(self.words("rms_too_big" if rms else "too_big"))
            if worked.scale == 0:
                raise InputProblem(self.words("rms_zero_scale" if rms else "zero_scale"))
            if not (np.isfinite(worked.x_hat).all() and np.isfinite(worked.y).all()):
                raise InputProblem(self.words("rms_too_big" if rms else "too_big"))
        except InputProblem as error:
            problem.update(str(error))  # the last good result stays below it
            if notify:
                self.notify(str(error), severity="warning")
            return
        problem.update("")
        self.worked = worked
        self.show(worked)

    # -- the worked example -----------------------------------------------------------------

    def show(self, w: Worked) -> None:
        if w.kind == "rms":
            self.show_rms(w)
            return
        d = len(w.x)
        total = float(w.x.sum())
        squares = float(((w.x - w.mean) ** 2).sum())
        steps = steps_grid(
            (self.words("step_mean"), f"μ = Σ xⱼ / d = {number_text(total)} / {d} = {number_text(w.mean)}"),
            (self.words("step_var"), f"σ² = Σ (xⱼ − μ)² / d = {number_text(squares)} / {d} = {number_text(w.var)}"),
            (
                self.words("step_scale"),
                f"√(σ² + ε) = √({number_text(w.var)} + {w.eps:g}) = {number_text(w.scale, 6)}",
            ),
            (self.words("step_xhat"), self.words("xhat_formula")),
            (self.words("step_y"), self.words("y_formula")),
        )
        table = values_table(
            (self.words("column_j"), "x", "x − μ", "(x − μ)²", "x̂", "γ", "β", "y"),
            (
                (w.x[j], w.x[j] - w.mean, (w.x[j] - w.mean) ** 2, w.x_hat[j], w.gamma[j], w.beta[j], w.y[j])
                for j in range(d)
            ),
        )
        norm_line = norm_sentence(w, self.lang)
        parts = [steps, Text(""), Text(norm_line), Text(self.words("source"), style="dim"), Text(""), table]
        self.show_worked(parts, (d, self.model_note, norm_line))

    def show_rms(self, w: Worked) -> None:
        """RMSNorm worked out: mean(x²), rms, x̂ = x / rms, y = γ·x̂ — and what it leaves of x's mean."""
        d = len(w.x)
        squares = float((w.x * w.x).sum())
        steps = steps_grid(
            (
                self.words("rms_step_squares"),
                f"mean(x²) = Σ xⱼ² / d = {number_text(squares)} / {d} = {number_text(w.var)}",
            ),
            (
                self.words("rms_step_scale"),
                f"rms = √(mean(x²) + ε) = √({number_text(w.var)} + {w.eps:g}) = {number_text(w.scale, 6)}",
            ),
            (self.words("rms_step_xhat"), self.words("rms_xhat_formula")),
            (self.words("rms_step_y"), self.words("rms_y_formula")),
        )
        table = values_table(
            (self.words("column_j"), "x", "x²", "x̂", "γ", "y"),
            ((w.x[j], w.x[j] ** 2, w.x_hat[j], w.gamma[j], w.y[j]) for j in range(d)),
        )
        norm_line, centre_line = rms_norm_sentence(w, self.lang), rms_centre_sentence(w, self.lang)
        parts = [
            Text(self.words("rms_heading"), style="bold"),
            steps,
            Text(""),
            Text(norm_line),
            Text(centre_line),
            Text(self.words("rms_source"), style="dim"),
            Text(""),
            table,
        ]
        self.show_worked(parts, ("rms", d, self.model_note, norm_line, centre_line))

    def show_worked(self, parts: list[RenderableType], key: tuple[object, ...]) -> None:
        """The worked example below the inputs, the model's note on top (the table below is as long as the model is
        wide); the sentences wrap by their words, so `key` names what may change the lines' count."""
        if self.model_note:
            parts = [Text(self.model_note, style="italic"), *parts]
        self.query_one("#ln-result", LiveStatic).show_content(Group(*parts), key)

    # -- actions ------------------------------------------------------------------------------

    def _fill(self, x: str, gamma: str, beta: str, eps: str) -> None:
        with self.prevent(Input.Changed):
            for selector, value in (("#ln-x", x), ("#ln-gamma", gamma), ("#ln-beta", beta), ("#ln-eps", eps)):
                field = self.query_one(selector, Input)
                field.value = value
                field.cursor_position = 0  # the start of a long vector is the part to see

    def action_example(self) -> None:
        self.model_note = ""
        self._fill("1 2 3 4", "", "", "1e-5")
        self.recompute(notify=True)

    def action_from_model(self) -> None:
        """The live model's own first LayerNorm on the main screen's prompt, its last token."""
        gpt = self.gpt
        step = next((s for s in gpt.steps if s.kind == "norm"), None)
        if step is None:
            self.notify(self.words("no_model_norm", model=gpt.name), severity="warning")
            return
        if not self.prompt:
            self.notify(self.words("no_prompt"), severity="warning")
            return
        trace = gpt.run(self.prompt)
        pos = len(trace.tokens) - 1
        ln = step.out_hook.removesuffix(".hook_normalized")
        x = trace[step.in_hook][pos]
        rms = gpt.config.is_rms
        if self.kind != gpt.config.norm_kind:  # the model's own norm, so that its y is the one worked out
            self.action_toggle_kind()
        gamma = gpt.params[f"{ln}.g"]
        beta = np.zeros(0) if rms else gpt.params[f"{ln}.b"]  # an RMSNorm has no β: its field stays empty
        self._fill(*(" ".join(repr(float(v)) for v in values) for values in (x, gamma, beta)), f"{gpt.config.ln_eps:g}")
        self.recompute(notify=True)
        if self.worked is not None:
            diff = float(np.abs(self.worked.y - trace[step.out_hook][pos]).max())
            self.model_note = self.words(
                "rms_model_source" if rms else "model_source",
                model=gpt.name,
                step=step_label(step, self.lang, gpt.config.norm_kind),
                pos=pos,
                piece=trace.pieces[pos],
                prompt=self.prompt,
                diff=f"{diff:.1e}",
            )
            self.show(self.worked)
