"""Check a learner's exercise file: run it in a subprocess with a time limit, an output cap and a memory limit.

The learner's code never runs in this process: whatever it does (raise, loop, print megabytes, exit),
the app or the command that asked gets a `CheckResult`, ✓ or ✗ with the reason, in either language.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from tutor.exercises import EXERCISES
from tutor.i18n import pick

TIME_LIMIT = 10.0  # seconds for the learner's code, counted once the checker has started
START_LIMIT = 60.0  # seconds for Python, NumPy and the model to start: generous, a lab machine may be busy
OUTPUT_LIMIT = 64 * 1024  # bytes of print() output before the check is stopped
MEMORY_LIMIT_MB = 1024  # address space: NumPy and the shipped model need a few hundred MB

WORDS: dict[str, tuple[str, str]] = {
    "passed": (
        "✓ {function}: all {cases} reference cases match model/'s own, and {model} gives the same logits "
        "for “{prompt}” with your function inside its forward pass",
        "✓ {function}：{cases} 个参考用例都与 model/ 的结果一致；把你的函数放进 {model} 的前向计算，"
        "“{prompt}”的 logits 也完全相同",
    ),
    "todo": (
        "✗ not done yet: {function} still raises NotImplementedError — replace the TODO with your code",
        "✗ 还没完成：{function} 仍然抛出 NotImplementedError——把 TODO 换成你的代码",
    ),
    "no_file": (
        "✗ {path} does not exist: `tutor exercises` writes it",
        "✗ {path} 不存在：运行 `tutor exercises` 会创建它",
    ),
    "not_utf8": ("✗ the file is not UTF-8 text", "✗ 文件不是 UTF-8 文本"),
    "syntax": ("✗ syntax error{where}: {error}  {code}", "✗ 语法错误{where}：{error}  {code}"),
    "load_error": (
        "✗ your file raised while loading{where}: {error}  {code}",
        "✗ 加载文件时出错{where}：{error}  {code}",
    ),
    "missing": ("✗ the file has no function named {function}", "✗ 文件里没有名为 {function} 的函数"),
    "raised": ("✗ {case}: your function raised{where}: {error}  {code}", "✗ {case}：函数出错{where}：{error}  {code}"),
    "not_array": ("✗ {case}: returned {type}, expected a NumPy array", "✗ {case}：返回了 {type}，应返回 NumPy 数组"),
    "shape": ("✗ {case}: shape {got}, expected {expected}", "✗ {case}：形状是 {got}，应为 {expected}"),
    "dtype": (
        "✗ {case}: dtype {got}, expected float32 (in NumPy 2 a float64 scalar such as np.sqrt(d) or a float64 "
        "array turns float32 into float64: use d ** 0.5 or math.sqrt(d), or .astype(np.float32) at the end)",
        "✗ {case}：dtype 是 {got}，应为 float32（在 NumPy 2 中，np.sqrt(d) 这样的 float64 标量或 float64 数组"
        "会把 float32 提升为 float64：改用 d ** 0.5 或 math.sqrt(d)，或最后 .astype(np.float32)）",
    ),
    "not_finite": (
        "✗ {case}: {value} at index {index} (expected {expected})",
        "✗ {case}：索引 {index} 处是 {value}（应为 {expected}）",
    ),
    "mismatch": (
        "✗ {case}: at index {index} expected {expected}, got {got}",
        "✗ {case}：索引 {index} 处应为 {expected}，实际是 {got}",
    ),
    "changed_input": (
        "✗ {case}: your function changed its argument {position} in place; work on a copy",
        "✗ {case}：函数原地修改了第 {position} 个参数；请在副本上计算",
    ),
    "live_raised": (
        "✗ inside the live model ({model}, “{prompt}”): your function raised{where}: {error}  {code}",
        "✗ 在真实模型里（{model}，“{prompt}”）：函数出错{where}：{error}  {code}",
    ),
    "live_mismatch": (
        "✗ inside the live model ({model}, “{prompt}”): the logits at position {position}, token “{token}”, "
        "should be {expected}, got {got}",
        "✗ 在真实模型里（{model}，“{prompt}”）：位置 {position}、词元“{token}”的 logit 应为 {expected}，实际是 {got}",
    ),
    "live_not_finite": (
        "✗ inside the live model ({model}, “{prompt}”): logit {value} at position {position}, token “{token}”",
        "✗ 在真实模型里（{model}，“{prompt}”）：位置 {position}、词元“{token}”的 logit 是 {value}",
    ),
    "live_shape": (
        "✗ inside the live model ({model}): logits of shape {got}, expected {expected}",
        "✗ 在真实模型里（{model}）：logits 的形状是 {got}，应为 {expected}",
    ),
    "live_dtype": (
        "✗ inside the live model ({model}): logits are {got}, expected float32",
        "✗ 在真实模型里（{model}）：logits 是 {got}，应为 float32",
    ),
    "live_not_array": (
        "✗ inside the live model ({model}): the logits are {type}",
        "✗ 在真实模型里（{model}）：logits 是 {type}",
    ),
    "timeout": (
        "✗ stopped after {seconds:g} s: is there an endless loop?",
        "✗ {seconds:g} 秒后被停止：是不是有死循环？",
    ),
    "too_much_output": (
        "✗ stopped: the file printed more than {kb} KB",
        "✗ 已停止：文件输出超过了 {kb} KB",
    ),
    "crashed": (
        "✗ the check ended without a verdict (exit status {status}){tail}",
        "✗ 检查没有给出结果就结束了（退出状态 {status}）{tail}",
    ),
    "cannot_start": ("✗ cannot start Python to check the file: {error}", "✗ 无法启动 Python 来检查文件：{error}"),
    "stopped": ("check stopped", "检查已停止"),
    "where": (", line {line}", "，第 {line} 行"),
    "case": ("case “{label}”", "用例“{label}”"),
    "separator": (", ", "，"),
    "indexed": ("{index} ({axes})", "{index}（{axes}）"),
}


@dataclass
class CheckResult:
    name: str
    passed: bool
    key: str  # a WORDS key
    values: dict[str, Any] = field(default_factory=dict)
    case: dict[str, Any] | None = None  # the reference case that failed: its cases.WORDS key and values
    output: str = ""  # what the learner's code printed, the last lines of it

    def describe(self, lang: str) -> str:
        values = dict(self.values)
        if "code" in values:
            values["code"] = f"→ {values['code']}" if values["code"] else ""
        if "line" in values:  # 0: the error came from outside the learner's file
            values["where"] = pick(WORDS, "where", lang, line=values["line"]) if values["line"] else ""
        if self.case is not None:
            from tutor.exercises.cases import WORDS as CASE_WORDS

            label = pick(CASE_WORDS, self.case["key"], lang, **self.case.get("values", {}))
            values["case"] = pick(WORDS, "case", lang, label=label)
            axes = self.case.get("axes") or ()
            if isinstance(values.get("index"), list) and len(axes) == len(values["index"]):
                named = [pick(CASE_WORDS, axis, lang, i=i) for axis, i in zip(axes, values["index"], strict=True)]
                axes_text = pick(WORDS, "separator", lang).join(named)
                values["index"] = pick(WORDS, "indexed", lang, index=values["index"], axes=axes_text)
        return pick(WORDS, self.key, lang, **values).rstrip()


def time_limit() -> float:
    """TIME_LIMIT, or $TUTOR_EXERCISE_TIMEOUT seconds (a test of an endless loop need not wait 10 s)."""
    try:
        return max(0.5, float(os.environ["TUTOR_EXERCISE_TIMEOUT"]))
    except (KeyError, ValueError):
        return TIME_LIMIT


def check_exercise(
    name: str,
    path: Path,
    *,
    seconds: float | None = None,
    output_limit: int = OUTPUT_LIMIT,
    memory_mb: int = MEMORY_LIMIT_MB,
    stop: Callable[[], bool] | None = None,
) -> CheckResult:
    """Run `path` against exercise `name` in `python -I` and return the verdict. Never raises for the learner's code."""
    function = EXERCISES[name].function
    seconds = seconds if seconds is not None else time_limit()
    if not path.is_file():
        return CheckResult(name, False, "no_file", {"path": str(path)})
    with tempfile.TemporaryDirectory(prefix="tutor-check-") as scratch:
        ready_read, ready_write = os.pipe()  # the child says "ready" here once its own start-up is done
        # the verdict comes over a socket that only the supervisor holds, never the learner's process (a file
        # in a folder it can write, as before, was a pass for any file that wrote it)
        verdict_ours, verdict_theirs = socket.socketpair()
        command = [
            sys.executable,
            "-I",  # no user site, no PYTHON* variables, no script folder on sys.path
            "-m",
            "tutor.exercises.runner",
            name,
            str(path),
            str(seconds),
            str(memory_mb),
            str(ready_write),
            str(verdict_theirs.fileno()),
        ]
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        try:
            process = subprocess.Popen(
                command,
                cwd=scratch,  # the learner's relative paths land in a folder that is thrown away
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group: a kill takes anything it started too
                pass_fds=(ready_write, verdict_theirs.fileno()),
            )
        except OSError as error:
            os.close(ready_read)
            verdict_ours.close()
            return CheckResult(name, False, "cannot_start", {"error": error.strerror or str(error)})
        finally:
            os.close(ready_write)
            verdict_theirs.close()
        with os.fdopen(ready_read, "rb", buffering=0) as ready, verdict_ours:
            outcome, output = _wait(process, ready, seconds, output_limit, stop)
            sent = _received(verdict_ours)  # the supervisor has exited: all it sent is there
        text = output.decode("utf-8", errors="replace")
        tail = "\n".join(text.rstrip().splitlines()[-20:])
        if outcome == "timeout":
            return CheckResult(name, False, "timeout", {"seconds": seconds}, output=tail)
        if outcome == "output":
            return CheckResult(name, False, "too_much_output", {"kb": output_limit // 1024}, output=tail[-2000:])
        if outcome == "stopped":
            return CheckResult(name, False, "stopped", output=tail)
        try:
            verdict = json.loads(sent)
            key, values = verdict["key"], verdict.get("values", {})
        except (ValueError, KeyError, TypeError):
            verdict, key, values = {}, "crashed", {"status": process.returncode}
        if key == "crashed":  # the learner's process (or the supervisor) ended without a verdict: say how
            last = text.strip().splitlines()[-1:] if text.strip() else []
            values["tail"] = f": {last[0][:200]}" if last else ""
    values.setdefault("function", function)
    return CheckResult(name, bool(verdict.get("passed")), key, values, verdict.get("case"), tail)


def _received(channel: socket.socket, limit: int = 1 << 20) -> bytes:
    """What the supervisor sent before it exited (it is reaped by now, so nothing more will come)."""
    channel.setblocking(False)
    data = bytearray()
    with contextlib.suppress(BlockingIOError, ConnectionError):
        while len(data) < limit and (chunk := channel.recv(65536)):
            data += chunk
    return bytes(data)


@dataclass
class Clock:
    deadline: float  # time.monotonic() by which the child must be done (or, before it is ready, ready)
    seconds: float  # the learner's time, which starts when the child is ready


def _wait(
    process: subprocess.Popen[bytes],
    ready: BinaryIO,
    seconds: float,
    output_limit: int,
    stop: Callable[[], bool] | None,
) -> tuple[str, bytes]:
    """Read the child's output until it exits: "done", or "timeout" / "output" / "stopped" after killing it.

    The clock gives START_LIMIT until the child says it is ready, then `seconds` for the learner's code.
    """
    assert process.stdout is not None
    output = bytearray()
    clock = Clock(time.monotonic() + START_LIMIT, seconds)
    try:
        outcome = _read_until_exit(process, ready, output, clock, output_limit, stop)
    except BaseException:  # Ctrl-C in `--watch`: the child is in its own session and would go on
        _kill(process)
        raise
    while outcome == "done" and not _has_exited(process):  # output closed: the exit follows at once
        if time.monotonic() > clock.deadline:
            outcome = "timeout"
        time.sleep(0.01)
    _kill(process)  # after "done" too: whatever the learner's code started goes with it
    process.stdout.close()
    return outcome, bytes(output)


def _has_exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it: until it is reaped its process group id
    cannot be taken by another process, so `_kill` can never hit a stranger."""
    if not hasattr(os, "waitid"):  # not every Unix has it; poll() reaps, which is the next best
        return process.poll() is not None
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it and anything it started), then reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _read_until_exit(
    process: subprocess.Popen[bytes],
    ready: BinaryIO,
    output: bytearray,
    clock: Clock,
    output_limit: int,
    stop: Callable[[], bool] | None,
) -> str:
    assert process.stdout is not None
    outcome = "done"
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(ready, selectors.EVENT_READ)
        while True:
            remaining = clock.deadline - time.monotonic()
            if remaining <= 0:
                outcome = "timeout"
                break
            if stop is not None and stop():
                outcome = "stopped"
                break
            events = selector.select(min(remaining, 0.1))
            if any(key.fileobj is ready for key, _ in events):
                selector.unregister(ready)  # ready (or gone): from now on the learner's code runs
                os.read(ready.fileno(), 16)
                clock.deadline = time.monotonic() + clock.seconds
            if not any(key.fileobj is process.stdout for key, _ in events):
                if not events and _has_exited(process):  # something it started still holds the pipe
                    break
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:  # end of output: the child has exited or closed it
                break
            output += chunk
            if len(output) > output_limit:
                outcome = "output"
                break
    return outcome
