"""The colour scale's legend: what a colour means, and the range it spans, in one line of segments.

Two scales are used everywhere: diverging for signed values (blue below 0, grey at 0, red above, brighter
the larger |value| / scale) and sequential for probabilities (dark to bright green from 0 to the scale).
A legend is `−2.73 ▐▐▐▐ 0 ▐▐▐▐ +2.73`: swatches drawn by the same style function the cells use, so it shows
what the terminal shows (also in 16 colours). Under NO_COLOR the swatches are shade glyphs, light to
full, and the digits in the cells carry the exact values.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style

from tutor.number_style import diverging_style, fmt, probability_style, shade_glyph

DIVERGING, SEQUENTIAL = "diverging", "sequential"
SWATCHES = 6  # per side of a diverging scale; a sequential one has twice as many


def legend_kind(style_for: Callable[[float, float], Style]) -> str | None:
    """Which scale a grid's style function draws, if it is one of the two."""
    if style_for is diverging_style:
        return DIVERGING
    if style_for is probability_style:
        return SEQUENTIAL
    return None


def scale_text(value: float) -> str:
    """A range end as short as it can be read: 1, 0.5, 2.73, 1e5."""
    text = fmt(value, 6).strip()
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text


def legend_segments(kind: str, scale: float, no_color: bool, base: Style | None = None) -> list[Segment]:
    """`−s ▒▒▒▒ 0 ▒▒▒▒ +s` (diverging) or `0 ▒▒▒▒▒▒▒▒ s` (sequential), each swatch in the cells' own style."""
    base = base or Style()
    plain, dim = base, base + Style(dim=True)
    if kind == DIVERGING:
        style_for: Callable[[float, float], Style] = diverging_style
        steps = [(i + 1) / SWATCHES for i in range(SWATCHES)]
        fractions = [-f for f in reversed(steps)] + steps
        low, high = f"−{scale_text(scale).lstrip('+')}", f"+{scale_text(scale).lstrip('+')}"
    else:
        style_for = probability_style
        fractions = [(i + 1) / (2 * SWATCHES) for i in range(2 * SWATCHES)]
        low, high = "0", scale_text(scale).lstrip("+")
    segments = [Segment(low + " ", dim)]
    for i, fraction in enumerate(fractions):
        if kind == DIVERGING and i == SWATCHES:
            segments.append(Segment(" 0 ", dim))
        glyph = shade_glyph(abs(fraction)) if no_color else " "
        # under NO_COLOR the filter drops colours but keeps the glyph; a segment needs a style to pass it
        segments.append(Segment(glyph, plain if no_color else base + style_for(fraction * scale, scale)))
    segments.append(Segment(" " + high, dim))
    return segments
