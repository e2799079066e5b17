"""`tutor lessons`: list the lessons in one language, or check all of them (`--check`, `--check DIR`).

The lessons are the app's: a teacher's folder (`tutor --lessons DIR`, `TUTOR_LESSONS`) when one is given, else
the shipped ones; `--check DIR` checks that folder, whatever the app would show."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tutor.language import LANGUAGES

HELP = "list the lessons, or check them"
DESCRIPTION = (
    "List the lessons (id and title) in order: a teacher's (tutor --lessons DIR, or TUTOR_LESSONS) if given, else "
    "the shipped ones. --check checks them as the shipped lessons are checked (links, quoted model/ code, claims "
    "recomputed from the weights, quizzes, the prompts' vocabulary, both languages agreeing), printing each "
    "problem as file:line: what and exiting 1 if there is any."
)
SHIPPED = object()  # `--check` with no folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the list")
    parser.add_argument(
        "--check",
        nargs="?",
        const=SHIPPED,
        metavar="DIR",
        help="check every lesson, in each language there is; DIR: a teacher's lessons folder (default: the lessons "
        "the app shows). Exit 1 on problems",
    )


def run(args: argparse.Namespace) -> int:
    from tutor.lessons.course import lessons_folder

    folder = lessons_folder(getattr(args, "lessons", None))
    if args.check is not None:
        return run_check(folder if args.check is SHIPPED else Path(args.check).expanduser())
    return run_lessons(args.lang, folder)


def run_lessons(lang: str, folder: Path | None = None) -> int:
    from tutor.i18n import t
    from tutor.lessons.course import session_lessons
    from tutor.lessons.reading import reading_minutes

    session = session_lessons(lang, folder)
    for notice in session.notices:
        print(f"tutor: {notice}", file=sys.stderr)  # the list stays the list
    lessons = session.lessons
    if not lessons:
        print(f"no lessons in language '{lang}'")
        return 1
    width = max(len(lesson.id) for lesson in lessons)
    for lesson in lessons:
        minutes = t("reading_time", lang, m=reading_minutes(lesson))
        print(f"{lesson.order:>2}  {lesson.id:<{width}}  {lesson.title}  · {minutes}")
    return 0


def run_check(folder: Path | None = None) -> int:
    """The shipped lessons (`folder` None) or a teacher's folder: each problem as `file:line: what`, exit 1 on any;
    one line and exit 1 for a folder that gives no lessons at all."""
    from tutor.commands.common import fail
    from tutor.lessons.check import LANGS, check_content, check_course, shipped_ids_taken
    from tutor.lessons.course import CourseError, lesson_files, open_course
    from tutor.lessons.parse import load_lessons

    if folder is None:
        problems = check_content()
    else:
        try:
            problems = check_course(folder)
        except CourseError as error:
            return fail(str(error))
    for problem in problems:
        print(problem)
    if problems:
        return 1
    if folder is None:
        count = len(load_lessons(LANGS[0]))
        print(f"{count} lessons, {' and '.join(LANGS)}, all checks pass")
        return 0
    course = open_course(folder)
    langs = [lang for lang in LANGS if lang in course.languages]
    count = len(lesson_files(folder / langs[0]))
    placed = "after the shipped lessons" if course.after_shipped else "alone"
    taken = [] if course.after_shipped else shipped_ids_taken(folder)
    standing_in = f"; ids of shipped lessons, standing in for them: {', '.join(taken)}" if taken else ""
    lessons = f"{count} lesson{'s' if count != 1 else ''}"
    print(f"{lessons} in {folder}, {' and '.join(langs)}, shown {placed}, all checks pass{standing_in}")
    return 0
