"""Drift: two numbers scaled ×1.4 and ×0.6 at every layer, with and without a LayerNorm after each layer.

The lesson's example: a vector (A, B) starts at (2, 2); every layer multiplies A by one factor and B by
another. Without normalisation A explodes and B vanishes; with `model.layer_norm` (γ = 1, β = 0) after
every layer the vector is reset to mean 0 and spread 1, whatever the factors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Static

from model import GPT, layer_norm
from tutor.i18n import pick
from tutor.patches.footer_labels import localize_bindings
from tutor.screens.experiments.base import ExperimentScreen

START = 2.0  # both components start here, as in the lesson
DEFAULT_A, DEFAULT_B, DEFAULT_LAYERS = 1.4, 0.6, 30
MAX_FACTOR, MAX_LAYERS = 10.0, 100  # 10¹⁰⁰ still fits a float64 with room to spare
EPS = 1e-5  # LayerNorm's ε, as in every shipped model
CHART = 61  # cells of the log chart at most

WORDS: dict[str, tuple[str, str]] = {
    "factor_a": ("A ×", "A ×"),
    "factor_b": ("B ×", "B ×"),
    "layers": ("layers", "层数"),
    "intro": (
        "A and B both start at {start}; every layer multiplies A by {a} and B by {b}. A′ and B′: the same, "
        "with a LayerNorm (γ = 1, β = 0, model/norm.py) after every layer.",
        "A 和 B 都从 {start} 出发；每一层把 A 乘以 {a}，把 B 乘以 {b}。A′ 和 B′：同样的乘法，"
        "每层之后再做一次 LayerNorm（γ = 1，β = 0，model/norm.py）。",
    ),
    "layer": ("layer", "层"),
    "chart": ("log scale: {lo} … 1 … {hi}", "对数刻度：{lo} … 1 … {hi}"),
    "summary_without": (
        "Without: after {n} layers |A| / |B| = {ratio}, ‖x‖ = {norm}.",
        "不归一化：{n} 层之后 |A| / |B| = {ratio}，‖x‖ = {norm}。",
    ),
    "summary_with": (
        "With LayerNorm: after {n} layers |A′| / |B′| = {ratio}; over layers 1–{n} ‖x′‖ = {norms} "
        "(√d = √2 = {sqrt_d}).",
        "有 LayerNorm：{n} 层之后 |A′| / |B′| = {ratio}；第 1–{n} 层 ‖x′‖ = {norms}（√d = √2 = {sqrt_d}）。",
    ),
    "two_numbers": (
        "With two numbers, x̂ can only be ±(1, −1): LayerNorm keeps which one is larger, and the scale is gone.",
        "只有两个数时，x̂ 只能是 ±(1, −1)：LayerNorm 只保留谁更大，尺度被消除了。",
    ),
    "no_spread": (
        "A and B are equal: σ = 0, so x̂ = (x − μ)/√(0 + ε) = 0 — nothing is left to normalise.",
        "A 和 B 相等：σ = 0，所以 x̂ = (x − μ)/√(0 + ε) = 0——没有可以归一化的东西。",
    ),
    "bad_factor": (
        "A factor must be a number above 0 and at most {most}, e.g. 1.4.",
        "倍数必须是大于 0、不超过 {most} 的数，例如 1.4。",
    ),
    "bad_layers": ("Layers: a whole number from 1 to {most}.", "层数：1 到 {most} 之间的整数。"),
}
KEY_WORDS: dict[str, tuple[str, str]] = {  # footer labels by action
    "back": ("Back", "返回"),
    "nudge(1)": ("Change", "调整"),
    "scroll(1)": ("Scroll", "滚动"),
}


@dataclass(frozen=True)
class Drift:
    """Both runs, row k = after k layers: `plain[k]` = (A, B) without, `normed[k]` with LayerNorm."""

    factors: tuple[float, float]
    plain: np.ndarray  # [layer, 2]
    normed: np.ndarray  # [layer, 2]


def drift(factor_a: float, factor_b: float, n_layers: int) -> Drift:
    """x ← x · (a, b) for `n_layers` layers, and the same with x ← LayerNorm(x · (a, b)), both from (2, 2)."""
    factors = np.array([factor_a, factor_b])
    gamma, beta = np.ones(2), np.zeros(2)
    plain, normed = [np.full(2, START)], [np.full(2, START)]
    for _ in range(n_layers):
        plain.append(plain[-1] * factors)
        normed.append(layer_norm(normed[-1] * factors, gamma, beta, EPS))
    return Drift((factor_a, factor_b), np.array(plain), np.array(normed))


def number_text(value: float) -> str:
    """Four significant digits in at most 9 cells: 2.000, 57.85, 48403, 0.01209, 4.404e-07."""
    if value == 0:
        return "0"
    size = abs(value)
    if 1e-3 <= size < 1e6:
        decimals = max(0, 3 - math.floor(math.log10(size)))
        return f"{value:.{decimals}f}"
    return f"{value:.3e}"


def log_chart(values: dict[str, float], low: float, high: float, width: int) -> Text:
    """One row of a log-scale chart: '│' marks 1, each value a letter with a bar from 1 out to it.

    The larger |log₁₀| is drawn first so that a shorter bar on the same side stays visible.
    """
    cells = [" "] * width
    styles = [""] * width
    centre = round((0 - low) / (high - low) * (width - 1))
    cells[centre] = "│"
    styles[centre] = "dim"
    colours = {"A": "red", "B": "blue"}
    for name, value in sorted(values.items(), key=lambda item: -abs(math.log10(abs(item[1]) or 1e-300))):
        exponent = math.log10(abs(value)) if value else low
        place = round((min(max(exponent, low), high) - low) / (high - low) * (width - 1))
        step = 1 if place >= centre else -1
        for i in range(centre + step, place, step):
            cells[i], styles[i] = ("─", colours[name])
        if cells[place] in colours and 0 <= place + step < width:  # the other letter sits here: step aside
            place += step
        cells[place], styles[place] = name, f"bold {colours[name]}"
    text = Text()
    for cell, style in zip(cells, styles, strict=True):
        text.append(cell, style)
    return text


class DriftScreen(ExperimentScreen):
    NAME = "drift"
    BINDINGS = [
        # priority: the focused Input would scroll itself with these keys
        Binding("up", "nudge(1)", "Change", key_display="↑↓", priority=True),
        Binding("down", "nudge(-1)", show=False, priority=True),
        Binding("pagedown", "scroll(1)", "Scroll", key_display="PgDn/PgUp", priority=True),
        Binding("pageup", "scroll(-1)", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    DriftScreen #drift-controls { height: 1; padding: 0 1; }
    DriftScreen #drift-controls Label { padding: 0 1 0 0; }
    DriftScreen #drift-controls Input { width: 10; margin: 0 2 0 0; }
    DriftScreen #drift-intro { padding: 0 1; color: $text-muted; }
    DriftScreen #drift-summary { padding: 0 1; }
    DriftScreen #drift-body { height: 1fr; }
    DriftScreen #drift-table, DriftScreen #drift-header { padding: 0 1; width: auto; }
    """

    def __init__(self, gpt: GPT, prompt: str, lang: str) -> None:
        super().__init__(gpt=gpt, prompt=prompt, lang=lang)
        localize_bindings(self, KEY_WORDS, lang)
        self.result = drift(DEFAULT_A, DEFAULT_B, DEFAULT_LAYERS)

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="drift-controls"):
            yield Label(pick(WORDS, "factor_a", self.lang))
            yield Input(str(DEFAULT_A), id="factor-a", compact=True)
            yield Label(pick(WORDS, "factor_b", self.lang))
            yield Input(str(DEFAULT_B), id="factor-b", compact=True)
            yield Label(pick(WORDS, "layers", self.lang))
            yield Input(str(DEFAULT_LAYERS), id="layers", compact=True)
        yield Static(id="drift-intro")
        yield Static(id="drift-summary")
        yield Static(id="drift-header")
        with VerticalScroll(id="drift-body"):
            yield Static(id="drift-table")

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = False
        self.query_one("#factor-a", Input).focus()
        self.show_result()

    @on(Input.Changed)
    def inputs_changed(self) -> None:
        self.recompute(notify=False)

    @on(Input.Submitted)
    def inputs_submitted(self) -> None:
        self.recompute(notify=True)

    def read_inputs(self) -> tuple[float, float, int] | str:
        """The factors and the layer count, or the notice that says what is wrong."""
        factors = []
        for field_id in ("#factor-a", "#factor-b"):
            try:
                value = float(self.query_one(field_id, Input).value)
            except ValueError:
                value = math.nan
            if not (0 < value <= MAX_FACTOR):
                return pick(WORDS, "bad_factor", self.lang, most=f"{MAX_FACTOR:g}")
            factors.append(value)
        layers_text = self.query_one("#layers", Input).value.strip()
        if not layers_text.isdigit() or not 1 <= int(layers_text) <= MAX_LAYERS:
            return pick(WORDS, "bad_layers", self.lang, most=MAX_LAYERS)
        return factors[0], factors[1], int(layers_text)

    def recompute(self, notify: bool) -> None:
        """Half-typed input ("1.") keeps the last good table; Enter on bad input says what is wrong."""
        values = self.read_inputs()
        if isinstance(values, str):
            if notify:
                self.notify(values, severity="warning")
            return
        self.result = drift(*values)
        self.show_result()

    def action_nudge(self, direction: int) -> None:
        """↑/↓ on a factor changes it by 0.1, on the layer count by 1."""
        field = self.focused if isinstance(self.focused, Input) else self.query_one("#factor-a", Input)
        try:
            value = float(field.value)
        except ValueError:
            return
        if field.id == "layers":
            field.value = str(min(MAX_LAYERS, max(1, round(value) + direction)))
        else:
            field.value = f"{min(MAX_FACTOR, max(0.1, round(value + 0.1 * direction, 10))):g}"
        field.cursor_position = len(field.value)

    def action_scroll(self, direction: int) -> None:
        body = self.query_one("#drift-body", VerticalScroll)
        body.scroll_to(y=body.scroll_y + direction * max(1, body.size.height - 2), animate=False)

    def show_result(self) -> None:
        result, lang = self.result, self.lang
        a, b = result.factors
        self.query_one("#drift-intro", Static).update(
            pick(WORDS, "intro", lang, start=f"{START:g}", a=f"{a:g}", b=f"{b:g}")
        )
        magnitudes = np.abs(result.plain[result.plain != 0])
        low = math.floor(min(0.0, math.log10(magnitudes.min()))) if magnitudes.size else -1
        high = math.ceil(max(0.0, math.log10(magnitudes.max()))) if magnitudes.size else 1
        low, high = (low, high) if high > low else (low - 1, high + 1)
        rows = [
            [
                str(layer),
                number_text(plain_a),
                number_text(plain_b),
                f"{normed_a:+.3f}",
                f"{normed_b:+.3f}",
                f"{math.hypot(normed_a, normed_b):.3f}",
            ]
            for layer, ((plain_a, plain_b), (normed_a, normed_b)) in enumerate(
                zip(result.plain, result.normed, strict=True)
            )
        ]
        headers = [pick(WORDS, "layer", lang), "A", "B", "A′", "B′", "‖x′‖"]
        widths = [max(cell_len(text) for text in column) for column in zip(headers, *rows, strict=True)]
        gaps = 2 * len(widths) + 2 + 2  # two cells between columns, the padding, the scroll bar
        chart_width = max(9, min(CHART, self.size.width - sum(widths) - gaps))
        chart_header = pick(WORDS, "chart", lang, lo=f"1e{low}", hi=f"1e+{high}")
        if cell_len(chart_header) > chart_width:
            chart_header = f"1e{low} … 1 … 1e+{high}"

        def table(show_header: bool) -> Table:
            """The header and the rows are two tables (the header stays put while the rows scroll) of equal columns."""
            grid = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False, show_header=show_header)
            for header, width in zip(headers[:3], widths[:3], strict=True):
                grid.add_column(header, justify="right", no_wrap=True, width=width)
            grid.add_column(chart_header, no_wrap=True, width=chart_width, overflow="ellipsis")
            for header, width in zip(headers[3:], widths[3:], strict=True):
                grid.add_column(header, justify="right", no_wrap=True, width=width)
            return grid

        header, body = table(show_header=True), table(show_header=False)
        for row, (plain_a, plain_b) in zip(rows, result.plain, strict=True):
            body.add_row(*row[:3], log_chart({"A": plain_a, "B": plain_b}, low, high, chart_width), *row[3:])
        self.query_one("#drift-header", Static).update(header)
        last_plain, last_normed = result.plain[-1], result.normed[-1]
        n = len(result.plain) - 1
        lines: list[Text] = []
        ratio = abs(last_plain[0]) / abs(last_plain[1]) if last_plain[1] else math.inf
        lines.append(
            Text(
                pick(
                    WORDS,
                    "summary_without",
                    lang,
                    n=n,
                    ratio=number_text(ratio),
                    norm=number_text(float(np.linalg.norm(last_plain))),
                )
            )
        )
        if not np.any(result.normed[1:]):
            lines.append(Text(pick(WORDS, "no_spread", lang), style="bold"))
        else:
            normed_ratio = abs(last_normed[0]) / abs(last_normed[1])
            normed_norms = np.linalg.norm(result.normed[1:], axis=-1)
            lines.append(
                Text(
                    pick(
                        WORDS,
                        "summary_with",
                        lang,
                        n=n,
                        ratio=f"{normed_ratio:.3f}",
                        norms="–".join(sorted({f"{normed_norms.min():.3f}", f"{normed_norms.max():.3f}"})),
                        sqrt_d=f"{math.sqrt(2):.3f}",
                    )
                )
            )
        self.query_one("#drift-summary", Static).update(Group(*lines))
        aside = [Text(pick(WORDS, "two_numbers", lang), style="dim")] if np.any(result.normed[1:]) else []
        self.query_one("#drift-table", Static).update(Group(body, *aside))

    def on_resize(self) -> None:
        self.show_result()
