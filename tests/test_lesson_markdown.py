"""How a lesson's Markdown reads once rendered (tutor/lessons/markdown.py): a line break inside a Chinese
paragraph is no space, where Chinese meets Latin it is one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from tutor.lessons.display import display_markdown
from tutor.lessons.markdown import render_markdown, soft_break
from tutor.lessons.parse import parse_lesson
from tutor.paths import content_dir

STRAY_SPACE = re.compile(r"[，。；：、！？）」][ ][^\s]|[\u4e00-\u9fff] [\u4e00-\u9fff]")


def rendered_text(markdown: str) -> str:
    console = Console(width=2000, color_system=None)
    lesson = render_markdown(console, markdown, 2000, {}, "monokai", highlight=False)
    return "\n".join(
        "".join(segment.text for segment in line).rstrip()
        for y, line in enumerate(lesson.lines)
        if y not in lesson.plain_code
    )


@pytest.mark.parametrize(
    ("before", "after", "joined"),
    [
        ("的", "多", ""),
        ("；", "s", ""),
        ("t", "。", ""),
        ("在", "s", " "),
        ("x", "在", " "),
        ("a", "b", " "),
        ("", "b", " "),
    ],
)
def test_a_soft_break_is_nothing_in_chinese_and_a_space_between_words(before: str, after: str, joined: str) -> None:
    assert soft_break(before, after) == joined


def test_the_issue_s_examples_render_without_stray_spaces() -> None:
    text = rendered_text("打乱的顺序；\nsoftmax 只看值的\n多重集合，在\n`sinusoidal_positions` 里 with\nwords.")
    assert "顺序；softmax" in text and "的多重集合" in text and "在 sinusoidal_positions" in text
    assert "with words." in text


@pytest.mark.parametrize("path", sorted((content_dir() / "zh").glob("*.md")), ids=lambda path: path.name)
def test_no_chinese_lesson_shows_a_space_a_line_break_made(path: Path) -> None:
    """The lesson as the app shows it: 221 such spaces in the ten lessons before (`顺序； softmax`, `的 多重集合`,
    `残差范数](…)\n和`)."""
    source = display_markdown(parse_lesson(path, "zh"))
    made = [found for found in STRAY_SPACE.findall(rendered_text(source)) if found not in source]  # not written so
    assert made == []
