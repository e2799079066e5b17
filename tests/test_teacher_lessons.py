"""A teacher's lessons folder: `tutor lessons --check DIR` checks it as the shipped lessons are checked, `tutor
--lessons DIR` (and TUTOR_LESSONS) runs the app on it, alone or after the shipped lessons, and a folder that is
missing, empty, unreadable or broken is one line for the command and a notice in an app that still opens."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import make_app, run_tutor, screen_text, settle

from tutor.cli import main
from tutor.lessons.parse import load_lessons
from tutor.paths import content_dir

EXAMPLE = Path(__file__).resolve().parent.parent / "content" / "example-course"
LESSON = "01-softmax.md"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the example course to break."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "course"))


@pytest.fixture
def permissions(monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod 000 as a learner's account sees it: the suite may run as root, which reads everything anyway."""
    if os.geteuid() != 0:
        return
    real_iterdir, real_read_text = Path.iterdir, Path.read_text

    def denied(path: Path) -> bool:
        return path.exists() and path.stat().st_mode & 0o777 == 0

    def iterdir(self: Path):  # type: ignore[no-untyped-def]
        if denied(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def read_text(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if denied(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(Path, "read_text", read_text)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in line)


def last_line_of(path: Path, needle: str) -> int:
    return max(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in line)


def check(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    """`tutor lessons --check DIR` through main: exit code, stdout lines, stderr."""
    code = main(["lessons", "--check", str(folder)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


# -- tutor lessons --check DIR ------------------------------------------------------------------


def test_the_example_course_passes_the_check_as_a_learner_runs_it(tmp_path: Path) -> None:
    result = run_tutor("lessons", "--check", str(EXAMPLE), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == (
        f"1 lesson in {EXAMPLE}, zh and en, shown after the shipped lessons, all checks pass"
    )


def test_each_problem_is_a_file_line_and_the_check_exits_1(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    en = course / "en" / LESSON
    edit(en, "| 0.245 |", "| 0.255 |")  # a hand-worked table the model does not give
    edit(en, '"1044 tokens" = "tiny.vocab_size"', '"1044 tokens" = "tiny.n_layers"')  # a claim that does not hold
    edit(en, "answer = 2", "answer = 3")  # a quiz answer out of range
    edit(en, "model.attention.softmax\n```", "model.attention.softmax_that_is_not\n```")  # a quote of nothing
    edit(en, "tutor:show?step=unembed&panel=next", "tutor:show?step=unembed&panel=nope")  # an unknown panel
    edit(en, "prompt=猫追狗&step", "prompt=猫追🐈&step")  # a prompt outside the vocabulary
    code, lines, err = check(course, capsys)
    assert code == 1 and err == ""
    expected = {
        line_of(en, "| 0.255 |"): "0.255",
        line_of(en, '"1044 tokens" ='): "tiny.n_layers",
        last_line_of(en, "[[questions]]"): "question 3: 'answer' 3 is out of range",
        line_of(en, "model.attention.softmax_that_is_not") - 1: "does not resolve",
        line_of(en, "panel=nope"): "unknown panel 'nope'",
        line_of(en, "猫追🐈"): "vocabulary",
    }
    for line, words in expected.items():
        assert any(problem.startswith(f"{en}:{line}: ") and words in problem for problem in lines), (line, lines)
    assert all(problem.startswith(f"{en}:") for problem in lines), lines  # zh is untouched


def test_both_languages_must_agree_when_both_are_there(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(course / "en" / LESSON, 'steps = ["blocks.0.attn", "unembed"]', 'steps = ["unembed"]')
    (course / "zh" / "02-more.md").write_text((course / "zh" / LESSON).read_text(encoding="utf-8"), encoding="utf-8")
    code, lines, _ = check(course, capsys)
    assert code == 1
    assert any(p.startswith(f"{course / 'en' / LESSON}:1: front matter 'steps'") for p in lines), lines
    assert any(p.startswith(f"{course / 'zh' / '02-more.md'}:1: no translation") for p in lines), lines


def test_one_language_is_enough(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(course / "zh")
    code, lines, _ = check(course, capsys)
    assert code == 0, lines
    assert lines == [f"1 lesson in {course}, en, shown after the shipped lessons, all checks pass"]


def test_a_language_folder_without_lessons_is_a_problem(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (course / "zh" / LESSON).unlink()
    code, lines, _ = check(course, capsys)
    assert code == 1
    assert lines == [f"{course / 'zh'}:1: no lessons in zh/ (lesson files end in .md)"]


def test_after_the_shipped_lessons_an_id_of_theirs_is_a_problem(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for lang in ("en", "zh"):
        path = course / lang / LESSON
        edit(path, 'id = "softmax"', 'id = "attention"')
        edit(path, "tutor:quiz?id=softmax", "tutor:quiz?id=attention")
        path.rename(course / lang / "01-attention.md")
    code, lines, _ = check(course, capsys)
    en = course / "en" / "01-attention.md"
    assert code == 1
    assert f"{en}:2: id 'attention' is the shipped lesson 03-attention.md's" in "\n".join(lines), lines
    # alone, the same lesson stands in for the shipped one: no problem, and the summary says so
    (course / "course.toml").write_text("after_shipped = false\n", encoding="utf-8")
    code, lines, _ = check(course, capsys)
    assert code == 0, lines
    assert lines[-1].endswith("shown alone, all checks pass; ids of shipped lessons, standing in for them: attention")


def test_links_to_shipped_lessons_only_after_them(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (course / "course.toml").unlink()  # alone: the shipped lesson 'attention' is not there to open
    code, lines, _ = check(course, capsys)
    en = course / "en" / LESSON
    assert code == 1
    assert f"{en}:{line_of(en, 'tutor:lesson?id=attention')}: no lesson with id 'attention' in en/" in lines


@pytest.mark.parametrize(
    ("text", "words"),
    [("after_shipped = 'yes'\n", "'after_shipped' must be true or false"), ("after_shipped = \n", "not valid TOML")],
)
def test_a_broken_course_toml(course: Path, capsys: pytest.CaptureFixture[str], text: str, words: str) -> None:
    (course / "course.toml").write_text(text, encoding="utf-8")
    code, lines, _ = check(course, capsys)
    assert code == 1
    assert any(line.startswith(f"{course / 'course.toml'}:1: ") and words in line for line in lines), lines


@pytest.mark.parametrize("case", ["missing", "a file", "empty", "no language folder", "empty language folder"])
def test_a_folder_without_lessons_is_one_line(tmp_path: Path, case: str) -> None:
    folder = tmp_path / "course"
    if case == "a file":
        folder.write_text("lessons", encoding="utf-8")
    elif case != "missing":
        folder.mkdir()
    if case == "no language folder":
        shutil.copy(EXAMPLE / "en" / LESSON, folder / LESSON)
    if case == "empty language folder":
        (folder / "en").mkdir()
    result = run_tutor("lessons", "--check", str(folder), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"tutor: error: lessons folder {folder} "), result.stderr


def test_an_unreadable_folder_is_one_line(course: Path, capsys: pytest.CaptureFixture[str], permissions: None) -> None:
    course.chmod(0)
    try:
        code, lines, err = check(course, capsys)
    finally:
        course.chmod(0o755)
    assert code == 1 and lines == []
    assert err == f"tutor: error: lessons folder {course} cannot be read: Permission denied\n"


def test_unreadable_undecodable_and_malformed_lessons_are_problems_not_tracebacks(
    course: Path, capsys: pytest.CaptureFixture[str], permissions: None
) -> None:
    (course / "en" / "02-latin.md").write_bytes("+++\ntitle = 'caf\xe9'\n+++\n".encode("latin-1"))
    (course / "en" / "03-broken.md").write_text("+++\nid = \n+++\n", encoding="utf-8")
    locked = course / "zh" / LESSON
    locked.chmod(0)
    try:
        code, lines, err = check(course, capsys)
    finally:
        locked.chmod(0o644)
    assert code == 1 and "Traceback" not in err
    text = "\n".join(lines)
    assert f"{course / 'en' / '02-latin.md'}:1: cannot read the lesson: 'utf-8' codec can't decode" in text
    assert f"{course / 'en' / '03-broken.md'}:1: broken front matter" in text
    assert f"{locked}:1: cannot read the lesson: [Errno 13] Permission denied" in text


def test_check_with_no_folder_checks_the_one_the_app_would_use(
    course: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_LESSONS", str(course))
    assert main(["lessons", "--check"]) == 0
    assert f"1 lesson in {course}" in capsys.readouterr().out


# -- which lessons a session shows ------------------------------------------------------------


def test_the_lessons_command_lists_a_teachers_lessons(
    course: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = [lesson.id for lesson in load_lessons("en")]
    assert main(["--lessons", str(course), "lessons", "--lang", "en"]) == 0
    listed = [line.split()[1] for line in capsys.readouterr().out.splitlines()]
    assert listed == [*shipped, "softmax"]  # after the shipped ones: course.toml says so
    (course / "course.toml").unlink()
    monkeypatch.setenv("TUTOR_LESSONS", str(course))
    assert main(["lessons", "--lang", "en"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == ["softmax"]  # alone


def test_a_folder_in_one_language_shows_in_both_sessions(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(course / "en")
    (course / "course.toml").unlink()
    assert main(["--lessons", str(course), "lessons", "--lang", "en"]) == 0
    out, err = capsys.readouterr()
    assert "Softmax：把分数变成概率" in out
    assert err == f"tutor: {course} has lessons in 中文 only: showing those\n"


def test_progress_lists_the_teachers_lessons(
    course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_STATE_DIR", str(tmp_path / "state"))
    (course / "course.toml").unlink()
    assert main(["--lang", "en", "--lessons", str(course), "progress"]) == 0
    out = capsys.readouterr().out
    assert "Lessons: 0 of 1 done" in out and "Softmax: scores into probabilities" in out
    assert "Tokens and embeddings" not in out


def test_help_says_how() -> None:
    from tutor.cli import build_parser

    text = " ".join(build_parser().format_help().split())
    for words in ("--lessons DIR", "$TUTOR_LESSONS", "after_shipped = true", "tutor lessons --check DIR"):
        assert words in text


# -- the app ----------------------------------------------------------------------------------


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(notification.message) for notification in app._notifications]


async def test_the_app_runs_on_a_teachers_lessons_after_the_shipped_ones(store, course: Path) -> None:
    app = make_app(store, content_dir(), course=course)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shipped = [lesson.id for lesson in load_lessons("en")]
        assert [lesson.id for lesson in app.lessons] == [*shipped, "softmax"]
        await app.open_lesson("softmax")
        await settle(pilot)
        assert "Softmax: scores into probabilities" in screen_text(app)
        assert f"Lesson {len(shipped) + 1}/{len(shipped) + 1}" in screen_text(app)
        assert notices(app) == []


async def test_the_app_on_a_chinese_only_folder_in_an_english_session(store, course: Path) -> None:
    shutil.rmtree(course / "en")
    (course / "course.toml").unlink()
    app = make_app(store, content_dir(), course=course)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [lesson.id for lesson in app.lessons] == ["softmax"]
        assert "Softmax：把分数变成概率" in screen_text(app)
        assert notices(app) == [f"Lessons: {course} has lessons in 中文 only: showing those"]
        await pilot.press("f5")  # to Chinese and back: the same lessons, the notice not again
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert [lesson.id for lesson in app.lessons] == ["softmax"]
        assert len(notices(app)) == 1


@pytest.mark.parametrize("case", ["missing", "empty", "unreadable"])
async def test_the_app_opens_on_the_shipped_lessons_when_the_folder_gives_none(
    store, tmp_path: Path, case: str, permissions: None
) -> None:
    folder = tmp_path / "course"
    if case != "missing":
        (folder / "en").mkdir(parents=True)
    if case == "unreadable":
        folder.chmod(0)
    try:
        app = make_app(store, content_dir(), course=folder)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            said = notices(app)
            lessons = [lesson.id for lesson in app.lessons]
    finally:
        folder.chmod(0o755) if folder.exists() else None
    assert lessons == [lesson.id for lesson in load_lessons("en")]
    reason = {"missing": "does not exist", "empty": "has no lessons", "unreadable": "cannot be read"}[case]
    assert len(said) == 1 and said[0].startswith(f"Lessons: lessons folder {folder} {reason}"), said
    assert said[0].endswith("showing the shipped lessons")


async def test_the_app_shows_broken_lessons_with_their_problems(store, course: Path) -> None:
    (course / "course.toml").unlink()
    (course / "en" / "02-latin.md").write_bytes("+++\ntitle = 'caf\xe9'\n+++\n".encode("latin-1"))
    (course / "en" / "03-broken.md").write_text("+++\nid = \n+++\n# Broken\n", encoding="utf-8")
    app = make_app(store, content_dir(), course=course)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [lesson.id for lesson in app.lessons] == ["softmax", "02-latin", "broken"]
        said = notices(app)
        assert len(said) == 1 and said[0].startswith("Lessons: 2 lessons with problems"), said
        assert f"{course / 'en' / '02-latin.md'}:1: cannot read the lesson" in said[0]
        await app.open_lesson("broken")
        await settle(pilot)
        shown = "".join(screen_text(app, "LessonView").replace("▕", "").split())  # the long path wraps
        assert "".join(f"⚠ {course / 'en' / '03-broken.md'}:1: broken front matter".split()) in shown


async def test_the_app_leaves_out_a_lesson_that_takes_a_shipped_id(store, course: Path) -> None:
    edit(course / "en" / LESSON, 'id = "softmax"', 'id = "attention"')
    app = make_app(store, content_dir(), course=course)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [lesson.id for lesson in app.lessons] == [lesson.id for lesson in load_lessons("en")]
        assert notices(app) == [
            f"Lessons: {course / 'en' / LESSON}:1: id 'attention' is a shipped lesson's: this lesson is left out "
            "(rename it)"
        ]
