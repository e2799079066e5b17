"""A lesson's Markdown as the app shows it: code quoted live from model/, checker blocks hidden, the exercises'
answers a line of links, each fold one line until the learner opens it (a line break inside a paragraph is
rendered by tutor/lessons/markdown.py, as a space or, in Chinese, as nothing)."""

from __future__ import annotations

from tutor.i18n import t
from tutor.lessons.answers import answers_markdown
from tutor.lessons.folds import FOLD_SCHEME, Fold, folds_in
from tutor.lessons.links import LessonError
from tutor.lessons.parse import Lesson, blocks_in, resolve_code
from tutor.lessons.quiz import quiz_markdown
from tutor.lessons.reading import text_minutes, text_size


def fold_line(fold: Fold, lang: str, opened: bool) -> str:
    """A fold's own line, a link that opens or closes it: "▸ summary · 320 words · 2 min"."""
    words, characters = text_size(fold.text)
    key = "fold_open" if opened else "fold_closed"
    label = t(
        key, lang, summary=fold.summary, n_words=words, n_characters=words + characters, m=text_minutes(fold.text)
    )
    return f"[**{_escaped(label)}**]({FOLD_SCHEME}{fold.n})"


def _escaped(text: str) -> str:
    """`text` as a link's text: its brackets and stars shown, not read as Markdown."""
    return "".join(f"\\{ch}" if ch in "[]*_`\\" else ch for ch in text)


def display_markdown(lesson: Lesson, open_folds: frozenset[int] = frozenset()) -> str:
    """The lesson's Markdown as the app shows it: code quoted live from model/, checker blocks hidden, the folds
    in `open_folds` open and every other fold one line."""
    out: list[str] = []
    lines = lesson.body.split("\n")
    blocks = {block.line: block for block in blocks_in(lesson.body)}
    folds, _ = folds_in(lesson.body)
    starts = {fold.start: fold for fold in folds}
    ends = {fold.end: fold for fold in folds}
    i = 0
    while i < len(lines):
        block = blocks.get(i + 1)
        if (fold := starts.get(i + 1)) is not None:
            opened = fold.n in open_folds
            out += ["", fold_line(fold, lesson.lang, opened), ""]
            i = i + 1 if opened else fold.end  # closed: past its </details>
            continue
        if (fold := ends.get(i + 1)) is not None:
            end = t("fold_end", lesson.lang, summary=fold.summary)
            out += ["", f"[{_escaped(end)}]({FOLD_SCHEME}{fold.n})", ""]
            i += 1
            continue
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
