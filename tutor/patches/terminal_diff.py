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
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from typing import Any

from rich.cells import get_character_cell_size
from rich.color import ColorSystem
from rich.console import Console, RenderableType
from rich.control import Control
from rich.style import Style
from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate
from textual.app import App
from textual.strip import Strip

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
        # y → one character and one style per column ("" for the right half of a wide character, None: not
        # known): two plain lists, so that a segment of plain text compares as one slice, in C
        self.chars: dict[int, list[str | None]] = {}
        self.styles: dict[int, list[Style | None]] = {}
        self.size: tuple[int, int] = (0, 0)

    def forget(self, *_: object) -> None:
        """After anything that may have changed the terminal behind our back."""
        self.chars.clear()
        self.styles.clear()

    def frame_for(self, app: App[Any], frame: RenderableType | None) -> RenderableType | None:
        """What `App._display` sends in place of `frame`: only the changed cells while the app draws a
        compositor's frame to a full-screen terminal; anything else as it is."""
        drawing = app._running and not app._closed and not app.is_headless and not app._batch_count
        if drawing and isinstance(frame, CompositorUpdate) and app._driver and not app._driver.is_inline:
            return self.update(frame, app.console, (app.size.width, app.size.height))
        return frame

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
        pen = Pen()
        width = self.size[0]
        for x, y, strip in writes:
            if y not in self.chars:
                self.chars[y], self.styles[y] = [None] * width, [None] * width
            chars, styles = self.chars[y], self.styles[y]
            changed: list[int] = []  # columns
            split_on_the_left = 0 < x < width and chars[x] == ""  # this write starts on a wide character's right half
            column = x
            head: int | None = None  # the column of the last character, which a combining mark joins
            for text, style, control in strip:
                if control or not text:
                    continue
                if text.isascii():  # one cell per character
                    end = min(column + len(text), width)
                    new = list(text[: max(0, end - column)])
                    if chars[column:end] != new or styles[column:end] != [style] * len(new):
                        changed.extend(range(column, end))
                        chars[column:end], styles[column:end] = new, [style] * len(new)
                    column += len(text)
                    head = column - 1
                    continue
                cells = _cells_of(text)
                if cells is not None:  # no combining mark: one string a cell, compared as one slice (in C) first
                    end = min(column + len(cells), width)
                    new = list(cells[: max(0, end - column)])
                    if chars[column:end] != new or styles[column:end] != [style] * len(new):
                        for at, cell in enumerate(new, column):  # what differs, cell by cell, as below
                            if chars[at] != cell or styles[at] != style:
                                changed.append(at)
                                chars[at], styles[at] = cell, style
                    head = column + len(cells) - (2 if cells[-1] == "" else 1)
                    column += len(cells)
                    continue
                for char, size in _characters(text):
                    if size == 0:  # a combining mark that starts a segment: it joins the character before
                        if head is not None and head < width:
                            chars[head] = (chars[head] or "") + char
                            changed.append(head)
                        continue
                    for offset, cell in enumerate((char, "")[:size]):  # a wide character: its right half is ""
                        if column + offset < width and (
                            chars[column + offset] != cell or styles[column + offset] != style
                        ):
                            changed.append(column + offset)
                            chars[column + offset], styles[column + offset] = cell, style
                    head = column
                    column += size
            # Writing over half of a wide character blanks the other half on the terminal: not known any more
            if split_on_the_left and chars[x] != "":
                chars[x - 1] = None
            if column < width and chars[column] == "":  # its left half was just overwritten
                chars[column] = None
            for first, last in _runs(changed, chars):
                out.append(Control.move_to(first, y).segment.text)
                out.append(_render(chars, styles, first, last, console, pen))
        out.append(pen.finish())
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


def _characters(text: str) -> Iterator[tuple[str, int]]:
    """(character with the combining marks that follow it, cells it takes)."""
    current, size = "", 0
    for char in text:
        width = get_character_cell_size(char)
        if width == 0 and current:
            current += char
            continue
        if current:
            yield current, size
        current, size = char, width
    if current:
        yield current, size


@lru_cache(maxsize=8192)
def _cells_of(text: str) -> tuple[str, ...] | None:
    """The cells `text` takes: a character each, "" for a wide character's right half; None when it has a
    combining mark (drawn by `_characters`, which joins it to the character before). Kept per text: a frame
    writes the same box lines, names and numbers again and again."""
    cells: list[str] = []
    for char in text:
        size = get_character_cell_size(char)
        if size == 0:
            return None
        cells.append(char)
        if size == 2:
            cells.append("")
    return tuple(cells)


def _runs(changed: list[int], chars: list[str | None]) -> Iterator[tuple[int, int]]:
    """(first, last) columns of each run to send: the changed ones, close runs merged, wide characters
    never split."""
    if not changed:
        return
    changed = sorted(set(changed))
    first = last = changed[0]
    for column in changed[1:]:
        if column - last <= MERGE_GAP + 1 and None not in chars[last + 1 : column]:  # never resend unknown cells
            last = column
            continue
        yield _whole(first, last, chars)
        first = last = column
    yield _whole(first, last, chars)


def _whole(first: int, last: int, chars: list[str | None]) -> tuple[int, int]:
    if first > 0 and chars[first] == "":
        first -= 1  # the right half of a wide character: start at its left half
    if last + 1 < len(chars) and chars[last + 1] == "":
        last += 1  # a wide character's left half: take its right half too
    return first, last


def _render(
    chars: list[str | None], styles: list[Style | None], first: int, last: int, console: Console, pen: Pen
) -> str:
    """Columns first..last as terminal sequences, one style change per run of equal styles, each change
    only what differs from the style before it (see `Pen`)."""
    cells = zip(chars[first : last + 1], styles[first : last + 1], strict=True)
    return "".join(
        pen.write("".join(c for c, _ in run if c), style, console) for style, run in groupby(cells, key=itemgetter(1))
    )


# SGR codes of Rich's style attributes, in the order of `Style._style_map` (bold, dim, italic, underline, …)
ATTRIBUTE_CODES = (
    ("bold", "1"),
    ("dim", "2"),
    ("italic", "3"),
    ("underline", "4"),
    ("blink", "5"),
    ("blink2", "6"),
    ("reverse", "7"),
    ("conceal", "8"),
    ("strike", "9"),
    ("underline2", "21"),
    ("frame", "51"),
    ("encircle", "52"),
    ("overline", "53"),
)
COLOR_SYSTEMS = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT, "truecolor": ColorSystem.TRUECOLOR}


@dataclass(frozen=True)
class Pens:
    """A style as the terminal keeps it: the attributes that are on, the foreground's and background's codes."""

    attributes: frozenset[str]
    foreground: tuple[str, ...]  # () for the terminal's default
    background: tuple[str, ...]


@lru_cache(maxsize=4096)
def pens_of(style: Style, system: ColorSystem) -> Pens:
    attributes = frozenset(code for name, code in ATTRIBUTE_CODES if getattr(style, name))
    foreground = style.color.downgrade(system).get_ansi_codes(True) if style.color else ()
    background = style.bgcolor.downgrade(system).get_ansi_codes(False) if style.bgcolor else ()
    return Pens(attributes, tuple(foreground), tuple(background))


PLAIN = Pens(frozenset(), (), ())
# Attributes a space shows (a line through it, under or over it; reverse swaps the colours): with none of these on,
# a run of spaces shows its background only, whatever the foreground, bold, dim or italic
SHOWN_ON_A_SPACE = frozenset({"4", "7", "9", "21", "51", "52", "53"})


def as_blank(state: Pens | None, target: Pens) -> Pens:
    """The pen for a run of spaces drawn in `target`: the background it needs, and otherwise the terminal's pen as
    it is, when neither leaves a visible attribute on (the next run's foreground is often the one before)."""
    if state is None or (state.attributes | target.attributes) & SHOWN_ON_A_SPACE:
        return target
    return Pens(state.attributes, state.foreground, target.background)


# The SGR code that turns each attribute off (ECMA-48; xterm, VTE, kitty, tmux, the Linux console and Windows
# Terminal keep them). One code may end two: 22 ends bold and dim, 24 both underlines, 54 frame and encircle.
ATTRIBUTE_OFF = {
    "1": "22", "2": "22", "3": "23", "4": "24", "5": "25", "6": "25", "7": "27", "8": "28", "9": "29", "21": "24",
    "51": "54", "52": "54", "53": "55",
}  # fmt: skip


@lru_cache(maxsize=4096)
def pen_change(state: Pens | None, target: Pens) -> str:
    """The sequence that takes the terminal from `state` (None: not known) to `target`: the attributes and colours
    that differ (an attribute off by its own code, with any it ends too that should stay on), or a reset and the
    whole style when that is shorter. Kept per pair: a heatmap's frame goes through the same few hundred pairs
    again and again."""
    codes = ["0", *sorted(target.attributes), *target.foreground, *target.background]  # from a reset
    if state is not None:
        going = state.attributes - target.attributes
        off = sorted({ATTRIBUTE_OFF[code] for code in going})
        ended = {code for code, off_code in ATTRIBUTE_OFF.items() if off_code in off}
        change = off + sorted(target.attributes - (state.attributes - ended))
        if target.foreground != state.foreground:
            change += target.foreground or ("39",)
        if target.background != state.background:
            change += target.background or ("49",)
        if len(";".join(change)) <= len(";".join(codes)):  # to plain, "0" beats "39;49"
            codes = change
    return f"\x1b[{';'.join(codes)}m" if codes else ""


class Pen:
    """Rich ends every styled run with a reset and starts the next with its whole style (`\\e[97;48;5;60m…\\e[0m`):
    in a heatmap, where every cell has its own background, that is most of the bytes. The pen remembers the
    style the terminal is in and sends only the change: `\\e[48;5;61m` for the next cell. It resets only when
    the whole style is shorter, and once at the end of the frame (`finish`). Spaces change only the background
    (`as_blank`): a panel's padding between two labels in one colour costs no colour change."""

    def __init__(self) -> None:
        self.state: Pens | None = None  # None: not known (the frame's start, or after Rich wrote a run)

    def write(self, text: str, style: Style | None, console: Console) -> str:
        if not text:
            return ""
        system = COLOR_SYSTEMS.get(console.color_system or "")
        if style is not None and (system is None or style.link):  # hyperlinks and odd consoles: Rich's own way
            self.state = None
            return "\x1b[0m" + style.render(text, color_system=console._color_system)
        target = pens_of(style, system) if style is not None else PLAIN
        if text.isspace() and text.isascii():
            target = as_blank(self.state, target)
        sequence = pen_change(self.state, target)
        self.state = target
        return sequence + text

    def finish(self) -> str:
        """Leave the terminal in its plain style, as Rich's runs do."""
        done = "" if self.state is None or self.state == PLAIN else "\x1b[0m"
        self.state = None
        return done
