"""`tutor class report FILE_OR_DIR…`: many learners' progress exports (`tutor progress --export`) in one table, in
the terminal and as CSV. It only reads files: nothing is sent anywhere. (`class` is a Python keyword: this module
is `class_`.)"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.commands.common import fail
from tutor.i18n import pick
from tutor.language import LANGUAGES

if TYPE_CHECKING:
    from tutor.lessons.parse import Lesson
    from tutor.progress_export import Collected

HELP = "for teachers: roll learners' progress exports into one table (terminal or CSV)"
DESCRIPTION = (
    "`report FILE_OR_DIR...`: read learners' exports (tutor progress --export FILE; a folder: its *.json files; a "
    "learner's own progress.json works too) and show one row per learner: lessons done, each quick check's best "
    "score and attempts, exercises passed, time. --csv FILE (or -) writes the same as CSV. A file that cannot be "
    "used is named on one line and skipped; the exit status is then 1. The format: docs/progress-format.md."
)

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "skipped": ("{path}: {problem}; skipped", "{path}：{problem}；已跳过"),
    "no_json": ("{path}: a folder with no .json files in it", "{path}：文件夹里没有 .json 文件"),
    "nothing": ("no learner's progress to report", "没有可以汇总的学生进度"),
    "skipped_count": ("{n} of {m} files skipped (see above)", "{m} 个文件中有 {n} 个被跳过（见上）"),
    "csv_folder": ("--csv {path} is a folder: name the file to write", "--csv {path} 是文件夹：请给出要写入的文件名"),
    "cannot_csv": ("cannot write {path}: {reason}", "无法写入 {path}：{reason}"),
    "wrote_csv": ("Wrote {n} learners to {path}", "已把 {n} 名学生写入 {path}"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    report = actions.add_parser(
        "report",
        help="one table of many learners' progress exports",
        description=DESCRIPTION,
    )
    report.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="exports, or folders of them (*.json)")
    report.add_argument("--csv", metavar="FILE", help="write the table as CSV to FILE (- for stdout) instead")
    report.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the table")


def run(args: argparse.Namespace) -> int:
    from tutor.lessons.course import lessons_folder

    return run_report(args.lang, [Path(p) for p in args.paths], csv_to=args.csv, course=lessons_folder(args.lessons))


def files_of(paths: list[Path], lang: str) -> list[Path | str]:
    """The files to read, in the order named (a folder: its *.json files, sorted; each file once), and in their
    place what was wrong with a folder (a line to say)."""
    found: list[Path | str] = []
    seen: set[str] = set()
    for path in paths:
        if path.is_dir():
            try:
                inside = sorted(p for p in path.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
            except OSError as error:
                found.append(pick(WORDS, "skipped", lang, path=path, problem=error.strerror or error))
                continue
            if not inside:
                found.append(pick(WORDS, "no_json", lang, path=path))
        else:
            inside = [path]
        for file in inside:
            key = os.path.realpath(file)  # the same file named twice (itself and its folder): read once
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def run_report(lang: str, paths: list[Path], *, csv_to: str | None = None, course: Path | None = None) -> int:
    from rich.console import Console

    from tutor.class_report import lesson_columns, row_of, table, write_csv
    from tutor.progress_export import ExportError, read_export

    lessons_cache: list[list[Lesson]] = []

    def course_lessons() -> list[Lesson]:
        """The lessons a learner's progress.json (it names only ids) is counted against: as `tutor progress`'s."""
        from tutor.lessons.course import session_lessons

        if not lessons_cache:
            lessons_cache.append(session_lessons(lang, course).lessons)
        return lessons_cache[0]

    collected: list[Collected] = []
    files = skipped = problems = 0
    for item in files_of(paths, lang):
        problem = item if isinstance(item, str) else None
        if isinstance(item, Path):
            files += 1
            try:
                collected.append(read_export(item, lang, course_lessons))
            except ExportError as error:
                problem = pick(WORDS, "skipped", lang, path=item, problem=error)
                skipped += 1
        if problem is not None:
            problems += 1
            print(f"tutor: warning: {problem}", file=sys.stderr)
    if not collected:
        return fail(pick(WORDS, "nothing", lang))
    rows = sorted((row_of(each) for each in collected), key=lambda row: (row.learner.casefold(), row.file))
    columns = lesson_columns(collected)
    if csv_to is None:
        console = Console(highlight=False)
        console.print(table(rows, columns, lang, console.width))
    elif csv_to == "-":
        write_csv(rows, columns, sys.stdout)
    else:
        target = Path(csv_to)
        if target.is_dir():
            return fail(pick(WORDS, "csv_folder", lang, path=target))
        try:
            with target.open("w", encoding="utf-8-sig", newline="") as out:  # the BOM: Excel then reads UTF-8
                write_csv(rows, columns, out)
        except OSError as error:
            return fail(pick(WORDS, "cannot_csv", lang, path=target, reason=error.strerror or error))
        print(pick(WORDS, "wrote_csv", lang, n=len(rows), path=target))
    if skipped:
        print(f"tutor: warning: {pick(WORDS, 'skipped_count', lang, n=skipped, m=files)}", file=sys.stderr)
    if problems:  # a file skipped, or a folder without any
        return 1
    return 0
