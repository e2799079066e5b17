"""A lesson's Markdown as the app shows it: code quoted live from model/, checker blocks hidden, lines unwrapped."""

from __future__ import annotations

import re

from tutor.lessons.links import LessonError
from tutor.lessons.parse import Lesson, blocks_in, resolve_code
from tutor.lessons.quiz import quiz_markdown


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
