"""What a learner has done, kept in the XDG state directory and written atomically.

Two sessions of the same learner may run at once (two SSH windows). Every save therefore
takes an exclusive lock on `progress.json.lock` beside the file, reads what is on disk, merges
this session's changes into it and replaces the file in one step: neither session's lessons,
quiz results, exercises or time spent are lost (time adds up). A file that cannot be read is moved aside (never deleted)
and reported. Only a regular file of at most MAX_BYTES is read, and its JSON at most MAX_DEPTH deep:
a FIFO, a link to /dev/zero or a file nested thousands deep is set aside like a corrupt one, not
waited on, read for ever or allowed to crash the start. A save that fails (a full disk, a folder
that cannot be written) is said once; every later change and the exit try again, and the first
save that works again says so.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tutor.i18n import pick

VERSION = 2
# A lesson split in two keeps its id for its first half; a learner whose file (written before the split) has it
# done read both halves. file version → {the split lesson's id: the second half's id}. Version 2: lesson 8
# ("residual") became 8 and 9 ("gradient-walk": the no-residual collapse and the walk back).
SPLIT_SINCE: dict[int, dict[str, str]] = {1: {"residual": "gradient-walk"}}
WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "kept_aside": (
        "progress file was unreadable ({problem}); kept it as {aside}, starting afresh",
        "进度文件无法读取（{problem}）；已另存为 {aside}，从头开始",
    ),
    "unreadable": (
        "progress file {path} is unreadable ({problem}); starting afresh",
        "进度文件 {path} 无法读取（{problem}）；从头开始",
    ),
    "cannot_save": (
        "cannot save progress to {folder}: {reason}; trying again at each change and on exit",
        "无法把进度保存到 {folder}：{reason}；每次改动和退出时会再试",
    ),
    "not_saved_on_exit": (
        "this session's progress could not be saved to {path} (see the notice in the app)",
        "本次的进度未能保存到 {path}（见应用里的提示）",
    ),
    "saved_again": ("progress is saved again in {folder}", "进度已重新保存到 {folder}"),
    "not_regular": ("not a regular file", "不是普通文件"),
    "too_big": ("larger than {limit} MB", "超过 {limit} MB"),
    "too_deep": ("nested more than {depth} levels deep", "嵌套超过 {depth} 层"),
    "not_json": ("cannot save progress: {error}", "无法保存进度：{error}"),
}
LOCK_WAIT = 2.0  # seconds; a writer holds the lock for milliseconds, so this only guards against a stuck one
MAX_BYTES = 8 * 1024 * 1024  # a learner's file is kilobytes (a long pasted prompt: hundreds); more is not ours
MAX_SECONDS = 1e9  # 31 years on one lesson: anything more was not counted by a tutor
MAX_DEPTH = 32  # the deepest record is 4 levels; json.loads and copy.deepcopy recurse, and fail near 1000


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(data: Any) -> Any:
    """`data` with every lone surrogate (what a broken paste can leave in a prompt) replaced by U+FFFD in its
    strings and keys: UTF-8 cannot hold one, and a file that held its escape read back a string that no
    UTF-8 terminal could print (`tutor progress` failed on every run)."""
    if isinstance(data, str):
        return _LONE_SURROGATE.sub("\ufffd", data)
    if isinstance(data, dict):
        return {without_surrogates(key): without_surrogates(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [without_surrogates(value) for value in data]
    return data


def to_json(data: Any) -> str:
    """Readable JSON (Chinese stays Chinese) that reads back as written: lone surrogates become U+FFFD."""
    return json.dumps(without_surrogates(data), ensure_ascii=False, indent=1)


def depth_of(data: Any) -> int:
    """How deeply `data`'s lists and objects nest (a scalar: 0), without recursing."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def state_dir() -> Path:
    override = os.environ.get("TUTOR_STATE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_state_dir

    return Path(user_state_dir("tutor", appauthor=False))


@dataclass
class Progress:
    done: list[str] = field(default_factory=list)  # lesson ids
    quiz: dict[str, Any] = field(default_factory=dict)
    exercises: dict[str, Any] = field(default_factory=dict)
    # lesson, step, prompt, model, lang; view (a small window's: "lesson" or "panels"), read_to_end (a lesson id)
    last: dict[str, Any] = field(default_factory=dict)
    # lesson id: seconds with the lesson open in the app (tutor/lesson_clock.py); absent from an older tutor's file
    time_spent: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Progress:
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(data, dict) or version not in (*SPLIT_SINCE, VERSION):
            raise ValueError("not a tutor progress file of this version")
        done = data.get("done", [])
        if not isinstance(done, list) or not all(isinstance(d, str) for d in done):
            raise ValueError("'done' must be a list of lesson ids")
        for old in range(version, VERSION):  # an older file: a lesson since split is done in both its halves
            split = SPLIT_SINCE.get(old, {})
            done = [half for lesson in done for half in (lesson, split.get(lesson)) if half is not None]
        parts = {key: data.get(key, {}) for key in ("quiz", "exercises", "last")}
        if not all(isinstance(v, dict) for v in parts.values()):
            raise ValueError("'quiz', 'exercises' and 'last' must be objects")
        seconds = data.get("time_spent", {})
        if not isinstance(seconds, dict):
            raise ValueError("'time_spent' must be an object")
        # a value that is not a number of seconds is dropped, not the file: the sums below must not fail on it
        time_spent = {lesson: float(s) for lesson, s in seconds.items() if _seconds(s)}
        return cls(done=list(dict.fromkeys(done)), **parts, time_spent=time_spent)

    def changes_onto(self, disk: Progress, base: Progress) -> Progress:
        """A three-way merge: what this session changed since `base` (what it last read or wrote), applied to `disk`.

        Whatever another session saved meanwhile stays; a reset (`tutor progress --reset`) made meanwhile
        stays a reset, except for what this session did after its last save.
        """

        def changed(ours: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
            return {key: value for key, value in ours.items() if before.get(key) != value}

        # time adds up: two sessions on one lesson each spent their own minutes on it
        time_spent = dict(disk.time_spent)
        for lesson, seconds in self.time_spent.items():
            more = seconds - base.time_spent.get(lesson, 0.0)
            if more > 0:
                time_spent[lesson] = round(time_spent.get(lesson, 0.0) + more, 1)
        new_done = [lesson for lesson in self.done if lesson not in base.done]
        return Progress(
            done=list(dict.fromkeys(disk.done + new_done)),
            quiz={**disk.quiz, **changed(self.quiz, base.quiz)},
            exercises={**disk.exercises, **changed(self.exercises, base.exercises)},
            last=dict(self.last) if self.last != base.last or not disk.last else dict(disk.last),
            time_spent=time_spent,
        )


class ProgressStore:
    def __init__(self, path: Path | None = None, lang: str = "en") -> None:
        self.path = path or state_dir() / "progress.json"
        self.lang = lang  # of the notices; the app keeps it in step with its own
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.failing = False  # the last save failed (said once; every save tries again)
        self._base = Progress()  # what this store last read from or wrote to disk

    def load(self) -> tuple[Progress, str | None]:
        """The saved progress, and a notice when the file had to be set aside."""
        with self._locked():
            progress, notice = self._read()
        self._base = copy.deepcopy(progress)
        return progress, notice

    def save(self, progress: Progress) -> str | None:
        """Merge this session's changes into what is on disk, then replace the file in one step.

        `progress` is brought up to date with the merged result (lessons another session finished
        show as done here too). Returns a notice when the file cannot be written (the first time in a row),
        and when it can again.
        """
        try:
            with self._locked(required=True):
                existed = self.path.exists()
                on_disk, notice = self._read()
                # over a valid file, our changes since we last synced; else (gone, or just set aside) all we have
                base = self._base if existed and notice is None else Progress()
                merged = progress.changes_onto(on_disk, base)
                self._write(merged)
        except OSError as error:  # a full disk, a folder that cannot be written: the next save tries again
            said, self.failing = self.failing, True
            reason = error.strerror or str(error)
            return None if said else pick(WORDS, "cannot_save", self.lang, folder=self.path.parent, reason=reason)
        except (TypeError, ValueError) as error:  # a record that is not JSON: a bug, but not worth the session
            return pick(WORDS, "not_json", self.lang, error=error)
        if self.failing:
            self.failing = False
            notice = notice or pick(WORDS, "saved_again", self.lang, folder=self.path.parent)
        progress.done[:] = merged.done
        for mine, theirs in (
            (progress.quiz, merged.quiz),
            (progress.exercises, merged.exercises),
            (progress.time_spent, merged.time_spent),
        ):
            mine.clear()
            mine.update(theirs)
        # the merged state is the new base, except `last`: another session's position is not ours to re-save
        self._base = copy.deepcopy(replace(merged, last=dict(progress.last)))
        return notice

    def reset(self) -> Path | None:
        """Start afresh: the old file is kept aside (its new path is returned), an empty one takes its place."""
        with self._locked(required=True):
            aside = self._set_aside("reset") if self.path.exists() else None
            self._write(Progress())
        self._base = Progress()
        return aside

    # -- on disk -------------------------------------------------------------------------------

    def _read(self) -> tuple[Progress, str | None]:
        """What is on disk; an unreadable or corrupt file is moved aside and reported, never dropped."""
        try:
            data = json.loads(self._read_bytes().decode("utf-8"))
            if depth_of(data) > MAX_DEPTH:
                raise ValueError(pick(WORDS, "too_deep", self.lang, depth=MAX_DEPTH))
            return Progress.from_json(without_surrogates(data)), None
        except (FileNotFoundError, NotADirectoryError):  # nothing saved yet (or no folder to save in: said on save)
            return Progress(), None
        except OSError as error:
            problem = error.strerror or str(error)
        except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
            problem = str(error)
        except RecursionError:  # nested past the parser's own limit
            problem = pick(WORDS, "too_deep", self.lang, depth=MAX_DEPTH)
        try:
            aside = self._set_aside("corrupt")
        except OSError:
            return Progress(), pick(WORDS, "unreadable", self.lang, path=self.path, problem=problem)
        return Progress(), pick(WORDS, "kept_aside", self.lang, problem=problem, aside=aside)

    def _read_bytes(self) -> bytes:
        """The file's bytes, if it is a regular file (not a link: O_NOFOLLOW; a FIFO must not block the open:
        O_NONBLOCK) of at most MAX_BYTES; else OSError or ValueError, and the caller sets it aside."""
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError(pick(WORDS, "not_regular", self.lang))
            data = file.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise ValueError(pick(WORDS, "too_big", self.lang, limit=MAX_BYTES // (1024 * 1024)))
        return data

    def _set_aside(self, why: str) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.{why}-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.path.name}.{why}-{stamp}-{n}")
        os.replace(self.path, aside)
        return aside

    def _write(self, progress: Progress) -> None:
        data = {"version": VERSION, **asdict(progress)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(to_json(data))
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        with contextlib.suppress(OSError):  # the rename itself survives a power cut only once the folder is synced
            folder = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)

    def _remove_stale_temporaries(self) -> None:
        """Temporary files of writers killed mid-write (only called while holding the lock: none is in use)."""
        for stale in self.path.parent.glob(f".{self.path.name}-*.tmp"):
            with contextlib.suppress(OSError):
                stale.unlink()

    @contextlib.contextmanager
    def _locked(self, required: bool = False) -> Iterator[None]:
        """Hold the lock file's exclusive lock. Without a lock file (a read-only folder) reading goes on
        unlocked; writing raises, since it would fail anyway."""
        try:
            if required:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            if required:
                raise
            yield
            return
        try:
            locked = _acquire(fd)
            if locked:
                self._remove_stale_temporaries()
            yield
        finally:
            os.close(fd)  # closing releases the lock


def _seconds(value: Any) -> bool:
    """Whether `value` is a number of seconds one can add to: not a bool, not NaN, not negative, and at most
    MAX_SECONDS (a larger integer would not even convert to a float)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= MAX_SECONDS


def _acquire(fd: int) -> bool:
    """Take the exclusive lock, waiting up to LOCK_WAIT; False when it cannot be had (a stuck holder, or
    a file system without locks): the write is still atomic, only a concurrent session's change may be missed."""
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES) or time.monotonic() > deadline:
                return False
        time.sleep(0.01)
