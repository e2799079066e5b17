"""Lessons: Markdown files with TOML front matter, and the directives that tie them to the panels.

The format is written down in `content/README.md`. Loading never raises for a broken lesson:
what is wrong becomes a warning on the lesson (file and line), so the app can still show it.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tutor.paths import content_dir

SCHEME = "tutor"
PANELS = ("tokens", "vectors", "layernorm", "residual", "attention", "next", "gradient", "similarity")
EXPERIMENTS = ("compare", "positions", "order", "drift", "layernorm-calc", "training", "depth")
MODEL_VARIANTS = (  # model.train.RECIPES' names, in its order (a test keeps them equal)
    "tiny",
    "learned",
    "rope",
    "nope",
    "postnorm",
    "noresidual",
    "nonorm",
    "base10",
    "base1e6",
    "deep",
    "deep-postnorm",
    "deep-postnorm-nowarmup",
    "deep-nowarmup",
    "deep-nonorm-nowarmup",
    "deep-nonorm",
    "deep-noresidual",
    "deep-lr1e-3",
    "deep-postnorm-lr1e-3",
)
SHOW_KEYS = ("prompt", "step", "panel", "model", "head", "token", "direction")
ACTIONS: dict[str, tuple[str, ...]] = {  # action → the query keys it accepts
    "show": SHOW_KEYS,
    "lesson": ("id", "heading"),
    "experiment": ("name",),
    "exercise": ("name",),
    "quiz": ("id",),
}
FENCES = ("tutor-code", "tutor-quiz", "tutor-check", "tutor-claims")
FRONT_MATTER_KEYS = {"id": str, "order": int, "title": str, "prompt": str, "steps": list, "panels": list, "model": str}
REQUIRED_KEYS = ("id", "order", "title", "prompt")

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
_LINK = re.compile(r"\]\(\s*(?:<(?P<angled>tutor:[^>\n]*)>|(?P<href>tutor:[^)\s>]*))\s*\)")


class LessonError(ValueError):
    """A problem in a lesson file, located as `path:line: message`."""


@dataclass(frozen=True)
class Link:
    """A `tutor:` link: `tutor:show?prompt=猫追狗&step=blocks.0.ln1` is action "show" with two params."""

    action: str
    params: dict[str, str]
    href: str


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


def parse_link(href: str) -> Link:
    """`tutor:ACTION?key=value&...` → Link. Values are percent-decoded; `+` stays a plus."""
    parts = urlsplit(href)
    if parts.scheme != SCHEME:
        raise LessonError(f"not a tutor link: {href}")
    action = parts.path
    if action not in ACTIONS:
        raise LessonError(f"unknown directive tutor:{action} (known: {', '.join(ACTIONS)})")
    params: dict[str, str] = {}
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        key = unquote(key)
        if key not in ACTIONS[action]:
            raise LessonError(f"tutor:{action} takes no '{key}' (it takes {', '.join(ACTIONS[action])})")
        params[key] = unquote(value)
    if not params:
        raise LessonError(f"tutor:{action} needs at least one of {', '.join(ACTIONS[action])}")
    return Link(action, params, href)


def links_in(text: str) -> list[tuple[int, str]]:
    """Every `tutor:` link target in `text`, with its line number (1-based, within `text`)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group("angled") or m.group("href")) for m in _LINK.finditer(text)]


_LABELLED_LINK = re.compile(r"\[(?P<label>[^\]\n]*)\]" + _LINK.pattern[2:])


def labelled_links(text: str) -> list[tuple[str, str]]:
    """Every `tutor:` link in `text` as (its text, its target), in reading order: the keyboard's way in."""
    return [
        (re.sub(r"[*_`]", "", m.group("label")).strip(), m.group("angled") or m.group("href"))
        for m in _LABELLED_LINK.finditer(text)
    ]


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


def resolve_code(reference: str) -> tuple[str, str]:
    """`model.norm.layer_norm` → (its file relative to the package root, its source). Only `model.*`."""
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
            source = inspect.getsource(target)  # type: ignore[arg-type]
        except (AttributeError, TypeError, OSError):
            break
        module = inspect.getmodule(target)
        where = f"{module.__name__.replace('.', '/')}.py" if module else reference
        return where, inspect.cleandoc("\n" + source) if source.startswith(" ") else source.rstrip("\n")
    raise LessonError(f"code reference {reference} does not resolve to a function or class in model/")


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
                resolve_code(block.text)
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


def display_markdown(lesson: Lesson) -> str:
    """The lesson's Markdown as the app shows it: code quoted live from model/, checker blocks hidden."""
    out: list[str] = []
    lines = lesson.body.split("\n")
    blocks = {block.line: block for block in blocks_in(lesson.body)}
    i = 0
    while i < len(lines):
        block = blocks.get(i + 1)
        if block is None:
            out.append(lines[i])
            i += 1
            continue
        i = block.end  # past the closing fence
        if block.kind == "tutor-code":
            try:
                where, source = resolve_code(block.text)
                out += [f"*{where}* · `{block.text.strip()}`", "", "```python", source, "```"]
            except LessonError as error:
                out += [f"> ⚠ {error}"]
        elif block.kind == "tutor-quiz":
            out += quiz_markdown(block.text, lesson.lang)
    return unwrap_paragraphs("\n".join(out))


_BLOCK_START = re.compile(r"^\s*([#>|]|[-*+]\s|\d+[.)]\s|```|~~~|\$\$)")


def _is_wide(ch: str) -> bool:
    """CJK characters and punctuation: lines of them join without a space."""
    return any(lo <= ch <= hi for lo, hi in (("\u2e80", "\u9fff"), ("\uf900", "\ufaff"), ("\uff00", "\uffef")))


def unwrap_paragraphs(markdown: str) -> str:
    """Join the lines of each paragraph (and list item) into one.

    The lessons are wrapped at ~100 columns in the source; the app's Markdown keeps every
    newline, which leaves ragged lines, and a wrapped line of Chinese must join with no space.
    """
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        previous = out[-1] if out else ""
        joinable = (
            not fenced
            and stripped
            and previous.strip()
            and not _BLOCK_START.match(line)  # a new block starts here
            and not previous.lstrip().startswith(("#", "|", "```", "~~~", "$$"))
            and not previous.endswith("  ")  # a Markdown hard break
            and not (line.startswith("    ") and previous.startswith("    "))  # an indented code block
        )
        if joinable:
            glue = "" if _is_wide(previous.rstrip()[-1]) and _is_wide(stripped[0]) else " "
            out[-1] = previous.rstrip() + glue + stripped
        else:
            out.append(line)
    return "\n".join(out)


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
