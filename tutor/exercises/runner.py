"""The checker's supervisor:

    python -I -m tutor.exercises.runner NAME FILE SECONDS MEMORY_MB READY_FD VERDICT_FD

Prepares the cases and the live model, then writes one byte to READY_FD: the parent's clock for the
learner's code starts there, so a slow start on a busy machine is not held against them. Then forks the
learner's process, which closes VERDICT_FD, confines itself (tutor/patches/confine.py: no signals, no new
session or group, no tracing), limits its memory and CPU time, loads the learner's file and runs their
function on the reference cases and inside the live model, sending back what it returned (JSON reports and
.npy arrays over a pipe, never pickle). The supervisor judges those against the expected values it holds,
kills whatever the learner's process left, and sends one JSON verdict over VERDICT_FD, a socket the
learner's process never holds (a socket: /proc/PID/fd cannot reopen it). The learner's code can print, exit
or lie in its reports; it cannot write the verdict. Knows no language: the parent (tutor.exercises.check)
words it, and enforces the time limit and the output cap.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tutor.patches.confine import confine, guard_supervisor

RTOL, ATOL = 1e-4, 1e-5  # float32: about 7 significant digits, less a few for the sums
LIVE_RTOL, LIVE_ATOL = 1e-3, 1e-3  # four layers of float32 rounding, in another order than model/'s


def limit_resources(seconds: float, memory_mb: int) -> None:
    """Memory and CPU limits on this process from now on, where the platform has them (the parent times us too)."""
    try:
        import resource
    except ImportError:  # Windows
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds) + 2
    for limit, value in ((resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_CPU, cpu)):
        try:
            _, hard = resource.getrlimit(limit)
            resource.setrlimit(limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        except (ValueError, OSError):
            pass


def learner_location(error: BaseException, path: str) -> dict[str, Any]:
    """Where in the learner's own file the error came from (the last frame there), and the error's last line."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == path]
    message = traceback.format_exception_only(type(error), error)[-1].strip()
    if isinstance(error, SyntaxError):
        return {"line": error.lineno or 0, "code": (error.text or "").strip(), "error": f"SyntaxError: {error.msg}"}
    if not frames:
        return {"line": 0, "code": "", "error": message}
    return {"line": frames[-1].lineno or 0, "code": (frames[-1].line or "").strip(), "error": message}


def verdict(passed: bool, key: str, case: Any = None, **values: Any) -> dict[str, Any]:
    named = {"key": case.key, "values": case.values, "axes": case.axes} if case is not None else None
    return {"passed": passed, "key": key, "values": values, "case": named}


def first_problem(expected: Any, got: Any, rtol: float = RTOL, atol: float = ATOL) -> tuple[str, dict[str, Any]] | None:
    """The first way `got` differs from `expected`: type, shape, dtype, NaN/inf, then value."""
    import numpy as np

    if not isinstance(got, np.ndarray):
        kind = type(got).__name__
        return "not_array", {"type": f"{kind} {got.dtype}" if isinstance(got, np.generic) else kind}
    if got.shape != expected.shape:
        return "shape", {"got": list(got.shape), "expected": list(expected.shape)}
    if got.dtype != np.float32:
        return "dtype", {"got": str(got.dtype)}
    not_finite = ~np.isfinite(got) & np.isfinite(expected)
    if not_finite.any():
        index = tuple(int(i) for i in np.argwhere(not_finite)[0])
        return "not_finite", {"value": str(got[index]), "index": list(index), "expected": f"{expected[index]:.6g}"}
    close = np.isclose(got, expected, rtol=rtol, atol=atol)
    if not close.all():
        index = tuple(int(i) for i in np.argwhere(~close)[0])
        return "mismatch", {"index": list(index), "expected": f"{expected[index]:.6g}", "got": f"{got[index]:.6g}"}
    return None


def prepare(name: str) -> tuple[list[Any], Any, Any, Any]:
    """Before any learner code: the reference cases, the live model, its prompt's ids and its own logits."""
    import numpy as np

    import model
    from tutor.exercises import EXERCISES
    from tutor.exercises.cases import LIVE_PROMPT, reference_cases

    cases = reference_cases(name)
    live_gpt = model.load(EXERCISES[name].live_model)
    ids = np.asarray(live_gpt.tokenizer.encode(LIVE_PROMPT), dtype=np.intp)
    return cases, live_gpt, ids, live_gpt.forward(ids)


# -- the learner's side: a forked child, confined, that reports what the learner's function returned ----------


class Reports:
    """What the learner's process sends the supervisor: framed JSON reports and .npy arrays (never pickle)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, report: dict[str, Any]) -> None:
        self._frame(b"J", json.dumps(report, ensure_ascii=False, default=str).encode("utf-8"))

    def send_array(self, array: Any) -> None:
        import io

        import numpy as np

        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
        self._frame(b"A", buffer.getvalue())

    def _frame(self, kind: bytes, payload: bytes) -> None:
        data = memoryview(kind + struct.pack("<Q", len(payload)) + payload)
        while data:
            data = data[os.write(self.fd, data) :]


def run_learner(name: str, path: str, cases: list[Any], live_gpt: Any, ids: Any, reports: Reports) -> None:
    """Load the learner's file, call their function on every case and inside the live model, and report each
    result; the supervisor judges them. Stops at the first report that ends the check."""
    import numpy as np

    from tutor.exercises import EXERCISES
    from tutor.exercises.cases import swapped_in

    exercise = EXERCISES[name]
    try:
        source = Path(path).read_text(encoding="utf-8")
        namespace: dict[str, Any] = {"__name__": f"exercise_{name}", "__file__": path}
        exec(compile(source, path, "exec"), namespace)
    except (SyntaxError, UnicodeDecodeError) as error:
        if isinstance(error, UnicodeDecodeError):
            return reports.send({"key": "not_utf8"})
        return reports.send({"key": "syntax", **learner_location(error, path)})
    except BaseException as error:  # SystemExit too: the learner's module must not end the check
        return reports.send({"key": "load_error", **learner_location(error, path)})
    function = namespace.get(exercise.function)
    if not callable(function):
        return reports.send({"key": "missing"})

    for index, case in enumerate(cases):
        copies = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in case.args]
        try:
            got = function(*copies)
        except NotImplementedError:
            return reports.send({"key": "todo"})
        except BaseException as error:
            return reports.send({"key": "raised", "case": index, **learner_location(error, path)})
        returned(reports, got, case=index)
        for copy in copies:
            if isinstance(copy, np.ndarray):
                reports.send_array(copy)  # the supervisor compares it with the argument it holds

    try:
        with swapped_in(name, function, live_gpt) as patched:
            live_got = patched.forward(ids)
    except BaseException as error:
        return reports.send({"key": "live_raised", **learner_location(error, path)})
    returned(reports, live_got, case=None)


def returned(reports: Reports, got: Any, case: int | None) -> None:
    """Report what came back: an array follows, or the type of what is not an array NumPy can send as it is."""
    import numpy as np

    if isinstance(got, np.ndarray) and not got.dtype.hasobject:
        reports.send({"key": "returned", "case": case})
        reports.send_array(got)
    elif isinstance(got, np.ndarray):
        reports.send({"key": "returned_other", "case": case, "dtype": str(got.dtype), "shape": list(got.shape)})
    else:
        kind = type(got).__name__
        reports.send(
            {
                "key": "returned_other",
                "case": case,
                "type": f"{kind} {got.dtype}" if isinstance(got, np.generic) else kind,
            }
        )


# -- the supervisor's side: read the reports, judge them against the values it holds --------------------------


def read_reports(data: bytes) -> list[tuple[str, Any]]:
    """The frames in `data`: ("J", dict) or ("A", ndarray); a frame cut short or garbled ends the list."""
    import io

    import numpy as np

    frames: list[tuple[str, Any]] = []
    at = 0
    while at + 9 <= len(data):
        kind, (length,) = data[at : at + 1], struct.unpack("<Q", data[at + 1 : at + 9])
        payload = data[at + 9 : at + 9 + length]
        if len(payload) != length:
            break
        at += 9 + length
        try:
            if kind == b"J":
                report = json.loads(payload)
                if not isinstance(report, dict):
                    break
                frames.append(("J", report))
            elif kind == b"A":
                frames.append(("A", np.lib.format.read_array(io.BytesIO(payload), allow_pickle=False)))
            else:
                break
        except Exception:  # whatever the learner's process wrote there, it is no report
            break
    return frames


def judge(frames: list[tuple[str, Any]], cases: list[Any], live: tuple[Any, Any, Any], status: int) -> dict[str, Any]:
    """The verdict on the learner's reports; `status` is their process's exit status (for a report cut short)."""
    import numpy as np

    from tutor.exercises.cases import LIVE_PROMPT

    live_gpt, ids, live_expected = live
    queue = list(frames)

    def next_report() -> dict[str, Any] | None:
        return queue.pop(0)[1] if queue and queue[0][0] == "J" else None

    def next_array() -> Any:
        return queue.pop(0)[1] if queue and queue[0][0] == "A" else None

    def location(report: dict[str, Any]) -> dict[str, Any]:
        return {
            "line": _int(report.get("line")),
            "code": str(report.get("code", "")),
            "error": str(report.get("error", "")),
        }

    def problem_of(report: dict[str, Any], expected: Any, rtol: float, atol: float) -> tuple[str, Any] | None:
        """("crashed", None) for a report cut short, else `first_problem` of what came back (or None)."""
        if report.get("key") == "returned_other":
            return other_problem(report, expected)
        got = next_array()
        return ("crashed", None) if got is None else first_problem(expected, got, rtol, atol)

    crashed = verdict(False, "crashed", status=status)
    report = next_report()
    if report is None:
        return crashed
    key = report.get("key")
    if key in ("not_utf8", "missing", "todo"):
        return verdict(False, key)
    if key in ("syntax", "load_error"):
        return verdict(False, key, **location(report))
    for index, case in enumerate(cases):
        if report is None:
            return crashed
        if report.get("key") == "todo":
            return verdict(False, "todo")
        if report.get("key") == "raised" and report.get("case") == index:
            return verdict(False, "raised", case, **location(report))
        if report.get("key") not in ("returned", "returned_other") or report.get("case") != index:
            return crashed
        problem = problem_of(report, case.expected, RTOL, ATOL)
        if problem is not None and problem[0] == "crashed":
            return crashed
        if problem is not None:
            return verdict(False, problem[0], case, **problem[1])
        for position, arg in enumerate(case.args):
            if isinstance(arg, np.ndarray):
                copy = next_array()
                if copy is None:
                    return crashed
                if copy.shape != arg.shape or not np.array_equal(arg, copy, equal_nan=True):
                    return verdict(False, "changed_input", case, position=position + 1)
        report = next_report()

    where = {"model": live_gpt.name, "prompt": LIVE_PROMPT}
    if report is None:
        return crashed
    if report.get("key") == "live_raised":
        return verdict(False, "live_raised", **where, **location(report))
    if report.get("key") not in ("returned", "returned_other") or report.get("case") is not None:
        return crashed
    problem = problem_of(report, live_expected, LIVE_RTOL, LIVE_ATOL)
    if problem is not None and problem[0] == "crashed":
        return crashed
    if problem is not None:
        key, values = problem
        if key in ("mismatch", "not_finite"):
            position, token = values["index"]
            values["token"] = live_gpt.tokenizer.piece(token) if hasattr(live_gpt.tokenizer, "piece") else str(token)
            values["position"] = position
        return verdict(False, "live_" + key, **where, **values)
    return verdict(True, "passed", cases=len(cases), **where, n=len(ids))


def other_problem(report: dict[str, Any], expected: Any) -> tuple[str, dict[str, Any]]:
    """The problem with what came back as a description, not an array: not an array at all, or an array of
    Python objects (which cannot come over without pickle)."""
    if "dtype" in report:
        if report.get("shape") != list(expected.shape):
            return "shape", {"got": report.get("shape"), "expected": list(expected.shape)}
        return "dtype", {"got": str(report["dtype"])}
    return "not_array", {"type": str(report.get("type", "?"))}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def supervise(name: str, path: str, seconds: float, memory_mb: int, ready_fd: int, verdict_fd: int) -> dict[str, Any]:
    """Prepare, say ready, fork the learner's process (confined, without the ready and verdict channels), read
    its reports until it ends, end everything it started, and judge."""
    guard_supervisor()
    cases, live_gpt, ids, live_expected = prepare(name)
    os.write(ready_fd, b"r")
    os.close(ready_fd)
    report_read, report_write = os.pipe()
    child = os.fork()
    if child == 0:  # the learner's process: it never returns into the supervisor's code
        status = 0
        try:
            os.close(verdict_fd)
            os.close(report_read)
            confine()
            limit_resources(seconds, memory_mb)
            run_learner(name, path, cases, live_gpt, ids, Reports(report_write))
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(report_write)
    data, status = collect(report_read, child)
    end_descendants()
    return judge(read_reports(data), cases, (live_gpt, ids, live_expected), status)


REPORT_LIMIT = 256 * 2**20  # bytes of reports: the cases' arrays and the logits are a few MB


def collect(fd: int, child: int) -> tuple[bytes, int]:
    """Everything the learner's process reports, and its exit status (killed by a signal: 128 + its number).
    Read until it has exited: a process it started may hold the pipe open, and what is there then is read
    without waiting for more."""
    import select

    data = bytearray()
    reading = True
    while True:
        if reading and select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 1 << 20)
            data += chunk
            if not chunk or len(data) > REPORT_LIMIT:  # the end of the reports (the exit follows), or too many
                reading = False
                if chunk:
                    os.kill(child, signal.SIGKILL)
            continue
        pid, raw = os.waitpid(child, os.WNOHANG if reading else 0)
        if pid:
            break
    os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError):
        while len(data) <= REPORT_LIMIT and (chunk := os.read(fd, 1 << 20)):
            data += chunk
    os.close(fd)
    code = os.waitstatus_to_exitcode(raw)
    return bytes(data), 128 - code if code < 0 else code


def end_descendants() -> None:
    """SIGKILL every other process of this process group and every child of this process (a subreaper: the
    learner's orphans are its children), until none is left; reap them."""
    me = os.getpid()
    group = os.getpgid(0)
    for _ in range(50):
        others = [pid for pid, ppid, pgrp in _processes() if pid != me and (pgrp == group or ppid == me)]
        if not others:
            return
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        time.sleep(0.01)


def _processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every process /proc shows; nothing where there is no /proc."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        found.append((int(entry), int(fields[1]), int(fields[2])))
    return found


def main(argv: list[str]) -> int:
    name, path, seconds, memory_mb, ready_fd, verdict_fd = argv
    result = supervise(name, str(Path(path).resolve()), float(seconds), int(memory_mb), int(ready_fd), int(verdict_fd))
    with socket.socket(fileno=int(verdict_fd)) as channel:
        channel.sendall(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
