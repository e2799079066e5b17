"""`tutor progress`: what the learner has done, where they stopped, and a reset that keeps the old file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.commands.common import confirmed, fail
from tutor.i18n import LANGUAGE_NAMES, pick, say
from tutor.language import LANGUAGES

if TYPE_CHECKING:
    from tutor.lessons.parse import Lesson
    from tutor.progress import Progress, ProgressStore

HELP = "show your progress (lessons, quick checks, exercises, where you stopped); --reset starts afresh"
DESCRIPTION = "Show what you have done and where you stopped, and the progress file's path."

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "help": ("show what you have done, or start afresh", "显示学习进度，或者从头开始"),
    "file": ("Progress file: {path}", "进度文件：{path}"),
    "no_file": ("No progress saved yet (it will be kept in {path}).", "还没有保存的进度（将保存在 {path}）。"),
    "lessons": ("Lessons: {done} of {total} done", "课程：已完成 {done} / {total}"),
    "unknown_lesson": ("(no longer a lesson)", "（已不是现有课程）"),
    "quizzes": ("Quick checks: {n} taken", "小测验：做过 {n} 个"),
    "quiz_line": ("{title}: {score}/{total}{best}{attempts}{when}", "{title}：{score}/{total}{best}{attempts}{when}"),
    "best": (" (best {best})", "（最好 {best}）"),
    "attempts": (", {n} attempts", "，做了 {n} 次"),
    "time_spent": ("  ({time})", "（{time}）"),
    "minutes": ("{m} min", "{m} 分钟"),
    "under_a_minute": ("< 1 min", "不到 1 分钟"),
    "hours": ("{h} h {m:02d} min", "{h} 小时 {m} 分钟"),
    "exercises": ("Exercises: {passed} of {total} passed", "编程练习：通过 {passed} / {total}"),
    "tries": ("tries: {n}", "尝试 {n} 次"),
    "last": ("Last time:", "上次："),
    "last_lesson": ("lesson {title}", "课程 {title}"),
    "last_step": ("step {step}", "步骤 {step}"),
    "last_prompt": ("prompt {prompt}", "提示词 {prompt}"),
    "last_model": ("model {model}", "模型 {model}"),
    "last_lang": ("language {language}", "语言 {language}"),
    "nothing_yet": ("Nothing done yet.", "还没有任何进度。"),
    "confirm": (
        "Forget all progress in {path}? The old file is kept beside it. [y/N] ",
        "清除 {path} 中的全部进度？旧文件会保留在旁边。[y/N] ",
    ),
    "not_confirmed": ("Nothing reset.", "没有清除任何内容。"),
    "needs_yes": (
        "not resetting without confirmation; to reset from a script run: tutor progress --reset --yes",
        "没有确认，不清除进度；在脚本中请运行：tutor progress --reset --yes",
    ),
    "was_reset": ("Progress reset; the old file is kept as {aside}.", "进度已清除；旧文件保存为 {aside}。"),
    "was_reset_empty": ("Progress reset (there was nothing saved).", "进度已清除（之前没有保存的内容）。"),
    "cannot_reset": ("cannot reset progress in {path}: {reason}", "无法清除 {path} 中的进度：{reason}"),
    "export_folder": (
        "{path} is a folder: name the file to write, e.g. {example}",
        "{path} 是文件夹：请给出要写入的文件名，例如 {example}",
    ),
    "cannot_export": ("cannot write {path}: {reason}", "无法写入 {path}：{reason}"),
    "exported": (
        "Wrote your progress to {path} ({done} of {total} lessons done): hand this file to your teacher.",
        "进度已写入 {path}（已完成 {done} / {total} 课）：把这个文件交给老师即可。",
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help="language of the summary")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--reset", action="store_true", help="forget all progress (the old file is kept aside)")
    what.add_argument(
        "--json",
        action="store_true",
        help="print your record as JSON for your teacher (docs/progress-format.md): lessons done, quick-check "
        "scores and attempts, exercises passed, time per lesson",
    )
    what.add_argument("--export", metavar="FILE", help="write the same JSON to FILE, to hand in")
    parser.add_argument(
        "--name",
        help="with --json or --export: your name in the record (default: none; "
        "the teacher's report then names you by the file's name)",
    )
    parser.add_argument("--yes", action="store_true", help="with --reset: do not ask for confirmation")


def run(args: argparse.Namespace) -> int:
    from tutor.lessons.course import lessons_folder

    course = lessons_folder(getattr(args, "lessons", None))
    if args.json or args.export is not None:
        return run_export(args.lang, args.export, name=args.name, course=course)
    return run_progress(args.lang, reset=args.reset, yes=args.yes, course=course)


def run_progress(lang: str, *, reset: bool, yes: bool, course: Path | None = None) -> int:
    """The learner's record against the lessons the app shows (a teacher's folder's, `course`, if given)."""
    from tutor.lessons.course import session_lessons
    from tutor.progress import ProgressStore

    store = ProgressStore(lang=lang)
    if reset:
        return run_reset(store, lang, yes=yes)
    existed = store.path.exists()
    progress, notice = store.load()
    if notice:
        print(f"tutor: warning: {notice}", file=sys.stderr)
    lessons = session_lessons(lang, course).lessons if course is not None else None
    for line in summary(progress, store, lang, existed=existed, lessons=lessons):
        print(line)
    return 0


def run_export(lang: str, target: str | None, *, name: str | None, course: Path | None = None) -> int:
    """The record in the documented shape (tutor/progress_export.py): on stdout, or written to `target`."""
    from tutor.lessons.course import session_lessons
    from tutor.progress import ProgressStore, to_json
    from tutor.progress_export import export_of

    store = ProgressStore(lang=lang)
    progress, notice = store.load()
    if notice:
        print(f"tutor: warning: {notice}", file=sys.stderr)
    session = session_lessons(lang, course)
    for lesson_notice in session.notices:
        print(f"tutor: warning: {lesson_notice}", file=sys.stderr)
    export = export_of(progress, session.lessons, lang, learner=(name or "").strip() or None)
    text = to_json(export) + "\n"
    if target is None:
        sys.stdout.write(text)
        return 0
    try:
        write_export(Path(target), text)
    except IsADirectoryError:
        return fail(pick(WORDS, "export_folder", lang, path=target, example=Path(target) / "progress-export.json"))
    except OSError as error:
        return fail(pick(WORDS, "cannot_export", lang, path=target, reason=error.strerror or error))
    done = sum(1 for lesson in export["lessons"] if lesson["done"] and lesson["in_course"])
    total = sum(1 for lesson in export["lessons"] if lesson["in_course"])
    print(pick(WORDS, "exported", lang, path=target, done=done, total=total))
    return 0


def write_export(path: Path, text: str) -> None:
    """`text` into `path` in one step (a temporary file beside it, renamed): a half-written export is never
    handed in. A folder is refused (IsADirectoryError), whatever its name."""
    import os
    import tempfile

    if path.is_dir():
        raise IsADirectoryError(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep it from the teacher who collects it
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def run_reset(store: ProgressStore, lang: str, *, yes: bool) -> int:
    if not yes:
        if not sys.stdin.isatty():
            return fail(pick(WORDS, "needs_yes", lang))
        if not confirmed(pick(WORDS, "confirm", lang, path=store.path)):
            print(pick(WORDS, "not_confirmed", lang))
            return 1
    try:
        aside = store.reset()
    except OSError as error:
        reason = error.strerror or str(error)
        return fail(pick(WORDS, "cannot_reset", lang, path=store.path, reason=reason))
    print(pick(WORDS, "was_reset", lang, aside=aside) if aside else pick(WORDS, "was_reset_empty", lang))
    return 0


def summary(
    progress: Progress, store: ProgressStore, lang: str, *, existed: bool = True, lessons: list[Lesson] | None = None
) -> list[str]:
    """The lines `tutor progress` prints (against `lessons`, default the shipped ones); every record is read
    defensively (an older tutor may have written it)."""
    from tutor.exercises import EXERCISES
    from tutor.lessons.parse import load_lessons

    lessons = load_lessons(lang) if lessons is None else lessons
    titles = {lesson.id: lesson.title for lesson in lessons}
    lines = [pick(WORDS, "file" if existed else "no_file", lang, path=store.path), ""]
    done = set(progress.done)
    lines.append(pick(WORDS, "lessons", lang, done=len(done & set(titles)), total=len(lessons)))
    for n, lesson in enumerate(lessons, 1):
        spent = progress.time_spent.get(lesson.id, 0.0)
        time_spent = pick(WORDS, "time_spent", lang, time=time_words(spent, lang)) if spent >= 0.5 else ""
        lines.append(f"  {'✓' if lesson.id in done else '·'} {n:>2}  {lesson.title}{time_spent}")
    lines += [
        f"  ✓  ?  {lesson_id} {pick(WORDS, 'unknown_lesson', lang)}"
        for lesson_id in progress.done
        if lesson_id not in titles
    ]
    if progress.quiz:
        lines += ["", pick(WORDS, "quizzes", lang, n=len(progress.quiz))]
        for lesson_id, record in progress.quiz.items():
            record = record if isinstance(record, dict) else {}
            when = f"  ({str(record['at']).replace('T', ' ')[:16]})" if record.get("at") else ""
            title = titles.get(lesson_id, lesson_id)
            score, total, best = record.get("score", "?"), record.get("total", "?"), record.get("best")
            best = pick(WORDS, "best", lang, best=best) if isinstance(best, int) and best != score else ""
            tries = record.get("attempts")
            tries = pick(WORDS, "attempts", lang, n=tries) if isinstance(tries, int) and tries > 1 else ""
            line = pick(
                WORDS, "quiz_line", lang, title=title, score=score, total=total, best=best, attempts=tries, when=when
            )
            lines.append("  " + line)
    names = list(dict.fromkeys([*EXERCISES, *progress.exercises]))
    if names:
        passed = sum(1 for name in names if _record(progress.exercises, name).get("passed") is True)
        lines += ["", pick(WORDS, "exercises", lang, passed=passed, total=len(EXERCISES) or len(names))]
        for name in names:
            record = _record(progress.exercises, name)
            mark = "✓" if record.get("passed") is True else ("✗" if record else "·")
            title = EXERCISES[name].title(lang) if name in EXERCISES else name
            tries = (
                f"  ({pick(WORDS, 'tries', lang, n=record['tries'])})" if isinstance(record.get("tries"), int) else ""
            )
            lines.append(f"  {mark} {title}{tries}")
    last = progress.last
    parts = []
    if isinstance(last.get("lesson"), str):
        parts.append(pick(WORDS, "last_lesson", lang, title=titles.get(last["lesson"], last["lesson"])))
    if isinstance(last.get("step"), str):
        parts.append(pick(WORDS, "last_step", lang, step=last["step"]))
    if isinstance(last.get("prompt"), str):
        parts.append(pick(WORDS, "last_prompt", lang, prompt=quoted(last["prompt"])))
    if isinstance(last.get("model"), str):
        parts.append(pick(WORDS, "last_model", lang, model=last["model"]))
    if last.get("lang") in LANGUAGES:
        parts.append(pick(WORDS, "last_lang", lang, language=say(LANGUAGE_NAMES, str(last["lang"]))))
    if parts:
        lines += ["", pick(WORDS, "last", lang), *(f"  {part}" for part in parts)]
    elif not done and not progress.quiz and not progress.exercises:
        lines += ["", pick(WORDS, "nothing_yet", lang)]
    return lines


def time_words(seconds: float, lang: str) -> str:
    """Time with a lesson open, to the minute: "< 1 min", "12 min", "1 h 05 min"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return pick(WORDS, "under_a_minute", lang)
    if minutes < 60:
        return pick(WORDS, "minutes", lang, m=minutes)
    return pick(WORDS, "hours", lang, h=minutes // 60, m=minutes % 60)


def quoted(text: str, limit: int = 60) -> str:
    """A prompt on one line: quoted, control characters escaped, a long paste shortened."""
    return json.dumps(text if len(text) <= limit else text[:limit] + "…", ensure_ascii=False)


def _record(records: dict[str, Any], name: str) -> dict[str, Any]:
    record = records.get(name)
    return record if isinstance(record, dict) else {}
