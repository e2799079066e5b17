"""A lesson's Markdown as the app shows it: code quoted live from model/, checker blocks hidden, the exercises'
answers a line of links (a line break inside a paragraph is rendered by tutor/lessons/markdown.py, as a space or,
in Chinese, as nothing)."""

from __future__ import annotations

from tutor.lessons.answers import answers_markdown
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
        elif block.kind == "tutor-answers":
            out += answers_markdown(block.text, lesson)
    return "\n".join(out)
