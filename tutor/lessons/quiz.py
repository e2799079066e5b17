"""A lesson's quick check: the questions of its `tutor-quiz` block, and how an attempt is graded.

The content checker (`tutor lessons --check`) holds the blocks to the format; here a question that is
still malformed is skipped rather than raised, so a broken lesson never takes the app down.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass
from typing import Any

from tutor.lessons.parse import Lesson, blocks_in


@dataclass(frozen=True)
class Question:
    text: str
    choices: tuple[str, ...]
    answer: int  # index into choices
    explanation: str


def parse_quiz(text: str) -> list[Question]:
    try:
        raw = tomllib.loads(text).get("questions", [])
    except tomllib.TOMLDecodeError:
        return []
    questions = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        choices, answer = item.get("choices"), item.get("answer")
        if (
            isinstance(item.get("question"), str)
            and isinstance(choices, list)
            and all(isinstance(c, str) for c in choices)
            and isinstance(answer, int)
            and not isinstance(answer, bool)
            and 0 <= answer < len(choices)
        ):
            questions.append(Question(item["question"], tuple(choices), answer, str(item.get("explanation", ""))))
    return questions


def lesson_quiz(lesson: Lesson) -> list[Question]:
    """Every well-formed question in the lesson's `tutor-quiz` blocks, in order."""
    return [q for block in blocks_in(lesson.body) if block.kind == "tutor-quiz" for q in parse_quiz(block.text)]


def grade(questions: list[Question], picks: list[int | None]) -> dict[str, Any]:
    """The record kept in progress: score, total, the learner's picks and when (the quiz screen adds best and
    attempts)."""
    score = sum(1 for q, pick in zip(questions, picks, strict=True) if pick == q.answer)
    return {"score": score, "total": len(questions), "picks": list(picks), "at": time.strftime("%Y-%m-%dT%H:%M:%S")}


def attempts_after(previous: dict[str, Any]) -> int:
    """How many times the quick check has been taken, this time included, after `previous` (its saved record, or
    {} if never taken). A record from a tutor that did not count attempts yet was one attempt."""
    before = previous.get("attempts")
    if isinstance(before, int) and not isinstance(before, bool) and before > 0:
        return before + 1
    return 2 if previous else 1


def passed(record: object) -> bool:
    """Whether a saved quick-check record (see `grade`) is a pass: at least two thirds right, at best."""
    if not isinstance(record, dict):
        return False
    total, best = record.get("total"), record.get("best", record.get("score"))
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (total, best)):
        return False
    return total > 0 and 3 * best >= 2 * total  # type: ignore[operator]


def quiz_markdown(text: str, lang: str) -> list[str]:
    """A quiz block shown as numbered questions with lettered choices (grading is the quiz screen's)."""
    try:
        questions = tomllib.loads(text).get("questions", [])
    except tomllib.TOMLDecodeError as error:
        return [f"> ⚠ quiz: {error}"]
    out: list[str] = []
    # a malformed block must not take the lesson down: the checker reports it, here it is shown as far as it goes
    questions = [q for q in questions if isinstance(q, dict)] if isinstance(questions, list) else []
    for n, question in enumerate(questions, 1):
        choices = question.get("choices", [])
        out += [f"**{n}. {question.get('question', '')}**", ""]
        out += [
            f"- {chr(ord('A') + k)}. {choice}" for k, choice in enumerate(choices if isinstance(choices, list) else [])
        ]
        out.append("")
    return out
