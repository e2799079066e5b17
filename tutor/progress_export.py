"""A learner's record as a teacher collects it: written by `tutor progress --json` and `--export FILE`, read back
by `tutor class report`. Its shape is docs/progress-format.md's, versioned by FORMAT_VERSION: a reader ignores
fields it does not know, and the version goes up when a documented field changes its meaning or goes away.

Reading never trusts the file: at most MAX_EXPORT_BYTES of a regular file, JSON of the documented shape (every
count an integer in range), else `ExportError` with one line that says what is wrong. A learner's own
progress file (progress.json, from a hub's home folders) is read too, against the lessons the reader names.
No Textual, no NumPy.
"""

from __future__ import annotations

import datetime
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor import __version__
from tutor.i18n import pick
from tutor.language import LANGUAGES
from tutor.progress import MAX_DEPTH, Progress, depth_of, without_surrogates
from tutor.progress import VERSION as STORE_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable

    from tutor.lessons.parse import Lesson

FORMAT = "tutor-progress"
FORMAT_VERSION = 1
MAX_EXPORT_BYTES = 1024 * 1024  # an export of ten lessons is 3 KB; a class's hundred files are read at once

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "missing": ("does not exist", "不存在"),
    "unreadable": ("cannot be read: {reason}", "无法读取：{reason}"),
    "not_regular": ("not a regular file", "不是普通文件"),
    "too_big": (
        "larger than {limit} MB ({size} MB): not read (an export is a few kilobytes)",
        "超过 {limit} MB（{size} MB）：未读取（导出的进度文件只有几 KB）",
    ),
    "not_utf8": ("not UTF-8 text: not a progress export", "不是 UTF-8 文本：不是导出的进度文件"),
    "where": ("line {line} column {column}: {what}", "第 {line} 行第 {column} 列：{what}"),
    "not_json": ("not JSON ({error}): not a progress export", "不是 JSON（{error}）：不是导出的进度文件"),
    "too_deep": (
        "JSON nested more than {depth} deep: not a progress export",
        "JSON 嵌套超过 {depth} 层：不是导出的进度文件",
    ),
    "not_export": (
        'JSON, but not a tutor progress export (no "format": "{format}")',
        '是 JSON，但不是 tutor 导出的进度文件（没有 "format": "{format}"）',
    ),
    "other_format": (
        'not a tutor progress export ("format" is {found}, not "{format}")',
        '不是 tutor 导出的进度文件（"format" 是 {found}，不是 "{format}"）',
    ),
    "newer": (
        "made by a newer tutor (progress format version {version}); this tutor reads versions up to {ours}: "
        "update tutor to read it",
        "由更新版本的 tutor 导出（进度格式第 {version} 版）；这个 tutor 只能读到第 {ours} 版：请升级 tutor 再读",
    ),
    "unknown_version": (
        "progress format version {version} is not one tutor ever wrote (this tutor reads versions 1 to {ours})",
        "进度格式版本 {version} 不是 tutor 写过的版本（这个 tutor 能读第 1 到第 {ours} 版）",
    ),
    "newer_store": (
        "a progress file of a newer tutor (file version {version}); this tutor reads version {ours}: update tutor "
        "to read it",
        "由更新版本的 tutor 保存的进度文件（文件版本 {version}）；这个 tutor 只能读第 {ours} 版：请升级 tutor 再读",
    ),
    "bad_store": ("a progress file that cannot be used: {problem}", "无法使用的进度文件：{problem}"),
    "shape": ("not of the documented shape: {where} {what}", "与文档规定的格式不符：{where} {what}"),
    "must_be": ("must be {kind}", "必须是{kind}"),
    "is_missing": ("is missing", "缺失"),
    "repeated": ("repeats {key} {value}", "重复了 {key} {value}"),
    "above_total": ("is more than the quick check's total", "超过了小测验的总题数"),
    "below_score": ("is less than the last score", "低于最近一次的得分"),
    "kind_str": ("a string", "字符串"),
    "kind_str_or_null": ("a string or null", "字符串或 null"),
    "kind_bool": ("true or false", "true 或 false"),
    "kind_count": ("a whole number ≥ {least}", "≥ {least} 的整数"),
    "kind_list": ("a list", "列表"),
    "kind_object": ("an object", "对象"),
    "kind_object_or_null": ("an object or null", "对象或 null"),
    "kind_lang": ('"en" or "zh"', '"en" 或 "zh"'),
}


class ExportError(Exception):
    """What is wrong with a file given as an export: one line, in the reader's language."""


# -- writing -----------------------------------------------------------------------------------------------


def export_of(
    progress: Progress,
    lessons: list[Lesson],
    lang: str,
    *,
    learner: str | None = None,
    exported_at: str | None = None,
) -> dict[str, Any]:
    """The learner's record in the documented shape: every lesson of `lessons` in order (then any the record
    names that are not among them), every exercise this tutor has (then any it no longer has). A record an older
    tutor wrote, or a hand-edited one, is read defensively: what cannot be used counts as not done."""
    from tutor.exercises import EXERCISES

    course = [(lesson.id, lesson.title) for lesson in lessons]
    in_course = {lesson_id for lesson_id, _ in course}
    others = [
        lesson_id
        for lesson_id in dict.fromkeys([*progress.done, *progress.quiz, *progress.time_spent])
        if lesson_id not in in_course
    ]
    done = set(progress.done)
    rows = [
        {
            "id": lesson_id,
            "title": title,
            "in_course": lesson_id in in_course,
            "done": lesson_id in done,
            "seconds": round(progress.time_spent.get(lesson_id, 0.0)),
            "quiz": quiz_of(progress.quiz.get(lesson_id)),
        }
        for lesson_id, title in [*course, *((lesson_id, lesson_id) for lesson_id in others)]
    ]
    exercises = []
    for name in dict.fromkeys([*EXERCISES, *progress.exercises]):
        record = progress.exercises.get(name)
        record = record if isinstance(record, dict) else {}
        tries = record.get("tries")
        exercises.append(
            {
                "name": name,
                "title": EXERCISES[name].title(lang) if name in EXERCISES else name,
                "known": name in EXERCISES,
                "passed": record.get("passed") is True,
                "tries": tries if _count(tries, 0) else 0,
                "at": record.get("at") if isinstance(record.get("at"), str) else None,
            }
        )
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tutor": __version__,
        "exported_at": exported_at or datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "learner": learner or None,
        "lang": lang,
        "lessons": rows,
        "exercises": exercises,
    }


def quiz_of(record: Any) -> dict[str, Any] | None:
    """A saved quick-check record (tutor.lessons.quiz.grade, with the quiz screen's best and attempts) as the
    export shows it; None when there is none, or none that holds together (a score above its total)."""
    if not isinstance(record, dict):
        return None
    score, total = record.get("score"), record.get("total")
    if not _count(total, 1) or not _count(score, 0) or score > total:
        return None
    best = record.get("best")
    attempts = record.get("attempts")
    return {
        "score": score,
        "best": max(score, best) if _count(best, 0) and best <= total else score,
        "total": total,
        # a record from before attempts were counted was one attempt (tutor.lessons.quiz.attempts_after)
        "attempts": attempts if _count(attempts, 1) else 1,
        "at": record.get("at") if isinstance(record.get("at"), str) else None,
    }


def _count(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


# -- reading -----------------------------------------------------------------------------------------------


@dataclass
class Collected:
    """One learner's file as the report reads it: the export (a progress file is turned into one), and from
    what kind of file."""

    path: Path
    export: dict[str, Any]
    from_progress_file: bool = False


def read_export(path: Path, lang: str, lessons: Callable[[], list[Lesson]]) -> Collected:
    """The export in `path`, checked against the documented shape; a learner's progress.json is read too, with
    `lessons()` (called only then) as its course. `ExportError` (one line, without the path) otherwise."""
    data = _parse(_read_bytes(path, lang), lang)
    if isinstance(data, dict) and "format" in data:
        if data["format"] != FORMAT:
            found = json.dumps(data["format"], ensure_ascii=False)[:40]
            raise ExportError(pick(WORDS, "other_format", lang, found=found, format=FORMAT))
        version = data.get("version")
        if _count(version, 1) and version > FORMAT_VERSION:
            raise ExportError(pick(WORDS, "newer", lang, version=version, ours=FORMAT_VERSION))
        if version != FORMAT_VERSION:  # the first version: no older one to read
            shown = json.dumps(version, ensure_ascii=False)[:40]
            raise ExportError(pick(WORDS, "unknown_version", lang, version=shown, ours=FORMAT_VERSION))
        check_shape(data, lang)
        return Collected(path, data)
    if isinstance(data, dict) and "version" in data and data.keys() & STORE_KEYS:
        return Collected(path, _from_progress_file(path, data, lang, lessons), from_progress_file=True)
    raise ExportError(pick(WORDS, "not_export", lang, format=FORMAT))


STORE_KEYS = {"done", "quiz", "exercises", "last"}  # what every progress file (tutor.progress) has had


def _from_progress_file(path: Path, data: dict[str, Any], lang: str, lessons: Callable[[], list[Lesson]]) -> dict:
    version = data.get("version")
    if _count(version, 1) and version > STORE_VERSION:
        raise ExportError(pick(WORDS, "newer_store", lang, version=version, ours=STORE_VERSION))
    try:
        progress = Progress.from_json(data)
    except ValueError as error:
        raise ExportError(pick(WORDS, "bad_store", lang, problem=error)) from None
    saved = datetime.datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat(timespec="seconds")
    return export_of(progress, lessons(), lang, exported_at=saved)


def _read_bytes(path: Path, lang: str) -> bytes:
    """At most MAX_EXPORT_BYTES of a regular file (a FIFO must not block the open: O_NONBLOCK)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ExportError(pick(WORDS, "missing", lang)) from None
    except OSError as error:
        raise ExportError(pick(WORDS, "unreadable", lang, reason=error.strerror or error)) from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ExportError(pick(WORDS, "not_regular", lang))
        if info.st_size > MAX_EXPORT_BYTES:
            raise ExportError(_too_big(info.st_size, lang))
        try:
            data = file.read(MAX_EXPORT_BYTES + 1)
        except OSError as error:
            raise ExportError(pick(WORDS, "unreadable", lang, reason=error.strerror or error)) from None
    if len(data) > MAX_EXPORT_BYTES:  # it grew while we looked
        raise ExportError(_too_big(len(data), lang))
    return data


def _too_big(size: int, lang: str) -> str:
    return pick(WORDS, "too_big", lang, limit=MAX_EXPORT_BYTES // (1024 * 1024), size=f"{size / 1024 / 1024:.1f}")


def _parse(data: bytes, lang: str) -> Any:
    try:
        text = data.decode("utf-8-sig")  # a BOM: a file saved by a Windows editor
    except UnicodeDecodeError:
        raise ExportError(pick(WORDS, "not_utf8", lang)) from None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        where = pick(WORDS, "where", lang, line=error.lineno, column=error.colno, what=error.msg)
        raise ExportError(pick(WORDS, "not_json", lang, error=where)) from None
    except RecursionError:
        raise ExportError(pick(WORDS, "too_deep", lang, depth=MAX_DEPTH)) from None
    if depth_of(parsed) > MAX_DEPTH:
        raise ExportError(pick(WORDS, "too_deep", lang, depth=MAX_DEPTH))
    return without_surrogates(parsed)


# -- the documented shape ----------------------------------------------------------------------------------

# field: kind, for each object of the format (docs/progress-format.md documents every one; a test keeps them equal)
TOP = {
    "format": "str",
    "version": "count1",
    "tutor": "str",
    "exported_at": "str",
    "learner": "str?",
    "lang": "lang",
    "lessons": "list",
    "exercises": "list",
}
LESSON = {"id": "str", "title": "str", "in_course": "bool", "done": "bool", "seconds": "count0", "quiz": "object?"}
QUIZ = {"score": "count0", "best": "count0", "total": "count1", "attempts": "count1", "at": "str?"}
EXERCISE = {"name": "str", "title": "str", "known": "bool", "passed": "bool", "tries": "count0", "at": "str?"}


def check_shape(data: dict[str, Any], lang: str) -> None:
    """`ExportError` naming the first field that is not as docs/progress-format.md says."""
    _check_fields(data, TOP, "", lang)
    for key, fields, list_name in (("id", LESSON, "lessons"), ("name", EXERCISE, "exercises")):
        seen: set[str] = set()
        for n, item in enumerate(data[list_name]):
            where = f"{list_name}[{n}]"
            _check_fields(item, fields, where, lang)
            if item[key] in seen:
                raise _shape(where, pick(WORDS, "repeated", lang, key=key, value=json.dumps(item[key])), lang)
            seen.add(item[key])
            quiz = item.get("quiz")
            if quiz is not None:
                _check_fields(quiz, QUIZ, f"{where}.quiz", lang)
                for name in ("score", "best"):
                    if quiz[name] > quiz["total"]:
                        raise _shape(f"{where}.quiz.{name}", pick(WORDS, "above_total", lang), lang)
                if quiz["best"] < quiz["score"]:
                    raise _shape(f"{where}.quiz.best", pick(WORDS, "below_score", lang), lang)


def _check_fields(value: Any, fields: dict[str, str], where: str, lang: str) -> None:
    if not isinstance(value, dict):
        raise _shape(where or "the file", pick(WORDS, "must_be", lang, kind=pick(WORDS, "kind_object", lang)), lang)
    for name, kind in fields.items():
        at = f"{where}.{name}" if where else name
        if name not in value:
            raise _shape(at, pick(WORDS, "is_missing", lang), lang)
        if not _is_kind(value[name], kind):
            raise _shape(at, pick(WORDS, "must_be", lang, kind=_kind_words(kind, lang)), lang)


def _is_kind(value: Any, kind: str) -> bool:
    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind.startswith("count"):
        return _count(value, int(kind.removeprefix("count"))) and value <= 2**53  # JSON's exact integers
    if kind == "lang":
        return value in LANGUAGES
    return isinstance(value, list if kind == "list" else dict)


def _kind_words(kind: str, lang: str) -> str:
    if kind.startswith("count"):
        return pick(WORDS, "kind_count", lang, least=kind.removeprefix("count"))
    return pick(WORDS, {"str?": "kind_str_or_null", "object?": "kind_object_or_null"}.get(kind, f"kind_{kind}"), lang)


def _shape(where: str, what: str, lang: str) -> ExportError:
    return ExportError(pick(WORDS, "shape", lang, where=where, what=what))
