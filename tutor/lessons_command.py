"""`tutor lessons`: list the lessons in one language, or check all of them (`--check`)."""

from __future__ import annotations

from tutor.lesson_check import LANGS, check_content
from tutor.lessons import load_lessons


def run_lessons(lang: str, *, check: bool) -> int:
    if check:
        return run_check()
    lessons = load_lessons(lang)
    if not lessons:
        print(f"no lessons in language '{lang}'")
        return 1
    width = max(len(lesson.id) for lesson in lessons)
    for lesson in lessons:
        print(f"{lesson.order:>2}  {lesson.id:<{width}}  {lesson.title}")
    return 0


def run_check() -> int:
    problems = check_content()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    count = len(load_lessons(LANGS[0]))
    print(f"{count} lessons, {' and '.join(LANGS)}, all checks pass")
    return 0
