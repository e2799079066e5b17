"""A learner's exercise code cannot forge its verdict, leave a process behind, or stop the checker.

Issue 28, finding 10: the verdict was a file in a folder the learner's code could write, the learner's code ran
in the process that wrote it, a `setsid` daemon escaped the process group the check killed, and the checker
(the tutor itself, in the app) was the learner's parent, a SIGSTOP away from freezing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tutor.exercises.check import check_exercise
from tutor.exercises.workspace import TODO_BODY, exercise_path, write_workspace
from tutor.patches.confine import filter_program

CORRECT = """
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta
"""
needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp and /proc are Linux's")


def learner_file(folder: Path, prelude: str, body: str = "    raise NotImplementedError") -> Path:
    """layer_norm's file with `prelude` run when it loads and `body` as the function's."""
    write_workspace(folder, "en")
    path = exercise_path(folder, "layer_norm")
    text = path.read_text(encoding="utf-8").replace(TODO_BODY, body)
    path.write_text(textwrap.dedent(prelude) + "\n" + text, encoding="utf-8")
    return path


FORGE = """
import glob, json, os, sys
FAKE = json.dumps({"passed": True, "key": "passed", "case": None,
                   "values": {"cases": 9, "model": "tiny", "prompt": "x", "n": 1}})
for target in [arg for arg in sys.argv if arg.endswith(".json")] + ["result.json"]:  # the old verdict file
    try:
        open(target, "w").write(FAKE)
    except OSError:
        pass
for fd in range(3, 256):  # every channel this process holds
    try:
        os.write(fd, FAKE.encode())
    except OSError:
        pass
for name in glob.glob(f"/proc/{os.getppid()}/fd/*"):  # and its parent's pipes and sockets, reopened
    try:
        if not os.readlink(name).startswith(("pipe:", "socket:")):
            continue  # a file (the shipped model): as root, a reopened file would be truncated for good
        with open(name, "w") as channel:
            channel.write(FAKE)
    except OSError:
        pass
os._exit(0)
"""


def test_a_forged_verdict_does_not_pass(tmp_path: Path) -> None:
    result = check_exercise("layer_norm", learner_file(tmp_path, FORGE), seconds=20)
    assert not result.passed, result.describe("en")
    assert result.key == "crashed", result.describe("en")  # the learner's process ended without reporting


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@needs_linux
@pytest.mark.parametrize("double_fork", [False, True], ids=["setsid", "setsid-then-fork"])
def test_a_setsid_daemon_does_not_outlive_the_check(tmp_path: Path, double_fork: bool) -> None:
    pid_file = tmp_path / "daemon.pid"
    prelude = f"""
    import os, time
    if os.fork() == 0:
        try:
            os.setsid()  # a session of its own: out of the group the check kills
        except OSError:
            pass
        if {double_fork} and os.fork() != 0:
            os._exit(0)  # the daemon is an orphan now
        open({str(pid_file)!r} + ".tmp", "w").write(str(os.getpid()))
        os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
        time.sleep(120)
        os._exit(0)
    for _ in range(200):
        if os.path.exists({str(pid_file)!r}):
            break
        time.sleep(0.01)
    """
    result = check_exercise("layer_norm", learner_file(tmp_path, prelude, CORRECT), seconds=20)
    assert result.passed, result.describe("en")
    pid = int(pid_file.read_text(encoding="utf-8"))
    try:
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the learner's setsid daemon outlived the check"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


CHECKER = """
import os, sys
os.environ["CHECKER_PID"] = str(os.getpid())  # what the learner's code aims at: the tutor, in the app
from pathlib import Path
from tutor.exercises.check import check_exercise
result = check_exercise("layer_norm", Path(sys.argv[1]), seconds=20)
print(result.key)
"""

STOP = """
import os, signal
for target in (int(os.environ["CHECKER_PID"]), os.getppid()):
    try:
        os.kill(target, signal.SIGSTOP)
    except OSError:
        pass
"""


@needs_linux
def test_a_sigstop_of_the_checker_does_not_freeze_it(tmp_path: Path) -> None:
    path = learner_file(tmp_path, STOP, CORRECT)
    env = {**os.environ, "TUTOR_EXERCISES_DIR": str(tmp_path)}
    checker = subprocess.Popen([sys.executable, "-c", CHECKER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        out, _ = checker.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        checker.kill()  # SIGKILL ends a stopped process too
        checker.communicate()
        pytest.fail("the learner's code stopped the checker")
    assert out.strip() == "passed"


def test_the_filter_sends_every_forbidden_call_and_every_foreign_one_to_refusal() -> None:
    """The jumps land where they should: run the BPF program by hand over a few calls."""
    program = filter_program("x86_64")
    assert program is not None

    def run(arch: int, nr: int) -> int:
        data = {0: nr, 4: arch}
        accumulator, at = 0, 0
        while True:
            code, jt, jf, k = program[at]
            if code == 0x20:
                accumulator = data[k]
            elif code == 0x06:
                return k
            elif code in (0x15, 0x35):
                hit = accumulator == k if code == 0x15 else accumulator >= k
                at += jt if hit else jf
            at += 1

    x86_64, allow, deny = 0xC000003E, 0x7FFF0000, 0x00050001
    for forbidden in (62, 112, 109, 234, 200, 101, 424, 438, 311):
        assert run(x86_64, forbidden) == deny
    for fine in (0, 1, 3, 9, 57, 59, 231):  # read, write, close, mmap, fork, execve, exit_group
        assert run(x86_64, fine) == allow
    assert run(x86_64, 0x40000000 + 62) == deny  # x32's kill
    assert run(0x40000003, 37) == deny  # i386's kill


def test_reports_are_framed_json_and_npy(tmp_path: Path) -> None:
    """What the learner's process sends is read without pickle, and a garbled tail ends the reports."""
    import numpy as np

    from tutor.exercises.runner import Reports, read_reports

    read, write = os.pipe()
    reports = Reports(write)
    reports.send({"key": "returned", "case": 0})
    reports.send_array(np.arange(3, dtype=np.float32))
    os.write(write, b"J" + (10**6).to_bytes(8, "little") + b"{}")
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        frames = read_reports(pipe.read())
    assert frames[0] == ("J", {"key": "returned", "case": 0})
    assert frames[1][0] == "A" and frames[1][1].tolist() == [0.0, 1.0, 2.0]
    assert len(frames) == 2
    assert json.loads(json.dumps(frames[0][1])) == frames[0][1]
