"""Progress: two sessions at once lose nothing, a killed writer leaves a valid file, a bad file is kept
aside, a read-only folder is said plainly, and `tutor progress` shows and resets it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import FullDisk, run_tutor

from tutor import progress as progress_module
from tutor.progress import Progress, ProgressStore

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "progress.json"


def on_disk(path: Path) -> Progress:
    return Progress.from_json(json.loads(path.read_text(encoding="utf-8")))


def test_two_sessions_interleaving_keep_everything(path: Path) -> None:
    a, b = ProgressStore(path), ProgressStore(path)
    mine, _ = a.load()
    theirs, _ = b.load()
    mine.done.append("tokens")
    mine.last.update(lesson="tokens", step="embed")
    assert a.save(mine) is None
    theirs.done.append("layernorm")
    theirs.quiz["layernorm"] = {"score": 2, "total": 3, "picks": [0, 1, None], "at": "2026-01-01T10:00:00"}
    theirs.last.update(lesson="layernorm", step="blocks.0.ln1")
    assert b.save(theirs) is None
    mine.exercises["rope"] = {"passed": True, "tries": 2, "at": "2026-01-01T10:01:00"}
    assert a.save(mine) is None  # `last` unchanged here since its save: the other session's position stays
    saved = on_disk(path)
    assert saved.done == ["tokens", "layernorm"]
    assert saved.quiz["layernorm"]["score"] == 2 and saved.exercises["rope"]["passed"] is True
    assert saved.last["lesson"] == "layernorm"
    assert mine.done == ["tokens", "layernorm"]  # the session now knows what the other one finished
    mine.last.update(step="unembed")
    a.save(mine)
    assert on_disk(path).last == {"lesson": "tokens", "step": "unembed"}


def test_a_newer_result_from_another_session_is_not_overwritten_by_an_old_one(path: Path) -> None:
    a, b = ProgressStore(path), ProgressStore(path)
    mine, _ = a.load()
    mine.quiz["tokens"] = {"score": 1, "total": 3, "picks": [0, 0, 0], "at": "2026-01-01T10:00:00"}
    a.save(mine)
    theirs, _ = b.load()
    theirs.quiz["tokens"] = {"score": 3, "total": 3, "picks": [1, 2, 0], "at": "2026-01-01T11:00:00"}
    b.save(theirs)
    mine.done.append("tokens")
    a.save(mine)
    assert on_disk(path).quiz["tokens"]["score"] == 3


def test_a_reset_made_meanwhile_is_not_undone_by_a_running_session(path: Path) -> None:
    running = ProgressStore(path)
    progress, _ = running.load()
    progress.done.append("tokens")
    running.save(progress)
    aside = ProgressStore(path).reset()
    assert aside is not None and on_disk(aside).done == ["tokens"]
    progress.done.append("layernorm")  # done after the reset: kept; "tokens" stays forgotten
    running.save(progress)
    assert on_disk(path).done == ["layernorm"]


WRITER = """
import sys
from pathlib import Path
from tutor.progress import ProgressStore
store = ProgressStore(Path(sys.argv[1]))
progress, _ = store.load()
for n in range(int(sys.argv[3])):
    progress.done.append(f"{sys.argv[2]}-{n}")
    progress.last["prompt"] = sys.argv[2] * 5000  # a large file: writes take long enough to overlap
    assert store.save(progress) is None
"""


def test_two_processes_saving_at_once_lose_nothing(path: Path) -> None:
    count = 40
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(count)], cwd=ROOT) for name in "ab"]
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    done = set(on_disk(path).done)
    assert done == {f"{name}-{n}" for name in "ab" for n in range(count)}


KILLED_WRITER = """
import sys
from pathlib import Path
from tutor.progress import ProgressStore
store = ProgressStore(Path(sys.argv[1]))
progress, _ = store.load()
n = 0
while True:
    n += 1
    progress.done.append(f"lesson-{n}")
    progress.last["prompt"] = "猫追狗" * 20000
    store.save(progress)
"""


def test_a_writer_killed_at_random_moments_always_leaves_a_valid_file(path: Path) -> None:
    rng = random.Random(9)
    lessons_done = 0
    for _ in range(25):
        writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], cwd=ROOT)
        time.sleep(0.08 + rng.random() * 0.2)  # start-up, then somewhere inside a save
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        if path.exists():
            saved = on_disk(path)  # raises if half a file was left behind
            assert len(saved.done) >= lessons_done  # and nothing saved before was lost
            lessons_done = len(saved.done)
    assert lessons_done > 0
    ProgressStore(path).save(Progress())
    assert not list(path.parent.glob(".progress.json-*.tmp"))  # killed writers' temporaries are swept up


@pytest.mark.parametrize(
    "content", [b"{not json", b"\xff\xfe\x00garbage", b'{"version": 1, "done": "tokens"}', b"[]", b""]
)
def test_a_corrupt_file_is_kept_aside_and_reported(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    store = ProgressStore(path)
    progress, notice = store.load()
    assert progress == Progress()
    asides = list(path.parent.glob("progress.json.corrupt-*"))
    assert len(asides) == 1 and asides[0].read_bytes() == content
    assert notice is not None and asides[0].name in notice and "\n" not in notice
    progress.done.append("tokens")
    assert store.save(progress) is None and on_disk(path).done == ["tokens"]


def test_a_file_corrupted_while_the_app_runs_is_kept_aside_on_save(path: Path) -> None:
    store = ProgressStore(path)
    progress, _ = store.load()
    progress.done.append("tokens")
    store.save(progress)
    path.write_text("{ half a file", encoding="utf-8")
    progress.done.append("layernorm")
    notice = store.save(progress)
    assert notice is not None and "kept it as" in notice
    assert on_disk(path).done == ["tokens", "layernorm"]  # this session still had everything
    assert [p.read_text(encoding="utf-8") for p in path.parent.glob("progress.json.corrupt-*")] == ["{ half a file"]


def test_an_unreadable_file_is_kept_aside_not_overwritten(path: Path) -> None:
    path.mkdir(parents=True)  # unreadable as a file, even for root (chmod 000 does not stop root)
    (path / "inside").write_text("precious", encoding="utf-8")
    store = ProgressStore(path)
    progress, notice = store.load()
    assert notice is not None and "unreadable" in notice
    (aside,) = path.parent.glob("progress.json.corrupt-*")
    assert (aside / "inside").read_text(encoding="utf-8") == "precious"
    progress.done.append("tokens")
    assert store.save(progress) is None and on_disk(path).done == ["tokens"]


def test_an_unwritable_state_folder_is_reported_once(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be", encoding="utf-8")
    store = ProgressStore(blocker / "tutor" / "progress.json")
    progress, notice = store.load()
    assert notice is None
    progress.done.append("tokens")
    notice = store.save(progress)
    assert notice is not None and "cannot save progress" in notice and "\n" not in notice
    assert store.save(progress) is None  # said once, not on every keystroke


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_state_folder_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    store = ProgressStore(folder / "progress.json")
    progress, _ = store.load()
    folder.chmod(0o500)
    try:
        progress.done.append("tokens")
        notice = store.save(progress)
    finally:
        folder.chmod(0o700)
    assert notice is not None and "cannot save progress" in notice


def test_a_full_disk_is_said_once_and_every_save_tries_again_until_it_works(path: Path, monkeypatch) -> None:
    """After one failed save the store stopped trying for the rest of the session, even once space was back
    and on exit. ENOSPC is raised where a full disk reports it (writing the temporary file, here its fsync)."""
    store = ProgressStore(path)
    progress, _ = store.load()
    progress.done.append("tokens")
    assert store.save(progress) is None
    disk = FullDisk.install(monkeypatch)
    disk.full = True
    progress.done.append("layernorm")
    notice = store.save(progress)
    assert notice is not None and "No space left on device" in notice and "try" in notice and store.failing
    progress.last["step"] = "embed"
    assert store.save(progress) is None  # tried again, failed again: said once, not on every keystroke
    assert on_disk(path).done == ["tokens"]  # the last good file stays whole
    assert not list(path.parent.glob(".progress.json-*.tmp"))
    disk.full = False  # space is back
    progress.last["step"] = "unembed"
    notice = store.save(progress)
    assert notice is not None and "saved again" in notice and not store.failing
    assert on_disk(path).done == ["tokens", "layernorm"] and on_disk(path).last == {"step": "unembed"}
    assert store.save(progress) is None  # and then quiet again


def test_a_lock_that_cannot_be_had_still_saves_atomically(path: Path, monkeypatch) -> None:
    monkeypatch.setattr(progress_module, "_acquire", lambda fd: False)  # a stuck session, or NFS without locks
    store = ProgressStore(path)
    progress, _ = store.load()
    progress.done.append("tokens")
    assert store.save(progress) is None and on_disk(path).done == ["tokens"]


# -- tutor progress ----------------------------------------------------------------------------------


def saved_progress(state: Path) -> None:
    store = ProgressStore(state / "progress.json")
    progress, _ = store.load()
    progress.done += ["tokens", "layernorm"]
    progress.quiz["tokens"] = {"score": 3, "total": 4, "picks": [0, 1, 2, None], "at": "2026-01-02T09:30:00"}
    progress.exercises["layer_norm"] = {"passed": True, "tries": 3, "at": "2026-01-02T09:40:00"}
    progress.exercises["rope"] = {"passed": False, "tries": 1, "at": "2026-01-02T09:50:00"}
    progress.last.update(lesson="layernorm", step="blocks.0.ln1", prompt="猫追狗\x07", model="tiny", lang="zh")
    assert store.save(progress) is None


def test_progress_command_summarises(tmp_path: Path) -> None:
    state = tmp_path / "state"
    saved_progress(state)
    result = run_tutor("progress", "--lang", "en", cwd=tmp_path, env={"TUTOR_STATE_DIR": str(state)})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"Progress file: {state / 'progress.json'}" in out
    assert "Lessons: 2 of" in out and "✓  2  Tokens and embeddings" in out and "✓  7  LayerNorm" in out
    assert "Tokens and embeddings: 3/4  (2026-01-02 09:30)" in out
    from tutor.exercises import EXERCISES

    titles = {name: EXERCISES[name].title("en") if name in EXERCISES else name for name in ("layer_norm", "rope")}
    assert "Exercises: 1 of" in out and f"✓ {titles['layer_norm']}  (tries: 3)" in out
    assert f"✗ {titles['rope']}  (tries: 1)" in out
    assert "step blocks.0.ln1" in out and 'prompt "猫追狗\\u0007"' in out and "language 中文" in out
    zh = run_tutor("progress", "--lang", "zh", cwd=tmp_path, env={"TUTOR_STATE_DIR": str(state)})
    assert "课程：已完成 2 / " in zh.stdout and "词元与嵌入：3/4" in zh.stdout


def test_progress_command_with_nothing_saved_and_with_a_corrupt_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"TUTOR_STATE_DIR": str(state)}
    result = run_tutor("progress", "--lang", "en", cwd=tmp_path, env=env)
    assert result.returncode == 0 and "No progress saved yet" in result.stdout and "Nothing done yet." in result.stdout
    state.mkdir()
    (state / "progress.json").write_text('{"version": 1, "done": [1, 2]}', encoding="utf-8")
    result = run_tutor("progress", cwd=tmp_path, env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "kept it as" in result.stderr
    assert len(list(state.glob("progress.json.corrupt-*"))) == 1


def test_progress_reset_needs_confirmation_and_keeps_the_old_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"TUTOR_STATE_DIR": str(state)}
    saved_progress(state)
    before = (state / "progress.json").read_bytes()
    refused = run_tutor("progress", "--reset", cwd=tmp_path, env=env)  # no terminal to ask on, no --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr and refused.stderr.count("\n") == 1
    assert (state / "progress.json").read_bytes() == before
    done = run_tutor("progress", "--reset", "--yes", "--lang", "en", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    (aside,) = state.glob("progress.json.reset-*")
    assert aside.read_bytes() == before and aside.name in done.stdout
    assert on_disk(state / "progress.json") == Progress()


@pytest.mark.parametrize(("answer", "reset"), [(b"n\r", False), (b"\r", False), (b"y\r", True)])
def test_progress_reset_asks_on_a_terminal(tmp_path: Path, answer: bytes, reset: bool) -> None:
    from helpers import read_until

    state = tmp_path / "state"
    saved_progress(state)
    before = (state / "progress.json").read_bytes()
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tutor", "progress", "--reset", "--lang", "en"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TUTOR_STATE_DIR": str(state)},
        cwd=tmp_path,
    )
    os.close(slave)
    try:
        assert b"[y/N]" in read_until(master, b"[y/N]")
        os.write(master, answer)
        out = read_until(master, b"reset" if reset else b"Nothing reset")
        assert process.wait(timeout=30) == (0 if reset else 1)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    assert b"Traceback" not in out
    assert ((state / "progress.json").read_bytes() != before) == reset
    assert len(list(state.glob("progress.json.reset-*"))) == int(reset)


def test_a_prompt_with_lone_surrogates_is_saved_as_what_reads_back_and_prints(tmp_path: Path, path: Path) -> None:
    """A lone surrogate (a broken paste) was saved as its \\u escape, read back as itself, and no UTF-8 output
    could hold it: `tutor progress` failed on every run. Saved as U+FFFD, and an older file's escape read as one."""
    store = ProgressStore(path)
    progress, _ = store.load()
    progress.last["prompt"] = "猫\ud800追\udfff"  # what a broken paste leaves; UTF-8 cannot hold it as it is
    progress.quiz["tok\udc80"] = {"score": 1}
    assert store.save(progress) is None
    text = path.read_text(encoding="utf-8")
    assert "\\ud" not in text and "\\udc" not in text
    assert json.loads(text)["last"]["prompt"] == "猫\ufffd追\ufffd" and "tok\ufffd" in json.loads(text)["quiz"]
    result = run_tutor("progress", "--lang", "en", cwd=tmp_path, env={"TUTOR_STATE_DIR": str(path.parent)})
    assert result.returncode == 0 and 'prompt "猫\ufffd追\ufffd"' in result.stdout, result.stderr
    path.write_text('{"version": 1, "last": {"prompt": "\\ud800猫"}}', encoding="utf-8")  # an older tutor's file
    assert ProgressStore(path).load() == (Progress(last={"prompt": "\ufffd猫"}), None)


LOAD = """
import sys
from pathlib import Path
from tutor.progress import ProgressStore
progress, notice = ProgressStore(Path(sys.argv[1])).load()
print(notice)
"""


def deep_but_valid_progress() -> str:
    """A progress file of the right shape whose quiz record nests 5000 deep: json.loads takes it; deep copies
    and saves recursed past Python's limit (the app would not start)."""
    return '{"version": 1, "quiz": {"tokens": ' + "[" * 5000 + "]" * 5000 + "}}"


HOSTILE_FILES = {
    "nested past the parser": lambda path: path.write_text("[" * 100_000, encoding="utf-8"),
    "nested past copying": lambda path: path.write_text(deep_but_valid_progress(), encoding="utf-8"),
    "a FIFO": lambda path: os.mkfifo(path),
    "a link to /dev/zero": lambda path: path.symlink_to("/dev/zero"),
    "a link to a good file": lambda path: (
        path.with_name("elsewhere.json").write_text('{"version": 1}', encoding="utf-8"),
        path.symlink_to(path.with_name("elsewhere.json")),
    ),
    "too big": lambda path: path.write_bytes(b'{"version": 1, "last": {"prompt": "' + b"x" * (9 << 20) + b'"}}'),
}


@pytest.mark.parametrize("kind", list(HOSTILE_FILES))
def test_a_file_that_would_stop_the_app_is_set_aside_at_once(path: Path, kind: str) -> None:
    """Read only a regular file, not through a link, of at most MAX_BYTES and MAX_DEPTH deep: anything else is
    set aside (renamed, kept) with a notice, in a fresh process held to 1 GB and 30 s (a FIFO blocked the open,
    /dev/zero was read until memory ran out, a deep file raised RecursionError and was left for the next start)."""
    import resource

    path.parent.mkdir(parents=True)
    HOSTILE_FILES[kind](path)
    loaded = subprocess.run(
        [sys.executable, "-c", LOAD, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert loaded.returncode == 0 and "Traceback" not in loaded.stderr, loaded.stderr[-500:]
    (aside,) = path.parent.glob("progress.json.corrupt-*")
    assert aside.name in loaded.stdout and "\n" not in loaded.stdout.strip()
    assert not path.exists() and not path.is_symlink()  # the next start begins afresh, without the learner's help
    store = ProgressStore(path)
    progress, notice = store.load()
    assert notice is None
    progress.done.append("tokens")
    assert store.save(progress) is None and on_disk(path).done == ["tokens"]


def test_a_record_that_is_not_json_is_a_notice_not_a_crash(path: Path) -> None:
    store = ProgressStore(path)
    progress, _ = store.load()
    progress.exercises["rope"] = {"passed": True, "at": object()}
    notice = store.save(progress)
    assert notice is not None and "cannot save progress" in notice
    del progress.exercises["rope"]
    assert store.save(progress) is None  # the next save works again


def test_notices_speak_the_learners_language(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    path.write_text("{", encoding="utf-8")
    _, notice = ProgressStore(path, lang="zh").load()
    assert notice is not None and "已另存为" in notice
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    blocked = ProgressStore(tmp_path / "a-file" / "progress.json", lang="zh")
    assert "无法把进度保存到" in (blocked.save(Progress(done=["tokens"])) or "")


def test_a_file_from_before_lesson_8_was_split_keeps_its_progress(path: Path) -> None:
    """Lesson 8 ("residual") became lessons 8 and 9 ("gradient-walk"): a learner whose older file has lesson 8 done
    read both halves, and has both done; their quiz score and place stay; the file is written in the new version."""
    old = {"version": 1, "done": ["tokens", "residual", "layernorm"], "quiz": {"residual": {"score": 4, "total": 4}}}
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**old, "last": {"lesson": "residual"}}), encoding="utf-8")
    store = ProgressStore(path)
    progress, notice = store.load()
    assert notice is None and progress.done == ["tokens", "residual", "gradient-walk", "layernorm"]
    assert progress.quiz == old["quiz"] and progress.last == {"lesson": "residual"}
    assert store.save(progress) is None and json.loads(path.read_text(encoding="utf-8"))["version"] == 2
    assert ProgressStore(path).load()[0].done == progress.done
    path.write_text('{"version": 1, "done": ["tokens"]}', encoding="utf-8")  # lesson 8 not done: nothing added
    assert ProgressStore(path).load()[0].done == ["tokens"]
    path.write_text('{"version": 2, "done": ["residual"]}', encoding="utf-8")  # after the split: the first half only
    assert ProgressStore(path).load()[0].done == ["residual"]
