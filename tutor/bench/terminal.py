"""`tutor` in real pseudo-terminals: time to the first screen, bytes per step key, and memory.

Each process gets its own pty (sized with TIOCSWINSZ), its own state folder, and a reader that
drains its output, as a terminal emulator would.
"""

from __future__ import annotations

import fcntl
import os
import pty
import random
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

DOWN = b"\x1b[B"
UP = b"\x1b[A"
TUTOR = [sys.executable, "-m", "tutor", "--lang", "en"]
MINIMAL = [sys.executable, "-m", "tutor.bench.minimal_app"]
# A frame holding these has drawn the lesson and the panels (the step info comes with the first trace).
TUTOR_READY = (b"Lesson 1/", "‖x‖".encode())
MINIMAL_READY = (b"Step 0 ready",)


@dataclass
class Terminal:
    """One process on one pty, and everything it wrote."""

    process: subprocess.Popen[bytes]
    master: int
    started: float
    output: bytearray = field(default_factory=bytearray)
    first_screen: float | None = None  # seconds from start to the end of the first full frame
    first_screen_cpu: float | None = None  # the process's CPU seconds (user + system) by then

    def pump(self, ready: tuple[bytes, ...]) -> int:
        """Read what is waiting; returns the byte count. Notes when the first full screen is complete."""
        try:
            chunk = os.read(self.master, 1 << 16)
        except OSError:
            return 0
        self.output += chunk
        # Textual writes a frame with one write(), so the read that completes the markers ends the frame
        if self.first_screen is None and all(marker in _plain(self.output) for marker in ready):
            self.first_screen = time.perf_counter() - self.started
            self.first_screen_cpu = cpu_time(self.process.pid)
        return len(chunk)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.close(self.master)


def cpu_time(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used so far, from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5), in clock ticks
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def task_cpu(pid: int) -> float:
    """CPU seconds all threads of a running process have used so far, to the nanosecond (/proc/PID/task/*/schedstat:
    the clock ticks of /proc/PID/stat are 10 ms, a key's whole cost)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended meanwhile
            continue
    return total / 1e9


def _plain(data: bytearray) -> bytes:
    """The text without escape sequences (markers may be split by style changes)."""
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", bytes(data))


def compile_sources() -> None:
    """The .pyc files an installed tutor has (pip writes them): without them, as under PYTHONDONTWRITEBYTECODE=1,
    every start compiles tutor/ and model/ again (~0.1 s), which the minimal app, all in site-packages, never does."""
    import compileall

    import model
    import tutor

    for package in (tutor, model):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)


def spawn(command: list[str], size: tuple[int, int], truecolor: bool, state: Path) -> Terminal:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {
        key: value for key, value in os.environ.items() if key not in ("COLORTERM", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM")
    }
    env |= {"TERM": "xterm-256color", "LANG": "en_US.UTF-8", "TUTOR_STATE_DIR": str(state)}
    if truecolor:
        env["COLORTERM"] = "truecolor"
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, cwd=state
    )
    os.close(slave)
    return Terminal(process, master, started)


def pump_all(terminals: list[Terminal], ready: tuple[bytes, ...], seconds: float, until_quiet: float = 0.0) -> int:
    """Drain every terminal for `seconds` (or until none wrote for `until_quiet` seconds); bytes read."""
    total = 0
    deadline = time.perf_counter() + seconds
    last_output = time.perf_counter()
    by_fd = {t.master: t for t in terminals}
    while time.perf_counter() < deadline:
        if until_quiet and time.perf_counter() - last_output > until_quiet:
            break
        readable, _, _ = select.select(list(by_fd), [], [], 0.02)
        for fd in readable:
            count = by_fd[fd].pump(ready)
            total += count
            if count:
                last_output = time.perf_counter()
    return total


def wait_for_first_screen(terminals: list[Terminal], ready: tuple[bytes, ...], timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while any(t.first_screen is None for t in terminals) and time.perf_counter() < deadline:
        pump_all(terminals, ready, 0.1)
    late = [t for t in terminals if t.first_screen is None]
    if late:
        text = _plain(late[0].output)[-300:].decode(errors="replace")
        raise TimeoutError(f"{len(late)} of {len(terminals)} never drew their first screen; last output: {text!r}")


def imported(code: str) -> tuple[float, float]:
    """Seconds, and CPU seconds, of a Python that runs `code` (its imports; one BLAS thread, as the app) and exits:
    the part of a start that comes before anything is drawn."""
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{code!r} failed ({process.returncode})")
    return seconds, usage.ru_utime + usage.ru_stime


@dataclass
class Session:
    first_screen: float  # seconds
    first_screen_cpu: float  # CPU seconds of the process until then
    step_bytes: list[int]  # bytes written for each step key
    rss: int  # bytes, after the keys
    pss: int


@contextmanager
def drawn(command: list[str], ready: tuple[bytes, ...], truecolor: bool, size: tuple[int, int]) -> Iterator[Terminal]:
    """One app started in a pty with a state folder of its own, once its first screen is drawn and it has gone
    quiet (the lesson finishes drawing); closed after."""
    compile_sources()
    with tempfile.TemporaryDirectory() as state:
        terminal = spawn(command, size, truecolor, Path(state))
        try:
            wait_for_first_screen([terminal], ready, 60)
            pump_all([terminal], ready, 5, until_quiet=0.5)
            yield terminal
        finally:
            terminal.close()


def session(command: list[str], ready: tuple[bytes, ...], truecolor: bool, steps: int, size=(120, 40)) -> Session:
    """Start one app, wait for its first screen, press ↓ `steps` times then ↑ as often, one key at a time."""
    with drawn(command, ready, truecolor, size) as terminal:
        step_bytes = []
        for key in [DOWN] * steps + [UP] * steps:
            os.write(terminal.master, key)
            step_bytes.append(pump_all([terminal], ready, 3, until_quiet=0.25))
        rss, pss = memory(terminal.process.pid)
        assert terminal.first_screen is not None and terminal.first_screen_cpu is not None
        return Session(terminal.first_screen, terminal.first_screen_cpu, step_bytes, rss, pss)


KEY_QUIET = 0.15  # seconds with no output after which a key's frames are all written (an idle tutor writes nothing)


@dataclass
class Keystrokes:
    # per kind ("type": a character typed into the prompt, "step": ↓ then ↑), for every key: seconds from its write
    # to the pty to the last byte it drew, and the process's CPU seconds over that (all threads, to the nanosecond)
    latencies: dict[str, list[float]]
    cpu: dict[str, list[float]]


def keystrokes(command: list[str], ready: tuple[bytes, ...], typing: str, steps: int, size=(120, 40)) -> Keystrokes:
    """One app in a pty, as a learner's terminal runs it: `typing` typed into an emptied prompt a key at a time, then
    ↓ `steps` times and ↑ as often. A key is done at the last byte read before the app has been quiet for KEY_QUIET:
    everything it drew, through the terminal driver and its writer thread, which the pilot's headless driver skips
    (and without the pilot's wait on every widget, which a terminal does not have). The CPU counts the quiet wait
    too (an idle tutor uses ~2 ms a second: ~0.3 ms a key)."""
    with drawn(command, ready, False, size) as terminal:
        os.write(terminal.master, b"\x15")  # ctrl+u: an empty prompt
        pump_all([terminal], ready, 5, until_quiet=0.5)
        keys = {"type": [char.encode() for char in typing], "step": [DOWN] * steps + [UP] * steps}
        latencies: dict[str, list[float]] = {kind: [] for kind in keys}
        cpu: dict[str, list[float]] = {kind: [] for kind in keys}
        for kind, sequence in keys.items():
            for key in sequence:
                cpu_before, written = task_cpu(terminal.process.pid), time.perf_counter()
                os.write(terminal.master, key)
                latencies[kind].append(_last_output(terminal, ready, written) - written)
                cpu[kind].append(task_cpu(terminal.process.pid) - cpu_before)
        return Keystrokes(latencies, cpu)


def _last_output(terminal: Terminal, ready: tuple[bytes, ...], since: float, timeout: float = 10.0) -> float:
    """When the last byte came, once `terminal` has written and then been quiet for KEY_QUIET."""
    last = None
    deadline = since + timeout
    while time.perf_counter() < deadline:
        # before the first byte, wait for it (up to the deadline): a zero-timeout select would spin a core the app needs
        wait = (last + KEY_QUIET if last is not None else deadline) - time.perf_counter()
        readable, _, _ = select.select([terminal.master], [], [], max(0.0, wait))
        if readable and terminal.pump(ready):
            last = time.perf_counter()
        elif last is not None and time.perf_counter() - last >= KEY_QUIET:
            return last
    raise TimeoutError("a key drew nothing" if last is None else "a key kept drawing")


@dataclass
class Crowd:
    count: int
    rss: int  # total bytes
    pss: int  # total bytes, shared pages split between their users
    weights_rss: int  # total bytes of the weights file resident, counted in every process
    weights_pss: int  # the same, shared pages split
    slowest_first_screen: float
    first_screen_cpu: list[float]  # each process's CPU seconds until its first screen
    typing: Typing | None = None  # the same characters typed into each, all at once
    typed_pss: int | None = None  # total PSS in bytes once they have typed (what a class's session holds)


@dataclass
class Typing:
    # seconds from a key written to its pty to the first frame showing it, every key of every tutor
    latencies: list[float]
    cpu_per_key: float  # the tutors' CPU seconds (all threads) over the typing, divided by the keys typed
    keys: int


TYPING = "猫追狗的一是在不了有和人"  # 12 characters, each typed into every tutor of the crowd
TYPING_GAP = 0.5  # seconds between one learner's keys: someone typing a prompt while reading


def type_together(terminals: list[Terminal], text: str = TYPING, gap: float = TYPING_GAP, seed: int = 0) -> Typing:
    """Every tutor gets `text`, one character every `gap` seconds, all typing at once: each learner starts at a
    random moment of the first `gap` (a class does not press keys in the same millisecond). A key is shown when
    the first read from its pty after the write holds the character (the prompt echoes it; with `tiny` its pass
    runs on the keystroke, so the same frame holds its panels)."""
    for terminal in terminals:
        os.write(terminal.master, b"\x15")  # ctrl+u: an empty prompt, as in the pilot's rows
    pump_all(terminals, TUTOR_READY, 10, until_quiet=1.0)
    cpu_before = sum(cpu_time(t.process.pid) for t in terminals)
    rng = random.Random(seed)
    begin = time.perf_counter() + 0.1
    due = sorted((begin + rng.uniform(0, gap) + k * gap, n, k) for n in range(len(terminals)) for k in range(len(text)))
    # per tutor, its keys not shown yet: (when written, its output length then, the character)
    waiting: dict[int, list[tuple[float, int, bytes]]] = {
        n: [] for n in range(len(terminals))
    }  # (written, offset, char)
    latencies: list[float] = []
    by_fd = {t.master: n for n, t in enumerate(terminals)}
    deadline = due[-1][0] + 30
    while (due or any(waiting.values())) and time.perf_counter() < deadline:
        while due and due[0][0] <= time.perf_counter():
            _, n, k = due.pop(0)
            char = text[k].encode()
            os.write(terminals[n].master, char)
            waiting[n].append((time.perf_counter(), len(terminals[n].output), char))
        timeout = max(0.0, min(0.01, due[0][0] - time.perf_counter())) if due else 0.01
        readable, _, _ = select.select(list(by_fd), [], [], timeout)
        for fd in readable:
            n = by_fd[fd]
            terminal = terminals[n]
            if not terminal.pump(TUTOR_READY):
                continue
            now = time.perf_counter()
            while waiting[n] and terminal.output.find(waiting[n][0][2], waiting[n][0][1]) >= 0:
                latencies.append(now - waiting[n].pop(0)[0])
    if any(waiting.values()):
        raise TimeoutError(f"{sum(map(len, waiting.values()))} typed characters never showed")
    pump_all(terminals, TUTOR_READY, 5, until_quiet=0.5)  # what the last keys drew, in the CPU count
    keys = len(terminals) * len(text)
    return Typing(latencies, (sum(cpu_time(t.process.pid) for t in terminals) - cpu_before) / keys, keys)


def crowd(count: int, size=(120, 40), weights: str = "tiny.safetensors", typing: str = "") -> Crowd:
    """`count` tutors started in ptys at once (a class on one lab machine), measured once all drew; then, if
    `typing`, the same characters typed into all of them at once (`type_together`)."""
    compile_sources()
    with tempfile.TemporaryDirectory() as root:
        terminals = []
        try:
            for n in range(count):
                state = Path(root) / str(n)
                state.mkdir()
                terminals.append(spawn(TUTOR, size, False, state))
            wait_for_first_screen(terminals, TUTOR_READY, 60 + 10 * count)
            pump_all(terminals, TUTOR_READY, 5, until_quiet=1.0)
            rss = pss = weights_rss = weights_pss = 0
            for terminal in terminals:
                r, p = memory(terminal.process.pid)
                wr, wp = mapping_memory(terminal.process.pid, weights)
                rss, pss, weights_rss, weights_pss = rss + r, pss + p, weights_rss + wr, weights_pss + wp
            slowest = max(t.first_screen or 0.0 for t in terminals)
            cpu = [t.first_screen_cpu or 0.0 for t in terminals]
            typed = type_together(terminals, typing) if typing else None
            typed_pss = sum(memory(t.process.pid)[1] for t in terminals) if typed else None
            return Crowd(count, rss, pss, weights_rss, weights_pss, slowest, cpu, typed, typed_pss)
        finally:
            for terminal in terminals:
                terminal.close()


def memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in bytes, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0]) * 1024
    return fields["Rss"], fields["Pss"]


def mapping_memory(pid: int, file_name: str) -> tuple[int, int]:
    """(RSS, PSS) in bytes of a process's mappings of the file named `file_name`."""
    rss = pss = 0
    inside = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head[0]):
            inside = line.endswith(file_name)
        elif inside and head[0] == "Rss:":
            rss += int(head[1]) * 1024
        elif inside and head[0] == "Pss:":
            pss += int(head[1]) * 1024
    return rss, pss
