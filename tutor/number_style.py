"""How a number or a token reads in a cell: digits in a fixed width, a gradient across forty orders of
magnitude, colour scales (diverging, sequential, probability) with a shade glyph where there is no colour,
a token's piece made visible, the largest dimensions of a vector."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from rich.style import Style

from tutor import i18n


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
