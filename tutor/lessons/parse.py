"""Lesson files: TOML front matter and a Markdown body, read into a `Lesson`.

The format is written down in `content/README.md`. Loading never raises for a broken lesson:
what is wrong becomes a warning on the lesson (file and line), so the app can still show it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tutor.catalogue import PANELS
from tutor.lessons.links import LessonError, links_in, parse_link
from tutor.paths import content_dir

FENCES = ("tutor-code", "tutor-quiz", "tutor-check", "tutor-claims", "tutor-answers")
FRONT_MATTER_KEYS = {"id": str, "order": int, "title": str, "prompt": str, "steps": list, "panels": list, "model": str}
REQUIRED_KEYS = ("id", "order", "title", "prompt")

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    """A fenced block with a `tutor-*` info string: its kind, its text and the line it starts on."""

    kind: str
    text: str
    line: int
    end: int  # the line of the closing fence


@dataclass
class Lesson:
    id: str
    order: int
    lang: str
    title: str
    prompt: str
    path: Path
    body: str
    body_line: int  # the file's line number of the body's first line
    steps: tuple[str, ...] = ()
    panels: tuple[str, ...] = ()
    model: str | None = None
    warnings: list[str] = field(default_factory=list)

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(f"{self.path}:{line}: {message}")


def blocks_in(text: str) -> list[Block]:
    """Every fenced block whose info string is one of `FENCES`."""
    blocks: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start = match.group("fence"), i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), len(lines))
        if match.group("info") in FENCES:
            blocks.append(Block(match.group("info"), "\n".join(lines[start + 1 : end]), start + 1, end + 1))
        i = end + 1
    return blocks


def code_target(reference: str) -> object:
    """The function, class or module `model.norm.layer_norm` names, its source not read yet: loading checks every
    lesson's quotes with this (reading the 20 quoted sources took ~10 ms of every start), showing one reads it."""
    reference = reference.strip()
    if not re.fullmatch(r"model(\.[A-Za-z_]\w*)+", reference):
        raise LessonError(f"code reference must name something in model/, like model.norm.layer_norm: {reference!r}")
    parts = reference.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable module, then attributes
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                target = getattr(target, attribute)
            has_source = inspect.getsourcefile(target) is not None  # type: ignore[arg-type]  # a number: TypeError
        except (AttributeError, TypeError):
            break
        if has_source:
            return target
        break
    raise LessonError(f"code reference {reference} does not resolve to a function or class in model/")


@functools.cache  # showing a lesson again quotes the same source
def resolve_code(reference: str) -> tuple[str, str]:
    """`model.norm.layer_norm` → (its file relative to the package root, its source). Only `model.*`."""
    target = code_target(reference)
    try:
        source = inspect.getsource(target)  # type: ignore[arg-type]
    except (TypeError, OSError):
        raise LessonError(
            f"code reference {reference.strip()} does not resolve to a function or class in model/"
        ) from None
    module = inspect.getmodule(target)
    where = f"{module.__name__.replace('.', '/')}.py" if module else reference.strip()
    return where, inspect.cleandoc("\n" + source) if source.startswith(" ") else source.rstrip("\n")


def parse_lesson(path: Path, lang: str) -> Lesson:
    """Read one lesson; problems become warnings (with file and line), never exceptions."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        lesson = Lesson(path.stem, 999, lang, path.stem, "", path, "", 1)
        lesson.warn(1, f"cannot read the lesson: {error}")
        return lesson
    meta, body, body_line, problems = _split_front_matter(text)
    fallback_id = re.sub(r"^\d+-", "", path.stem)
    lesson = Lesson(
        id=str(meta.get("id", fallback_id)),
        order=meta["order"] if isinstance(meta.get("order"), int) else 999,
        lang=lang,
        title=str(meta.get("title", fallback_id)),
        prompt=str(meta.get("prompt", "")),
        path=path,
        body=body,
        body_line=body_line,
        steps=tuple(str(s) for s in meta.get("steps", []) if isinstance(meta.get("steps"), list)),
        panels=tuple(str(p) for p in meta.get("panels", []) if isinstance(meta.get("panels"), list)),
        model=str(meta["model"]) if "model" in meta else None,
    )
    for line, message in problems:
        lesson.warn(line, message)
    for key in REQUIRED_KEYS:
        if not problems and key not in meta:
            lesson.warn(1, f"front matter has no '{key}'")
    for key, value in meta.items():
        expected = FRONT_MATTER_KEYS.get(key)
        if expected is None:
            lesson.warn(front_matter_line(text, key), f"unknown front matter key '{key}'")
        elif not isinstance(value, expected) or isinstance(value, bool):
            lesson.warn(front_matter_line(text, key), f"front matter '{key}' must be a {expected.__name__}")
    for panel in lesson.panels:
        if panel not in PANELS:
            lesson.warn(front_matter_line(text, "panels"), f"unknown panel '{panel}' (known: {', '.join(PANELS)})")
    for line, href in links_in(body):
        try:
            parse_link(href)
        except LessonError as error:
            lesson.warn(body_line + line - 1, str(error))
    for block in blocks_in(body):
        if block.kind == "tutor-code":
            try:
                code_target(block.text)
            except LessonError as error:
                lesson.warn(body_line + block.line - 1, str(error))
    return lesson


def front_matter_line(text: str, key: str) -> int:
    """The file line where front matter `key` is set, so a warning points at it (1 if not found)."""
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], 2):
        if line.strip() == "+++":
            break
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return number
    return 1


def _split_front_matter(text: str) -> tuple[dict[str, object], str, int, list[tuple[int, str]]]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "+++":
        return {}, text, 1, [(1, "no front matter: the lesson must start with a +++ line")]
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        return {}, text, 1, [(1, "front matter is not closed by a second +++ line")]
    body = "\n".join(lines[end + 1 :])
    try:
        meta = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as error:
        line = 1 + int(m.group(1)) if (m := re.search(r"line (\d+)", str(error))) else 1
        return {}, body, end + 2, [(line, f"broken front matter: {error}")]
    return meta, body, end + 2, []


def load_lessons(lang: str, root: Path | None = None) -> list[Lesson]:
    """Every lesson of one language, in order. A missing folder gives no lessons, not an error."""
    folder = (root or content_dir()) / lang
    if not folder.is_dir():
        return []
    lessons = [parse_lesson(path, lang) for path in sorted(folder.glob("*.md"))]
    return sorted(lessons, key=lambda lesson: (lesson.order, lesson.id))


def lines_outside_fences(text: str, first: int = 1) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of `text` outside its fenced blocks (``` or ~~~), the fences too left
    out; numbered from `first`."""
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), first):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        yield number, line
