"""Progress a teacher collects: time per lesson counted and saved, `tutor progress --json` / `--export` in the shape
docs/progress-format.md documents, and `tutor class report` over many files — a bad one named and skipped."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path

import pytest
from helpers import make_app, run_tutor

from tutor.cli import main
from tutor.lesson_clock import IDLE_SECONDS, LessonClock
from tutor.lessons.quiz import attempts_after
from tutor.progress import VERSION as STORE_VERSION
from tutor.progress import Progress, ProgressStore
from tutor.progress_export import FORMAT_VERSION, MAX_EXPORT_BYTES, check_shape

N_LESSONS = len(list((Path(__file__).resolve().parent.parent / "content" / "en").glob("[0-9][0-9]-*.md")))  # shipped

ROOT = Path(__file__).resolve().parent.parent


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- time with each lesson open ------------------------------------------------------------------------------


def test_the_clock_charges_each_pause_to_the_lesson_open_and_caps_a_long_one() -> None:
    now = FakeClock()
    clock = LessonClock(now)
    clock.mark("tokens")  # the lesson opens
    now.now += 30
    clock.mark("tokens")  # a key
    now.now += 3 * IDLE_SECONDS  # away: counts as IDLE_SECONDS
    clock.mark("attention")  # a key that opened the next lesson: the pause was the old one's
    now.now += 12
    clock.mark(None)  # no lesson open
    now.now += 50
    clock.mark(None)
    assert clock.take() == {"tokens": 30 + IDLE_SECONDS, "attention": 12}
    assert clock.take() == {}


def test_time_from_two_sessions_adds_up_and_survives_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    a, b = ProgressStore(path), ProgressStore(path)
    mine, _ = a.load()
    theirs, _ = b.load()
    mine.time_spent["tokens"] = 60.0
    a.save(mine)
    theirs.time_spent["tokens"] = 25.0
    b.save(theirs)
    mine.time_spent["tokens"] += 10.0  # 10 s more since its last save
    a.save(mine)
    assert ProgressStore(path).load()[0].time_spent == {"tokens": 95.0}
    ProgressStore(path).reset()
    mine.time_spent["tokens"] += 5.0
    a.save(mine)
    assert ProgressStore(path).load()[0].time_spent == {"tokens": 5.0}  # only what came after the reset


def test_an_older_file_without_time_loads_and_bad_times_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    path.write_text('{"version": 1, "done": ["tokens"], "quiz": {}, "exercises": {}, "last": {}}', encoding="utf-8")
    assert ProgressStore(path).load() == (Progress(done=["tokens"]), None)
    path.write_text(
        '{"version": 1, "time_spent": {"a": 5, "b": "5", "c": -1, "d": true, "e": 1e999, "f": 1' + "0" * 400 + "}}",
        encoding="utf-8",
    )
    assert ProgressStore(path).load() == (Progress(time_spent={"a": 5.0}), None)


async def test_the_app_counts_time_on_the_lesson_open_and_saves_it(store, tmp_path: Path) -> None:
    from tutor.paths import content_dir

    app = make_app(store, content_dir())
    now = FakeClock()
    app.clock.now = now
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = app.open_lesson_id()
        now.now += 40
        await pilot.press("alt+down")
        now.now += 20
        await app.open_lesson("tokens")
        now.now += 15
        await pilot.press("alt+down")
        app.save_now()
        saved, _ = ProgressStore(store.path).load()
        assert saved.time_spent == {first: 60.0, "tokens": 15.0}
        now.now += 7
    saved, _ = ProgressStore(store.path).load()  # and on exit
    assert saved.time_spent == {first: 60.0, "tokens": 22.0}


def test_quick_check_attempts_count_from_the_saved_record() -> None:
    assert attempts_after({}) == 1
    assert attempts_after({"score": 1, "total": 3, "attempts": 4}) == 5
    assert attempts_after({"score": 1, "total": 3}) == 2  # an older tutor's record was one attempt


# -- tutor progress --json / --export ------------------------------------------------------------------------


def learner_state(state: Path) -> None:
    store = ProgressStore(state / "progress.json")
    progress, _ = store.load()
    progress.done += ["using-tutor", "tokens", "gone-lesson"]
    progress.quiz["using-tutor"] = {"score": 2, "total": 3, "best": 3, "attempts": 3, "at": "2026-01-02T09:30:00"}
    progress.quiz["tokens"] = {"score": 1, "total": 3, "at": "2026-01-02T09:40:00"}  # before attempts were counted
    progress.quiz["attention"] = {"score": 7, "total": 3}  # hand-edited: cannot hold together
    progress.exercises["layer_norm"] = {"passed": True, "tries": 3, "at": "2026-01-02T09:50:00"}
    progress.time_spent.update({"using-tutor": 412.4, "tokens": 95.6})
    assert store.save(progress) is None


def documented_fields() -> set[str]:
    text = (ROOT / "docs" / "progress-format.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE))


def fields_of(export: dict) -> set[str]:
    found = set(export)
    for name in ("lessons", "exercises"):
        for item in export[name]:
            found |= {f"{name}[].{key}" for key in item}
            if isinstance(item.get("quiz"), dict):
                found |= {f"{name}[].quiz.{key}" for key in item["quiz"]}
    return found


def test_json_is_the_documented_shape_with_the_learners_numbers(tmp_path: Path) -> None:
    state = tmp_path / "state"
    learner_state(state)
    result = run_tutor("progress", "--json", "--lang", "en", cwd=tmp_path, env={"TUTOR_STATE_DIR": str(state)})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    export = json.loads(result.stdout)
    check_shape(export, "en")
    assert export["format"] == "tutor-progress" and export["version"] == FORMAT_VERSION
    assert fields_of(export) == documented_fields()  # every field documented, every documented field there
    lessons = {lesson["id"]: lesson for lesson in export["lessons"]}
    assert [lesson["id"] for lesson in export["lessons"]][:2] == ["using-tutor", "tokens"]
    assert lessons["using-tutor"] == {
        "id": "using-tutor",
        "title": "How to use the tutor",
        "in_course": True,
        "done": True,
        "seconds": 412,
        "quiz": {"score": 2, "best": 3, "total": 3, "attempts": 3, "at": "2026-01-02T09:30:00"},
    }
    assert lessons["tokens"]["seconds"] == 96 and lessons["tokens"]["quiz"]["attempts"] == 1
    assert lessons["attention"]["quiz"] is None and not lessons["attention"]["done"]
    assert lessons["gone-lesson"] == {
        "id": "gone-lesson",
        "title": "gone-lesson",
        "in_course": False,
        "done": True,
        "seconds": 0,
        "quiz": None,
    }
    exercises = {exercise["name"]: exercise for exercise in export["exercises"]}
    assert exercises["layer_norm"]["passed"] is True and exercises["layer_norm"]["tries"] == 3
    assert exercises["rope"] == {
        "name": "rope",
        "title": exercises["rope"]["title"],
        "known": True,
        "passed": False,
        "tries": 0,
        "at": None,
    }


def test_export_writes_the_file_and_refuses_a_folder(tmp_path: Path) -> None:
    state = tmp_path / "state"
    learner_state(state)
    env = {"TUTOR_STATE_DIR": str(state)}
    out = tmp_path / "alice.json"
    result = run_tutor("progress", "--export", str(out), "--name", "Alice", "--lang", "zh", cwd=tmp_path, env=env)
    assert result.returncode == 0 and f"已完成 2 / {N_LESSONS} 课" in result.stdout, result.stderr
    export = json.loads(out.read_text(encoding="utf-8"))
    assert export["learner"] == "Alice" and export["lang"] == "zh" and export["lessons"][1]["title"] == "词元与嵌入"
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    for target, words in ((tmp_path, "is a folder"), (tmp_path / "no" / "such" / "x.json", "cannot write")):
        refused = run_tutor("progress", "--export", str(target), "--lang", "en", cwd=tmp_path, env=env)
        assert refused.returncode == 1 and words in refused.stderr and refused.stderr.count("\n") == 1
        assert "Traceback" not in refused.stderr


# -- tutor class report --------------------------------------------------------------------------------------


def export_for(state: Path, learner: str | None = None) -> dict:
    from tutor.lessons.parse import load_lessons
    from tutor.progress_export import export_of

    progress, _ = ProgressStore(state / "progress.json").load()
    return export_of(progress, load_lessons("en"), "en", learner=learner)


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def class_folder(tmp_path: Path) -> Path:
    """Two learners' exports, one a learner's own progress.json (the older form), in one folder."""
    learner_state(tmp_path / "alice")
    bob = ProgressStore(tmp_path / "bob" / "progress.json")
    progress, _ = bob.load()
    progress.quiz["tokens"] = {"score": 3, "total": 3, "best": 3, "attempts": 1}
    progress.done.append("tokens")
    progress.time_spent["tokens"] = 3725.0
    bob.save(progress)
    folder = tmp_path / "class"
    folder.mkdir()
    write(folder / "a.json", export_for(tmp_path / "alice", learner="=Alice"))
    carol = json.loads((tmp_path / "bob" / "progress.json").read_text(encoding="utf-8"))
    del carol["time_spent"]  # as an older tutor wrote it
    carol["quiz"]["attention"] = {"score": 2, "total": 4}
    write(folder / "carol.json", carol)
    write(folder / "bob.json", export_for(tmp_path / "bob"))
    return folder


def test_report_round_trip_as_csv(tmp_path: Path, capsys) -> None:
    folder = class_folder(tmp_path)
    assert main(["--lang", "en", "class", "report", str(folder), "--csv", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    rows = list(csv.DictReader(io.StringIO(captured.out)))
    assert [row["learner"] for row in rows] == ["'=Alice", "bob", "carol"]  # sorted; a formula defused
    alice, bob, carol = rows
    assert alice["file"] == str(folder / "a.json")
    assert (alice["lessons_done"], alice["lessons_total"]) == ("2", str(N_LESSONS))
    assert (alice["exercises_passed"], alice["exercises_total"]) == ("1", "5")
    assert alice["seconds_total"] == str(412 + 96)
    assert (alice["using-tutor:quiz_best"], alice["using-tutor:quiz_total"], alice["using-tutor:quiz_attempts"]) == (
        "3",
        "3",
        "3",
    )
    assert alice["using-tutor:seconds"] == "412" and alice["attention:quiz_best"] == ""
    assert (bob["tokens:quiz_best"], bob["tokens:quiz_attempts"], bob["seconds_total"]) == ("3", "1", "3725")
    assert carol["seconds_total"] == "0" and carol["lessons_done"] == "1"  # the older form: no time recorded
    assert (carol["attention:quiz_best"], carol["attention:quiz_total"], carol["attention:quiz_attempts"]) == (
        "2",
        "4",
        "1",
    )
    target = tmp_path / "class.csv"
    assert main(["--lang", "en", "class", "report", str(folder), "--csv", str(target)]) == 0
    assert target.read_text(encoding="utf-8-sig") == captured.out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_table_fits_80_columns_in_one_table_and_40_in_several(tmp_path: Path, monkeypatch, capsys, lang) -> None:
    from rich.cells import cell_len

    folder = class_folder(tmp_path)
    for width in (80, 40):
        monkeypatch.setenv("COLUMNS", str(width))
        assert main(["--lang", lang, "class", "report", str(folder)]) == 0
        out = capsys.readouterr().out
        lines = out.splitlines()
        assert max(cell_len(line) for line in lines) <= width, out
        assert "Tokens and embeddings" in out  # the titles the exports hold (these are English)
        bob = [line.split() for line in lines if line.startswith("bob")]
        headers = [line.split() for line in lines if line.split()[:1] == [("Learner" if lang == "en" else "学生")]]
        if width == 80:  # everything in one row
            assert bob == [["bob", f"1/{N_LESSONS}", "·", "3/3×1", *["·"] * (N_LESSONS - 2), "0/5", "1:02"]], out
            alice = next(line.split() for line in lines if line.startswith("=Alice"))
            alice_row = ["=Alice", f"2/{N_LESSONS}", "3/3×3", "1/3×1", *["·"] * (N_LESSONS - 2), "1/5", "0:08"]
            assert alice == alice_row, out  # best, not last
        else:  # the totals, then the quick checks in as many tables as fit
            assert bob[0] == ["bob", f"1/{N_LESSONS}", "0/5", "1:02"] and len(bob) > 2, out
            quick_checks = [cell for row in bob[1:] for cell in row if cell != "bob"]
            assert quick_checks == ["·", "3/3×1", *["·"] * (N_LESSONS - 2)], out
            numbers = [cell for header in headers[1:] for cell in header[1:]]
            assert numbers == [str(n) for n in range(1, N_LESSONS + 1)], out


BAD_FILES = {
    "not JSON": (lambda path: path.write_text("{not json", encoding="utf-8"), "not JSON (line 1 column 2"),
    "not UTF-8": (lambda path: path.write_bytes(b"\xff\xfe{}"), "not UTF-8"),
    "a list": (lambda path: write(path, [1, 2]), 'no "format": "tutor-progress"'),
    "another format": (lambda path: write(path, {"format": "gradebook", "version": 1}), '"format" is "gradebook"'),
    "a wrong field": (
        lambda path: write(path, {**export_for(path.parent), "lessons": [{"id": "x"}]}),
        "lessons[0].title is missing",
    ),
    "a score above its total": (
        lambda path: write(path, _with_quiz(export_for(path.parent), {"best": 9})),
        "lessons[0].quiz.best is more than",
    ),
    "a best below the last score": (
        lambda path: write(path, _with_quiz(export_for(path.parent), {"score": 2})),
        "lessons[0].quiz.best is less than the last score",
    ),
    "a newer version": (lambda path: write(path, {**export_for(path.parent), "version": 7}), "newer tutor"),
    "version 0": (lambda path: write(path, {**export_for(path.parent), "version": 0}), "version 0 is not one"),
    "a newer progress file": (
        lambda path: write(path, {"version": STORE_VERSION + 1, "done": []}),
        f"file version {STORE_VERSION + 1}",
    ),
    "huge": (
        lambda path: path.write_bytes(b'{"format": "tutor-progress", "pad": "' + b"x" * MAX_EXPORT_BYTES + b'"}'),
        "larger than 1 MB (1.0 MB)",
    ),
    "a FIFO": (lambda path: os.mkfifo(path), "not a regular file"),
    "missing": (lambda path: None, "does not exist"),
}


def _with_quiz(export: dict, changes: dict) -> dict:
    export["lessons"][0]["quiz"] = {"score": 1, "best": 1, "total": 3, "attempts": 1, "at": None, **changes}
    return export


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_bad_file_is_named_on_one_line_and_the_others_are_reported(tmp_path: Path, capsys, kind: str) -> None:
    make, words = BAD_FILES[kind]
    good = write(tmp_path / "good.json", export_for(tmp_path))
    bad = tmp_path / "bad.json"
    make(bad)
    assert main(["--lang", "en", "class", "report", str(bad), str(good), "--csv", "-"]) == 1
    captured = capsys.readouterr()
    assert [row["learner"] for row in csv.DictReader(io.StringIO(captured.out))] == ["good"]
    first, last = captured.err.splitlines()  # the file's line, and the count
    assert first.startswith(f"tutor: warning: {bad}: ") and words in first, first
    assert last == "tutor: warning: 1 of 2 files skipped (see above)"


def test_bad_input_is_said_in_chinese_and_no_good_file_is_an_error(tmp_path: Path, capsys) -> None:
    write(tmp_path / "new.json", {**export_for(tmp_path), "version": 7})
    (tmp_path / "empty").mkdir()
    assert main(["--lang", "zh", "class", "report", str(tmp_path / "new.json"), str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "由更新版本的 tutor 导出（进度格式第 7 版）" in err[0] and "文件夹里没有 .json 文件" in err[1]
    assert err[2] == "tutor: error: 没有可以汇总的学生进度"


def test_the_learners_summary_shows_time_and_attempts(tmp_path: Path) -> None:
    from tutor.commands.progress import summary

    state = tmp_path / "state"
    learner_state(state)
    store = ProgressStore(state / "progress.json")
    progress, _ = store.load()
    progress.time_spent["attention"] = 3900.0
    en = summary(progress, store, "en")
    assert (
        "  ✓  1  How to use the tutor  (7 min)" in en
        and "  ·  3  Attention: queries, keys and values  (1 h 05 min)" in en
    )
    assert any(line.startswith("  How to use the tutor: 2/3 (best 3), 3 attempts") for line in en)
    assert any(line.startswith("  Tokens and embeddings: 1/3  (") for line in en)  # one attempt: not said
    zh = summary(progress, store, "zh")
    assert "  ✓  2  词元与嵌入（2 分钟）" in zh and any(
        "怎样使用 tutor：2/3（最好 3），做了 3 次" in line for line in zh
    )
