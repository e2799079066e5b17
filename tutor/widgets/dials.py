"""Angles as clock hands on small circles, side by side (Textual's Line API).

Each dial is a braille circle (2×4 dots per cell, so the circle is round) with hands from its
centre, at angles counted counter-clockwise from the right (→ is 0, ↑ is π/2), as on the unit
circle of (cos θ, sin θ). Each hand has its own colour and a one-character label just past its
tip: under NO_COLOR the braille hands look alike and the labels tell them apart. A title above
and caption lines below each dial carry the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from tutor.widgets.line_chart import DOT_BITS

GAP = 2  # cells between two dials


@dataclass(frozen=True)
class Hand:
    angle: float  # radians, counter-clockwise from →
    label: str  # one character, drawn just past the tip
    color: str = "white"


@dataclass(frozen=True)
class Dial:
    title: str
    hands: tuple[Hand, ...]
    caption: tuple[str, ...] = ()


def hand_cells(angle: float, rows: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where a hand at `angle` ends on a dial of `rows` plot rows, as (column, row) cells: its tip, and
    the cell of its label just beyond."""
    cx, cy, radius = _geometry(rows)
    tip = _cell(cx + radius * math.cos(angle), cy - radius * math.sin(angle))
    out = radius + 3.0
    label = _cell(cx + out * math.cos(angle) * 1.0, cy - out * math.sin(angle))
    return tip, label


def _geometry(rows: int) -> tuple[float, float, float]:
    """Centre (x, y) and radius in braille dots of a dial `rows` cells high and 2·rows + 1 wide."""
    width_dots, height_dots = 2 * (2 * rows + 1), 4 * rows
    cx, cy = (width_dots - 1) / 2, (height_dots - 1) / 2
    return cx, cy, max(1.0, min(cx - 3.0, cy - 4.0))  # a cell of room all round for the labels


def _cell(x: float, y: float) -> tuple[int, int]:
    return round(x) // 2, round(y) // 4


class Dials(Widget):
    """Dials side by side; the circle's size follows the widget's height."""

    DEFAULT_CSS = """
    Dials { height: 1fr; min-height: 7; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.dials: list[Dial] = []
        self.key: object = None
        self._strips: list[Strip] | None = None
        self._drawn_for: tuple[int, int] | None = None

    def set_dials(self, dials: Sequence[Dial], key: object = None) -> bool:
        """Replace the dials; with the last `key` again nothing is redrawn. Returns whether it was."""
        if key is not None and key == self.key:
            return False
        self.key, self.dials = key, list(dials)
        self._strips = None
        self.refresh()
        return True

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips = None

    def plot_rows(self, height: int) -> int:
        captions = max((len(d.caption) for d in self.dials), default=0)
        return max(3, height - 1 - captions)

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        if self._strips is None or self._drawn_for != (width, height):
            self._strips = self._draw(width, height)
            self._drawn_for = (width, height)
        return self._strips[y] if y < len(self._strips) else Strip.blank(width, self.rich_style)

    def _draw(self, width: int, height: int) -> list[Strip]:
        base = self.rich_style
        rows = self.plot_rows(height)
        lines: list[list[Segment]] = [[] for _ in range(height)]
        used = 0
        for dial in self.dials:
            box = max(2 * rows + 1, *(cell_len(text) for text in (dial.title, *dial.caption)))
            if used + box > width:
                break  # no room for it whole: left out rather than cut
            picture = self._dial_cells(dial, rows)
            pad = (box - (2 * rows + 1)) // 2
            texts = [dial.title, *[None] * rows, *dial.caption]
            for y in range(height):
                if used:
                    lines[y].append(Segment(" " * GAP, base))
                text = texts[y] if y < len(texts) else ""
                if text is None:
                    cells = picture[y - 1]
                    lines[y].append(Segment(" " * pad, base))
                    lines[y].extend(Segment(ch, base + style) for ch, style in cells)
                    lines[y].append(Segment(" " * (box - pad - len(cells)), base))
                else:
                    style = base + Style(bold=True) if y == 0 else base
                    lines[y].append(Segment(text + " " * (box - cell_len(text)), style))
            used += box + (GAP if used else 0)
        return [Strip(line).crop(0, width).extend_cell_length(width, base) for line in lines]

    @staticmethod
    def _dial_cells(dial: Dial, rows: int) -> list[list[tuple[str, Style]]]:
        columns = 2 * rows + 1
        cx, cy, radius = _geometry(rows)
        bits = [[0] * columns for _ in range(rows)]
        owner: list[list[str | None]] = [[None] * columns for _ in range(rows)]

        def dot(x: float, y: float, color: str | None) -> None:
            dx, dy = round(x), round(y)
            if 0 <= dx < 2 * columns and 0 <= dy < 4 * rows:
                bits[dy // 4][dx // 2] |= DOT_BITS[dx % 2][dy % 4]
                if color is not None or owner[dy // 4][dx // 2] is None:
                    owner[dy // 4][dx // 2] = color or ""

        steps = max(24, int(2 * math.pi * radius * 2))
        for k in range(steps):
            t = 2 * math.pi * k / steps
            dot(cx + radius * math.cos(t), cy - radius * math.sin(t), None)
        for hand in dial.hands:
            for k in range(int(radius * 2) + 1):
                r = radius * k / (radius * 2)
                dot(cx + r * math.cos(hand.angle), cy - r * math.sin(hand.angle), hand.color)
        cells = [
            [
                (chr(0x2800 + bits[y][x]) if bits[y][x] else " ", Style(color=owner[y][x] or None, dim=not owner[y][x]))
                for x in range(columns)
            ]
            for y in range(rows)
        ]
        labelled: set[tuple[int, int]] = set()
        for hand in dial.hands:
            _, (lx, ly) = hand_cells(hand.angle, rows)
            if (lx, ly) in labelled:  # two hands close together: the later label one cell further round
                lx += 1 if math.cos(hand.angle) >= 0 else -1
            if 0 <= lx < columns and 0 <= ly < rows:
                cells[ly][lx] = (hand.label[:1], Style(color=hand.color, bold=True))
                labelled.add((lx, ly))
        return cells
