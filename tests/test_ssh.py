"""`tutor` over a real SSH connection to localhost: type, step, drop the connection, reconnect, progress is there.

Needs `sshd` and `ssh` (Debian: `apt-get install openssh-server`); skipped where they are missing or sshd
cannot start. The server runs on a free high port with its own host key and config, in a temporary folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import drain, read_until, read_until_all

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
SSH = shutil.which("ssh")
SSH_KEYGEN = shutil.which("ssh-keygen")
pytestmark = pytest.mark.skipif(not (SSHD and SSH and SSH_KEYGEN), reason="needs openssh-server and openssh-client")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A private sshd on 127.0.0.1; yields its port and the client key."""
    folder = tmp_path / "ssh"
    folder.mkdir()
    for key in ("host_key", "user_key"):
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(folder / key)], check=True)
    (folder / "authorized_keys").write_bytes((folder / "user_key.pub").read_bytes())
    port = free_port()
    (folder / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\n",
        encoding="utf-8",
    )
    if os.geteuid() == 0 and not Path("/run/sshd").is_dir():
        Path("/run/sshd").mkdir(mode=0o755)  # sshd's privilege separation folder, made by its service normally
    server = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and server.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    if server.poll() is not None:
        pytest.skip(
            f"sshd did not start: {server.stdout.read().decode(errors='replace')[-300:] if server.stdout else ''}"
        )
    try:
        yield port, folder / "user_key"
    finally:
        server.terminate()
        server.wait(timeout=10)


def ssh_tutor(port: int, key: Path, state: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`ssh -t localhost tutor` in a pseudo-terminal of 120×40, as a learner's terminal runs it."""
    remote = (
        f"cd {shlex.quote(str(cwd))} && TUTOR_STATE_DIR={shlex.quote(str(state))} TERM=xterm-256color "
        f"LANG=en_US.UTF-8 {shlex.quote(sys.executable)} -m tutor --lang en"
    )
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    client = subprocess.Popen(
        [SSH, "-tt", "-p", str(port), "-i", str(key), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
         "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "127.0.0.1", remote],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env={**os.environ, "TERM": "xterm-256color"},
    )  # fmt: skip
    os.close(slave)
    return client, master


def wait_for_saved(path: Path, prompt: str, step: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    last: dict = {}
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            last = json.loads(path.read_text(encoding="utf-8"))["last"]
        if last.get("prompt") == prompt and last.get("step") == step:
            return last
        time.sleep(0.2)
    return last


def test_a_dropped_ssh_connection_keeps_progress_and_a_reconnect_resumes(tmp_path: Path, sshd) -> None:
    port, key = sshd
    state = tmp_path / "state"
    client, master = ssh_tutor(port, key, state, tmp_path)
    try:
        out = read_until_all(master, b"Lesson 1/", b"Step 1/", timeout=40)  # the first lesson has run its prompt
        assert b"Lesson 1/" in out and b"Step 1/" in out, out[-1500:]
        drain(master, 1.0)
        os.write(master, b"\x15")  # ctrl+u; then wait for the empty prompt (a burst can run ctrl+u after the text)
        assert b"Type a prompt" in read_until(master, b"Type a prompt", timeout=20)
        os.write(master, "狗追猫".encode())
        drain(master, 0.7)
        os.write(master, b"\x1b[B\x1b[B")  # ↓ ↓
        drain(master, 0.2)
        client.send_signal(signal.SIGKILL)  # the laptop's ssh is gone; sshd hangs up on tutor
        client.wait(timeout=10)
    finally:
        os.close(master)
        if client.poll() is None:
            client.kill()
    saved = wait_for_saved(state / "progress.json", "狗追猫", "blocks.0.attn")
    assert saved.get("prompt") == "狗追猫" and saved.get("step") == "blocks.0.attn", saved

    client, master = ssh_tutor(port, key, state, tmp_path)  # the learner logs in again
    try:
        out = read_until(master, b"Step 3/", timeout=40)
        assert b"Step 3/" in out and "狗追猫".encode() in out, out[-1500:]
        os.write(master, b"\x11")  # ctrl+q
        out += read_until(master, b"\x1b[?1049l", timeout=15)
        assert client.wait(timeout=20) == 0
    finally:
        os.close(master)
        if client.poll() is None:
            client.kill()
    assert b"Traceback" not in out
