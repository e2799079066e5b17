"""The one way a screen runs a model pass: the latest request wins.

A request runs inline (on the keystroke itself: its numbers come in the same frame as the key) when
the caller says the model is quick, else in a thread worker. Each request gets a ticket; a newer
request cancels the older one (its pass stops at the next hook) and a result whose ticket is no
longer the latest is dropped. An error in a pass becomes the owner's notice — never a traceback,
never the end of the learner's session (Textual's workers would exit the app by default).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from textual.dom import DOMNode
from textual.worker import get_current_worker

import model
from tutor.i18n import t

R = TypeVar("R")
Stop = Callable[[], bool]
QUICK_PASS = 0.02  # seconds: a pass this quick may run on the keystroke itself, not in a worker


def failure_words(error: Exception, lang: str) -> str:
    """The one line a learner reads when a pass fails."""
    return t("model_failed", lang, error=f"{type(error).__name__}: {error}")


class PassRunner(Generic[R]):
    """Runs `compute(stop)` for `owner`, hands the latest result to `deliver` and any error to `failed`."""

    def __init__(
        self,
        owner: DOMNode,
        group: str,
        deliver: Callable[[R], None],
        failed: Callable[[Exception], None],
    ) -> None:
        self.owner = owner
        self.group = group
        self.deliver = deliver
        self.failed = failed
        self.seconds = math.inf  # how long the last finished pass took (inf: none measured yet)
        self._latest = 0  # the ticket of the newest request

    @property
    def quick(self) -> bool:
        """Whether the last pass was quick enough to run the next one inline."""
        return self.seconds < QUICK_PASS

    def forget_speed(self) -> None:
        """Another model: its speed is not known yet, so its first pass goes to a worker."""
        self.seconds = math.inf

    def run(self, compute: Callable[[Stop], R], inline: bool = False) -> None:
        """Start a pass; any older one still running is cancelled and its result dropped."""
        ticket = self._new_ticket()
        if inline:
            self._run(ticket, compute, stop=lambda: False, hand_over=lambda f, *a: f(*a))
            return
        self.owner.run_worker(
            lambda: self._in_thread(ticket, compute),
            thread=True,
            exclusive=True,
            group=self.group,
            exit_on_error=False,  # an escaped error must not close the learner's session (see _run)
        )

    def cancel(self) -> None:
        """Drop whatever is running: its result will not be delivered."""
        self._new_ticket()

    def _new_ticket(self) -> int:
        self._latest += 1
        self.owner.workers.cancel_group(self.owner, self.group)
        return self._latest

    def _in_thread(self, ticket: int, compute: Callable[[Stop], R]) -> None:
        worker = get_current_worker()

        def stop() -> bool:
            return worker.is_cancelled or ticket != self._latest

        def hand_over(callback: Callable[..., None], *args: object) -> None:
            with contextlib.suppress(RuntimeError):  # the app is closing: nobody is left to show the result to
                self.owner.app.call_from_thread(callback, *args)

        self._run(ticket, compute, stop, hand_over)

    def _run(
        self,
        ticket: int,
        compute: Callable[[Stop], R],
        stop: Stop,
        hand_over: Callable[..., None],
    ) -> None:
        started = time.perf_counter()
        try:
            result = compute(stop)
        except model.Stopped:
            return
        except Exception as error:  # a bug, a broken file: say it, and the app goes on
            hand_over(self._fail, ticket, error)
            return
        self.seconds = time.perf_counter() - started
        hand_over(self._deliver, ticket, result)

    def _deliver(self, ticket: int, result: R) -> None:
        if ticket == self._latest:
            self.deliver(result)

    def _fail(self, ticket: int, error: Exception) -> None:
        if ticket == self._latest:
            self.failed(error)
