"""Folds: a long derivation the learner opens when they want it.

An author writes a fold as GitHub renders one, so the lesson reads the same on GitHub:

    <details><summary>Why the gradient is 195</summary>

    Markdown, any number of paragraphs (no headings) …

    </details>

The opening line holds `<details><summary>…</summary>` and nothing else; `</details>` stands on its own line.
The app shows a closed fold as one line, "▸ summary · 320 words · 2 min"; the learner opens it by a click,
or by Enter or space while the lesson has the focus (see `tutor.widgets.lesson_view`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor.lessons.parse import lines_outside_fences

_OPEN = re.compile(r"^\s{0,3}<details>\s*<summary>(?P<summary>.*?)</summary>\s*$")
_CLOSE = re.compile(r"^\s{0,3}</details>\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
FOLD_SCHEME = "fold:"  # the target of a fold's own line in the shown Markdown (never a `tutor:` link)


@dataclass(frozen=True)
class Fold:
    """One fold: its number in the lesson (from 0), its summary, and the lines (from 1, within the body) of its
    `<details>` line and its `</details>` line."""

    n: int
    summary: str
    start: int
    end: int
    text: str  # the Markdown between the two lines


def folds_in(body: str) -> tuple[list[Fold], list[tuple[int, str]]]:
    """The body's folds, and its problems as (line within the body, message): a fold not closed, one inside
    another, a `</details>` with no fold open, an empty summary, a heading inside a fold (a link to it could not
    scroll there while the fold is closed)."""
    lines = body.split("\n")
    folds: list[Fold] = []
    problems: list[tuple[int, str]] = []
    start: tuple[int, str] | None = None
    for number, line in lines_outside_fences(body):
        if match := _OPEN.match(line):
            if start is not None:
                problems.append((number, f"a fold inside the fold of line {start[0]}: close that one first"))
                continue
            summary = match.group("summary").strip()
            if not summary:
                problems.append((number, "a fold needs a summary: <details><summary>what it derives</summary>"))
            start = (number, summary)
        elif "<details" in line and start is None:
            problems.append((number, "a fold opens with <details><summary>…</summary> alone on its line"))
        elif _CLOSE.match(line):
            if start is None:
                problems.append((number, "</details> with no fold open"))
                continue
            text = "\n".join(lines[start[0] : number - 1])
            folds.append(Fold(len(folds), start[1], start[0], number, text))
            start = None
        elif start is not None and _HEADING.match(line):
            problems.append((number, "no headings inside a fold: a link could not scroll to it while it is closed"))
    if start is not None:
        problems.append((start[0], "the fold is not closed: </details> on its own line"))
    return folds, problems


def without_folds(body: str) -> str:
    """The body with every fold's inside left out (its summary line kept): what the lesson asks to read."""
    folds, _ = folds_in(body)
    inside = {n for fold in folds for n in range(fold.start + 1, fold.end)}
    return "\n".join(line for n, line in enumerate(body.split("\n"), 1) if n not in inside)
