"""`tutor serve`'s fork server: one process that has imported what a browser tab's tutor needs (NumPy, Textual, the
app's modules, the web driver) and loaded the shipped model, and forks a tutor for each tab. The forked tutors
share those pages with it until they write to them: ~30 MB of PSS a tab instead of ~45 (docs/serve.md).

Run by `tutor serve` (tutor/fork_client.py) as `python -P -m tutor.fork_server FD [MODEL]`, before serve starts
its event loop, with one end of an anonymous `socketpair` as FD: no listening socket, nothing on disk, no other
process on the machine can reach it. It is a fresh `exec`, not a fork of serve: the token, the cookie key and
aiohttp never were in its memory, so they cannot be in a tab's.

One request a message (SOCK_SEQPACKET keeps messages whole), JSON and three file descriptors by SCM_RIGHTS:
`{"arguments": [...], "folder": "...", "environment": {...}}` with the tab's stdin, stdout and stderr (serve's
pipes). A message over MESSAGE_BYTES, with other than three descriptors, or whose environment differs from this
server's (bar the terminal size) is refused, and no tutor starts. The reply: `{"pid": N}` with a pidfd of the
tutor (serve signals it through the pidfd and sees it end: no pid reused by another process is ever hit), or
`{"refused": why}`. When serve closes its end, the server waits for its tutors and ends.

The forked child returns out of the server's loop (its frames hold nothing of the server's) and runs `tutor`
as `python -P -m tutor ARGUMENTS` would, after `become_tab`: the server's fds closed, the tab's as 0, 1 and 2,
signal handlers and mask as Python starts with, its own folder, environment and random seeds.
"""

from __future__ import annotations

import array
import contextlib
import gc
import importlib
import json
import os
import pkgutil
import select
import signal
import socket
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

MESSAGE_BYTES = 64 << 10  # a request: a few arguments and an environment (a lab's is a few KB)
REPLY_BYTES = 4096
TAB_FDS = 3  # stdin, stdout, stderr
ARGUMENTS_AT_MOST = 16
TEXT_AT_MOST = 4096  # characters in one argument or the folder's path
VARIABLES_AT_MOST = 4096
PER_TAB = frozenset({"COLUMNS", "ROWS"})  # the one part of a tab's environment that is its own
CHILDREN_WAIT_SECONDS = 15.0  # after serve closed its end: for tutors still saving
PRELOADED_PACKAGES = ("tutor.panels", "tutor.widgets", "tutor.screens", "textual.layouts")
PRELOADED_MODULES = (
    "model.depth",
    "tutor.sentences",
    "tutor.position_picture_data",
    "textual.scrollbar",
    "textual.pilot",
    "textual.drivers.headless_driver",
)


class Refused(Exception):
    """A request no tutor starts for; the reason goes back to serve."""


@dataclass
class Tab:
    arguments: list[str]
    folder: str
    environment: dict[str, str]


def threads_now() -> int:
    """Threads in this process, Python's or not (an OpenBLAS pool would be one): /proc counts them all."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def preload(model_name: str) -> None:
    """Import what a tab's tutor imports up to its first screen, and load the model, as `tutor` would."""
    from tutor.cli import preset_environment  # no NumPy, no Textual: they load below, after it
    from tutor.process_tuning import hang_up_with_parent, import_asyncio_without_tls, keep_freed_memory

    preset_environment()  # one BLAS thread, the frame rate: read once, as NumPy and Textual load

    hang_up_with_parent()  # serve killed outright: this server goes too, and its tutors are hung up in turn
    keep_freed_memory()
    import_asyncio_without_tls()  # before Textual, as the app does
    import rich.cells
    import textual.drivers.web_driver  # noqa: F401  # the tab's driver

    import model
    import tutor.app
    import tutor.cli
    import tutor.lessons.course
    import tutor.model_words
    from tutor.commands import app as app_command

    for package in PRELOADED_PACKAGES:  # what a tab imports as it mounts its panels (measured: 60 modules more)
        for found in pkgutil.iter_modules(importlib.import_module(package).__path__):
            importlib.import_module(f"{package}.{found.name}")
    for name in PRELOADED_MODULES:
        importlib.import_module(name)
    tutor.cli.build_parser()  # every command's module, as each tab's `tutor` builds it
    rich.cells.cell_len("猫")  # Rich's table of character widths, loaded on first use

    if model_name in model.shipped_models():  # files in the package, the same for every tab; a path could change
        app_command.PRELOADED[model_name] = model.load(model_name)
    gc.collect()
    gc.freeze()  # out of every later pass: a pass would write to (and so copy) each page it walks


def receive(control: socket.socket) -> tuple[Tab, list[int]] | None:
    """The next request with its three fds; None when serve has closed its end. Raises Refused (its fds closed)."""
    fds = array.array("i")
    data, ancillary, flags, _ = control.recvmsg(
        MESSAGE_BYTES, socket.CMSG_SPACE(TAB_FDS * fds.itemsize), socket.MSG_CMSG_CLOEXEC
    )
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data and not fds:
        return None
    try:
        if flags & socket.MSG_TRUNC:
            raise Refused(f"a request over {MESSAGE_BYTES} bytes")
        if flags & socket.MSG_CTRUNC or len(fds) != TAB_FDS:
            raise Refused(f"a request must bring {TAB_FDS} file descriptors")
        return parse(data), list(fds)
    except Refused:
        for fd in fds:
            os.close(fd)
        raise


def parse(data: bytes) -> Tab:
    """A request's JSON, every part of it checked and bounded."""
    try:
        request = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise Refused("a request that is not JSON") from error
    if not isinstance(request, dict):
        raise Refused("a request that is not an object")
    arguments, folder, environment = request.get("arguments"), request.get("folder"), request.get("environment")
    if (
        not isinstance(arguments, list)
        or len(arguments) > ARGUMENTS_AT_MOST
        or not all(isinstance(word, str) and len(word) <= TEXT_AT_MOST for word in arguments)
    ):
        raise Refused(f"arguments: at most {ARGUMENTS_AT_MOST} strings of {TEXT_AT_MOST} characters")
    if not isinstance(folder, str) or not 0 < len(folder) <= TEXT_AT_MOST:
        raise Refused("folder: a path")
    if not isinstance(environment, dict) or len(environment) > VARIABLES_AT_MOST:
        raise Refused(f"environment: at most {VARIABLES_AT_MOST} variables")
    if not all(isinstance(name, str) and isinstance(value, str) for name, value in environment.items()):
        raise Refused("environment: strings")
    return Tab(arguments, folder, environment)


def reply(control: socket.socket, message: dict[str, object], fds: tuple[int, ...] = ()) -> None:
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    control.sendmsg([json.dumps(message).encode()], ancillary)


def serve_forks(control: socket.socket, environment: dict[str, str]) -> tuple[Tab, list[int]] | None:
    """Fork a tutor for each request until serve closes its end (then None, once the tutors have ended). In a
    forked child it returns that child's request and fds, with the server's own fds closed."""
    children: dict[int, int] = {}  # pidfd: pid
    poller = select.poll()
    poller.register(control, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd in children:
                os.waitpid(children.pop(fd), 0)
                poller.unregister(fd)
                os.close(fd)
                continue
            try:
                request = receive(control)
            except Refused as why:
                reply(control, {"refused": str(why)})
                continue
            if request is None:
                wait_for(children)
                return None
            tab, fds = request
            if {name: value for name, value in tab.environment.items() if name not in PER_TAB} != environment:
                for fd in fds:
                    os.close(fd)
                reply(control, {"refused": "an environment other than the fork server's"})
                continue
            if threads_now() != 1:  # a thread would be copied mid-step, without its stack's owners: never fork
                raise SystemExit(f"tutor fork server: {threads_now()} threads, cannot fork")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                for pidfd in children:
                    os.close(pidfd)
                control.close()
                return tab, fds
            for fd in fds:
                os.close(fd)
            pidfd = os.pidfd_open(pid)  # its own child, not yet reaped: the pid is still this tutor's
            with contextlib.suppress(OSError):  # serve is gone: the tutor is hung up with this server
                reply(control, {"pid": pid}, (pidfd,))
            children[pidfd] = pid
            poller.register(pidfd, select.POLLIN)


def wait_for(children: dict[int, int]) -> None:
    """Reap the tutors still saving (each was told to quit by serve), for at most CHILDREN_WAIT_SECONDS."""
    poller = select.poll()
    for pidfd in children:
        poller.register(pidfd, select.POLLIN)
    deadline = CHILDREN_WAIT_SECONDS * 1000
    while children and deadline > 0:
        for pidfd, _ in poller.poll(100):
            os.waitpid(children.pop(pidfd), 0)
            poller.unregister(pidfd)
            os.close(pidfd)
        deadline -= 100


PYTHON_HANDLERS = {signum: signal.getsignal(signum) for signum in signal.valid_signals()}  # as Python started


def open_fds() -> set[int]:
    """This process's open file descriptors (the listing's own, closed by then, left out)."""
    listed = {int(fd) for fd in os.listdir("/proc/self/fd")}
    return {fd for fd in listed if fd_open(fd)}


def fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def become_tab(tab: Tab, fds: list[int], preloaded: set[int]) -> None:
    """In the forked child: the tab's pipes as stdin, stdout and stderr, no other fd of the server's, Python's own
    signal handlers, the tab's folder, environment and command line, and new random seeds. `preloaded`: the fds
    the preload left open, which the tab's tutor owns as a spawned one would (the model's weights file, mapped)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)  # inheritable, as a spawned process's 0, 1, 2
        os.close(fd)
    for fd in sorted(open_fds() - {0, 1, 2} - preloaded):  # nothing of the server's is left
        raise SystemExit(f"tutor fork server: fd {fd} open in a tab")
    for signum, handler in PYTHON_HANDLERS.items():
        if handler is not None and signal.getsignal(signum) != handler:
            signal.signal(signum, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    os.chdir(tab.folder)
    os.environ.clear()
    os.environ.update(tab.environment)
    sys.argv = [str(Path(__file__).with_name("__main__.py")), *tab.arguments]
    import random

    random.seed()  # Python does this at fork itself; said here with NumPy's, which it does not
    if "numpy.random" in sys.modules:  # else NumPy seeds it from the system when a tab first uses it
        sys.modules["numpy.random"].seed()


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[0]))
    environment = dict(os.environ)  # a tab's, bar its size: what the imports below read
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is serve's to handle: it closes its end when done
    preload(argv[1] if len(argv) > 1 else "tiny")
    preloaded = open_fds() - {0, 1, 2, control.fileno()}
    request = serve_forks(control, environment)
    if request is None:
        return 0
    become_tab(*request, preloaded)
    from tutor.cli import main as tutor

    return tutor(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
