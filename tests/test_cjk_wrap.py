"""Chinese line breaking as the lesson view draws it: no line starts with closing punctuation or ends with
an opening one, where CJK meets Latin text too, and a number grouped by spaces stays on one line."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from tutor.lessons.display import display_markdown
from tutor.lessons.markdown import render_markdown
from tutor.lessons.parse import load_lessons
from tutor.patches import cjk_wrap

CLOSING = "、，。．）］｝〕〉》」』】〗〙〛”’…：；！？"  # never first on a line
OPENING = "（［｛〔〈《「『【〖〘〚“‘"  # never last on a line
GROUPED = re.compile(r"\d{1,3}(?:[ \u2009\u202f\u00a0]\d{3})+(?!\d)")  # 1 000 000, 263 232
CODE_BLOCK = re.compile(r"^```.*?^```", re.S | re.M)  # code keeps its own lines: a `)` may start one
CELL_RULE = re.compile(r"[│┃]")  # a table's cells wrap each on its own


def wrapped(text: str, width: int) -> list[str]:
    cjk_wrap.install()
    console = Console(width=width, file=io.StringIO(), color_system=None)
    return [line.plain.rstrip() for line in Text(text).wrap(console, width)]


def bad_breaks(lines: list[str]) -> list[str]:
    """Each line (each table cell's part of it) that starts with closing or ends with opening punctuation."""
    bad = []
    for line in lines:
        for part in CELL_RULE.split(line):
            part = part.strip().removeprefix("•").strip()
            if part and (part[0] in CLOSING or part[-1] in OPENING):
                bad.append(line)
    return bad


def rendered_zh_lessons(width: int) -> dict[str, tuple[str, list[str]]]:
    """Every zh lesson's prose as the lesson view renders it at `width`: (markdown, plain lines) by id."""
    cjk_wrap.install()
    out = {}
    for lesson in load_lessons("zh"):
        markdown = CODE_BLOCK.sub("", display_markdown(lesson))
        console = Console(width=width, file=io.StringIO(), color_system=None)
        rendered = render_markdown(console, markdown, width, {}, "ansi_dark")
        out[lesson.id] = (markdown, ["".join(s.text for s in line).rstrip() for line in rendered.lines])
    return out


@pytest.mark.parametrize("width", [40, 43, 47, 49, 60, 80, 100])  # 43, 49: the lesson at 120×40, 200×60
def test_no_zh_lesson_line_starts_with_closing_or_ends_with_opening_punctuation(width: int) -> None:
    lessons = rendered_zh_lessons(width)
    assert len(lessons) >= 9
    problems = [f"{lesson_id}: {line!r}" for lesson_id, (_, lines) in lessons.items() for line in bad_breaks(lines)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [40, 43, 47, 49, 60, 80, 100])  # 43, 49: the lesson at 120×40, 200×60
def test_no_zh_lesson_splits_a_number_written_in_digit_groups(width: int) -> None:
    checked = 0
    for lesson_id, (markdown, lines) in rendered_zh_lessons(width).items():
        text = "\n".join(lines)
        for number in set(GROUPED.findall(markdown)):
            checked += 1
            assert text.count(number) >= markdown.count(number), f"{lesson_id}: {number!r} split at {width}"
    assert checked >= 4  # 1 000 000, 263 232, 48 403, 47 000: the lessons do write such numbers


@pytest.mark.parametrize(
    ("text", "glued"),
    [
        ("每个块里依次是 LayerNorm、注意力、残差相加", "LayerNorm、"),  # Latin, then closing punctuation
        ("按 F1 可以看到全部按键。命令面板（ctrl+p）列出全部命令", "（ctrl+p）"),
        ("把编号本身（一个整数）直接交给模型", "（一"),  # an opening bracket stays with what it opens
        ("他说：“猫追狗”，然后停下", "“猫"),
        ("展开之后其中一项是 1 · 1 · … · 1：不管子层做了什么", "· …"),
        ("换成 10 或 1 000 000 会出什么问题", "1 000 000"),
        ("换成 10 或 1\u2009000\u2009000 会出什么问题", "1\u2009000\u2009000"),
        ("词表为 987 时，总数是 263 232。", "263 232。"),
        ("一个向量——也就是一串数——流过每一层", "量——"),
    ],
)
def test_what_belongs_together_stays_on_one_line(text: str, glued: str) -> None:
    for width in range(max(8, cell_len(glued) + 1), cell_len(text) + 2):  # narrower, a word would be cut
        lines = wrapped(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost
        assert not bad_breaks(lines), (width, lines)
        assert any(glued in line for line in lines), (width, lines)


def test_a_wrapped_chinese_line_is_not_cut_with_an_ellipsis() -> None:
    """A line of Chinese that fits, ending in a space, keeps its last character (Rich's rstrip_end counted
    characters, not cells, and the line was truncated to "…")."""
    cjk_wrap.install()
    console = Console(width=80, file=io.StringIO())
    text = "下一步 / 上一步（也可用 j / k）"
    for width in range(12, 30):
        lines = Text(text).wrap(console, width, justify="left", overflow="ellipsis")
        assert "…" not in "".join(line.plain for line in lines), width
        assert all(line.cell_len <= width for line in lines)


def test_chinese_still_breaks_between_any_two_characters_and_english_between_words() -> None:
    lines = wrapped("在注意力里，每个词元的 query 和所有 key 做点积，而 q 和 k 都只由词元向量算出来。", 20)
    assert len(lines[0]) >= 8 and all(len(line) <= 20 for line in lines)
    assert wrapped("the quick brown fox jumps over the lazy dog", 10) == [
        "the quick",
        "brown fox",
        "jumps over",
        "the lazy",
        "dog",
    ]
