"""Issue #9: whatever a learner pastes, whatever file is broken, whatever size the window is, no traceback.

Prompts are fuzzed through the tokenizers, the model, `tutor trace` and the app's input; broken weights,
lessons and progress files each give one line (a command) or a notice (the app); the window survives a
storm of resizes; lesson links cannot open files or run anything.
"""

from __future__ import annotations

import ast
import io
import json
import random
import struct
import time
from pathlib import Path

import numpy as np
import pyte
import pytest
import safetensors.numpy
from helpers import FullDisk, make_app, run_tutor, screen_text, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.widgets import Input

import model
from tutor.progress import ProgressStore
from tutor.report import render_report, trace_report
from tutor.widgets.lesson_view import LessonView

ROOT = Path(__file__).resolve().parent.parent


def notices(app) -> list[str]:
    """The app's notices (toasts). Textual draws them on a layer the pilot's screen text leaves out; in a real
    terminal they show at the bottom right (tried in tmux)."""
    return [str(notification.message) for notification in app._notifications]


# -- 1. fuzzed prompts ---------------------------------------------------------------------------------

NASTY = [
    "",
    "\x00",
    "\x1b[2J\x1b[31mred\x1b[0m",
    "\x07\x08\x7f\x9b",
    "e\u0301\u0302\u0303\u0304" * 40,  # a tower of combining marks
    "👨\u200d👩\u200d👧\u200d👦 👍🏽 🏳️\u200d🌈",  # emoji joined by ZWJ, a skin tone, a flag
    "مرحبا بالعالم \u202eabc\u202c שלום",  # right to left, and an override
    "\ud800",  # lone surrogates (a broken paste)
    "a\udfffb\udc80",
    "\ufeff\u200b\u2028\u2029",
    "\r\n\t",
    "[/b][bold red",  # markup that is not
    "\U0010ffff\U000e0001𝕏",
    "猫" * 10_000,  # a 10,000-character paste
]
ODD_CHARACTERS = list("\ud800\udbff\udc00\udfff\u200d\u0301\u202e\u202d\x00\x1b\r\n\ufeff\ufffd猫追狗\U0001f468")
prompts = st.one_of(
    st.text(st.one_of(st.characters(codec=None, exclude_categories=()), st.sampled_from(ODD_CHARACTERS)), max_size=120),
    st.sampled_from(NASTY),
)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(text=prompts)
def test_the_character_tokenizer_round_trips_any_text(tiny: model.GPT, text: str) -> None:
    ids = tiny.tokenizer.encode(text)
    assert tiny.tokenizer.decode(ids) == text
    assert all(0 <= i < tiny.tokenizer.vocab_size for i in ids)
    for i in ids[:50]:
        assert isinstance(tiny.tokenizer.piece(i), str)


@FUZZ
@given(text=prompts)
def test_any_prompt_runs_through_the_model_and_the_trace_report(tiny: model.GPT, text: str) -> None:
    trace = tiny.run(text)
    ids = tiny.tokenizer.encode(text)
    n_ctx = tiny.config.n_ctx
    assert trace.tokens == ids[-n_ctx:] if ids else trace.tokens == []
    assert trace.dropped == max(0, len(ids) - n_ctx)  # the last tokens are kept, and the count of the rest
    if trace.tokens:
        assert np.isfinite(trace.logits).all()
    report = trace_report(tiny, trace)
    json.dumps(report, allow_nan=False)  # what `tutor trace --json` prints
    from rich.console import Console

    if len(trace.tokens) <= 8:  # a table of every step × token: long ones take seconds (tutor trace is tested below)
        console = Console(file=io.StringIO(), width=100)
        console.print(render_report(report, trace, "en"))
        assert "\x1b[2J" not in console.file.getvalue()  # a pasted escape sequence is shown, never sent


@pytest.fixture(scope="module")
def small_gpt2(tmp_path_factory: pytest.TempPathFactory) -> model.GPT:
    pytest.importorskip("tokenizers")
    from test_hf_gpt2 import write_folder

    folder = tmp_path_factory.mktemp("gpt2") / "small"
    write_folder(folder)
    return model.load(folder)


@FUZZ
@given(text=prompts)
def test_any_prompt_runs_through_a_gpt2_bpe_model(small_gpt2: model.GPT, text: str) -> None:
    ids = small_gpt2.tokenizer.encode(text)  # a lone surrogate used to raise TypeError here
    assert isinstance(small_gpt2.tokenizer.decode(ids), str)
    trace = small_gpt2.run(text)
    assert trace.dropped == max(0, len(ids) - small_gpt2.config.n_ctx)


@pytest.mark.parametrize(
    "prompt",
    [
        b"\x1b[2J\x07\x08 \t",
        "👨\u200d👩\u200d👧 e\u0301 مرحبا".encode(),
        b"a\xe7\x8cb\xff",  # not UTF-8: the terminal sent bytes of another encoding
        ("猫追狗" * 3400).encode(),
        b"",
    ],
    ids=["control", "emoji-rtl-combining", "not-utf8", "10k", "empty"],
)
def test_trace_command_takes_any_prompt(tmp_path: Path, prompt: bytes) -> None:
    result = run_tutor("trace", prompt, "--json", cwd=tmp_path)  # type: ignore[arg-type]
    if not prompt:  # nothing to trace: said in one line, and the exit status says so (tests/test_cli.py)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and result.stdout == ""
        return
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    doc = json.loads(result.stdout)
    if len(prompt) > 10_000:
        assert doc["dropped_tokens"] == 10_200 - 64 and len(doc["tokens"]) == 64
        assert "kept the last 64 tokens, dropped 10136" in result.stderr
    table = run_tutor("trace", prompt, cwd=tmp_path, env={"COLUMNS": "100"})
    assert table.returncode == 0 and "Traceback" not in table.stderr
    assert "\x1b[2J" not in table.stdout and "\x07" not in table.stdout


async def test_the_prompt_takes_any_paste_and_says_when_it_is_cut(tmp_path: Path) -> None:
    app = make_app(ProgressStore(tmp_path / "progress.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        prompt = app.main.query_one("#prompt", Input)
        for text in NASTY:
            await pilot.press("ctrl+u")
            prompt.post_message(events.Paste(text))
            await settle(pilot)
            await pilot.press("down", "pagedown")
            await settle(pilot)
            assert app.main.place.prompt == prompt.value
            assert app.main.place.trace is not None
            assert app.main.place.trace.tokens == app.main.place.gpt.prompt_tokens(prompt.value)[0]
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        assert app.main.place.trace.pieces == list("猫追狗")
        await pilot.press("ctrl+u")
        prompt.post_message(events.Paste("狗" * 10_000))
        await settle(pilot)
        strip = " ".join(screen_text(app, "#tokens").split())
        assert "only the last 64 tokens are used (9936 dropped)" in strip


async def test_a_model_that_raises_is_a_notice_and_the_app_goes_on(tmp_path: Path, monkeypatch) -> None:
    app = make_app(ProgressStore(tmp_path / "progress.json"))
    real_run = app.main.place.gpt.run

    def run(prompt, stop=None):
        if "boom" in prompt:
            raise RuntimeError("a bug in a model")
        return real_run(prompt, stop=stop)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app.main.place.gpt, "run", run)
        await pilot.press("ctrl+u", *"boom")
        await settle(pilot)
        assert any("RuntimeError: a bug in a model" in notice for notice in notices(app))
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        assert app.main.place.trace.pieces == list("猫追狗")


# -- 2. broken files ----------------------------------------------------------------------------------


def _header(data: bytes) -> tuple[int, dict]:
    n = struct.unpack("<Q", data[:8])[0]
    return n, json.loads(data[8 : 8 + n])


def _with_header(data: bytes, edit) -> bytes:
    n, header = _header(data)
    edit(header)
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data[8 + n :]


def _with_tensor(path: Path, data: bytes, name: str, value) -> None:
    tensors = safetensors.numpy.load_file(model.SHIPPED_DIR / "tiny.safetensors")
    _, header = _header(data)
    tensors[name] = value(tensors[name])
    safetensors.numpy.save_file(tensors, str(path), metadata=header["__metadata__"])


def _nan(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x.flat[7] = np.nan
    return x


BROKEN_WEIGHTS = {
    "truncated": lambda p, d: p.write_bytes(d[: len(d) // 2]),
    "empty": lambda p, d: p.write_bytes(b""),
    "pickle": lambda p, d: p.write_bytes(b"\x80\x04\x95" + b"\x00" * 64),
    "header-not-json": lambda p, d: p.write_bytes(struct.pack("<Q", 9) + b"{not json" + d[8:]),
    "offsets": lambda p, d: p.write_bytes(_with_header(d, lambda h: h["wte"].update(data_offsets=[0, 10**18]))),
    "bad-config": lambda p, d: p.write_bytes(
        _with_header(d, lambda h: h["__metadata__"].update(config='{"n_heads": 7}'))
    ),
    "wrong-shape": lambda p, d: _with_tensor(p, d, "wte", lambda x: np.zeros((3, 3), np.float32)),
    "nan": lambda p, d: _with_tensor(p, d, "blocks.1.mlp.w_out", _nan),
    "folder": lambda p, d: p.mkdir(),
}


@pytest.mark.parametrize("command", [["trace", "猫追狗"], []], ids=["trace", "app"])
@pytest.mark.parametrize("kind", list(BROKEN_WEIGHTS))
def test_a_broken_weights_file_is_one_line_and_a_non_zero_exit(tmp_path: Path, kind: str, command: list[str]) -> None:
    path = tmp_path / f"{kind}.safetensors"
    BROKEN_WEIGHTS[kind](path, (model.SHIPPED_DIR / "tiny.safetensors").read_bytes())
    result = run_tutor(*command, "--model", str(path), cwd=tmp_path, env={"TUTOR_STATE_DIR": str(tmp_path / "s")})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.stderr.startswith("tutor: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


BROKEN_LESSONS = {
    "01-fine.md": '+++\nid = "fine"\norder = 1\ntitle = "Fine"\nprompt = "猫追狗"\n+++\n## Hello\n\nText.\n',
    "02-toml.md": '+++\nid = "toml"\norder = 2\ntitle = "Broken TOML\nprompt = 3\n+++\n## Body\n',
    "03-unclosed.md": '+++\nid = "unclosed"\norder = 3\n## No closing line\n',
    "04-none.md": "## No front matter at all\n",
    "05-types.md": '+++\nid = 5\norder = "five"\ntitle = ["x"]\nprompt = 1.5\nsteps = "embed"\n'
    'model = "/etc/passwd"\n+++\nx\n',
    "06-quiz.md": '+++\nid = "quiz"\norder = 6\ntitle = "Quiz [/b] [bold"\nprompt = "猫"\n+++\n'
    '```tutor-quiz\nquestions = "oops"\n```\n\n```tutor-quiz\nquestions = [1, {choices = 3}]\n```\n'
    "```tutor-code\nos.system\n```\n[x](tutor:nothing?x=1) [y](tutor:show?prompt=%ZZ)\n",
}


@pytest.fixture
def broken_content(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    for lang in ("en", "zh"):
        folder = root / lang
        folder.mkdir(parents=True)
        for name, text in BROKEN_LESSONS.items():
            (folder / name).write_text(text, encoding="utf-8")
        (folder / "07-binary.md").write_bytes(b"\xff\xfe\x00garbage")
        (folder / "08-folder.md").mkdir()
    return root


async def test_broken_lessons_show_warnings_and_the_app_goes_on(tmp_path: Path, broken_content: Path) -> None:
    app = make_app(ProgressStore(tmp_path / "progress.json"), broken_content)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert len(app.lessons) == 8
        for lesson in app.lessons:
            await app.open_lesson(lesson.id)
            await settle(pilot)
            assert app.main.place.lesson is lesson
            if lesson.warnings:
                assert "⚠" in screen_text(app, "#lesson")
            await pilot.press("down")
        assert app.main.place.gpt.name == "tiny"  # the "/etc/passwd" model of 05-types was refused
        await pilot.press("f8")
        await settle(pilot)
    from tutor.lessons.check import check_content

    problems = check_content(broken_content)
    assert any("02-toml.md" in p for p in problems) and any("07-binary.md" in p for p in problems)


def test_tutor_lessons_without_a_content_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    import tutor.lessons.course
    from tutor.commands.lessons import run_lessons

    monkeypatch.setattr(tutor.lessons.course, "content_dir", lambda: tmp_path / "no-content")
    assert run_lessons("en") == 1
    assert "no lessons" in capsys.readouterr().out


async def test_the_app_without_a_content_folder_says_so(tmp_path: Path) -> None:
    app = make_app(ProgressStore(tmp_path / "progress.json"), tmp_path / "no-content")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "No lessons found in" in screen_text(app)
        await pilot.press("f8", "f7", "f2", "escape", "down")
        await settle(pilot)


async def test_a_corrupt_progress_file_is_reported_in_the_app_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "progress.json"
    path.parent.mkdir()
    path.write_text('{"version": 1, "done": {"broken": true}}', encoding="utf-8")
    app = make_app(ProgressStore(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert any("progress file was unreadable" in notice for notice in notices(app))
        await pilot.press("down")
    (aside,) = path.parent.glob("progress.json.corrupt-*")
    assert "broken" in aside.read_text(encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8"))["last"]["step"]  # a fresh file, saved as usual


ODD_BUT_VALID = {
    "version": 1,
    "done": ["no-such-lesson", "using-tutor"],
    "quiz": {"tokens": "not a record", "layernorm": {"score": "three"}},
    "exercises": {"rope": 3, "layer_norm": {"passed": "yes", "tries": "many"}},
    "last": {"lesson": 5, "step": ["x"], "prompt": 12, "model": "/etc/passwd", "lang": "xx"},
}


async def test_odd_values_in_a_valid_progress_file_do_not_break_the_app_or_tutor_progress(tmp_path: Path) -> None:
    path = tmp_path / "state" / "progress.json"
    path.parent.mkdir()
    path.write_text(json.dumps(ODD_BUT_VALID), encoding="utf-8")
    app = make_app(ProgressStore(path), None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f2")
        await settle(pilot)
        await pilot.press("escape")
        assert app.main.place.trace is not None and app.main.place.gpt.name == "tiny"
    result = run_tutor("progress", "--lang", "en", cwd=tmp_path, env={"TUTOR_STATE_DIR": str(path.parent)})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "Lessons: 1 of" in result.stdout and "no-such-lesson" in result.stdout


async def test_a_state_folder_that_cannot_be_written_is_said_and_the_app_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("", encoding="utf-8")
    app = make_app(ProgressStore(blocker / "state" / "progress.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        await pilot.pause(0.7)  # the deferred save
        await settle(pilot)
        assert any("cannot save progress" in notice for notice in notices(app))
        await pilot.press("down")
        await settle(pilot)
        assert app.main.place.step_index == 3


async def test_a_full_disk_is_said_in_the_app_and_saving_resumes_at_the_next_change_and_on_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one failed save the app never saved again in that session, not even on exit once space was back."""
    path = tmp_path / "state" / "progress.json"
    disk = FullDisk.install(monkeypatch)

    def saved_step() -> str:
        return json.loads(path.read_text(encoding="utf-8"))["last"]["step"]

    app = make_app(ProgressStore(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.save_now()  # a file to compare with, whatever start-up's deferred save has done by now
        for full, said in [(True, "cannot save progress"), (True, None), (False, "saved again"), (True, None)]:
            disk.full = full
            await pilot.press("down")
            await pilot.pause(0.7)  # the deferred save
            await settle(pilot)
            step = app.main.place.gpt.steps[app.main.place.step_index].name
            assert (saved_step() == step) != full
            if said:
                assert said in notices(app)[-1]
        disk.full = False  # space is back, and the learner leaves before the deferred save
        await pilot.press("down")
        await settle(pilot)
        step = app.main.place.gpt.steps[app.main.place.step_index].name
    assert saved_step() == step


# -- 4. terminals -------------------------------------------------------------------------------------


async def test_a_storm_of_resizes(tmp_path: Path) -> None:
    from tutor.layout import COMPACT_WIDTH, MIN_HEIGHT, MIN_WIDTH, WIDE_WIDTH

    rng = random.Random(4)
    sizes = [(10, 4), (300, 100), (MIN_WIDTH - 1, MIN_HEIGHT), (MIN_WIDTH, MIN_HEIGHT), (80, 24)]
    sizes += [(COMPACT_WIDTH, 30), (WIDE_WIDTH - 1, 50), (WIDE_WIDTH, MIN_HEIGHT - 1)]  # across the layouts' edges
    sizes += [(rng.randint(10, 300), rng.randint(4, 100)) for _ in range(4)]
    app = make_app(ProgressStore(tmp_path / "progress.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for n, (width, height) in enumerate(sizes):
            await pilot.resize_terminal(width, height)
            await pilot.press("down" if n % 3 else "f6", "pagedown" if n % 5 == 0 else "alt+right")
            await pilot.pause()
            too_small = width < MIN_WIDTH or height < MIN_HEIGHT
            notice = " ".join(screen_text(app).split())
            if too_small and width >= 20 and height >= 6:  # enough room to read it
                assert "Make the window larger" in notice
            if not too_small:
                assert "Make the window larger" not in notice
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert app.main.place.trace is not None and "Step " in screen_text(app)


MODAL_KEYS = {"f2": "Tokens and embeddings", "f9": "", "f10": "Experiment", "ctrl+p": "Lesson 1", "f1": "F2"}


@pytest.mark.parametrize("key", list(MODAL_KEYS))  # one screen a test: ~10 s each, spread over the workers
async def test_every_screen_asks_for_a_larger_window_and_none_crashes(tmp_path: Path, key: str) -> None:
    """With F2, F9, F10, the palette or F1 open, a window 1–6 columns wide crashed the app (a modal's text laid
    out at width 0: `range() arg 3 must not be zero` in Rich's chop_cells). Each asks for a larger window now,
    and shows itself again as before once the window is large enough."""
    from tutor.paths import content_dir

    app = make_app(ProgressStore(tmp_path / "progress.json"), content_dir())  # the shipped lessons: F2 lists them
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        shown = MODAL_KEYS[key]
        await pilot.press(key)
        await settle(pilot)
        modal = app.screen
        assert modal is not app.main, key
        for width, height in [(1, 20), (3, 20), (6, 20), (2, 2), (45, 12)]:
            await pilot.resize_terminal(width, height)
            await pilot.pause()
        assert "Make the window larger" in " ".join(screen_text(app).split()), key  # at 45×12, readable
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert app.screen is modal and "Make the window larger" not in screen_text(app), key
        assert shown in screen_text(app), key
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main and app.return_code is None


@pytest.mark.parametrize("ending", ["crashed", "progress not saved"])
def test_an_app_that_crashed_or_could_not_save_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ending: str
) -> None:
    """`tutor` returned 0 whatever the app's end: after a crash (Textual's return code 1) too, and after a last
    save that failed."""
    import argparse
    import sys

    import tutor.app
    from tutor.commands import app as app_command

    class EndedApp:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.store = ProgressStore(tmp_path / "progress.json")
            self.store.failing = ending == "progress not saved"
            self.return_code = 1 if ending == "crashed" else 0

        def run(self) -> None:
            return None

    monkeypatch.setattr(tutor.app, "TutorApp", EndedApp)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert app_command.run(argparse.Namespace(model=None, lang="en", lessons=None)) == 1
    if ending == "progress not saved":
        assert capsys.readouterr().err.count("\n") == 1


# Each run pairs a setting of the colours (TERM, NO_COLOR) with one of the text encoding (the locale,
# PYTHONIOENCODING): the two are independent, and every setting of either still gets a run of its own.
TERMINALS = {
    "xterm+latin-1 stdout": {"TERM": "xterm", "PYTHONIOENCODING": "latin-1"},
    "NO_COLOR+LANG=C": {"TERM": "xterm-256color", "NO_COLOR": "1", "LANG": "C", "LC_ALL": "C"},
    "dumb": {"TERM": "dumb"},
}


@pytest.mark.parametrize("terminal", list(TERMINALS))
def test_each_kind_of_terminal_runs_steps_and_quits(tmp_path: Path, terminal: str) -> None:
    """A real pseudo-terminal per environment: the first screen, a step, ctrl+q, exit 0, no traceback."""
    import os

    from helpers import drain, read_until, spawn

    changes: dict[str, str | None] = {"LC_ALL": None, **TERMINALS[terminal]}
    process, master = spawn(tmp_path, "--lang", "en", env_changes=changes)
    try:
        out = read_until(master, b"Lesson 1/")
        assert b"Lesson 1/" in out, out[-2000:]
        out += drain(master, 0.5)
        os.write(master, b"\x1b[B")  # ↓
        screen = pyte.Screen(120, 40)  # only changed cells are sent: "1" becomes "2", so read the screen
        stream = pyte.ByteStream(screen)
        stream.feed(out)
        deadline = time.monotonic() + 15
        while "Step 2/" not in "\n".join(screen.display) and time.monotonic() < deadline:
            more = drain(master, 0.2)
            stream.feed(more)
            out += more
        assert "Step 2/" in "\n".join(screen.display)
        os.write(master, b"\x11")  # ctrl+q
        out += read_until(master, b"\x1b[?1049l", timeout=15)  # the alternate screen is left
        assert process.wait(timeout=15) == 0
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    assert b"Traceback" not in out and b"Error" not in out
    assert "猫追狗".encode() in out  # UTF-8 on the terminal even where the locale or PYTHONIOENCODING says otherwise
    saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
    assert saved["last"]["step"] == "blocks.0.ln1"


# -- 6. safety ----------------------------------------------------------------------------------------


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found.append((ast.unparse(node.func), node))
    return found


@pytest.mark.parametrize(
    "path", sorted([*(ROOT / "model").rglob("*.py"), *(ROOT / "tutor").rglob("*.py")]), ids=lambda p: p.name
)
def test_no_pickle_and_no_shell_anywhere(path: Path) -> None:
    """Weights only through safetensors: nothing that unpickles (a checkpoint could run code), no shell."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    unpicklers = {
        "pickle",
        "cPickle",
        "_pickle",
        "dill",
        "joblib",
        "shelve",
        "marshal",
    }  # torch: its load is banned below
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & unpicklers, f"{path.name} imports an unpickler"
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.module.split(".")[0] not in unpicklers, f"{path.name} imports from {node.module}"
    for name, call in _calls(tree):
        keywords = {k.arg: ast.unparse(k.value) for k in call.keywords}
        assert name not in {"torch.load", "pickle.load", "pickle.loads", "os.system", "os.popen"}, name
        assert not (name.endswith(("np.load", "numpy.load")) and keywords.get("allow_pickle") == "True"), name
        assert keywords.get("shell") != "True", f"{path.name}: {name}(shell=True)"


HOSTILE = """+++
id = "hostile"
order = 1
title = "Hostile links"
prompt = "猫追狗"
+++
[passwd](tutor:lesson?id=../../etc/passwd) [file](file:///etc/passwd) [web](http://example.com/x)
[model](tutor:show?model=/etc/passwd) [relative](tutor:show?model=../../../model/weights/tiny.safetensors)
[markup](tutor:lesson?id=[/b]) [unknown](tutor:run?cmd=rm%20-rf%20~) [js](javascript:alert(1))
"""


async def test_lesson_links_cannot_open_files_or_run_anything(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "content"
    for lang in ("en", "zh"):
        (root / lang).mkdir(parents=True)
        (root / lang / "01-hostile.md").write_text(HOSTILE, encoding="utf-8")
    loaded: list[str] = []
    real_load = model.load
    monkeypatch.setattr(model, "load", lambda name="tiny": loaded.append(str(name)) or real_load(name))
    app = make_app(ProgressStore(tmp_path / "progress.json"), root)
    opened: list[str] = []
    monkeypatch.setattr(app, "open_url", lambda url, **kw: opened.append(url))
    hrefs = {
        "tutor:lesson?id=../../etc/passwd": "no lesson '../../etc/passwd'",
        "file:///etc/passwd": "tutor does not open links outside the lessons",
        "http://example.com/x": "tutor does not open links outside the lessons",
        "javascript:alert(1)": "tutor does not open links outside the lessons",
        "tutor:show?model=/etc/passwd": "A lesson can only switch to a shipped model",
        "tutor:show?model=../../../model/weights/tiny.safetensors": "A lesson can only switch to a shipped model",
        "tutor:lesson?id=[/b]": "no lesson '[/b]'",
        "tutor:run?cmd=rm%20-rf%20~": "unknown directive tutor:run",
    }
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        lesson = app.main.query_one(LessonView)
        for href, notice in hrefs.items():
            lesson.post_message(LessonView.LinkClicked(href))
            await settle(pilot)
            assert any(notice in message for message in notices(app)), (href, notices(app))
        for n in range(5):  # the same links from the keyboard (F9 lists the tutor: ones)
            await pilot.press("f9")
            await settle(pilot)
            await pilot.press(*["down"] * n, "enter")
            await settle(pilot)
    assert opened == []
    assert not [name for name in loaded if "passwd" in name or "/" in name]


async def test_the_place_is_written_when_the_learner_pauses_and_at_most_so_long_after(
    tmp_path: Path, monkeypatch
) -> None:
    """While keys come, no save (a lock, a read, two fsyncs) waits in front of one: the place is written once the
    learner pauses, and at the latest SAVE_AT_MOST after the first change not yet written."""
    from tutor import app as app_module

    monkeypatch.setattr(app_module, "SAVE_DELAY", 0.3)
    monkeypatch.setattr(app_module, "SAVE_AT_MOST", 1.0)
    store = ProgressStore(tmp_path / "progress.json")
    app = make_app(store)
    saves: list[dict] = []
    real_save = store.save
    monkeypatch.setattr(store, "save", lambda progress: saves.append(dict(progress.last)) or real_save(progress))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.pause(0.4)
        saves.clear()
        for n in range(5):  # a key every 0.1 s for 0.5 s: nothing written meanwhile
            app.remember(prompt=f"keys {n}")
            await pilot.pause(0.1)
        assert saves == []
        await pilot.pause(0.5)  # the pause: written once, the last place
        assert [save["prompt"] for save in saves] == ["keys 4"]
        saves.clear()
        for n in range(16):  # keys for 1.6 s without a pause: written within SAVE_AT_MOST all the same
            app.remember(prompt=f"more {n}")
            await pilot.pause(0.1)
        assert saves and saves[0]["prompt"] != "more 15"  # while the keys still came


async def test_a_hang_up_stops_the_save_timer_it_saves_for(tmp_path: Path, monkeypatch) -> None:
    """SIGHUP saves at once and leaves: the save the timer was waiting to make is the one just made, so the timer
    must not write it again (a lock and two fsyncs more, on a session that is going)."""
    from tutor import app as app_module

    monkeypatch.setattr(app_module, "SAVE_DELAY", 0.3)
    store = ProgressStore(tmp_path / "progress.json")
    app = make_app(store)
    saves: list[str] = []
    real_save = app._save
    monkeypatch.setattr(app, "_save", lambda: saves.append("save") or real_save())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.pause(0.4)
        saves.clear()
        app.remember(prompt="typed before the hang-up")
        timer = app._save_timer
        monkeypatch.setattr(app, "exit", lambda *args, **kwargs: None)  # stay up to see whether the timer fires
        app.hang_up()
        await pilot.pause(0.6)
        assert saves == ["save"]
        assert timer is not None and app._save_timer is None


async def test_a_lesson_marked_done_is_saved_once_not_again_by_the_waiting_timer(tmp_path: Path, monkeypatch) -> None:
    """F8 on a finished lesson saves at once (the ✓ is a result earned); the timer that waited to write the place
    is stopped, not left to write it again: one save for that, one for the next lesson's place."""
    from tutor import app as app_module

    monkeypatch.setattr(app_module, "SAVE_DELAY", 0.3)
    store = ProgressStore(tmp_path / "progress.json")
    app = make_app(store, ROOT / "content")
    saves: list[str] = []
    real_save = store.save
    monkeypatch.setattr(store, "save", lambda progress: saves.append("save") or real_save(progress))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.pause(0.4)
        saves.clear()
        lesson = app.main.place.lesson
        assert lesson is not None
        app.remember(prompt="typed before F8")
        app.read_to_end.add(lesson.id)
        await app.step_lesson(1)
        await pilot.pause(0.7)
        assert lesson.id in app.progress.done
        assert saves == ["save", "save"]
