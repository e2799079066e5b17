"""A class's progress in one table: many learners' exports (tutor/progress_export.py) as rows, for the terminal
(Rich) and as CSV. Only numbers the exports hold, each counted the one way docs/progress-format.md says."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tutor.i18n import pick
from tutor.lessons.quiz import passed as quiz_passed

if TYPE_CHECKING:
    from tutor.progress_export import Collected

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "title": ("Class report: {learners} learners", "全班进度：{learners} 名学生"),
    "title_one": ("Class report: 1 learner", "全班进度：1 名学生"),
    "learner": ("Learner", "学生"),
    "lessons": ("Lessons\ndone", "完成\n课程"),
    "exercises": ("Exer-\ncises", "编程\n练习"),
    "time": ("Time\nh:mm", "用时\n时:分"),
    "legend_quiz": (
        "Columns 1–{n}: each lesson's quick check, best score/questions ×attempts (green: passed, at least two "
        "thirds right; · not taken).",
        "第 1–{n} 列：各课小测验的最好成绩/题数 ×次数（绿色：已通过，至少答对三分之二；· 表示没做过）。",
    ),
    "legend_time": (
        "Lessons done: done of the learner's lessons. Time: with any lesson open in the tutor, pauses over 5 "
        "minutes counted as 5.",
        "完成课程：已完成数 / 该学生的课程数。用时：tutor 中打开课程的时间，超过 5 分钟的停顿只算 5 分钟。",
    ),
}
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # a learner's name or a title must not move the teacher's cursor


@dataclass
class LessonColumn:
    id: str
    title: str


@dataclass
class Row:
    learner: str
    file: str
    lessons_done: int
    lessons_total: int
    exercises_passed: int
    exercises_total: int
    seconds: int
    quiz: dict[str, dict[str, Any]] = field(default_factory=dict)  # by lesson id: the export's quiz record
    lesson_seconds: dict[str, int] = field(default_factory=dict)


def plain(text: str) -> str:
    """`text` without control characters (each shown as U+FFFD)."""
    return CONTROL.sub("\ufffd", text)


def row_of(collected: Collected) -> Row:
    export = collected.export
    learner = export["learner"].strip() if isinstance(export["learner"], str) else ""
    course = [lesson for lesson in export["lessons"] if lesson["in_course"]]
    exercises = [exercise for exercise in export["exercises"] if exercise["known"]]
    return Row(
        learner=plain(learner or collected.path.stem),
        file=str(collected.path),
        lessons_done=sum(1 for lesson in course if lesson["done"]),
        lessons_total=len(course),
        exercises_passed=sum(1 for exercise in exercises if exercise["passed"]),
        exercises_total=len(exercises),
        seconds=sum(lesson["seconds"] for lesson in export["lessons"]),
        quiz={lesson["id"]: lesson["quiz"] for lesson in course if lesson["quiz"] is not None},
        lesson_seconds={lesson["id"]: lesson["seconds"] for lesson in export["lessons"]},
    )


def lesson_columns(collected: list[Collected]) -> list[LessonColumn]:
    """Every lesson of any learner's course, in the order the exports list them (the first one's title)."""
    columns: dict[str, LessonColumn] = {}
    for each in collected:
        for lesson in each.export["lessons"]:
            if lesson["in_course"] and lesson["id"] not in columns:
                columns[lesson["id"]] = LessonColumn(lesson["id"], plain(lesson["title"]))
    return list(columns.values())


def hours_minutes(seconds: int) -> str:
    """h:mm, to the nearest minute (58 s is 0:01, not 0:00: the learner was there)."""
    minutes = (seconds + 30) // 60
    return f"{minutes // 60}:{minutes % 60:02d}"


def quiz_cell(record: dict[str, Any] | None) -> Text:
    if record is None:
        return Text("·", style="dim")
    style = "green" if quiz_passed(record) else "yellow"
    return Text(f"{record['best']}/{record['total']}×{record['attempts']}", style=style)


def table(rows: list[Row], columns: list[LessonColumn], lang: str, width: int) -> RenderableType:
    """The rows as Rich tables `width` columns wide at most, lesson columns numbered, with the legend that says
    what each number is. All in one table where it fits; else the totals, then the quick checks in as few
    tables as fit (ten lessons' take 70 columns)."""
    title = pick(WORDS, "title", lang, learners=len(rows)) if len(rows) != 1 else pick(WORDS, "title_one", lang)
    numbered = list(enumerate(columns, 1))
    whole = _grid(rows, numbered, lang, totals=True)
    if _width(whole) <= width:
        parts = [whole]
    else:
        parts = [_grid(rows, [], lang, totals=True)]
        chunk: list[tuple[int, LessonColumn]] = []
        for numbered_column in numbered:
            if chunk and _width(_grid(rows, [*chunk, numbered_column], lang, totals=False)) > width:
                parts.append(_grid(rows, chunk, lang, totals=False))
                chunk = []
            chunk.append(numbered_column)
        if chunk:
            parts.append(_grid(rows, chunk, lang, totals=False))
    names = [Text(f"{n:>3} {column.title}", style="dim") for n, column in numbered]
    legend = [pick(WORDS, "legend_quiz", lang, n=len(columns)), pick(WORDS, "legend_time", lang)]
    return Group(Text(title, style="bold"), *parts, *names, *(Text(line, style="dim") for line in legend))


LEARNER_WIDTH = 16  # a longer name folds onto a second line


def _grid(rows: list[Row], numbered: list[tuple[int, LessonColumn]], lang: str, *, totals: bool) -> Table:
    """One table: the learners, their totals (if `totals`), the quick checks of the `numbered` lessons."""
    grid = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1), collapse_padding=True, pad_edge=False)
    grid.add_column(pick(WORDS, "learner", lang), overflow="fold", max_width=LEARNER_WIDTH)
    if totals:
        grid.add_column(pick(WORDS, "lessons", lang), justify="right", no_wrap=True)
    for n, _ in numbered:
        grid.add_column(str(n), justify="center", no_wrap=True)
    if totals:
        grid.add_column(pick(WORDS, "exercises", lang), justify="right", no_wrap=True)
        grid.add_column(pick(WORDS, "time", lang), justify="right", no_wrap=True)
    for row in rows:
        quiz = [quiz_cell(row.quiz.get(column.id)) for _, column in numbered]
        if totals:
            done, exercises = f"{row.lessons_done}/{row.lessons_total}", f"{row.exercises_passed}/{row.exercises_total}"
            grid.add_row(Text(row.learner), done, *quiz, exercises, hours_minutes(row.seconds))
        else:
            grid.add_row(Text(row.learner), *quiz)
    return grid


def _width(grid: Table) -> int:
    """The columns `grid` takes when nothing in it has to wrap."""
    from rich.console import Console

    console = Console(width=10_000, file=io.StringIO())
    return console.measure(grid).maximum


CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs a cell starting so as a formula


def write_csv(rows: list[Row], columns: list[LessonColumn], out: TextIO) -> None:
    """One line per learner: the totals, then per lesson the quick check's best, total and attempts (empty if not
    taken) and the seconds. Headers are fixed names (docs/progress-format.md), whatever the language."""
    writer = csv.writer(out, lineterminator="\n")
    header = [
        "learner",
        "file",
        "lessons_done",
        "lessons_total",
        "exercises_passed",
        "exercises_total",
        "seconds_total",
    ]
    for column in columns:
        header += [f"{column.id}:quiz_best", f"{column.id}:quiz_total", f"{column.id}:quiz_attempts"]
        header.append(f"{column.id}:seconds")
    writer.writerow(header)
    for row in rows:
        line: list[object] = [
            _cell(row.learner),
            _cell(row.file),
            row.lessons_done,
            row.lessons_total,
            row.exercises_passed,
            row.exercises_total,
            row.seconds,
        ]
        for column in columns:
            quiz = row.quiz.get(column.id)
            line += [quiz["best"], quiz["total"], quiz["attempts"]] if quiz else ["", "", ""]
            line.append(row.lesson_seconds.get(column.id, 0))
        writer.writerow(line)


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text: a leading = + - @ gets a ' before it."""
    return "'" + text if text.startswith(CSV_FORMULA) else text
