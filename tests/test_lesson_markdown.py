"""How a lesson's Markdown reads once rendered (tutor/lessons/markdown.py): a line break inside a Chinese
paragraph is no space, where Chinese meets Latin it is one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from tutor.lessons.display import display_markdown
from tutor.lessons.markdown import render_markdown, soft_break
from tutor.lessons.parse import parse_lesson
from tutor.paths import content_dir

STRAY_SPACE = re.compile(
    r"[，。；：、！？）」][ ][^\s]|[\u4e00-\u9fff] [\u4e00-\u9fff]|[—…“”][ ][\u4e00-\u9fff]|[\u4e00-\u9fff][ ][—…“”]"
)


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
        ("—", "向", ""),  # ——, ……, “…” between Chinese: nothing; beside Latin words: a space
        ("”", "和", ""),
        ("的", "“", ""),
        ("—", "a", " "),
        ("t", "…", " "),
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


def lesson_lines(lang: str, lesson_id: str, width: int) -> tuple[list[str], int]:
    from tutor.lessons.parse import load_lessons

    lesson = next(each for each in load_lessons(lang, content_dir()) if each.id == lesson_id)
    rendered = render_markdown(Console(width=300), display_markdown(lesson), width, {}, "ansi_dark", highlight=False)
    return ["".join(segment.text for segment in line).rstrip() for line in rendered.lines], rendered.width


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [40, 47, 56, 80])
def test_no_table_is_cut_short_and_prose_keeps_to_the_view(lang: str, width: int) -> None:
    """At 120×40 the lesson column was 47 cells and Rich cut table cells to fit: `sin(po…`, `2.7…`. A table of
    numbers or formulas now keeps its width (the view scrolls sideways), a prose table wraps; no "…" that the
    lesson does not write itself, and every line but a table's within the view."""
    from tutor.lessons.parse import load_lessons

    for lesson in load_lessons(lang, content_dir()):
        source = display_markdown(lesson)
        lines, widest = lesson_lines(lang, lesson.id, width)
        assert sum(line.count("…") for line in lines) == source.count("…"), (lesson.id, width)
        in_table: set[int] = set()  # a table: the lines between the blank lines around its rule (───)
        for rule, line in enumerate(lines):
            if line.strip() and set(line.strip()) == {"─"}:
                start, end = rule, rule
                while start > 0 and lines[start - 1].strip():
                    start -= 1
                while end + 1 < len(lines) and lines[end + 1].strip():
                    end += 1
                in_table.update(range(start, end + 1))
        wide = [(y, line) for y, line in enumerate(lines) if cell_len(line) > width and y not in in_table]
        assert not wide, (lesson.id, width, wide[:3])
        longest = max(width, *(cell_len(line) for line in lines))
        assert longest <= widest <= longest + 2  # a table's edge padding at most


def test_a_table_of_numbers_keeps_its_rows_whole_and_the_lesson_scrolls_sideways_to_it() -> None:
    lines, widest = lesson_lines("en", "sinusoidal", 47)
    assert any("sin 1 ≈ 0.841    cos 1 ≈ 0.540    sin 0.01 ≈ 0.010" in line for line in lines)
    assert widest > 47
    lines, _ = lesson_lines("en", "layernorm", 47)
    assert any(
        line.split() == ["no", "LayerNorm", "2.935", "2.670", "2.471", "3.199", "diverged", "diverged"]
        for line in lines
    )
    lines, widest = lesson_lines("en", "using-tutor", 47)  # a table of prose wraps to the view instead
    assert widest == 47 and any("lesson 11; open it" in line for line in lines)


async def test_the_lesson_view_scrolls_sideways_to_a_wide_table(store) -> None:
    from helpers import make_app, settle

    from tutor.widgets.lesson_view import LessonView

    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("sinusoidal")
        await settle(pilot)
        view = app.main.query_one(LessonView)
        assert view.max_scroll_x > 0  # the d = 4 table is wider than the column
        view.focus()
        await pilot.press("right", "right")
        assert view.scroll_x > 0


def test_a_links_label_keeps_an_underscore_inside_a_word() -> None:
    """F9 listed lesson 3's exercise as "causalattention": every _ was taken for emphasis."""
    from tutor.lessons.links import labelled_links

    text = (
        "[`causal_attention` exercise](tutor:exercise?name=causal_attention) · [**so** _this_](tutor:show?step=embed)"
    )
    assert [label for label, _ in labelled_links(text)] == ["causal_attention exercise", "so this"]
