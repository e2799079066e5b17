"""`tutor` in a real pseudo-terminal: it starts, takes keys, and saves progress when the line drops; a terminal
that goes away ends it within seconds, whether or not a SIGHUP comes with it."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import struct
import termios
import threading
import time
from pathlib import Path

import pytest
from helpers import drain, read_until, read_until_all, spawn, spawn_like_sshd

GONE_WITHIN = 3.0  # seconds from losing the terminal to the end of the process: saving takes milliseconds


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_progress_survives_a_dropped_line(tmp_path: Path, signum: int) -> None:
    process, master = spawn(tmp_path)
    try:
        # the first trace is drawn: the lesson has set its prompt (keys typed before can race with it on a busy machine)
        out = read_until_all(master, b"Lesson 1/", b"Step 1/")  # the first frame holds both
        assert b"Lesson 1/" in out and b"Step 1/" in out
        drain(master, 0.5)
        os.write(master, b"\x15")  # ctrl+u (a burst "ctrl+u + text" can run the binding after the text)
        assert b"Type a prompt" in read_until(master, b"Type a prompt")  # so wait until the prompt is empty
        os.write(master, "狗追猫".encode())
        drain(master, 0.5)
        os.write(master, b"\x1b[B\x1b[B")  # ↓ ↓
        drain(master, 0.15)  # the keys are handled; the deferred save (0.5 s) has not run yet
        process.send_signal(signum)
        if signum == signal.SIGHUP:  # the line is gone: nobody reads the terminal any more
            os.close(master)
            master = -1
        deadline = time.monotonic() + 15
        while process.poll() is None and time.monotonic() < deadline:
            if master >= 0:
                drain(master, 0.1)
            else:
                time.sleep(0.1)
        assert process.poll() is not None, "tutor did not exit"
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
    saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
    assert saved["last"]["prompt"] == "狗追猫"
    assert saved["last"]["step"] == "blocks.0.attn"


def gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for its parent has ended too)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def seconds_to_end(pid: int, limit: float = GONE_WITHIN) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if gone(pid):
            return time.monotonic() - started
        time.sleep(0.02)
    return None


def saved_last(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))["last"]


def test_a_terminal_closed_without_a_hang_up_ends_the_tutor(tmp_path: Path) -> None:
    """No SIGHUP: tutor is not in the terminal's session (spawn's setsid takes no controlling terminal). Textual's
    input thread found the hung-up terminal readable with nothing to read and looped at most of a core, for ever."""
    process, master = spawn(tmp_path, "--lang", "en")
    try:
        assert b"Step 1/" in read_until(master, b"Step 1/", timeout=40)
        drain(master, 0.5)
        os.write(master, b"\x1b[B")  # ↓
        drain(master, 0.15)  # handled; the deferred save has not run yet
        os.close(master)
        master = -1
        took = seconds_to_end(process.pid)
        assert took is not None, f"tutor still runs {GONE_WITHIN} s after its terminal went away"
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
        process.wait()
    assert saved_last(tmp_path)["step"] == "blocks.0.ln1"


def output_is_stuck(pid: int) -> bool:
    """The terminal's buffer is full (a thread sleeps in the tty's write) and so is Textual's output queue (the
    main thread sleeps on a lock, Queue.put's), and the process has used no CPU for 0.3 s. Read from the kernel's
    wait channels; False where they are hidden."""

    def cpu_ticks() -> int:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def waits() -> dict[int, str]:
        found = {}
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/wchan", encoding="utf-8") as wchan:
                found[int(task)] = wchan.read()
        return found

    before = cpu_ticks()
    time.sleep(0.3)
    now = waits()
    main = now.pop(pid, "")
    writing = any(wait in ("wait_woken", "n_tty_write") for wait in now.values())
    return cpu_ticks() == before and "futex" in main and writing


def test_a_session_dropped_while_frames_wait_to_go_out_ends_the_tutor(tmp_path: Path) -> None:
    """As sshd runs it: a shell leads the session, the terminal is its controlling terminal, and the connection
    drops while the tutor still has frames to send (sshd stops reading first, then closes the terminal, and the
    kernel sends SIGHUP). Textual's output thread died at the first failed write with its queue full, and the app,
    its progress saved, slept for ever in Queue.put."""
    shell, master, tutor = spawn_like_sshd(tmp_path, "--lang", "en")
    try:
        assert b"Step 1/" in read_until(master, b"Step 1/", timeout=40)
        drain(master, 0.5)
        for n in range(300):  # nobody reads any more; the last keys and a resize still draw
            size = (80, 250) if n % 2 else (40, 120)
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
            os.write(master, b"\x1b[B")
            time.sleep(0.02)
            if n % 10 == 9 and output_is_stuck(tutor):
                break
        os.close(master)  # sshd closes the terminal
        master = -1
        took = seconds_to_end(tutor)
        assert took is not None, f"tutor still runs {GONE_WITHIN} s after its terminal went away"
    finally:
        if master >= 0:
            os.close(master)
        if not gone(tutor):
            os.kill(tutor, signal.SIGKILL)
        shell.kill()
        shell.wait()
    assert saved_last(tmp_path)["step"] != "embed"  # the keys it took are kept


class BrokenTerminal:
    """A terminal that is gone: every write fails as a hung-up tty's does."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")

    def fileno(self) -> int:
        return -1


def test_textuals_output_thread_never_blocks_once_the_terminal_is_gone() -> None:
    """The app's output thread (what tutor.app installs in Textual's Linux driver) takes writes, and its stop
    returns, however many come after a write failed; Textual's own blocked for ever after 30."""
    from textual.drivers import linux_driver

    import tutor.app  # noqa: F401  (installs tutor/patches/lost_terminal.py)

    writer = linux_driver.WriterThread(BrokenTerminal())  # type: ignore[arg-type]
    writer.start()

    def write_then_stop() -> None:
        for n in range(100):
            writer.write(f"frame {n}")
        writer.stop()

    app_side = threading.Thread(target=write_then_stop, daemon=True)
    app_side.start()
    app_side.join(timeout=5)
    assert not app_side.is_alive(), "a write or stop blocked after the terminal went away"
