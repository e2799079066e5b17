"""The checker's subprocess:

    python -I -m tutor.exercises.runner NAME FILE RESULT_JSON SECONDS MEMORY_MB READY_FD

Prepares the cases and the live model, then writes one byte to READY_FD: the parent's clock for the
learner's code starts there, so a slow start on a busy machine is not held against them. Then loads the
learner's file, runs their function on the reference cases and inside the live model, and writes one
JSON verdict to RESULT_JSON. Knows no language: the parent (tutor.exercises.check) words it. The parent
enforces the time limit and the output cap; this process limits its own memory and CPU time.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def check(name: str, path: str, ready: Callable[[], None]) -> dict[str, Any]:
    import numpy as np

    import model
    from tutor.exercises import EXERCISES
    from tutor.exercises.cases import LIVE_PROMPT, reference_cases, swapped_in

    exercise = EXERCISES[name]
    cases = reference_cases(name)  # before the learner's code runs: it cannot change the expected values
    live_gpt = model.load(exercise.live_model)
    ids = np.asarray(live_gpt.tokenizer.encode(LIVE_PROMPT), dtype=np.intp)
    live_expected = live_gpt.forward(ids)
    ready()

    try:
        source = Path(path).read_text(encoding="utf-8")
        namespace: dict[str, Any] = {"__name__": f"exercise_{name}", "__file__": path}
        exec(compile(source, path, "exec"), namespace)
    except (SyntaxError, UnicodeDecodeError) as error:
        if isinstance(error, UnicodeDecodeError):
            return verdict(False, "not_utf8")
        return verdict(False, "syntax", **learner_location(error, path))
    except BaseException as error:  # SystemExit too: the learner's module must not end the check
        return verdict(False, "load_error", **learner_location(error, path))
    function = namespace.get(exercise.function)
    if not callable(function):
        return verdict(False, "missing", function=exercise.function)

    for case in cases:
        copies = [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in case.args]
        try:
            got = function(*copies)
        except NotImplementedError:
            return verdict(False, "todo", function=exercise.function)
        except BaseException as error:
            return verdict(False, "raised", case, **learner_location(error, path))
        problem = first_problem(case.expected, got)
        if problem is not None:
            return verdict(False, problem[0], case, **problem[1])
        for position, (arg, copy) in enumerate(zip(case.args, copies, strict=True)):
            if isinstance(arg, np.ndarray) and not np.array_equal(arg, copy, equal_nan=True):
                return verdict(False, "changed_input", case, position=position + 1)

    try:
        with swapped_in(name, function, live_gpt) as patched:
            live_got = patched.forward(ids)
    except BaseException as error:
        return verdict(False, "live_raised", model=live_gpt.name, prompt=LIVE_PROMPT, **learner_location(error, path))
    problem = first_problem(live_expected, live_got, LIVE_RTOL, LIVE_ATOL)
    if problem is not None:
        key, values = problem
        if key in ("mismatch", "not_finite"):
            position, token = values["index"]
            values["token"] = live_gpt.tokenizer.piece(token) if hasattr(live_gpt.tokenizer, "piece") else str(token)
            values["position"] = position
        return verdict(False, "live_" + key, model=live_gpt.name, prompt=LIVE_PROMPT, **values)
    return verdict(True, "passed", cases=len(cases), model=live_gpt.name, prompt=LIVE_PROMPT, n=len(ids))


def main(argv: list[str]) -> int:
    name, path, result_path, seconds, memory_mb, ready_fd = argv

    def ready() -> None:
        limit_resources(float(seconds), int(memory_mb))
        os.write(int(ready_fd), b"r")
        os.close(int(ready_fd))

    result = check(name, str(Path(path).resolve()), ready)
    Path(result_path).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
