"""A terminal that goes away (a dropped SSH session) ends the tutor within a second; it saves first.

Textual 8's Linux driver hung in two ways once its pseudo-terminal was gone:

- Its output thread (`textual.drivers._writer_thread.WriterThread`) dies at the first write that fails (EIO on a
  hung-up terminal) and nobody takes from its queue any more: 30 writes later every `write`, and `stop` on the
  way out, blocks in `Queue.put` for good. A session dropped while a frame was still going out (sshd stops
  reading before it closes the terminal) left the tutor asleep there, progress saved but never exiting.
  `LosableWriterThread` takes the place of that name in `textual.drivers.linux_driver` (`install()`): once a
  write fails it throws away whatever is written after, so nothing waits on it.
- Without SIGHUP (a tutor that is not in the terminal's session, the terminal closed by a program that sends
  none), its input thread's `select` finds the hung-up terminal readable at once, `read` gives nothing, and it
  loops, at most of a core, for ever. `watch_for_hang_up` waits (in `poll`, asking for no events: only a
  hang-up or an error wakes it) and calls back, and the app then saves and leaves as on SIGHUP.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Callable

from textual.drivers import linux_driver
from textual.drivers._writer_thread import WriterThread

GONE = select.POLLHUP | select.POLLERR


class LosableWriterThread(WriterThread):
    """Textual's output thread, except that a terminal that cannot be written to any more never blocks a writer."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lost = threading.Event()

    def run(self) -> None:
        try:
            super().run()
        except (OSError, ValueError):  # EIO after a hang-up, EPIPE, a closed file: the terminal is gone
            self.lost.set()
            while self._queue.get() is not None:  # what is written from now on goes nowhere, at once
                pass


def install() -> None:
    """Textual's Linux driver makes its output thread from this module's name `WriterThread`: ours from now on."""
    linux_driver.WriterThread = LosableWriterThread  # type: ignore[misc]


def watch_for_hang_up(fds: list[int], on_hang_up: Callable[[], None]) -> threading.Thread:
    """Call `on_hang_up` (from a thread of its own) once any of `fds` is hung up or fails; the thread sleeps
    until then, and as a daemon it does not keep the process alive."""
    poller = select.poll()
    for fd in dict.fromkeys(fds):
        poller.register(fd, 0)  # no events asked for: poll still reports a hang-up or an error

    def wait() -> None:
        while True:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            if any(mask & GONE for _, mask in events):
                on_hang_up()
                return

    watcher = threading.Thread(target=wait, name="tutor-hang-up-watch", daemon=True)
    watcher.start()
    return watcher
