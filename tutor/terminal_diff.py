"""Send the terminal only the cells that changed.

Textual repaints whole regions: a step key that moves the highlight in the step bar and changes a
few numbers rewrites every line of the panel area, ~10 KB in 256 colours. Over SSH, for a class
of thirty on one link, that is the cost of every key. Here each frame is compared, cell by cell,
with what this process has already drawn, and only the runs of cells that differ go out.

The model of the screen is trusted only for what it drew itself: it starts unknown (every cell is
written), and is forgotten when the size changes, the app is suspended or resumed, a frame of a
kind it does not know goes out, or the learner asks for a redraw (ctrl+l).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.cells import get_character_cell_size
from rich.console import Console
from rich.control import Control
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate
from textual.strip import Strip

Cell = tuple[str, Style | None]  # what one column shows; "" for the right half of a wide character
MERGE_GAP = 4  # unchanged cells between two changed runs cheaper to resend than to jump over (a move is ~8 bytes)


@dataclass
class DiffedUpdate(CompositorUpdate):
    """A frame already turned into the bytes to send."""

    sequences: str

    def render_segments(self, console: Console) -> str:
        return self.sequences


class ScreenModel:
    """What the terminal shows, as far as this process drew it."""

    def __init__(self) -> None:
        self.rows: dict[int, list[Cell | None]] = {}  # y → one cell per column; None: not known
        self.size: tuple[int, int] = (0, 0)

    def forget(self, *_: object) -> None:
        """After anything that may have changed the terminal behind our back."""
        self.rows.clear()

    def update(self, frame: CompositorUpdate, console: Console, size: tuple[int, int]) -> CompositorUpdate:
        """The frame to send instead of `frame`: only its changed cells (a ChopsUpdate, the common
        case), or `frame` itself, noted (a LayoutUpdate) or not (anything else)."""
        if size != self.size:
            self.forget()
            self.size = size
        if isinstance(frame, ChopsUpdate):
            return DiffedUpdate(self._draw(_chops_writes(frame), console))
        if isinstance(frame, LayoutUpdate):
            self._draw(_layout_writes(frame), console)
            return frame
        self.forget()
        return frame

    def _draw(self, writes: Iterable[tuple[int, int, Strip]], console: Console) -> str:
        """Note every write in the model; return the terminal sequences for the cells that differ."""
        out: list[str] = []
        width = self.size[0]
        for x, y, strip in writes:
            row = self.rows.get(y)
            if row is None:
                row = self.rows[y] = [None] * width
            cells = list(_cells(x, strip))
            changed = [i for i, (column, cell) in enumerate(cells) if column >= width or row[column] != cell]
            for first, last in _runs(changed, cells):
                out.append(Control.move_to(cells[first][0], y).segment.text)
                out.append(_render(cells[first : last + 1], console))
            for column, cell in cells:
                if column < width:
                    row[column] = cell
        return "".join(out)


def _chops_writes(frame: ChopsUpdate) -> Iterator[tuple[int, int, Strip]]:
    """(x, y, strip) exactly as `ChopsUpdate.render_segments` would write them."""
    for y, x1, x2 in frame.spans:
        for end, (x, strip) in zip(frame.chop_ends[y], frame.chops[y].items(), strict=False):
            if strip is None or x > x2 or end <= x1:
                continue
            if not (x2 > x >= x1 and end <= x2):
                strip = strip.crop(0, min(end, x2) - x)
            yield x, y, strip


def _layout_writes(frame: LayoutUpdate) -> Iterator[tuple[int, int, Strip]]:
    for y, line in enumerate(frame.strips, frame.region.y):
        x = frame.region.x
        for strip in line:
            yield x, y, strip
            x += strip.cell_length


def _cells(x: int, strip: Strip) -> Iterator[tuple[int, Cell]]:
    """(column, cell) for each column the strip covers from x; combining marks stay with their character."""
    pending: tuple[int, str, Style | None] | None = None  # the last character, until we know nothing combines
    for text, style, control in strip:
        if control:
            continue
        for char in text:
            size = get_character_cell_size(char)
            if size == 0:
                if pending is not None:
                    pending = (pending[0], pending[1] + char, pending[2])
                continue
            if pending is not None:
                yield from _with_tail(*pending)
            pending = (x, char, style)
            x += size
    if pending is not None:
        yield from _with_tail(*pending)


def _with_tail(column: int, text: str, style: Style | None) -> Iterator[tuple[int, Cell]]:
    yield column, (text, style)
    if get_character_cell_size(text[0]) == 2:
        yield column + 1, ("", style)


def _runs(changed: list[int], cells: list[tuple[int, Cell]]) -> Iterator[tuple[int, int]]:
    """(first, last) indexes into `cells` of each run to send: changed cells, close runs merged, wide
    characters never split."""
    if not changed:
        return
    first = last = changed[0]
    for i in changed[1:]:
        if cells[i][0] - cells[last][0] <= MERGE_GAP + 1:
            last = i
            continue
        yield _whole(first, last, cells)
        first = last = i
    yield _whole(first, last, cells)


def _whole(first: int, last: int, cells: list[tuple[int, Cell]]) -> tuple[int, int]:
    if first > 0 and cells[first][1][0] == "":
        first -= 1  # the right half of a wide character: start at its left half
    if last + 1 < len(cells) and cells[last + 1][1][0] == "":
        last += 1  # a wide character's left half: take its right half too
    return first, last


def _render(cells: list[tuple[int, Cell]], console: Console) -> str:
    """The cells as terminal sequences, one style change per run of equal styles."""
    segments: list[Segment] = []
    for _column, (text, style) in cells:
        if segments and segments[-1].style == style:
            segments[-1] = Segment(segments[-1].text + text, style)
        else:
            segments.append(Segment(text, style))
    return Strip(segments).render(console)
