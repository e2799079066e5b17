"""A teacher's lessons folder (`tutor --lessons DIR`, `TUTOR_LESSONS`): what it holds, and the lessons a session
shows from it.

The folder is laid out as `content/` is (`en/`, `zh/`, or only one of them) and may hold a `course.toml`:

    after_shipped = true   # the shipped lessons first, then these (default: these alone)

Reading it never raises for the app: what cannot be used becomes a one-line notice, and a folder that gives no
lessons at all leaves the session on the shipped ones. `tutor lessons --check DIR` reads it with `open_course`,
whose `CourseError` is its one line. No NumPy, no Textual.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tutor.lessons.parse import Lesson, load_lessons
from tutor.paths import content_dir

ENV = "TUTOR_LESSONS"
COURSE_FILE = "course.toml"
COURSE_KEYS = {"after_shipped": bool}
LANGS = ("zh", "en")
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}


class CourseError(Exception):
    """The folder gives no lessons at all: missing, not a folder, unreadable, no en/ or zh/ in it."""


@dataclass
class Course:
    folder: Path
    after_shipped: bool = False
    languages: tuple[str, ...] = ()  # the language folders it has, whether or not they hold lessons
    problems: list[str] = field(default_factory=list)  # `path:line: what`, for what in it cannot be used


def lessons_folder(option: str | None) -> Path | None:
    """The teacher's folder: `--lessons DIR`, else `TUTOR_LESSONS`, else none (the shipped lessons)."""
    value = option or os.environ.get(ENV, "")
    return Path(value).expanduser() if value.strip() else None


def lesson_files(folder: Path) -> list[Path]:
    """The `*.md` files of a language folder, sorted; PermissionError and other OSErrors pass through."""
    return sorted(path for path in folder.iterdir() if path.suffix == ".md" and not path.name.startswith("."))


def open_course(folder: Path) -> Course:
    """The folder's settings and languages; `CourseError` (one line) when it cannot give any lesson."""
    if not folder.exists():
        raise CourseError(f"lessons folder {folder} does not exist")
    if not folder.is_dir():
        raise CourseError(f"lessons folder {folder} is not a folder")
    try:
        names = {path.name for path in folder.iterdir()}
    except OSError as error:
        raise CourseError(f"lessons folder {folder} cannot be read: {error.strerror or error}") from None
    course = Course(folder)
    course.languages = tuple(lang for lang in LANGS if lang in names and (folder / lang).is_dir())
    if not course.languages:
        raise CourseError(
            f"lessons folder {folder} has no en/ or zh/ folder: put the lessons in {folder / 'en'} or {folder / 'zh'}"
        )
    readable = []
    for lang in course.languages:
        try:
            files = lesson_files(folder / lang)
        except OSError as error:
            course.problems.append(f"{folder / lang}:1: cannot be read: {error.strerror or error}")
            continue
        if not files:
            course.problems.append(f"{folder / lang}:1: no lessons in {lang}/ (lesson files end in .md)")
        else:
            readable.append(lang)
    if not readable:
        raise CourseError(f"lessons folder {folder} has no lessons: {course.problems[0].split(': ', 1)[1]}")
    _read_settings(course)
    return course


def _read_settings(course: Course) -> None:
    path = course.folder / COURSE_FILE
    if not path.exists():
        return
    try:
        settings = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        course.problems.append(f"{path}:1: cannot be read: {getattr(error, 'strerror', None) or error}")
        return
    except tomllib.TOMLDecodeError as error:
        course.problems.append(f"{path}:1: not valid TOML: {error}")
        return
    for key, value in settings.items():
        if key not in COURSE_KEYS:
            course.problems.append(f"{path}:1: unknown setting '{key}' (known: {', '.join(COURSE_KEYS)})")
        elif not isinstance(value, COURSE_KEYS[key]):
            course.problems.append(f"{path}:1: '{key}' must be true or false")
        else:
            setattr(course, key, value)


@dataclass
class SessionLessons:
    """What a session in one language shows: the lessons in order, the notices that go with them, and the folder
    named when there are none."""

    lessons: list[Lesson]
    notices: list[str]
    folder: Path


def session_lessons(lang: str, course_folder: Path | None, shipped: Path | None = None) -> SessionLessons:
    """The lessons of a session in `lang`: the shipped ones (`shipped`, default `content_dir()`), or the teacher's
    folder's alone or after them. A folder with only the other language's lessons shows those (with a notice); a
    folder that gives none leaves the shipped lessons (with a notice naming why)."""
    shipped = shipped or content_dir()
    if course_folder is None:
        return SessionLessons(load_lessons(lang, shipped), [], shipped / lang)
    try:
        course = open_course(course_folder)
    except CourseError as error:
        notice = f"{error}: showing the shipped lessons"
        return SessionLessons(load_lessons(lang, shipped), [notice], shipped / lang)
    notices = list(course.problems)
    have = [each for each in course.languages if _has_lessons(course_folder / each)]
    use = lang if lang in have else have[0]
    if use != lang:
        notices.append(f"{course_folder} has lessons in {LANGUAGE_NAMES[use]} only: showing those")
    own = load_lessons(use, course_folder)
    first = load_lessons(lang, shipped) if course.after_shipped else []
    shipped_ids = {lesson.id for lesson in first}
    taken: dict[str, Lesson] = {lesson.id: lesson for lesson in first}
    lessons = list(first)
    for lesson in own:
        if lesson.id in taken:
            where = "a shipped lesson's" if lesson.id in shipped_ids else f"also {taken[lesson.id].path.name}'s"
            notices.append(f"{lesson.path}:1: id '{lesson.id}' is {where}: this lesson is left out (rename it)")
            continue
        taken[lesson.id] = lesson
        lessons.append(lesson)
    broken = [lesson for lesson in own if lesson.warnings]
    if broken:
        count = f"{len(broken)} lesson{'s' if len(broken) > 1 else ''} with problems"
        notices.append(f"{count} (tutor lessons --check {course_folder} lists them); first: {broken[0].warnings[0]}")
    return SessionLessons(lessons, notices, course_folder / use)


def _has_lessons(folder: Path) -> bool:
    try:
        return bool(lesson_files(folder))
    except OSError:
        return False
