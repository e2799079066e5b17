"""What the panels look at: one trace, the current step, token and head — and how they read it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from rich.style import Style

from model import GPT, Step, Trace
from tutor import i18n
from tutor.draw_settings import Sampling
from tutor.reach import EVERYTHING, Reach

if TYPE_CHECKING:
    from tutor.lens import LensRow  # tutor.lens reads the stream points below

FORWARD, BACKWARD = "forward", "backward"  # the directions the step bar can run in


@dataclass(frozen=True)
class View:
    """Everything a panel needs to draw itself. Panels never run the model; they read this."""

    gpt: GPT
    trace: Trace
    step_index: int
    token: int  # the token cursor, a position in the trace
    head: int
    lang: str
    direction: str = FORWARD  # BACKWARD: the step bar runs from the unembedding back, the panels show ∂L/∂x
    sampling: Sampling = field(default_factory=Sampling)  # the next-token panel's temperature, top-k, seed, last draw
    reach: Reach = EVERYTHING  # the details the lessons have explained so far (tutor/reach.py)
    lens: list[LensRow] | None = None  # the cursor token's logit lens, when the screen has it (tutor/lens.py)

    @property
    def backward(self) -> bool:
        return self.direction == BACKWARD

    @property
    def step(self) -> Step:
        return self.trace.steps[self.step_index]

    @property
    def n_tokens(self) -> int:
        return len(self.trace.tokens)

    @property
    def block(self) -> int:
        """The block the current step is in; before block 0 it is 0, after the last it is the last."""
        if self.step.block is not None:
            return self.step.block
        return 0 if self.step.kind == "embed" else self.gpt.config.n_layers - 1


@dataclass(frozen=True)
class ResidualPoint:
    """A place where the residual stream can be measured, and the step that writes it."""

    hook: str
    labels: i18n.Words  # (en, zh): "B0 attn", "B0 注意力"
    step_index: int

    def label(self, lang: str) -> str:
        return i18n.say(self.labels, lang)


def residual_points(trace: Trace) -> list[ResidualPoint]:
    """The stream after the embedding and after every sublayer: resid_pre, then mid and post of each block."""
    writer = {step.out_hook: step.index for step in trace.steps}
    n_layers = trace.config.n_layers
    # in post-norm and no-residual wirings the stream is written by the norm or the sublayer itself
    for step in trace.steps:
        if step.block is not None:
            for name in ("hook_resid_mid", "hook_resid_post"):
                hook = f"blocks.{step.block}.{name}"
                if hook not in writer and _same_array(trace, hook, step.out_hook):
                    writer[hook] = step.index
    points = [ResidualPoint("blocks.0.hook_resid_pre", ("embed", "嵌入"), writer["blocks.0.hook_resid_pre"])]
    for i in range(n_layers):
        points.append(
            ResidualPoint(
                f"blocks.{i}.hook_resid_mid",
                (f"B{i} attn", f"B{i} 注意力"),
                writer.get(f"blocks.{i}.hook_resid_mid", 0),
            )
        )
        points.append(
            ResidualPoint(
                f"blocks.{i}.hook_resid_post", (f"B{i} mlp", f"B{i} MLP"), writer.get(f"blocks.{i}.hook_resid_post", 0)
            )
        )
    return points


def _same_array(trace: Trace, a: str, b: str) -> bool:
    return a in trace and b in trace and trace[a] is trace[b]


def fmt(value: float, width: int = 5) -> str:
    """A number in `width` cells, as many decimals as fit: "+0.12", "-12.3", "+1234", "+1e5" (the exponent
    without its "+0", which would take six cells: a grid's cell would push every later one out of line)."""
    if not np.isfinite(value):
        return "−∞".rjust(width) if value < 0 else "·".rjust(width)
    for decimals in (2, 1, 0):
        text = f"{value:+.{decimals}f}"
        if len(text) <= width:
            return text.rjust(width)
    mantissa, exponent = f"{value:+.0e}".split("e")
    return f"{mantissa}e{int(exponent)}".rjust(width)


def grad_text(value: float, width: int = 7) -> str:
    """A gradient's size in `width` cells, readable across forty orders of magnitude: 1.71, 0.0914,
    8.7e-14 (a vanishing gradient must not print as 0.00), and 0 only when it is exactly 0."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else fmt(value, width).strip()
    if value >= 0.01:
        for decimals in (4, 2, 1, 0):  # 0.0914, 1.7112, 163.20, 12345.6
            text = f"{value:.{decimals}f}"
            if len(text) <= min(width, 6 if decimals == 4 else width):
                return text
    return f"{value:.1e}".replace("e-0", "e-").replace("e+0", "e+")  # 8.7e-14, 7.2e-3


SHADES = 32  # colour steps per sign: the digits carry the exact value, colour only the gist


def diverging_style(value: float, scale: float) -> Style:
    """Blue for negative, red for positive, brighter the larger |value|/scale; text stays readable."""
    if not math.isfinite(value) or scale <= 0:
        return _PLAIN
    return _diverging(value < 0, round(min(1.0, abs(value) / scale) * SHADES))


@lru_cache(maxsize=2 * SHADES + 2)
def _diverging(negative: bool, shade: int) -> Style:
    t = shade / SHADES
    # ends chosen so that a 16-colour terminal still tells the signs apart: from half the scale up they fall
    # on its red and blue (a redder or greener end lands on yellow or grey there)
    base = (30, 60, 200) if negative else (230, 40, 40)
    grey = 40
    r, g, b = (int(grey + (c - grey) * t) for c in base)
    return Style(bgcolor=f"rgb({r},{g},{b})", color="black" if t >= 0.9 and not negative else "white")


def sequential_style(value: float) -> Style:
    """For probabilities in [0, 1]: dark to bright green."""
    if not math.isfinite(value):
        return _DIM
    return _sequential(round(min(1.0, max(0.0, value)) * SHADES))


def probability_style(value: float, scale: float = 1.0) -> Style:
    """`sequential_style` of value/scale, in the (value, scale) shape a grid asks for; a grid drawn with it
    shows the sequential legend from 0 to `scale`."""
    return sequential_style(value / scale if scale > 0 else value)


@lru_cache(maxsize=SHADES + 1)
def _sequential(shade: int) -> Style:
    t = shade / SHADES
    r, g, b = int(30 + 20 * t), int(40 + 170 * t), int(40 + 60 * t)
    return Style(bgcolor=f"rgb({r},{g},{b})", color="black" if t > 0.6 else "white")


_PLAIN, _DIM = Style(), Style(dim=True)

SHADE_GLYPHS = " ░▒▓█"  # light to full: what a cell without digits shows so NO_COLOR still reads


def shade_glyph(fraction: float) -> str:
    """A block glyph for `fraction` in [0, 1] (|value| / scale): a picture drawn without digits keeps its
    meaning under NO_COLOR, where the background colour is gone. NaN (a masked cell) is a dot."""
    if not math.isfinite(fraction):
        return "·"
    return SHADE_GLYPHS[round(min(1.0, max(0.0, fraction)) * (len(SHADE_GLYPHS) - 1))]


def visible_piece(piece: str) -> str:
    """A token as it can be seen: spaces and control characters get visible marks."""
    names = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
    return "".join(names.get(ch, f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch) for ch in piece)


def top_dims(vector: np.ndarray, k: int = 4) -> list[tuple[int, float]]:
    """The `k` dimensions with the largest |x|, largest first, as (dimension, value)."""
    values = np.asarray(vector, dtype=np.float64)
    order = np.argsort(-np.abs(values), kind="stable")[:k]
    return [(int(i), float(values[i])) for i in order]


def top_dims_text(vector: np.ndarray, lang: str = "en", k: int = 4, of: str = "‖x‖") -> str:
    """ "447 +31.2 · 138 −9.80 · …  (64% of ‖x‖²)": where a wide vector's size sits (`of`: the vector's name)."""

    values = np.asarray(vector, dtype=np.float64)
    dims = top_dims(values, k)
    total = float(values @ values)
    share = sum(v * v for _, v in dims) / total if total > 0 else 0.0
    parts = " · ".join(f"{i} {fmt(v).strip()}" for i, v in dims)
    return f"{parts}  " + i18n.t("share", lang, p=f"{share:.0%}", of=of)
