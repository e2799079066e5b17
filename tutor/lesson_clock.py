"""How long each lesson has been open in the app, for the learner's progress (and their teacher's report).

Time is counted between the learner's own actions (a key, the mouse) and charged to the lesson open in the
app (its quick check, experiments and exercises opened from it included). A learner who walks away leaves the
app open, not working: a pause longer than IDLE_SECONDS counts as IDLE_SECONDS. No Textual here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

IDLE_SECONDS = 300.0  # reading a long section without a key takes minutes; more is the learner away


class LessonClock:
    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self.lesson: str | None = None  # open since `since`
        self.since = 0.0
        self.counted: dict[str, float] = {}  # seconds per lesson not yet taken into the progress

    def mark(self, lesson: str | None) -> None:
        """An action, or another lesson opened: the time since the last mark goes to the lesson open then."""
        now = self.now()
        if self.lesson is not None:
            spent = min(max(0.0, now - self.since), IDLE_SECONDS)
            self.counted[self.lesson] = self.counted.get(self.lesson, 0.0) + spent
        self.lesson, self.since = lesson, now

    def take(self) -> dict[str, float]:
        """The seconds counted since the last take, per lesson (then forgotten here)."""
        counted, self.counted = self.counted, {}
        return counted
