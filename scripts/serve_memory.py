"""Thirty tabs through `tutor serve`, forked (the default) and spawned (`--no-fork-server`): the PSS of their tutors
once each has drawn its first screen, and the time from a tab's websocket connect to its first screen.

    python scripts/serve_memory.py [--tabs 30] [--runs 3] [--python PYTHON]

Each run starts its own `tutor serve --port 0` (tiny, --lang en, 120×40 tabs, a fresh progress folder), opens the
tabs one after another (each waits for the last one's first screen), then sums `Pss` of
/proc/PID/smaps_rollup over the tabs' tutors (the fork server itself is given apart, and in the total). The two
ways alternate, run after run, each line with the load average beside it. Needs the web extra and aiohttp.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

URL_LINE = re.compile(r"http://(?P<host>[^/\s]+):(?P<port>\d+)(?P<path>/[0-9a-f]{16}/)\?token=(?P<token>\S+)$")
FIRST_SCREEN = b"Token + position embedding"  # the first step's panel, drawn on the first screen
SETTLE_SECONDS = 2.0  # after the last first screen, for the tutors' after-start work (the panels out of view)


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def is_fork_server(pid: int) -> bool:
    return b"tutor.fork_server" in Path(f"/proc/{pid}/cmdline").read_bytes()


def pss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    raise ValueError(f"no Pss for {pid}")


async def open_tab(
    session: aiohttp.ClientSession, origin: str, path: str
) -> tuple[aiohttp.ClientWebSocketResponse, float]:
    """A tab's websocket, open, and the seconds from connect to its first screen."""
    start = time.monotonic()
    websocket = await session.ws_connect(f"{origin}{path}ws?width=120&height=40", origin=origin, max_msg_size=0)
    drawn = b""
    while FIRST_SCREEN not in drawn:
        message = await websocket.receive(timeout=120)
        if message.type != aiohttp.WSMsgType.BINARY:
            raise RuntimeError(f"the tab ended before its first screen: {message}")
        drawn += message.data
    return websocket, time.monotonic() - start


async def one_run(python: str, tabs: int, forked: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="serve-memory-") as folder:
        environment = {**os.environ, "TUTOR_STATE_DIR": str(Path(folder) / "state"), "PYTHONIOENCODING": "utf-8"}
        command = [python, "-P", "-m", "tutor", "--lang", "en", "--model", "tiny", "serve", "--port", "0"]
        command += ["--max-sessions", str(tabs)] + ([] if forked else ["--no-fork-server"])
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=folder, env=environment)
        try:
            assert server.stdout is not None
            line = server.stdout.readline().strip()
            found = URL_LINE.search(line)
            if not found:
                raise RuntimeError(f"tutor serve said: {line!r}")
            origin = f"http://127.0.0.1:{found['port']}"
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
                async with session.get(f"{origin}{found['path']}?token={found['token']}") as page:
                    page.raise_for_status()
                sockets, seconds = [], []
                for _ in range(tabs):
                    websocket, took = await open_tab(session, origin, found["path"])
                    sockets.append(websocket)
                    seconds.append(took)
                await asyncio.sleep(SETTLE_SECONDS)
                fork_servers = [pid for pid in children(server.pid) if is_fork_server(pid)]
                tutors = [pid for pid in children(server.pid) if pid not in fork_servers]
                tutors += [tutor for pid in fork_servers for tutor in children(pid)]
                if len(tutors) != tabs or forked != bool(fork_servers):
                    raise RuntimeError(f"{len(tutors)} tutors, fork servers {fork_servers}")
                tutors_kb = sum(pss_kb(pid) for pid in tutors)
                fork_server_kb = sum(pss_kb(pid) for pid in fork_servers)
                for websocket in sockets:
                    await websocket.close()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
    return {
        "tutors_mb": tutors_kb / 1024,
        "fork_server_mb": fork_server_kb / 1024,
        "first_s": seconds[0],
        "median_s": statistics.median(seconds),
        "slowest_s": max(seconds),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tabs", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3, help="runs of each way, alternating")
    parser.add_argument("--python", default=sys.executable, help="the Python whose tutor serves")
    args = parser.parse_args()
    print(f"{args.tabs} tabs, 120×40, tiny; PSS summed over the tabs' tutors after each drew its first screen")
    print("way      tutors PSS  +fork server  = total   | connect→first screen: first  median  slowest | load")
    for run in range(args.runs):
        for forked in (True, False) if run % 2 == 0 else (False, True):
            load = Path("/proc/loadavg").read_text().split()[:3]
            result = asyncio.run(one_run(args.python, args.tabs, forked))
            total = result["tutors_mb"] + result["fork_server_mb"]  # type: ignore[operator]
            way = "forked " if forked else "spawned"
            memory = f"{result['tutors_mb']:8.0f} MB  {result['fork_server_mb']:8.0f} MB  {total:6.0f} MB"
            times = f"{result['first_s']:27.2f} s {result['median_s']:6.2f} s {result['slowest_s']:6.2f} s"
            print(f"{way}  {memory} | {times} | {' '.join(load)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
