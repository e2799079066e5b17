"""The exercises' hints and answers: a lesson's `tutor-answers` block, one `[[answers]]` table per exercise.

The block (TOML, at the end of the Exercises section) is never shown as it is: the lesson shows one line of
links in its place, `tutor:answer?id=…&n=…`, and each opens the exercise's hint, its answer a key away. Here a
malformed entry is skipped rather than raised, as the quiz's are; the content checker (`tutor lessons --check`)
holds the block to the format and its count to the exercises'.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from tutor.i18n import t
from tutor.lessons.parse import Lesson, blocks_in, lines_outside_fences

KEYS = ("hint", "answer", "claims")
EXERCISE_SECTIONS = ("Exercises", "练习")  # the fifth section's heading in each language (check.SECTIONS)
_NUMBERED = re.compile(r"^\d{1,3}[.)]\s")  # an exercise: a numbered list item at the left margin
_SECTION = re.compile(r"^##\s+(?P<text>.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Answer:
    n: int  # the exercise's number, from 1, as the lesson numbers it
    hint: str
    answer: str
    claims: dict[str, Any] = field(default_factory=dict)


def raw_answers(text: str) -> list[Any]:
    """The block's `[[answers]]` entries as TOML gives them; raises tomllib.TOMLDecodeError."""
    raw = tomllib.loads(text).get("answers", [])
    return raw if isinstance(raw, list) else []


def parse_answers(text: str) -> list[Answer]:
    """Every well-formed entry, numbered by its place in the block (a malformed one keeps its number)."""
    try:
        raw = raw_answers(text)
    except tomllib.TOMLDecodeError:
        return []
    answers = []
    for n, item in enumerate(raw, 1):
        if isinstance(item, dict) and all(isinstance(item.get(key), str) for key in ("hint", "answer")):
            claims = item.get("claims")
            answers.append(Answer(n, item["hint"], item["answer"], claims if isinstance(claims, dict) else {}))
    return answers


def lesson_answers(lesson: Lesson) -> list[Answer]:
    """The hints and answers of the lesson's `tutor-answers` block (the first, if there were more)."""
    block = next((b for b in blocks_in(lesson.body) if b.kind == "tutor-answers"), None)
    return parse_answers(block.text) if block else []


def answer_href(lesson_id: str, n: int) -> str:
    return f"tutor:answer?id={lesson_id}&n={n}"


def answers_markdown(text: str, lesson: Lesson) -> list[str]:
    """What the lesson shows in the block's place: one line, a link per exercise."""
    try:
        raw_answers(text)
    except tomllib.TOMLDecodeError as error:
        return [f"> ⚠ answers: {error}"]
    links = " · ".join(f"[{a.n}]({answer_href(lesson.id, a.n)})" for a in parse_answers(text))
    return [t("answers_line", lesson.lang) + links] if links else []


def is_answer_link(href: str) -> bool:
    return href.startswith("tutor:answer?")


def exercises_in(lesson: Lesson) -> tuple[int, int, int]:
    """(how many exercises the lesson's Exercises section numbers, the body lines of its heading and of the next
    section's; 0, 0, 0 if it has none). Numbered items at the left margin, outside fenced blocks: an exercise's
    own lines are indented."""
    lines = lesson.body.split("\n")
    count, heading = 0, 0
    for number, line in lines_outside_fences(lesson.body):
        section = _SECTION.match(line)
        if section:
            if heading:
                return count, heading, number  # the section after the exercises
            if section.group("text") in EXERCISE_SECTIONS:
                heading = number
            continue
        if heading and _NUMBERED.match(line):
            count += 1
    return count, heading, len(lines) + 1 if heading else 0
