"""The coding exercises end to end: the workspace, the subprocess checker, the CLI and the app's screen."""

from __future__ import annotations

import ast
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import make_app, run_tutor, screen_text

from tutor.exercises import EXERCISES, record_result, reference_source
from tutor.exercises.check import check_exercise
from tutor.exercises.workspace import TODO_BODY, exercise_path, starter_text, write_workspace
from tutor.lessons.check import _exercise_names
from tutor.progress import ProgressStore
from tutor.screens.exercise import ExerciseScreen

# What a learner might write in place of the TODO: correct, and in their own words (not model/'s code).
SOLUTIONS = {
    "layer_norm": """
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta
""",
    "sinusoidal_positions": """
    angle = np.arange(n_ctx)[:, None] / base ** (np.arange(0, d, 2) / d)
    pe = np.zeros((n_ctx, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return pe.astype(np.float32)
""",
    "residual_block": """
    h = x + attn(ln1(x))
    return h + mlp(ln2(h))
""",
    "causal_attention": """
    n = q.shape[1]
    scores = q @ k.transpose(0, 2, 1) / q.shape[-1] ** 0.5
    scores = np.where(np.tri(n, n, dtype=bool), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v
""",
    "rope": """
    sin, cos = pe[:, None, 0::2], pe[:, None, 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
""",
}

REQUIRED = ("layer_norm", "sinusoidal_positions", "residual_block", "causal_attention", "rope")


def solve(folder: Path, name: str, body: str | None = None) -> Path:
    """Replace the TODO in `name`'s file with `body` (default: a correct solution), as a learner's save does."""
    path = exercise_path(folder, name)
    text = path.read_text(encoding="utf-8")
    if TODO_BODY not in text:  # solved before: start from the starter file again
        text = starter_text(EXERCISES[name], "en")
    path.write_text(text.replace(TODO_BODY, body if body is not None else SOLUTIONS[name]), encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "TUTOR_EXERCISES_DIR": str(tmp_path / "exercises"),
        "TUTOR_STATE_DIR": str(tmp_path / "state"),
        "TUTOR_EXERCISE_TIMEOUT": "10",
    }


def saved_exercises(env: dict[str, str]) -> dict:
    return json.loads((Path(env["TUTOR_STATE_DIR"]) / "progress.json").read_text(encoding="utf-8"))["exercises"]


# -- the exercises and the workspace -----------------------------------------------------------------


def test_the_required_exercises_exist_and_the_lesson_checker_knows_them() -> None:
    assert set(REQUIRED) <= set(EXERCISES)
    assert _exercise_names() == tuple(EXERCISES)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(EXERCISES))
def test_starter_files_are_python_with_the_formula_and_a_todo(name: str, lang: str) -> None:
    exercise = EXERCISES[name]
    text = starter_text(exercise, lang)
    tree = ast.parse(text)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [f.name for f in functions] == [exercise.function]
    docstring = ast.get_docstring(functions[0]) or ""
    assert "=" in docstring and "Returns" in docstring  # the formula and what comes back
    assert "TODO" in text and TODO_BODY in text
    assert exercise.title(lang) in text


def test_write_workspace_never_overwrites_a_learners_file(tmp_path: Path) -> None:
    folder = tmp_path / "exercises"
    assert len(write_workspace(folder, "en")) == len(EXERCISES)
    mine = exercise_path(folder, "rope")
    mine.write_text("# my own work\n", encoding="utf-8")
    exercise_path(folder, "layer_norm").unlink()
    assert write_workspace(folder, "en") == [exercise_path(folder, "layer_norm")]
    assert mine.read_text(encoding="utf-8") == "# my own work\n"


def test_record_result_counts_tries_and_a_pass_stays() -> None:
    exercises: dict = {}
    record_result(exercises, "rope", False)
    record_result(exercises, "rope", True)
    record = record_result(exercises, "rope", False)
    assert record["passed"] is True and record["tries"] == 3
    assert set(record) == {"passed", "tries", "at"}
    assert time.strptime(record["at"], "%Y-%m-%dT%H:%M:%S")
    elsewhere = {"passed": True, "tries": 7, "at": "2026-01-01T00:00:00"}  # `tutor exercises` meanwhile
    assert record_result({"rope": {"passed": False, "tries": 1}}, "rope", False, elsewhere)["tries"] == 8
    assert record_result({"rope": {"passed": False, "tries": 1}}, "rope", False, elsewhere)["passed"] is True


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_reference_solution_is_model_source(name: str) -> None:
    source = reference_source(EXERCISES[name])
    for reference in EXERCISES[name].reference:
        assert f"def {reference.split('.')[-1].split(':')[-1]}(" in source


# -- the checker ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(EXERCISES))
def test_the_todo_fails_and_a_correct_solution_passes(tmp_path: Path, name: str) -> None:
    write_workspace(tmp_path, "en")
    todo = check_exercise(name, exercise_path(tmp_path, name))
    assert not todo.passed and todo.key == "todo"
    assert "not done yet" in todo.describe("en") and "还没完成" in todo.describe("zh")
    passed = check_exercise(name, solve(tmp_path, name))
    assert passed.passed, passed.describe("en") + "\n" + passed.output
    assert passed.describe("en").startswith("✓") and "logits" in passed.describe("en")
    assert passed.describe("zh").startswith("✓")


@pytest.mark.parametrize(
    ("name", "body", "key"),
    [
        ("residual_block", "    return x + attn(ln1(x)) + mlp(ln2(x))", "mismatch"),  # parallel, not sequential
        ("residual_block", "    h = ln1(x + attn(x))\n    return ln2(h + mlp(h))", "mismatch"),  # post-norm
        (
            "causal_attention",
            "    s = q @ k.transpose(0, 2, 1) / q.shape[-1] ** 0.5\n"
            "    p = np.exp(s) / np.exp(s).sum(-1, keepdims=True)\n    return p @ v",
            "mismatch",
        ),  # no mask
        (
            "causal_attention",
            "    n = q.shape[1]\n    s = q @ k.transpose(0, 2, 1) / q.shape[-1] ** 0.5\n"
            "    s = np.where(np.tri(n, n, dtype=bool), s, -np.inf)\n"
            "    return (np.exp(s) / np.exp(s).sum(-1, keepdims=True)) @ v",
            "not_finite",
        ),  # exp overflows
        ("sinusoidal_positions", "    return np.zeros((n_ctx, d), dtype=np.float32)", "mismatch"),
        ("rope", "    x[..., 0::2] = x[..., 0::2]\n    return x", "mismatch"),
    ],
)
def test_wrong_solutions_fail_with_the_first_mismatch(tmp_path: Path, name: str, body: str, key: str) -> None:
    write_workspace(tmp_path, "en")
    result = check_exercise(name, solve(tmp_path, name, body))
    assert not result.passed and result.key == key, result.describe("en")
    assert result.case is not None  # which case
    assert "index" in result.describe("en") and "索引" in result.describe("zh")


def test_a_function_that_only_fails_in_the_live_model_is_caught(tmp_path: Path) -> None:
    write_workspace(tmp_path, "en")
    body = SOLUTIONS["layer_norm"].replace(
        "    return", "    if x.shape[-1] == 64:\n        beta = beta * 2\n    return"
    )
    result = check_exercise("layer_norm", solve(tmp_path, "layer_norm", body))
    assert not result.passed and result.key == "live_mismatch", result.describe("en")
    assert "inside the live model" in result.describe("en") and "position" in result.describe("en")


def test_changing_an_input_in_place_is_reported(tmp_path: Path) -> None:
    write_workspace(tmp_path, "en")
    body = "    out = rope_copy = x.copy()\n" + SOLUTIONS["rope"].replace("return out", "x[:] = 0\n    return out")
    result = check_exercise("rope", solve(tmp_path, "rope", body))
    assert result.key == "changed_input", result.describe("en")


def test_a_process_the_learner_starts_neither_holds_up_the_verdict_nor_outlives_it(tmp_path: Path) -> None:
    write_workspace(tmp_path, "en")
    pid_file = tmp_path / "sleeper.pid"
    sleeper = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    spawn = f"    import subprocess, sys\n    subprocess.Popen([sys.executable, '-c', {sleeper!r}])\n"
    result = check_exercise("layer_norm", solve(tmp_path, "layer_norm", spawn + SOLUTIONS["layer_norm"]), seconds=20)
    assert result.passed, result.describe("en")  # not a time-out: the sleeper keeps the output pipe open
    pid = ""
    for _ in range(100):  # killed with the checker's process group (a zombie for a moment, at most)
        pid = pid_file.read_text(encoding="utf-8") if pid_file.exists() else ""
        if pid and not alive(int(pid)):
            break
        time.sleep(0.05)
    else:
        # no pid after 5 s: on a busy machine the group was killed before the sleeper wrote it (so it is gone)
        assert not pid, "the learner's sleeper outlived the check"


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_a_missing_file_and_a_missing_function(tmp_path: Path) -> None:
    assert check_exercise("rope", tmp_path / "nowhere.py").key == "no_file"
    (tmp_path / "rope.py").write_text("import numpy as np\n", encoding="utf-8")
    result = check_exercise("rope", tmp_path / "rope.py")
    assert result.key == "missing" and "rope" in result.describe("en")


# -- the command ----------------------------------------------------------------------------------------


def test_cli_writes_the_workspace_checks_and_records(tmp_path: Path, env: dict[str, str]) -> None:
    folder = Path(env["TUTOR_EXERCISES_DIR"])
    listed = run_tutor("exercises", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    assert str(folder) in listed.stdout
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.py" for n in EXERCISES)
    assert listed.stdout.count("·") >= len(EXERCISES)  # not tried

    failing = run_tutor("exercises", "check", "layer_norm", cwd=tmp_path, env=env)
    assert failing.returncode == 1 and "✗" in failing.stdout and "NotImplementedError" in failing.stdout
    assert failing.stdout.count("layer_norm") == 1, failing.stdout  # "✗ not done yet: layer_norm still raises …"
    once = run_tutor("exercises", "list", cwd=tmp_path, env=env).stdout
    assert "LayerNorm  (1 try)" in once and "tries" not in once, once
    assert saved_exercises(env)["layer_norm"] == {
        "passed": False,
        "tries": 1,
        "at": saved_exercises(env)["layer_norm"]["at"],
    }
    locked = run_tutor("exercises", "solution", "layer_norm", cwd=tmp_path, env=env)
    assert locked.returncode == 1 and "def layer_norm" not in locked.stdout

    solve(folder, "layer_norm")
    passing = run_tutor("exercises", "check", "layer_norm", cwd=tmp_path, env=env)
    assert passing.returncode == 0 and "✓" in passing.stdout, passing.stdout
    assert passing.stdout.startswith("✓ layer_norm: all") and passing.stdout.count("layer_norm") == 1
    assert "LayerNorm  (2 tries)" in run_tutor("exercises", "list", cwd=tmp_path, env=env).stdout
    assert saved_exercises(env)["layer_norm"]["passed"] is True
    assert saved_exercises(env)["layer_norm"]["tries"] == 2
    solution = run_tutor("exercises", "solution", "layer_norm", cwd=tmp_path, env=env)
    assert solution.returncode == 0 and "def layer_norm(" in solution.stdout and "model/norm.py" in solution.stdout

    status = run_tutor("exercises", "list", "--lang", "zh", cwd=tmp_path, env=env)
    assert "✓ layer_norm" in status.stdout and "已通过" in status.stdout
    everything = run_tutor("exercises", "check", cwd=tmp_path, env=env)
    assert everything.returncode == 1  # four TODOs left
    assert everything.stdout.count("✗") == len(EXERCISES) - 1 and everything.stdout.count("✓") == 1

    hint = run_tutor("exercises", "hint", "rope", cwd=tmp_path, env=env)
    assert hint.returncode == 0 and EXERCISES["rope"].hint("en") in hint.stdout


def test_cli_reset_asks_first(tmp_path: Path, env: dict[str, str]) -> None:
    folder = Path(env["TUTOR_EXERCISES_DIR"])
    run_tutor("exercises", cwd=tmp_path, env=env)
    path = solve(folder, "rope")
    kept = subprocess.run(
        [sys.executable, "-m", "tutor", "exercises", "--reset", "rope"],
        input="n\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **env},
        timeout=60,
    )
    assert kept.returncode == 1 and TODO_BODY not in path.read_text(encoding="utf-8")
    reset = run_tutor("exercises", "--reset", "rope", "--yes", cwd=tmp_path, env=env)
    assert reset.returncode == 0 and TODO_BODY in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("exercises", "check", "nothing"), "unknown exercise"),
        (("exercises", "hint"), "needs an exercise name"),
        (("exercises", "grade"), "unknown action"),
        (("exercises", "--reset", "nothing", "--yes"), "unknown exercise"),
    ],
)
def test_cli_bad_arguments_are_one_line(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    result = run_tutor(*args, cwd=tmp_path, env=env)
    assert result.returncode != 0 and message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_cli_reports_an_unwritable_folder(tmp_path: Path, env: dict[str, str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    result = run_tutor("exercises", "--dir", str(blocker / "exercises"), cwd=tmp_path, env=env)
    assert result.returncode == 1 and "cannot write the exercise folder" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("    return 1 / 0", ("ZeroDivisionError", "line {todo_line}", "return 1 / 0")),
        ("    while True:\n        pass", ("stopped after 1 s", "endless loop")),
        ("    while True:\n        print('x' * 1000)", ("more than 64 KB",)),
        ("    return x * np.nan", ("nan at index [0, 0] (token 0, dim 0)",)),
        ("    return x[0]", ("shape [8], expected [4, 8]",)),
        ("    return x.astype(np.float64)", ("dtype float64, expected float32",)),
        ("    return (", ("syntax error", "line {todo_line}")),
        ("    return list(x)", ("returned list",)),
        (
            "    mu = x.mean(-1, keepdims=True)\n    return gamma * (x - mu) / (x.std(-1, keepdims=True) + eps) + beta",
            ("ε = 1", "expected"),
        ),
        ("    import os\n    os._exit(3)", ("without a verdict", "3")),
        ("    raise SystemExit(0)", ("SystemExit",)),
        ("    return np.ones(10**11)", ("MemoryError",)),
    ],
    ids=[
        "raises",
        "endless",
        "prints",
        "nan",
        "shape",
        "dtype",
        "syntax",
        "list",
        "eps",
        "exit",
        "systemexit",
        "memory",
    ],
)
def test_cli_bad_learner_code_is_a_clear_failure(
    tmp_path: Path, env: dict[str, str], body: str, words: tuple[str, ...]
) -> None:
    run_tutor("exercises", cwd=tmp_path, env=env)
    solve(Path(env["TUTOR_EXERCISES_DIR"]), "layer_norm", body)
    result = run_tutor("exercises", "check", "layer_norm", cwd=tmp_path, env={**env, "TUTOR_EXERCISE_TIMEOUT": "1"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "✗" in result.stdout and "Traceback" not in result.stdout + result.stderr
    todo_line = starter_text(EXERCISES["layer_norm"], "en").splitlines().index(TODO_BODY) + 1
    for word in words:
        assert word.format(todo_line=todo_line) in result.stdout
    assert len(result.stdout) < 4000  # the megabytes were not passed on
    assert saved_exercises(env)["layer_norm"]["passed"] is False


def test_cli_watch_checks_again_on_save_and_leaves_on_ctrl_c(tmp_path: Path, env: dict[str, str]) -> None:
    folder = Path(env["TUTOR_EXERCISES_DIR"])
    run_tutor("exercises", cwd=tmp_path, env=env)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "tutor", "exercises", "--watch", "layer_norm"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **env},
    )
    try:
        assert "✗ not done yet: layer_norm still raises" in read_line_with(watcher, "layer_norm")
        solve(folder, "layer_norm")
        assert "✓ layer_norm: all" in read_line_with(watcher, "layer_norm")
        watcher.send_signal(signal.SIGINT)
        rest = watcher.communicate(timeout=60)[0].decode()
    finally:
        watcher.kill()
    assert watcher.returncode == 0 and "stopped watching" in rest and "Traceback" not in rest


def read_line_with(process: subprocess.Popen[bytes], text: str, limit: float = 60.0) -> str:
    """The next output line that contains `text` (a guard against hanging, not a timing assertion)."""
    assert process.stdout is not None
    deadline = time.monotonic() + limit
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(0.2):
                line = process.stdout.readline().decode()
                if not line:
                    break
                if text in line:
                    return line
    raise AssertionError(f"no line with {text!r}")


# -- the app --------------------------------------------------------------------------------------------


async def wait_for_screen_text(pilot, app, text: str) -> str:
    """Poll the screen until `text` shows (the check runs in a worker and a subprocess)."""
    for _ in range(300):
        await pilot.pause(0.1)
        shown = screen_text(app)
        if text in shown:
            return shown
    raise AssertionError(f"{text!r} never showed:\n{screen_text(app)}")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_exercise_screen_fails_then_passes_on_save_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    folder = tmp_path / "exercises"
    monkeypatch.setenv("TUTOR_EXERCISES_DIR", str(folder))
    store = ProgressStore(tmp_path / "state" / "progress.json")
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.open_exercise("layer_norm")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen)
        shown = await wait_for_screen_text(pilot, app, "✗")
        unwrapped = "".join(line.strip() for line in shown.splitlines())
        assert "not done yet" in unwrapped and str(exercise_path(folder, "layer_norm")) in unwrapped
        footer = screen_text(app).splitlines()[-1]
        assert all(key in footer for key in ("Esc", "Check", "Hint", "Solution"))

        app.screen.query_one("#exercise-starter").scroll_visible(animate=False)
        await pilot.pause()
        shown = screen_text(app)
        assert "def layer_norm(x:" in shown and "x̂  = (x − μ) / √(σ² + ε)" in shown  # the signature and its formula
        await pilot.press("s")  # no solution before a pass
        await pilot.pause()
        assert "Reference solution" not in screen_text(app)
        assert any("opens once" in n.message for n in app._notifications)
        await pilot.press("h")
        await pilot.pause()
        assert "keepdims" in screen_text(app)

        solve(folder, "layer_norm")
        shown = await wait_for_screen_text(pilot, app, "✓")
        record = app.progress.exercises["layer_norm"]
        assert record["passed"] is True and record["tries"] == 2

        await pilot.press("s")
        await pilot.pause()
        assert "Reference solution" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
    assert ProgressStore(store.path).load()[0].exercises["layer_norm"]["passed"] is True


async def test_exercise_screen_in_chinese_and_a_broken_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "exercises"
    monkeypatch.setenv("TUTOR_EXERCISES_DIR", str(folder))
    monkeypatch.setenv("TUTOR_EXERCISE_TIMEOUT", "1")
    write_workspace(folder, "zh")
    solve(folder, "rope", "    while True:\n        pass")
    store = ProgressStore(tmp_path / "state" / "progress.json")
    app = make_app(store, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        other = ProgressStore(store.path)  # `tutor exercises check rope` in another terminal, after the app started
        saved, _ = other.load()
        saved.exercises["rope"] = {"passed": True, "tries": 3, "at": "2026-01-01T00:00:00"}
        assert other.save(saved) is None
        app.open_exercise("rope")
        shown = await wait_for_screen_text(pilot, app, "死循环")
        assert "任务" in shown and "返回" in shown
        assert app.progress.exercises["rope"]["passed"] is True  # the other session's pass is kept
        assert app.progress.exercises["rope"]["tries"] == 4
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main


async def test_a_check_that_cannot_run_is_a_notice_not_the_end_of_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check's worker kept Textual's exit_on_error: an error in it (no fork, a full disk) closed the app."""
    import tutor.screens.exercise as exercise_screen

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("no fork for you")

    monkeypatch.setenv("TUTOR_EXERCISES_DIR", str(tmp_path / "exercises"))
    monkeypatch.setattr(exercise_screen, "check_exercise", broken)
    app = make_app(ProgressStore(tmp_path / "state" / "progress.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.open_exercise("layer_norm")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ExerciseScreen)
        assert any("no fork for you" in notice.message for notice in app._notifications)
