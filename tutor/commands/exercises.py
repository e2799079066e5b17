"""`tutor exercises`: write the exercise folder, list, check (once or on every save), hint, solution, reset.

No Textual and no NumPy here: the learner's code runs in a subprocess (tutor.exercises.check).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from tutor.commands.common import confirmed, fail
from tutor.i18n import pick
from tutor.language import LANGUAGES

HELP = "hands-on coding exercises: write model/'s functions yourself, checked against the real model"
DESCRIPTION = (
    "Write the exercise folder (one Python file per exercise, never overwriting yours) and list "
    "them; `check [NAME]` runs your code against model/'s own functions and inside the live model; "
    "`hint NAME`; `solution NAME` once NAME passes; --watch re-checks on every save."
)

ACTIONS = ("list", "check", "hint", "solution")
POLL_SECONDS = 0.5

WORDS: dict[str, tuple[str, str]] = {
    "folder": ("Exercises in {path}", "练习文件夹：{path}"),
    "wrote": (
        "wrote {n} new file(s); your own files are never overwritten",
        "新写入 {n} 个文件；你自己的文件不会被覆盖",
    ),
    "legend": (
        "✓ passed · ✗ not passed yet · · not tried.  Edit a file, then: tutor exercises check NAME (or --watch)",
        "✓ 已通过 · ✗ 尚未通过 · · 未尝试。编辑文件后运行：tutor exercises check NAME（或 --watch）",
    ),
    "tries": ("{n} tries", "尝试 {n} 次"),
    "tried_once": ("1 try", "尝试 1 次"),
    "unknown": ("unknown exercise {name!r} (known: {known})", "没有名为 {name!r} 的练习（已有：{known}）"),
    "unknown_action": (
        "unknown action {action!r}: use {known}, or an exercise's name",
        "没有 {action!r} 这个操作：请用 {known}，或某个练习的名称",
    ),
    "needs_name": ("`tutor exercises {action}` needs an exercise name", "`tutor exercises {action}` 需要练习名称"),
    "cannot_write": ("cannot write the exercise folder {path}: {error}", "无法写入练习文件夹 {path}：{error}"),
    "hint": ("Hint for {name}:", "{name} 的提示："),
    "locked": (
        "The reference solution opens once your {name} passes: tutor exercises check {name}",
        "你的 {name} 通过检查之后才能看参考答案：tutor exercises check {name}",
    ),
    "solution": ("Reference solution for {name}, model/'s own code:", "{name} 的参考答案，即 model/ 自己的代码："),
    "reset_ask": (
        "Replace {path} with a fresh starter file? Your code in it will be lost. [y/N] ",
        "用新的初始文件替换 {path}？文件里你的代码会丢失。[y/N] ",
    ),
    "reset_done": ("{path} is a fresh starter file again", "{path} 已恢复为初始文件"),
    "reset_kept": ("kept {path} as it is", "{path} 保持不变"),
    "watching": (
        "Watching {path}: save a file to check it again. Ctrl-C to leave.",
        "正在监视 {path}：保存文件就会重新检查。按 Ctrl-C 退出。",
    ),
    "checking": ("checking {name} …", "正在检查 {name} …"),
    "printed": ("your code printed:", "你的代码输出了："),
    "bye": ("stopped watching", "已停止监视"),
    "progress_notice": ("note: {notice}", "注意：{notice}"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        metavar="ACTION",
        help="list (default), check, hint or solution; a bare exercise name checks that one",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="an exercise (check: default all)")
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="the exercise folder (default: $TUTOR_EXERCISES_DIR or ~/.local/share/tutor/exercises)",
    )
    parser.add_argument(
        "--watch", action="store_true", help="check again whenever an exercise file is saved (Ctrl-C leaves)"
    )
    parser.add_argument("--reset", metavar="NAME", help="replace NAME's file with a fresh starter file (asks first)")
    parser.add_argument("--yes", action="store_true", help="with --reset: do not ask")
    parser.add_argument(
        "--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the output and new files"
    )


def run(args: argparse.Namespace) -> int:
    from tutor.exercises import EXERCISES
    from tutor.exercises.workspace import workspace_dir, write_workspace

    lang = args.lang
    names = list(EXERCISES)
    if args.action in EXERCISES and args.name is None:  # `tutor exercises rope`, `tutor exercises --watch rope`
        args.action, args.name = "check", args.action
    if args.action is not None and args.action not in ACTIONS:
        return fail(pick(WORDS, "unknown_action", lang, action=args.action, known=", ".join(ACTIONS)))
    for name in (args.name, args.reset):
        if name is not None and name not in EXERCISES:
            return fail(pick(WORDS, "unknown", lang, name=name, known=", ".join(names)))
    action = args.action or ("check" if args.watch else "list")
    if action in ("hint", "solution") and args.name is None:
        return fail(pick(WORDS, "needs_name", lang, action=action))
    folder = workspace_dir(args.dir)
    try:
        written = write_workspace(folder, lang)
    except OSError as error:
        return fail(pick(WORDS, "cannot_write", lang, path=folder, error=error.strerror or error))
    if args.reset:
        return _reset(folder, args.reset, lang, assume_yes=args.yes)
    if action == "hint":
        print(pick(WORDS, "hint", lang, name=args.name))
        print(EXERCISES[args.name].hint(lang))
        return 0
    if action == "solution":
        return _solution(args.name, lang)
    chosen = [args.name] if args.name else names
    if args.watch:
        return _watch(folder, chosen, lang)
    if action == "check":
        return 0 if all([_check_and_report(folder, name, lang) for name in chosen]) else 1
    print(pick(WORDS, "folder", lang, path=folder))
    if written:
        print(pick(WORDS, "wrote", lang, n=len(written)))
    _print_list(folder, lang)
    return 0


def _load_progress(lang: str) -> tuple[Any, Any]:
    from tutor.progress import ProgressStore

    store = ProgressStore()
    progress, notice = store.load()
    if notice:
        print(pick(WORDS, "progress_notice", lang, notice=notice), file=sys.stderr)
    return store, progress


def _print_list(folder: Path, lang: str) -> None:
    from tutor.exercises import EXERCISES, status_mark
    from tutor.exercises.workspace import exercise_path

    _, progress = _load_progress(lang)
    width = max(len(name) for name in EXERCISES)
    for name, exercise in EXERCISES.items():
        record = progress.exercises.get(name)
        tries = record.get("tries", 0) if isinstance(record, dict) else 0
        count = f"  ({pick(WORDS, 'tried_once' if tries == 1 else 'tries', lang, n=tries)})" if tries else ""
        print(f"  {status_mark(record)} {name:<{width}}  {exercise.title(lang)}{count}")
        print(f"    {' ' * width}  {exercise_path(folder, name)}")
    print(pick(WORDS, "legend", lang))


def _check_and_report(folder: Path, name: str, lang: str, stamp: bool = False) -> bool:
    """Check one exercise, print ✓/✗ with the reason (after the time, when watching), and keep the result."""
    from tutor.exercises import record_result
    from tutor.exercises.check import WORDS as CHECK_WORDS
    from tutor.exercises.check import check_exercise
    from tutor.exercises.workspace import exercise_path

    result = check_exercise(name, exercise_path(folder, name))
    when = time.strftime("%H:%M:%S ") if stamp else ""
    # "✓ layer_norm: all 6 reference cases …" names the exercise itself: no "layer_norm: " before it
    named = result.values.get("function") == name and "{function}" in CHECK_WORDS[result.key][0]
    print(f"{when}{'' if named else name + ': '}{result.describe(lang)}", flush=True)
    if result.output and not result.passed:
        print(pick(WORDS, "printed", lang))
        for line in result.output.splitlines()[-10:]:
            print("  | " + (line if len(line) <= 160 else line[:160] + " …"))
    if result.key not in ("no_file", "stopped"):
        store, progress = _load_progress(lang)
        record_result(progress.exercises, name, result.passed)
        notice = store.save(progress)
        if notice:
            print(pick(WORDS, "progress_notice", lang, notice=notice), file=sys.stderr)
    return result.passed


def _solution(name: str, lang: str) -> int:
    from tutor.exercises import EXERCISES, reference_source

    _, progress = _load_progress(lang)
    record = progress.exercises.get(name)
    if not (isinstance(record, dict) and record.get("passed")):
        print(pick(WORDS, "locked", lang, name=name), file=sys.stderr)
        return 1
    print(pick(WORDS, "solution", lang, name=name))
    print()
    print(reference_source(EXERCISES[name]))
    return 0


def _reset(folder: Path, name: str, lang: str, *, assume_yes: bool) -> int:
    from tutor.exercises.workspace import exercise_path, reset_exercise

    path = exercise_path(folder, name)
    if not assume_yes and not confirmed(pick(WORDS, "reset_ask", lang, path=path)):
        print(pick(WORDS, "reset_kept", lang, path=path))
        return 1
    try:
        reset_exercise(folder, name, lang)
    except OSError as error:
        return fail(pick(WORDS, "cannot_write", lang, path=path, error=error.strerror or error))
    print(pick(WORDS, "reset_done", lang, path=path))
    return 0


def _watch(folder: Path, names: list[str], lang: str) -> int:
    """Check every file once, then again whenever one is saved (its mtime or size changes), until Ctrl-C."""
    from tutor.exercises.workspace import exercise_path

    def stamp(name: str) -> tuple[float, int] | None:
        try:
            stat = exercise_path(folder, name).stat()
        except OSError:
            return None
        return stat.st_mtime, stat.st_size

    print(pick(WORDS, "watching", lang, path=folder), flush=True)
    seen: dict[str, tuple[float, int] | None] = {}
    try:
        while True:
            for name in names:
                now = stamp(name)
                if name not in seen or now != seen[name]:
                    seen[name] = now
                    _check_and_report(folder, name, lang, stamp=True)
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        print("\n" + pick(WORDS, "bye", lang))
        return 0
