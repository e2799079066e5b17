"""A lesson's Markdown rendered once into lines of segments, for a widget that only shows them.

Textual's Markdown widget makes a widget of every paragraph and list item (~170 in a lesson), and
the screen lays all of them out again on every key that changes a panel's size. Rendered here
with Rich at one width, the lesson is a list of lines: scrolling picks lines, a step key never
touches them, and a resize renders them again once.

Links keep their target as an `@click` action on their cells (`follow(n)`, n indexing `links`),
and each heading marks its line so that a link can scroll to it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import (
    BlockQuote,
    CodeBlock,
    Heading,
    HorizontalRule,
    ImageItem,
    ListElement,
    Markdown,
    MarkdownElement,
    Paragraph,
    TableElement,
)
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.styled import Styled
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from tutor.lessons.folds import FOLD_SCHEME
from tutor.lessons.parse import lines_outside_fences

_HEADING_MARK = "lesson_heading"
_CODE_MARK = "lesson_code"
TABLE_ROOM = 240  # cells the lesson is rendered in, for its tables
WHOLE_TABLE = 104  # a table this wide or narrower keeps its rows whole (numbers, formulas, code): the view scrolls
_READING_WIDTH: ContextVar[int] = ContextVar("reading_width", default=10_000)  # the view's width (render_markdown)


def _in_reading_width(element: type[MarkdownElement]) -> type[MarkdownElement]:
    """`element` laid out in the view's width. The lesson is rendered TABLE_ROOM wide so that a table keeps its
    natural width (its numbers and formulas whole, the view scrolling sideways to them: `sin(po…` and `2.7…` were
    cut to fit); everything else wraps to the view."""

    class InReadingWidth(element):  # type: ignore[valid-type, misc]
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            narrow = options.update_width(min(options.max_width, _READING_WIDTH.get()))
            for part in super().__rich_console__(console, narrow):  # an element yields Text that the caller
                if isinstance(part, Segment):  # would lay out in the caller's width: laid out here
                    yield part
                else:
                    yield from console.render(part, narrow)

    InReadingWidth.__name__ = InReadingWidth.__qualname__ = f"InReadingWidth{element.__name__}"
    return InReadingWidth


class _LeftHeading(Heading):
    """Headings at the left, as the lessons are read, each carrying its text for `goto_heading`."""

    def __rich_console__(self, console: Console, options: object) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        text.stylize(Style.from_meta({_HEADING_MARK: text.plain.strip()}))
        yield text


class _PlainCodeBlock(CodeBlock):
    """A code block in the code block's own colours but not highlighted, each line marked: the same lines as
    the highlighted block (the same text wraps the same way), without building the lexer."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        syntax = Syntax(code, "text", theme=self.theme, word_wrap=True, padding=1)
        yield Styled(syntax, Style.from_meta({_CODE_MARK: True}))


CHINESE_NARROW_PUNCTUATION = "—…“”‘’"  # East Asian width "ambiguous": wide in Chinese text, narrow beside Latin


def _wide(ch: str) -> bool:
    """A character that takes two cells: CJK, and the full-width punctuation Chinese text uses."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def soft_break(before: str, after: str) -> str:
    """What a line break inside a paragraph becomes between the characters `before` and `after`. Markdown makes
    it a space, which is right between words and wrong in Chinese: `的\n多重集合` read "的 多重集合" and
    `顺序；\nsoftmax` "顺序； softmax". Nothing next to full-width punctuation or between two Chinese characters; a
    space where Chinese meets Latin (as the lessons write "用 softmax"), and between Latin words."""
    if not before or not after:
        return " "
    if (_wide(before) and unicodedata.category(before).startswith("P")) or (
        _wide(after) and unicodedata.category(after).startswith("P")
    ):
        return ""
    narrow = CHINESE_NARROW_PUNCTUATION
    if (before in narrow and _wide(after)) or (after in narrow and _wide(before)):
        return ""  # ——, ……, “…” are Chinese punctuation too, though Unicode does not call them wide
    return "" if _wide(before) and _wide(after) else " "


def _neighbour_text(children: list[Token], start: int, step: int) -> str:
    """The nearest character of text beside children[start], walking by `step` (−1: before, +1: after)."""
    i = start + step
    while 0 <= i < len(children):
        content = children[i].content if children[i].type in ("text", "code_inline") else ""
        if content:
            return content[-1] if step < 0 else content[0]
        if children[i].type in ("softbreak", "hardbreak"):
            return ""
        i += step
    return ""


def _join_soft_breaks(tokens: list[Token]) -> None:
    """Each soft break of every paragraph made the text `soft_break` says (Rich renders every one a space)."""
    for token in tokens:
        children = token.children or []
        for i, child in enumerate(children):
            if child.type == "softbreak":
                child.type = "text"
                child.content = soft_break(_neighbour_text(children, i, -1), _neighbour_text(children, i, 1))


def _has_prose(table: TableElement) -> bool:
    """Whether a body cell reads as a sentence: five words, or eight Chinese characters, outside code spans."""
    for row in table.body.rows if table.body is not None else []:
        for cell in row.cells:
            text = cell.content
            chars = list(text.plain)
            for span in text.spans:
                if "code" in str(span.style):  # `mu = x.sum(…)`: code, however many words
                    chars[span.start : span.end] = " " * (span.end - span.start)
            words = "".join(chars)
            if len(words.split()) >= 5 or sum(_wide(ch) for ch in words) >= 8:
                return True
    return False


class _LessonTable(TableElement):
    """A table of numbers, formulas or code (at most WHOLE_TABLE cells wide) at its own width, wider than the view
    if need be (the view scrolls sideways); a table of prose, or a wider one, wrapped to the view — its words broken
    where a column is narrower than a word, never cut short with "…" (Rich's default cut `sin(po…` and `2.7…`)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for table in super().__rich_console__(console, options):
            if not isinstance(table, Table):
                yield table
                continue
            for column in table.columns:
                column.overflow = "fold"
            if not _has_prose(self) and Measurement.get(console, options, table).maximum <= WHOLE_TABLE:
                yield table  # its own width: the lesson is rendered TABLE_ROOM wide
            else:
                yield from console.render(table, options.update_width(min(options.max_width, _READING_WIDTH.get())))


class _LessonMarkdown(Markdown):
    elements = {
        **Markdown.elements,
        "paragraph_open": _in_reading_width(Paragraph),
        "heading_open": _in_reading_width(_LeftHeading),
        "fence": _in_reading_width(CodeBlock),
        "code_block": _in_reading_width(CodeBlock),
        "blockquote_open": _in_reading_width(BlockQuote),
        "hr": _in_reading_width(HorizontalRule),
        "bullet_list_open": _in_reading_width(ListElement),
        "ordered_list_open": _in_reading_width(ListElement),
        "image": _in_reading_width(ImageItem),
        "table_open": _LessonTable,
    }

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        _join_soft_breaks(self.parsed)


def short_markdown(text: str) -> Markdown:
    """A few paragraphs (an exercise's hint or answer) as Rich renders them, with the lesson's line breaks: a
    line break between two Chinese characters is nothing, as in a lesson."""
    return _LessonMarkdown(text)


class _PlainCodeMarkdown(_LessonMarkdown):
    elements = {
        **_LessonMarkdown.elements,
        "fence": _in_reading_width(_PlainCodeBlock),
        "code_block": _in_reading_width(_PlainCodeBlock),
    }


@dataclass
class RenderedLesson:
    """Lines of one width; `headings` as (text, line), `links` the targets `follow(n)` names, `plain_code` the
    lines of code blocks rendered without highlighting (`render_markdown(highlight=False)`)."""

    lines: list[list[Segment]]
    width: int = 0  # the widest line's cells: a table may be wider than the view (it scrolls sideways)
    headings: list[tuple[str, int]] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    plain_code: set[int] = field(default_factory=set)
    folds: dict[int, list[int]] = field(default_factory=dict)  # fold n → the lines of its own line(s) (▸/▾ and ▴)


_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:", re.MULTILINE)


def opening(markdown: str, source_lines: int) -> tuple[str, str] | None:
    """`markdown` cut in two before its first heading at or after line `source_lines` (a `#` line after a blank
    one, outside fenced code): (the opening, the rest). A heading starts a new block whatever came before it, so
    the opening renders as the whole's first lines. None where there is no such heading, or where a link
    reference definition (`[name]: url`) later in the text could change how the opening reads."""
    if _REFERENCE_DEFINITION.search(markdown):
        return None
    lines = markdown.split("\n")
    for number, line in lines_outside_fences(markdown, first=0):
        if number >= max(1, source_lines) and line.startswith("#") and not lines[number - 1].strip():
            return "\n".join(lines[:number]), "\n".join(lines[number:])
    return None


def tables_in(markdown: str) -> list[str]:
    """The tables of `markdown` (runs of lines that start with `|`, outside fenced code)."""
    tables: list[list[str]] = []
    last = -2
    for number, line in lines_outside_fences(markdown, first=0):
        if line.lstrip().startswith("|"):
            if number != last + 1:
                tables.append([])
            tables[-1].append(line)
            last = number
    return ["\n".join(table) for table in tables]


def _reads_as_prose(table: str) -> bool:
    """`_has_prose` read from a table's source: a body cell of five words, or eight Chinese characters, outside
    code spans. Such a table is wrapped to the view, never wider."""
    for row in table.split("\n")[2:]:  # past the header and its |---| line
        for cell in row.strip().strip("|").split("|"):
            words = re.sub(r"`[^`]*`", " ", cell)
            if len(words.split()) >= 5 or sum(_wide(ch) for ch in words) >= 8:
                return True
    return False


def tables_width(console: Console, markdown: str, width: int, styles: Mapping[str, Style], code_theme: str) -> int:
    """The cells the widest table of `markdown` takes at `width` (as in a lesson that holds it), 0 for none: only
    tables that do not read as prose are rendered to measure them."""
    tables = [table for table in tables_in(markdown) if not _reads_as_prose(table)]
    if not tables:
        return 0
    return render_markdown(console, "\n\n".join(tables), width, styles, code_theme).width


def render_markdown(
    console: Console,
    markdown: str,
    width: int,
    styles: Mapping[str, Style],
    code_theme: str,
    before: list[Text] | None = None,
    highlight: bool = True,
    at_least: int = 0,
) -> RenderedLesson:
    """`markdown` wrapped to `width` cells, under `before` (lines such as the title), with `styles`
    (Rich's `markdown.*` names) in place of Rich's defaults. Without `highlight` the code blocks are not
    highlighted (Pygments builds a lexer's ~100 patterns first, ~20 ms) and their lines are in `plain_code`.
    Every line is as wide as the widest, and at least `at_least` cells (the width of a whole lesson, of which
    `markdown` is the opening)."""
    width = max(1, width)
    options = console.options.update_width(width)
    kind = _LessonMarkdown if highlight else _PlainCodeMarkdown
    reading = _READING_WIDTH.set(width)
    try:
        with console.use_theme(Theme(dict(styles), inherit=True)):
            lines = console.render_lines(Text("\n").join(before), options) if before else []
            wide = options.update_width(max(width, TABLE_ROOM))
            lines += console.render_lines(kind(markdown, code_theme=code_theme, hyperlinks=True), wide, pad=False)
    finally:
        _READING_WIDTH.reset(reading)
    widest = max(max((Segment.get_line_length(line) for line in lines), default=0), at_least)
    rendered = _mark_links_and_headings([Segment.adjust_line_length(line, max(width, widest)) for line in lines])
    rendered.width = max(width, widest)
    return rendered


def _mark_links_and_headings(lines: list[list[Segment]]) -> RenderedLesson:
    """Rich's hyperlinks become `@click` actions (a terminal link would open outside the app);
    headings are found by the mark `_LeftHeading` left on them."""
    rendered = RenderedLesson([])
    link_index: dict[str, int] = {}
    for y, line in enumerate(lines):
        out: list[Segment] = []
        for segment in line:
            style = segment.style
            if style is not None and style.link:
                href = style.link
                index = link_index.setdefault(href, len(rendered.links))
                if index == len(rendered.links):
                    rendered.links.append(href)
                style = style.update_link(None) + Style.from_meta({"@click": f"follow({index})"})
                if href.startswith(FOLD_SCHEME) and y not in (
                    fold_lines := rendered.folds.setdefault(int(href.removeprefix(FOLD_SCHEME)), [])
                ):
                    fold_lines.append(y)
                segment = Segment(segment.text, style)
            elif style is not None and style._meta:
                heading = style.meta.get(_HEADING_MARK)
                if heading and not any(line_y == y for _, line_y in rendered.headings):
                    rendered.headings.append((heading, y))
                if style.meta.get(_CODE_MARK):
                    rendered.plain_code.add(y)
            out.append(segment)
        rendered.lines.append(out)
    return rendered
