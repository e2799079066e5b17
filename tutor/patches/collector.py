"""Python's cyclic garbage collector: its full passes run while the learner is idle, not inside a keystroke.

A full (generation 2) pass walks every object the session keeps: the traces, the panels' cached lines,
Textual's widgets. gc.freeze() after start-up takes what start-up built out of it, but the session keeps
building; measured at 120×40 over 104 step keys with a 24-token prompt, 10 full passes ran inside keys,
the longest 71 ms (the step keys' p95 went from ~35 to ~70 ms). Here the automatic full pass is off and
`collect_when_idle` runs one after the keys have been quiet for a moment; the young generations still
collect as usual (each pass ≤ ~8 ms), so garbage in them is freed as before.
"""

from __future__ import annotations

import gc
import time

QUIET = 1.5  # seconds without a key before a full pass may run
FULL_PASS_THRESHOLD = 1_000_000  # gen-1 passes between automatic full passes: in effect, never


class IdleCollector:
    """Keeps the full pass for quiet moments: `key()` on every keystroke, `tick()` from a timer."""

    def __init__(self, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
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
