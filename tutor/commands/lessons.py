"""`tutor lessons`: list the lessons in one language, or check all of them (`--check`)."""

from __future__ import annotations

import argparse

from tutor.language import LANGUAGES

HELP = "list the lessons, or check them"
DESCRIPTION = "List the lessons (id and title) in order."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the list")
    parser.add_argument("--check", action="store_true", help="check every lesson in both languages; exit 1 on problems")


def run(args: argparse.Namespace) -> int:
    return run_lessons(args.lang, check=args.check)


def run_lessons(lang: str, *, check: bool) -> int:
    from tutor.i18n import t
    from tutor.lessons.parse import load_lessons
    from tutor.lessons.reading import reading_minutes

    if check:
        return run_check()
    lessons = load_lessons(lang)
    if not lessons:
        print(f"no lessons in language '{lang}'")
        return 1
    width = max(len(lesson.id) for lesson in lessons)
    for lesson in lessons:
        minutes = t("reading_time", lang, m=reading_minutes(lesson))
        print(f"{lesson.order:>2}  {lesson.id:<{width}}  {lesson.title}  · {minutes}")
    return 0


def run_check() -> int:
    from tutor.lessons.check import LANGS, check_content
    from tutor.lessons.parse import load_lessons

    problems = check_content()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    count = len(load_lessons(LANGS[0]))
    print(f"{count} lessons, {' and '.join(LANGS)}, all checks pass")
    return 0
