"""What a learner has done, kept in the XDG state directory and written atomically.

A file that cannot be read is moved aside (never deleted) and reported; a directory that
cannot be written is reported once, and the session goes on without saving.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

VERSION = 1


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
    last: dict[str, Any] = field(default_factory=dict)  # lesson, step, prompt, model, lang

    @classmethod
    def from_json(cls, data: Any) -> Progress:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not a tutor progress file of this version")
        done = data.get("done", [])
        if not isinstance(done, list) or not all(isinstance(d, str) for d in done):
            raise ValueError("'done' must be a list of lesson ids")
        parts = {key: data.get(key, {}) for key in ("quiz", "exercises", "last")}
        if not all(isinstance(v, dict) for v in parts.values()):
            raise ValueError("'quiz', 'exercises' and 'last' must be objects")
        return cls(done=list(dict.fromkeys(done)), **parts)

    def merged_with(self, other: Progress) -> Progress:
        """Ours, plus whatever another session saved meanwhile (lessons done, quiz and exercise results)."""
        return Progress(
            done=list(dict.fromkeys(other.done + self.done)),
            quiz={**other.quiz, **self.quiz},
            exercises={**other.exercises, **self.exercises},
            last=self.last or other.last,
        )


class ProgressStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "progress.json"
        self.writable = True

    def load(self) -> tuple[Progress, str | None]:
        """The saved progress, and a notice when the file had to be set aside."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Progress(), None
        except OSError as error:
            return Progress(), f"cannot read progress file {self.path}: {error.strerror}"
        try:
            return Progress.from_json(json.loads(text)), None
        except (ValueError, UnicodeDecodeError) as error:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            try:
                os.replace(self.path, aside)
            except OSError:
                return Progress(), f"progress file {self.path} is unreadable ({error}); starting afresh"
            return Progress(), f"progress file was unreadable ({error}); kept it as {aside.name}, starting afresh"

    def save(self, progress: Progress) -> str | None:
        """Merge with what is on disk, then replace the file in one step. A notice when it cannot."""
        if not self.writable:
            return None
        try:
            on_disk = Progress.from_json(json.loads(self.path.read_text(encoding="utf-8")))
            progress = progress.merged_with(on_disk)
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        data = {"version": VERSION, **asdict(progress)}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".progress-", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    json.dump(data, file, ensure_ascii=False, indent=1)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(tmp, self.path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as error:
            self.writable = False
            return f"cannot save progress to {self.path.parent}: {error.strerror}; this session's progress is not kept"
        return None
