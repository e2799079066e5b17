"""`tutor serve` as a learner starts it, for tests/test_serve.py and tests/test_serve_browser.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path

import pytest

needs_web = pytest.mark.skipif(
    find_spec("textual_serve") is None, reason='needs the web extra (pip install -e ".[web]")'
)
URL_LINE = re.compile(
    r"http://(?P<host>[^/\s]+):(?P<port>\d+)(?P<path>/[0-9a-f]{16}/)\?token=(?P<token>[A-Za-z0-9_-]{32})$"
)


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def is_fork_server(pid: int) -> bool:
    try:
        return b"tutor.fork_server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False


def fork_servers_under(pid: int) -> list[int]:
    return [child for child in children(pid) if is_fork_server(child)]


def tutors_under(pid: int) -> list[int]:
    """The tutors `pid` started, one a browser tab: spawned (its children) or forked (its fork server's)."""
    found = []
    for child in children(pid):
        found += children(child) if is_fork_server(child) else [child]
    return found


def ended(pid: int) -> bool:
    """Whether process `pid` is gone (or a zombie nobody reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@contextmanager
def serving(
    tmp_path: Path, *args: str, lang: str = "en", new_group: bool = False
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`tutor --lang LANG serve --port 0 ARGS` in its own folder and progress folder (and `new_group`: its own
    process group, as a terminal's foreground job); yields the process and the first line it printed. Ends it with
    SIGINT (Ctrl+C) if the test did not."""
    env = {**os.environ, "TUTOR_STATE_DIR": str(tmp_path / "state"), "PYTHONIOENCODING": "utf-8"}
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "tutor", "--lang", lang, "serve", "--port", "0", *args],  # -P: no cwd
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
        start_new_session=new_group,
    )
    try:
        yield process, (process.stdout.readline() if process.stdout else "").rstrip("\n")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
