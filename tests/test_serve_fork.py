"""`tutor serve`'s fork server (tutor/fork_server.py, tutor/fork_client.py): a tab's tutor forked from one process
that has loaded it, reached through the real server; its progress saved; serve spawning again when the fork server
is killed; requests over their bounds refused. The browser's view of a forked tab is in tests/test_serve_browser.py
(every tab there is forked)."""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from served import URL_LINE, children, ended, fork_servers_under, needs_web, serving, tutors_under

from tutor.fork_server import MESSAGE_BYTES


def links(pid: int) -> list[str]:
    """What process `pid`'s file descriptors are (`socket:[…]`, `pipe:[…]`, a path)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return found


def signal_masks(pid: int) -> dict[str, int]:
    """Process `pid`'s blocked, ignored and caught signals (SigBlk, SigIgn, SigCgt of /proc/PID/status): bit n−1 is
    signal n."""
    masks = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("SigBlk", "SigIgn", "SigCgt"):
            masks[name] = int(value, 16)
    return masks


async def first_screen(process: subprocess.Popen[str], line: str, then: object = None) -> None:
    """Open a tab on the server that printed `line`, wait for its tutor's first screen, and await `then()` while
    the tab is open."""
    import aiohttp

    found = URL_LINE.search(line)
    assert found, line
    origin = f"http://127.0.0.1:{found['port']}"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:  # cookies for an IP
        async with browser.get(f"{origin}{found['path']}?token={found['token']}") as page:
            assert page.status == 200
        async with browser.ws_connect(f"{origin}{found['path']}ws?width=120&height=40", origin=origin) as websocket:
            drawn = b""
            async with asyncio.timeout(90):  # a tutor that draws something else for ever fails here, not hangs
                while b"Token + position embedding" not in drawn:  # the first step's panel, on the first screen
                    message = await websocket.receive(timeout=60)
                    assert message.type == aiohttp.WSMsgType.BINARY, message
                    drawn += message.data
            if then is not None:
                await then(found["token"])  # type: ignore[operator]


@needs_web
async def test_a_forked_tab_draws_its_first_screen_as_a_spawned_one_would_and_saves_on_ctrl_c(tmp_path: Path) -> None:
    with serving(tmp_path) as (process, line):

        async def forked(token: str) -> None:
            [fork_server] = fork_servers_under(process.pid)
            [tutor] = tutors_under(process.pid)
            assert children(fork_server) == [tutor] and children(process.pid) == [fork_server]
            environment = Path(f"/proc/{tutor}/environ").read_bytes().split(b"\0")  # the block exec gave (the fork
            assert b"TEXTUAL_DRIVER=textual.drivers.web_driver:WebDriver" in environment  # server's): no size in it
            folder = Path(f"/proc/{tutor}/cwd").resolve()
            assert folder.name.startswith("tutor-serve-") and folder.stat().st_mode & 0o777 == 0o700
            for pid in (fork_server, tutor):  # the token is serve's alone
                for place in ("environ", "cmdline"):
                    assert token.encode() not in Path(f"/proc/{pid}/{place}").read_bytes()
            sockets = {link for link in links(fork_server) if link.startswith("socket:")}  # its end of serve's pair
            assert sockets and not sockets & set(links(tutor))  # closed in the tab, as are its other tabs' pidfds
            # the fork server ignores Ctrl+C (serve's to handle); its tutor catches it, as a spawned one does (once
            # drawing, through the web driver's handler: the app ends and saves), and blocks no signal
            sigint = 1 << (signal.SIGINT - 1)
            assert signal_masks(fork_server)["SigIgn"] & sigint
            masks = signal_masks(tutor)
            assert masks["SigCgt"] & sigint and not masks["SigIgn"] & sigint and masks["SigBlk"] == 0, masks

        await first_screen(process, line, forked)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (0, "", "")
    saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
    assert saved["last"]["lang"] == "en"


@needs_web
@pytest.mark.parametrize("way", [(), ("--no-fork-server",)], ids=["forked", "spawned"])
async def test_ctrl_c_ends_every_tab_s_tutor_and_the_fork_server_and_saves(
    tmp_path: Path, way: tuple[str, ...]
) -> None:
    """Ctrl+C in serve's terminal signals its whole process group: serve, the fork server (which leaves it to serve)
    and every tutor (which gets Python's KeyboardInterrupt handler back after the fork, as a spawned one has)."""
    with serving(tmp_path, *way, new_group=True) as (process, line):
        tutors: list[int] = []

        async def two_tabs(_: str) -> None:
            async def second(_: str) -> None:
                tutors.extend(tutors_under(process.pid) + fork_servers_under(process.pid))

            await first_screen(process, line, second)

        await first_screen(process, line, two_tabs)
        assert len(tutors) == (2 if way else 3)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
        for _ in range(200):  # a spawned tab's tutor may outlive serve by a moment, saving; a forked one does not
            if all(ended(pid) for pid in tutors):
                break
            await asyncio.sleep(0.05)
        assert all(ended(pid) for pid in tutors)
    assert (process.returncode, out, err) == (0, "", "")
    assert (tmp_path / "state" / "progress.json").exists()


@needs_web
async def test_a_killed_fork_server_is_one_line_and_the_next_tab_is_spawned(tmp_path: Path) -> None:
    with serving(tmp_path) as (process, line):
        [fork_server] = fork_servers_under(process.pid)
        os.kill(fork_server, signal.SIGKILL)
        assert process.stdout is not None
        assert select.select([process.stdout], [], [], 30)[0], "serve said nothing when its fork server died"
        said = process.stdout.readline()
        assert said == (
            "tutor serve: the shared tutor process (fork server) has ended (exit code -9); each tab now starts a "
            "tutor process of its own\n"
        )

        async def spawned(_: str) -> None:
            [tutor] = tutors_under(process.pid)
            assert children(process.pid) == [tutor] and b"-m\0tutor\0" in Path(f"/proc/{tutor}/cmdline").read_bytes()

        await first_screen(process, line, spawned)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (0, "", "")
    for _ in range(200):  # a spawned tab's tutor may save a moment after serve has ended
        if (tmp_path / "state" / "progress.json").exists():
            break
        await asyncio.sleep(0.05)
    assert (tmp_path / "state" / "progress.json").exists()


@needs_web
async def test_a_tab_spawns_when_serve_is_told_not_to_fork(tmp_path: Path) -> None:
    with serving(tmp_path, "--no-fork-server") as (process, line):

        async def spawned(_: str) -> None:
            assert fork_servers_under(process.pid) == [] and len(tutors_under(process.pid)) == 1

        await first_screen(process, line, spawned)


# -- the fork server's own door: bounds ---------------------------------------------------------------------------


@pytest.fixture
def fork_server(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A fork server on a socketpair, as serve starts it; yields serve's end and the process."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MESSAGE_BYTES)
    environment = {**os.environ, "TUTOR_STATE_DIR": str(tmp_path / "state")}
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "tutor.fork_server", str(theirs.fileno())],
        pass_fds=[theirs.fileno()],
        env=environment,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    theirs.close()
    ours.settimeout(60)
    try:
        yield ours, process, environment
    finally:
        ours.close()
        process.wait(timeout=30)


def ask(control: socket.socket, message: bytes, fds: int = 3) -> tuple[dict[str, object], list[int]]:
    """Send one request with `fds` pipe ends (the tab's stdin, stdout, stderr); the reply and any fd it brought."""
    pipes = [os.pipe() for _ in range(fds)]
    theirs = [pipe[0] if number == 0 else pipe[1] for number, pipe in enumerate(pipes)]
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))] if fds else []
    control.sendmsg([message], ancillary)
    for pipe in pipes:
        os.close(pipe[0])
        os.close(pipe[1])
    received = array.array("i")
    data, ancillary_back, _, _ = control.recvmsg(4096, socket.CMSG_SPACE(received.itemsize))
    for _, _, payload in ancillary_back:
        received.frombytes(payload)
    return json.loads(data), list(received)


def request(environment: dict[str, str], folder: Path, *arguments: str, padding: int = 0) -> bytes:
    return json.dumps(
        {"arguments": list(arguments), "folder": str(folder), "environment": environment, "pad": "x" * padding}
    ).encode()


def test_a_request_over_the_bound_is_refused_and_no_tutor_starts(fork_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    control, process, environment = fork_server
    small = request(environment, tmp_path, "--version")
    too_big = request(environment, tmp_path, "--version", padding=MESSAGE_BYTES + 1 - len(small))
    assert len(too_big) == MESSAGE_BYTES + 1
    reply, fds = ask(control, too_big)
    assert (reply, fds) == ({"refused": f"a request over {MESSAGE_BYTES} bytes"}, [])
    assert children(process.pid) == []
    just = request(environment, tmp_path, "--version", padding=MESSAGE_BYTES - len(small))
    reply, [pidfd] = ask(control, just)  # at the bound: a tutor (`tutor --version`, which ends at once)
    os.close(pidfd)
    assert isinstance(reply["pid"], int)


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"fds": 2}, "a request must bring 3 file descriptors"),
        ({"fds": 0}, "a request must bring 3 file descriptors"),
        ({"arguments": ["x"] * 17}, "arguments: at most 16 strings of 4096 characters"),
        ({"arguments": ["x" * 4097]}, "arguments: at most 16 strings of 4096 characters"),
        ({"environment": {"TUTOR_SECRET": "planted"}}, "an environment other than the fork server's"),
        ({"nested": True}, "a request that is not JSON"),
    ],
)
def test_a_request_out_of_its_bounds_is_refused(fork_server, tmp_path: Path, change, refusal) -> None:  # type: ignore[no-untyped-def]
    control, process, environment = fork_server
    arguments = change.get("arguments", ["--version"])
    message = request({**environment, **change.get("environment", {})}, tmp_path, *arguments)
    if change.get("nested"):
        message = b"[" * 30_000 + b"]" * 30_000  # deeper than the parser goes, within the bound
    reply, fds = ask(control, message, change.get("fds", 3))
    assert (reply, fds, children(process.pid)) == ({"refused": refusal}, [], [])


async def test_the_fork_server_ends_when_serve_closes_its_end(fork_server) -> None:  # type: ignore[no-untyped-def]
    control, process, _ = fork_server
    control.shutdown(socket.SHUT_RDWR)
    await asyncio.to_thread(process.wait, 30)
    assert ended(process.pid) or process.returncode == 0
