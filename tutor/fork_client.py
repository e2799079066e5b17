"""`tutor serve`'s end of its fork server (tutor/fork_server.py): starts it before serve's event loop, asks it for a
tutor per browser tab, and gives textual-serve a process it can use as its own (`ForkedProcess`: the same pipes,
`returncode`, `terminate`). When the fork server cannot start or dies, `ForkServer` says so in one line and every
later tab is spawned as before."""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys

from tutor.fork_server import MESSAGE_BYTES, PER_TAB, REPLY_BYTES
from tutor.i18n import pick

REPLY_SECONDS = 30.0  # for the fork server to answer a request (the first waits for its imports, on a busy machine)
STREAM_LIMIT = 1 << 16  # asyncio's subprocess pipes' limit
STOP_SECONDS = 20.0  # for the fork server to end after serve closed its end (its tutors are saving)

WORDS: dict[str, tuple[str, str]] = {
    "fallback": (
        "tutor serve: the shared tutor process (fork server) {why}; each tab now starts a tutor process of its own",
        "tutor serve：共享的 tutor 进程（fork server）{why}；此后每个标签页各自启动一个 tutor 进程",
    ),
    "not_started": ("could not start: {reason}", "无法启动：{reason}"),
    "ended": ("has ended (exit code {code})", "已结束（退出码 {code}）"),
    "silent": ("did not answer in {seconds:.0f} s", "{seconds:.0f} 秒内没有应答"),
    "broken": ("broke its protocol: {reason}", "违反了约定：{reason}"),
}


class ForkServer:
    """serve's end of the socketpair, and the fork server's process."""

    def __init__(
        self, process: subprocess.Popen[bytes], control: socket.socket, arguments: list[str], folder: str, lang: str
    ) -> None:
        self.process = process
        self.control = control
        self.arguments = arguments
        self.folder = folder
        self.lang = lang
        self.gone = False
        self.lock: asyncio.Lock | None = None  # made in the loop, with the reader
        self.pending: asyncio.Future[tuple[dict[str, object], int | None]] | None = None

    @classmethod
    def start(
        cls, arguments: list[str], folder: str, environment: dict[str, str], model: str | None, lang: str
    ) -> ForkServer | None:
        """Start the fork server (before any thread or event loop of serve's): its tabs run `tutor ARGUMENTS` in
        `folder` with `environment` (a tab's, bar its size). None, with the line said, if it cannot start."""
        if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
            say(lang, "not_started", reason="this system has no pidfd")
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        base = {name: value for name, value in environment.items() if name not in PER_TAB}
        command = [sys.executable, "-P", "-m", "tutor.fork_server", str(theirs.fileno())]
        try:
            process = subprocess.Popen(
                [*command, model] if model else command,
                pass_fds=[theirs.fileno()],
                env=base,
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except OSError as error:
            ours.close()
            say(lang, "not_started", reason=error.strerror or str(error))
            return None
        finally:
            theirs.close()
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MESSAGE_BYTES)
        ours.setblocking(False)
        return cls(process, ours, arguments, folder, lang)

    def watch(self) -> None:
        """In serve's loop: read the fork server's end from now on (its end, an EOF, is seen at once)."""
        self.lock = asyncio.Lock()
        asyncio.get_running_loop().add_reader(self.control, self.readable)

    def readable(self) -> None:
        try:
            message = self.receive()
        except OSError as error:
            self.end("broken", reason=error.strerror or str(error))
            return
        except ValueError as error:
            self.end("broken", reason=str(error))
            return
        if message is None:
            try:
                code = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:  # it closed its end but lives on: it is no use either way
                self.process.kill()
                code = self.process.wait()
            self.end("ended", code=code)
            return
        if self.pending is None or self.pending.done():
            self.close_fd(message[1])
            self.end("broken", reason="a message nobody asked for")
            return
        self.pending.set_result(message)

    def receive(self) -> tuple[dict[str, object], int | None] | None:
        """One reply (bounded, one fd at most); None at the end. Raises ValueError on a malformed one."""
        fds = array.array("i")
        data, ancillary, flags, _ = self.control.recvmsg(
            REPLY_BYTES, socket.CMSG_SPACE(fds.itemsize), socket.MSG_CMSG_CLOEXEC
        )
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        if not data and not fds:
            return None
        fd = fds[0] if fds else None
        try:
            if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) > 1:
                raise ValueError("a reply over its bounds")
            reply = json.loads(data)
            if not isinstance(reply, dict):
                raise ValueError("a reply that is not an object")
        except ValueError:
            self.close_fd(fd)
            raise
        return reply, fd

    @staticmethod
    def close_fd(fd: int | None) -> None:
        if fd is not None:
            os.close(fd)

    def end(self, key: str, **values: object) -> None:
        """The fork server is no use from now on: say so once, stop it, and let every later tab spawn."""
        if self.gone:
            return
        self.gone = True
        with contextlib.suppress(RuntimeError, ValueError):
            asyncio.get_running_loop().remove_reader(self.control)
        if self.pending is not None and not self.pending.done():
            self.pending.set_exception(ConnectionError(key))
        self.control.close()
        if self.process.poll() is None:
            self.process.kill()  # a server that broke the protocol or went silent: its tutors are hung up with it
        say(self.lang, key, **values)

    async def start_tab(self, environment: dict[str, str]) -> ForkedProcess | None:
        """A tutor forked for a tab with this environment; None (the caller spawns one) if the fork server is gone
        or refused it."""
        if self.gone or self.lock is None:
            return None
        async with self.lock:
            if self.gone:
                return None
            return await self.request(environment)

    async def request(self, environment: dict[str, str]) -> ForkedProcess | None:
        message = json.dumps({"arguments": self.arguments, "folder": self.folder, "environment": environment})
        data = message.encode("utf-8", "surrogateescape")
        if len(data) > MESSAGE_BYTES:  # an environment this large: this tab spawns, as before
            return None
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        theirs = (stdin_read, stdout_write, stderr_write)
        ours = (stdin_write, stdout_read, stderr_read)
        self.pending = asyncio.get_running_loop().create_future()
        try:
            self.control.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))])
        except OSError as error:  # BlockingIOError too: a server that reads nothing
            for fd in ours:
                os.close(fd)
            self.end("broken", reason=error.strerror or str(error))
            return None
        finally:
            for fd in theirs:
                os.close(fd)
        try:
            reply, pidfd = await asyncio.wait_for(self.pending, REPLY_SECONDS)
        except (TimeoutError, ConnectionError):
            for fd in ours:
                os.close(fd)
            self.end("silent", seconds=REPLY_SECONDS)  # nothing if it has ended already
            return None
        pid = reply.get("pid")
        if pidfd is None or not isinstance(pid, int):
            self.close_fd(pidfd)
            for fd in ours:
                os.close(fd)
            if not isinstance(reply.get("refused"), str):
                self.end("broken", reason="a reply with no tutor")
            return None  # refused: this one tab spawns
        return await ForkedProcess.connect(pid, pidfd, *ours)

    def stop(self) -> None:
        """After serve's sessions have ended: close our end (the fork server waits for its tutors, then ends)."""
        if not self.gone:
            self.gone = True
            self.control.close()
        try:
            self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def say(lang: str, key: str, **values: object) -> None:
    why = pick(WORDS, key, lang, **values)
    print(pick(WORDS, "fallback", lang, why=why), flush=True)


class ForkedProcess:
    """A forked tutor as textual-serve uses a spawned one: `stdin`, `stdout`, `stderr` streams on its pipes,
    `returncode` (None until it ends), `terminate`, `kill`, `wait`. Its pidfd names it, never a reused pid.
    It is the fork server's child, so its exit code is the fork server's to read: `returncode` is 0 once it ends
    (textual-serve reads only whether it has ended)."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None
        self.stdin: asyncio.StreamWriter
        self.stdout: asyncio.StreamReader
        self.stderr: asyncio.StreamReader
        self.exited = asyncio.Event()

    @classmethod
    async def connect(cls, pid: int, pidfd: int, stdin: int, stdout: int, stderr: int) -> ForkedProcess:
        loop = asyncio.get_running_loop()
        process = cls(pid, pidfd)
        process.stdout = await reader(stdout)
        process.stderr = await reader(stderr)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop),
            open(stdin, "wb", buffering=0),  # noqa: SIM115  # the transport owns it
        )
        process.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        loop.add_reader(pidfd, process.ended)
        return process

    def ended(self) -> None:
        asyncio.get_running_loop().remove_reader(self.pidfd)
        os.close(self.pidfd)
        self.returncode = 0
        self.stdin.close()
        self.exited.set()

    def send_signal(self, signum: int) -> None:
        if self.returncode is not None:
            raise ProcessLookupError(self.pid)
        signal.pidfd_send_signal(self.pidfd, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def wait(self) -> int:
        await self.exited.wait()
        return 0


async def reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=STREAM_LIMIT, loop=loop)
    pipe = open(fd, "rb", buffering=0)  # noqa: SIM115  # the transport owns it, and closes it at the end
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe)
    return stream
