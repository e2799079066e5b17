"""How the tutor's process is tuned for a shared lab machine: memory, the garbage collector, a parent's death.

Four settings that patch no library's code (they live apart from tutor/patches/), each measured or needed as
explained below:

## The allocator
glibc's malloc and the forward pass: keep the memory of the last trace for the next keystroke.

Every keystroke builds a new trace (91 arrays for `tiny`) and drops the old one. By default glibc
hands blocks of 128 KB or more (the logits) straight to mmap, and gives freed heap memory back to
the kernel once 128 KB sit free at its top; dropping a whole trace does exactly that, so the next
pass pays for fresh pages again. Measured on `tiny` at 32 tokens: 2.3 ms of CPU per pass by default,
1.4–1.6 ms with the thresholds below (the arrays are then reused from the heap).

The trim threshold must exceed one whole trace, or a dropped trace is still given back: a 64-token trace of a
SmolLM-135M-shaped Llama holds ~100 MB, and with a 32 MB threshold the heap was trimmed after each pass whenever
the trace lay at its top (in a process that had imported torch, every time: 24 000 page faults and ~45 ms of a
300 ms pass). Memory the process never used is not kept: `tiny`'s traces stay well under a megabyte.

## asyncio without TLS
The app's event loop never opens a network connection, yet `import asyncio` imports `ssl`, which loads OpenSSL.

asyncio imports `ssl` in a `try` and works on without it (`ssl = None`: only its TLS connections refuse). The app
imports asyncio with `ssl` hidden for that one import; a later `import ssl` elsewhere loads it as usual. Measured
on the first screen: 0.3–1 MB of PSS a tutor (OpenSSL's relocated pages, the `ssl` module) and ~6 ms of start-up.

## The garbage collector
Python's cyclic garbage collector: its full passes run while the learner is idle, not inside a keystroke.

A full (generation 2) pass walks every object the session keeps: the traces, the panels' cached lines,
Textual's widgets. gc.freeze() after start-up takes what start-up built out of it, but the session keeps
building; measured at 120×40 over 104 step keys with a 24-token prompt, 10 full passes ran inside keys,
the longest 71 ms (the step keys' p95 went from ~35 to ~70 ms). Here the automatic full pass is off and
`IdleCollector.tick` runs one after the keys have been quiet for a moment; the young generations still
collect as usual (each pass ≤ ~8 ms), so garbage in them is freed as before.

The start itself runs with the collector off (`collector_paused`): nearly all it builds (modules, classes,
widgets, the model) lives for the whole session, and the ~190 passes that walked it took ~45 ms of a start's
~0.5 s of CPU. What the imports built is frozen as it is (`freeze_imports`); after the first frame
`collector_after_start` frees what the rest of the start left unreachable in one pass over the ~30,000 objects
it made, freezes what is left, and turns the collector on again.

## A parent's death
A browser tab's tutor ends with its server: the kernel sends it SIGHUP when `tutor serve` dies.

textual-serve's server tells each tab's tutor to quit when the tab closes or the server stops; a server that
is killed outright (SIGKILL, out of memory) cannot, and Textual's web driver only stops reading at the end of
its input: the tutor lived on, orphaned, with nobody to draw for. SIGHUP is what a dropped SSH session sends,
and TutorApp saves the learner's progress on it and leaves. Linux's prctl(PR_SET_PDEATHSIG); elsewhere nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator

# -- the allocator ----------------------------------------------------------------------------------------------

M_TRIM_THRESHOLD = -1  # from glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 4 << 20  # blocks below 4 MB come from the heap (a GPT-2 logits table still gets mmap)
TRIM_THRESHOLD = 512 << 20  # keep up to 512 MB of freed heap (a 64-token trace of a 0.5B model) for the next pass


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):  # no mallopt: musl, or a static build
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


# -- asyncio without TLS ---------------------------------------------------------------------------------------


def import_asyncio_without_tls() -> bool:
    """Import asyncio with `ssl` hidden from it; True if it was, False if asyncio or ssl was loaded already."""
    if "asyncio" in sys.modules:
        return False
    hidden = "ssl" not in sys.modules
    if hidden:
        sys.modules["ssl"] = None  # type: ignore[assignment]  # `import ssl` raises ImportError
    try:
        import asyncio  # noqa: F401
    finally:
        if hidden:
            del sys.modules["ssl"]
    return hidden


# -- the garbage collector --------------------------------------------------------------------------------------

QUIET = 1.5  # seconds without a key before a full pass may run
FULL_PASS_THRESHOLD = 1_000_000  # gen-1 passes between automatic full passes: in effect, never


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No collector passes inside, until `collector_after_start` (the app's first frame) turns it on again."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()  # an app that ended before its first frame, a command that failed


def freeze_imports() -> None:
    """What the imports built (modules, classes, functions: ~90,000 objects) out of every later pass, unexamined:
    they leave ~500 unreachable objects, and one pass over them all would cost ~25 ms."""
    gc.freeze()


def collector_after_start() -> None:
    """What the start built frozen out of later full passes; if the collector was paused, the start's garbage freed
    first and the collector on again."""
    if not gc.isenabled():
        gc.collect()
    gc.freeze()
    gc.enable()


class IdleCollector:
    """Keeps the full pass for quiet moments: `key()` on every keystroke, `tick()` from a timer."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_key = clock()
        self.pending = False  # young passes have run since the last full one: something may have aged
        self.threshold = gc.get_threshold()
        young, middle, _ = self.threshold
        gc.set_threshold(young, middle, FULL_PASS_THRESHOLD)

    def key(self) -> None:
        self.last_key = self.clock()
        self.pending = True

    def tick(self) -> bool:
        """A full pass if the keys have been quiet for `QUIET` seconds and any key came since the last one."""
        if not self.pending or self.clock() - self.last_key < QUIET:
            return False
        gc.collect()
        self.pending = False
        return True

    def restore(self) -> None:
        gc.set_threshold(*self.threshold)


# -- a parent's death -------------------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def hang_up_with_parent() -> bool:
    """Ask the kernel for SIGHUP when this process's parent dies; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if prctl(PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # the server died before the request: nobody will send the signal
        os.kill(os.getpid(), signal.SIGHUP)
    return True
