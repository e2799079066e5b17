"""Only the cells that changed go to the terminal (tutor/patches/terminal_diff.py).

The check that matters is end to end: the real `tutor` in a pty, its bytes fed to a terminal
emulator (pyte), a run of keys that changes every part of the screen; then ctrl+l, which forgets
what was drawn and sends every cell again. If the model of the screen had gone wrong anywhere,
the redraw would change what the terminal shows.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios
import time
from pathlib import Path

import pyte
import pytest
from helpers import drain, read_until, spawn
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from tutor.patches.terminal_diff import ScreenModel, _runs

DOWN, UP, F5, F6, F8, PGDN = b"\x1b[B", b"\x1b[A", b"\x1b[15~", b"\x1b[17~", b"\x1b[19~", b"\x1b[6~"
ALT_RIGHT, ALT_LEFT, BACKSPACE, TAB, CTRL_L = b"\x1b[1;3C", b"\x1b[1;3D", b"\x7f", b"\t", b"\x0c"
KEYS = [
    "狗".encode(), BACKSPACE, "猫追".encode(), *[DOWN] * 7, F6, F6, UP, ALT_RIGHT, PGDN, F5, *[DOWN] * 3,
    F8, b"ab", TAB, PGDN, PGDN, TAB, UP,
]  # fmt: skip


def screen_state(screen: pyte.Screen) -> list[list[tuple[object, ...]]]:
    """Every cell: its character and how it is drawn. A space with no line and no reverse shows only its
    background: the pen leaves its foreground, bold and italic as they were (`as_blank`), so they are not
    compared there."""
    rows = [[screen.buffer[y][x] for x in range(screen.columns)] for y in range(screen.lines)]
    return [[cell_look(c) for c in row] for row in rows]


def cell_look(c: pyte.screens.Char) -> tuple[object, ...]:
    if c.data == " " and not (c.underscore or c.reverse or c.strikethrough):
        return (c.data, c.bg)
    return (c.data, c.fg, c.bg, c.bold, c.italics, c.underscore, c.reverse, c.strikethrough)


def cells_text(screen: pyte.Screen) -> str:
    return "\n".join(screen.display)


def feed(stream: pyte.ByteStream, master: int, quiet: float = 0.3, timeout: float = 15.0) -> int:
    """Read what the app writes until it has been quiet for `quiet` seconds; bytes read. (A fixed wait
    would be too short on a busy machine: a frame that comes late would be missed.)"""
    total = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = drain(master, quiet)
        if not data:
            break
        stream.feed(data)
        total += len(data)
    return total


def resize(process_group: int, master: int, screen: pyte.Screen, width: int, height: int) -> None:
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
    screen.resize(height, width)
    os.killpg(process_group, signal.SIGWINCH)


@pytest.mark.parametrize("colours", ["256", "truecolor"])
def test_the_terminal_shows_what_a_full_redraw_shows(tmp_path: Path, colours: str) -> None:
    env = {"COLORTERM": "truecolor" if colours == "truecolor" else None, "NO_COLOR": None}
    process, master = spawn(tmp_path, "--lang", "en", env_changes=env)
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    try:
        stream.feed(read_until(master, "‖x‖".encode()))
        feed(stream, master, quiet=1.0)
        for key in KEYS:
            os.write(master, key)
            feed(stream, master)
        resize(process.pid, master, screen, 100, 30)
        feed(stream, master, quiet=1.0)
        for key in (DOWN, F6, DOWN):
            os.write(master, key)
            feed(stream, master)
        drawn = screen_state(screen)
        text = cells_text(screen)
        os.write(master, CTRL_L)
        assert feed(stream, master, quiet=1.0) > 100 * 30  # every cell again
        assert cells_text(screen) == text
        assert screen_state(screen) == drawn
    finally:
        process.kill()
        process.wait()
        os.close(master)


def test_the_start_sends_the_screen_once(tmp_path: Path) -> None:
    """From the start to quiet, the first frame and then only what changed: less than ctrl+l's one whole redraw.
    Textual painted the whole screen a second time after the first frame (the screen's first resume and a mount,
    each asking to repaint every cell): ~32 KB at the start, against ctrl+l's ~19 KB."""
    process, master = spawn(tmp_path, "--lang", "en")
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    try:
        start = read_until(master, "‖x‖".encode())
        stream.feed(start)
        started = len(start) + feed(stream, master, quiet=1.0)
        text = cells_text(screen)
        os.write(master, CTRL_L)
        whole = feed(stream, master, quiet=1.0)
        assert cells_text(screen) == text  # the same screen
        assert started < whole, (started, whole)
    finally:
        process.kill()
        process.wait()
        os.close(master)


def test_a_token_key_sends_a_fraction_of_the_panel(tmp_path: Path) -> None:
    """Moving the query token in the attention panel moves a marker in every head's map and the highlighted row,
    and changes the read-out: a few cells, not the panel."""
    process, master = spawn(tmp_path, "--lang", "en")
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    try:
        stream.feed(read_until(master, "‖x‖".encode()))
        feed(stream, master, quiet=1.0)
        for key in [DOWN] * 2:  # to blocks.0.attn: the attention panel
            os.write(master, key)
            feed(stream, master)
        assert "All 4 heads" in cells_text(screen)
        os.write(master, ALT_LEFT)  # the query one token back: the same panel
        sent = feed(stream, master)
        assert "query 1" in cells_text(screen)
        assert 0 < sent < 2500  # a full repaint of the panel area alone is ~7 KB
    finally:
        process.kill()
        process.wait()
        os.close(master)


def test_wide_characters_and_combining_marks_are_whole_cells() -> None:
    bold = Style(bold=True)
    model = ScreenModel()
    model.size = (12, 2)
    console = Console(color_system="256", force_terminal=True)
    model._draw([(3, 0, Strip([Segment("a狗", bold), Segment("e\u0301b")]))], console)
    assert model.chars[0][3:8] == ["a", "狗", "", "e\u0301", "b"]
    assert model.styles[0][3:8] == [bold, bold, bold, None, None]
    # the same line again: nothing to send; one changed letter: just that run
    assert model._draw([(3, 0, Strip([Segment("a狗", bold), Segment("e\u0301b")]))], console) == ""
    sent = model._draw([(3, 0, Strip([Segment("a狗", bold), Segment("e\u0301c")]))], console)
    assert "c" in sent and "狗" not in sent
    # a change in the right half of 狗 sends the whole character; close changes go out as one run
    assert list(_runs([5], model.chars[0])) == [(4, 5)]
    assert list(_runs([3, 6], model.chars[0])) == [(3, 6)]
    assert list(_runs([0, 11], ["x"] * 12)) == [(0, 0), (11, 11)]
    assert list(_runs([3, 6], ["x", "x", "x", "x", None, "x", "x"])) == [(3, 3), (6, 6)]  # never across unknowns


def test_half_a_wide_character_overwritten_leaves_the_other_half_unknown() -> None:
    model = ScreenModel()
    model.size = (10, 1)
    console = Console(color_system="256", force_terminal=True)
    model._draw([(0, 0, Strip([Segment("ab狗cd")]))], console)
    assert model.chars[0][:6] == ["a", "b", "狗", "", "c", "d"]
    model._draw([(2, 0, Strip([Segment("x")]))], console)  # over the left half of 狗
    assert model.chars[0][2:4] == ["x", None]
    model._draw([(0, 0, Strip([Segment("ab狗cd")]))], console)
    model._draw([(3, 0, Strip([Segment("y")]))], console)  # over the right half of 狗
    assert model.chars[0][2:4] == [None, "y"]
    # a run is never merged across the unknown cell: what is sent stays in its columns
    assert list(_runs([1, 4], model.chars[0])) == [(1, 1), (4, 4)]


def test_the_pen_sends_only_what_changes_between_styles() -> None:
    from tutor.patches.terminal_diff import Pen

    console = Console(color_system="256", force_terminal=True)
    pen = Pen()
    red, blue = Style(color="white", bgcolor="color(160)"), Style(color="white", bgcolor="color(25)")
    assert pen.write("+0.12 ", red, console) == "\x1b[0;37;48;5;160m+0.12 "  # the frame's first: from a reset
    assert pen.write("-0.50 ", blue, console) == "\x1b[48;5;25m-0.50 "  # the next cell: its background only
    assert pen.write("x", blue, console) == "x"  # nothing changes: nothing sent
    assert pen.write("b", blue + Style(bold=True), console) == "\x1b[1mb"  # an attribute on: just that
    assert pen.write("c", blue, console) == "\x1b[22mc"  # one off: its own code, not a reset and the style again
    both = blue + Style(bold=True, dim=True)
    pen.write("e", both, console)
    assert pen.write("f", blue + Style(dim=True), console) == "\x1b[22;2mf"  # 22 ends bold and dim: dim again
    assert pen.write("d", None, console) == "\x1b[0md"
    assert pen.finish() == ""  # already plain
    pen.write("e", red, console)
    assert pen.finish() == "\x1b[0m"


def test_spaces_change_only_the_background() -> None:
    """A run of spaces shows its background only: the pen keeps the terminal's foreground and bold for it, so the
    text after it in the same colour needs no change; a space with a line under it or in reverse shows its
    foreground, and gets its whole style."""
    from tutor.patches.terminal_diff import Pen

    console = Console(color_system="256", force_terminal=True)
    pen = Pen()
    label, gap = Style(color="color(250)", bold=True), Style(color="color(245)", bgcolor="color(236)")
    pen.write("Step", label, console)
    assert pen.write("   ", gap, console) == "\x1b[48;5;236m   "  # the background alone: no 22, no 38;5;245
    assert pen.write("4", label + Style(bgcolor="color(236)"), console) == "4"  # the pen was already right
    underlined = Style(color="color(160)", underline=True)
    assert pen.write("  ", underlined, console) == "\x1b[0;4;38;5;160m  "  # a line under spaces shows its colour
    assert pen.write("x ", gap, console) == "\x1b[0;38;5;245;48;5;236mx "  # not only spaces: its style
