"""The one way a screen runs a model pass: the latest request wins.

A request runs inline (on the keystroke itself: its numbers come in the same frame as the key) when
the caller says it is quick — `quick_for(work)`, from the last finished pass — else in a thread
worker, which gives way to the app's own thread. Each request gets a ticket; a newer request
cancels the older one (its pass stops at the next hook) and a result whose ticket is no longer the
latest is dropped. An error in a pass becomes the owner's notice — never a traceback,
never the end of the learner's session (Textual's workers would exit the app by default).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
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
WORKER_NICENESS = 5  # a worker thread yields the CPU to the app's own thread: the typed character comes first


def yield_to_the_app() -> None:
    """Lower this worker thread's scheduling priority (Linux only: there a thread has a niceness of its own;
    elsewhere the call would reach the whole process). On a lab machine's busy cores, the thread that draws
    the keystroke then goes before a model pass — its own app's and its neighbours'. Once per thread: the
    pool's threads are reused and an unprivileged thread cannot raise it back."""
    if sys.platform != "linux" or getattr(_thread_state, "niced", False):
        return
    _thread_state.niced = True
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICENESS)


_thread_state = threading.local()


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
        self.seconds = math.inf  # how long the last measured pass took (inf: none measured yet)
        self.work = 0  # the size of that pass, in the caller's units (tokens, say)
        self._latest = 0  # the ticket of the newest request

    def quick_for(self, work: int) -> bool:
        """Whether a pass of size `work` may run inline: the last measured pass's time, scaled up to `work`
        if it is larger but never down (a big model's pass of one token costs about what one of twenty does:
        its weights are read either way)."""
        if self.work <= 0:
            return False
        return self.seconds * max(1.0, work / self.work) < QUICK_PASS

    def forget_speed(self) -> None:
        """Another model: its speed is not known yet, so its first pass goes to a worker."""
        self.seconds, self.work = math.inf, 0

    def run(self, compute: Callable[[Stop], R], inline: bool = False, work: int = 1) -> None:
        """Start a pass of size `work`; any older one still running is cancelled and its result dropped.
        A pass of size 0 (an empty prompt) says nothing of the next one's time and is not measured."""
        ticket = self._new_ticket()
        if inline:
            self._run(ticket, compute, work, stop=lambda: False, hand_over=lambda f, *a: f(*a))
            return
        self.owner.run_worker(
            lambda: self._in_thread(ticket, compute, work),
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

    def _in_thread(self, ticket: int, compute: Callable[[Stop], R], work: int) -> None:
        yield_to_the_app()
        worker = get_current_worker()

        def stop() -> bool:
            return worker.is_cancelled or ticket != self._latest

        def hand_over(callback: Callable[..., None], *args: object) -> None:
            with contextlib.suppress(RuntimeError):  # the app is closing: nobody is left to show the result to
                self.owner.app.call_from_thread(callback, *args)

        self._run(ticket, compute, work, stop, hand_over)

    def _run(
        self,
        ticket: int,
        compute: Callable[[Stop], R],
        work: int,
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
        if work > 0:
            self.seconds, self.work = time.perf_counter() - started, work
        hand_over(self._deliver, ticket, result)

    def _deliver(self, ticket: int, result: R) -> None:
        if ticket == self._latest:
            self.deliver(result)

    def _fail(self, ticket: int, error: Exception) -> None:
        if ticket == self._latest:
            self.failed(error)
