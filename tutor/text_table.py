"""Columns of numbers as plain lines of Text: what the panels need from a table, at a fifth of the cost.

A Rich `Table` measures every cell twice and renders through several layers: ~25 ms for the
residual panel's 26 rows, on every step key. The panels' tables are simpler — one line per row,
no borders, no wrapping — so they are laid out here by padding each cell to its column's width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.text import Text


@dataclass(frozen=True)
class Column:
    header: str | Text = ""
    justify: Literal["left", "right"] = "left"
    max_width: int | None = None  # longer cells end in "…"
    min_width: int = 0
    shrink: bool = False  # when the lines are too wide, this column gives way first (its cells end in "…")


def text_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str | Text]],
    width: int | None = None,
    gap: int = 2,
    header_style: str = "bold",
) -> list[Text]:
    """One Text per line: the header (if any column has one), then the rows, columns `gap` apart."""
    headers = [Text(c.header, style=header_style) if isinstance(c.header, str) else c.header for c in columns]
    cells = [[Text(cell) if isinstance(cell, str) else cell for cell in row] for row in rows]
    show_header = any(header.plain for header in headers)
    widths = []
    for i, column in enumerate(columns):
        widest = max([headers[i].cell_len if show_header else 0, *(row[i].cell_len for row in cells)])
        if column.max_width is not None:
            widest = min(widest, column.max_width)
        widths.append(max(widest, column.min_width))
    if width is not None:
        excess = sum(widths) + gap * (len(columns) - 1) - width
        for i, column in enumerate(columns):
            if excess > 0 and column.shrink:
                cut = min(excess, widths[i] - 1)
                widths[i] -= cut
                excess -= cut
    lines = []
    for row in ([headers] if show_header else []) + cells:
        line = Text(no_wrap=True, overflow="ellipsis")
        for i, (cell, column) in enumerate(zip(row, columns, strict=True)):
            if i:
                line.append(" " * gap)
            space = widths[i] - cell.cell_len
            if space >= 0 and not cell.style:
                # it fits, and has no style of its own that would cover its padding: the padding goes beside it, not
                # into a copy of it (the same line, without a copy of every cell on every step key)
                right = column.justify == "right"
                line.append(" " * space if right else "").append_text(cell).append("" if right else " " * space)
            else:
                line.append_text(_fit(cell, widths[i], column.justify))
        lines.append(line)
    return lines


def _fit(cell: Text, width: int, justify: Literal["left", "right"]) -> Text:
    """`cell` cut to `width` cells (ending in "…") and padded to exactly `width`."""
    fitted = cell.copy()
    if fitted.cell_len > width:
        fitted.truncate(width, overflow="ellipsis")
    space = width - fitted.cell_len
    if space > 0:
        if justify == "right":
            fitted.pad_left(space)
        else:
            fitted.pad_right(space)
    return fitted
