"""The exercises' hints and answers: a `tutor-answers` block, shown as a line of links, each opening the hint with
the answer a key away; the checker holds the block to one entry per exercise."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import make_app, screen_text, settle
from test_lessons import assert_problem, lesson_text, line_of, write_tree

from tutor.lessons.answers import Answer, exercises_in, lesson_answers, parse_answers
from tutor.lessons.check import check_content
from tutor.lessons.display import display_markdown
from tutor.lessons.parse import load_lessons, parse_lesson
from tutor.paths import content_dir
from tutor.screens.answer import AnswerScreen

EXERCISES = {"en": "## Exercises\n", "zh": "## 练习\n"}
BLOCK = """```tutor-answers
[[answers]]
hint = "Think of HINT-ONE."
answer = "It is ANSWER-ONE."

[[answers]]
hint = "Think of HINT-TWO."
answer = "It is ANSWER-TWO."
claims = { "1044 entries" = "tiny.vocab_size" }
```"""
BLOCK_TWO = BLOCK.replace("ANSWER-TWO.", "ANSWER-TWO, of 1044 entries.")


def squeezed(text: str) -> str:
    """Text without its white space and Markdown marks, so that a wrapped line still matches."""
    return "".join(ch for ch in text if not ch.isspace() and ch not in "`*│")


def with_exercises(lang: str, block: str = BLOCK_TWO, items: str = "1. First?\n2. Second?\n") -> str:
    heading = EXERCISES[lang]
    return lesson_text(lang).replace(heading, f"{heading}\n{items}\n{block}\n", 1)


def test_the_block_parses_and_shows_as_one_line_of_links(tmp_path: Path) -> None:
    root = write_tree(tmp_path, en=with_exercises("en"), zh=with_exercises("zh"))
    for lang, words in (("en", "Hints and answers: "), ("zh", "提示与答案：")):
        lesson = parse_lesson(root / lang / "01-demo.md", lang)
        assert exercises_in(lesson)[0] == 2
        answers = lesson_answers(lesson)
        assert [(a.n, a.hint) for a in answers] == [(1, "Think of HINT-ONE."), (2, "Think of HINT-TWO.")]
        assert answers[1].claims == {"1044 entries": "tiny.vocab_size"}
        shown = display_markdown(lesson)
        line = f"{words}[1](tutor:answer?id=demo&n=1) · [2](tutor:answer?id=demo&n=2)"
        assert line in shown.split("\n")
        assert "HINT" not in shown and "ANSWER" not in shown and "tutor-answers" not in shown


def test_malformed_entries_are_skipped_not_raised() -> None:
    text = '[[answers]]\nhint = "h"\nanswer = "a"\n\n[[answers]]\nhint = "no answer"\n\n'
    text += '[[answers]]\nhint = "h3"\nanswer = "a3"'
    assert parse_answers(text) == [Answer(1, "h", "a"), Answer(3, "h3", "a3")]
    assert parse_answers("this is [not toml") == []


def test_a_valid_block_passes_the_checker(tmp_path: Path) -> None:
    assert check_content(write_tree(tmp_path, en=with_exercises("en"), zh=with_exercises("zh"))) == []


@pytest.mark.parametrize(
    ("change", "at", "words"),
    [
        (
            lambda b: b.replace('[[answers]]\nhint = "Think of HINT-TWO."', "[[x]]"),
            ("```tutor-answers", 0),
            ("1 [[answers]] for 2",),
        ),
        (lambda b: b.replace('hint = "Think of HINT-TWO."\n', ""), ("ANSWER-TWO", -1), ("answer 2", "'hint'")),
        (lambda b: b.replace('"It is ANSWER-ONE."', '""'), ("HINT-ONE", -1), ("answer 1", "'answer'")),
        (lambda b: b.replace('"Think of HINT-ONE."', '"Think of'), ('"Think of\n', 0), ("not valid TOML",)),
        (
            lambda b: b.replace("of 1044 entries", "of 1045 entries"),
            ("HINT-TWO", -1),
            ("'1044 entries'", "does not appear"),
        ),
        (lambda b: b.replace('"tiny.vocab_size"', '"tiny.d_model"'), ("HINT-TWO", -1), ("1044 entries", "is 64")),
    ],
)
def test_the_checker_names_each_fault_by_file_and_line(tmp_path: Path, change, at: tuple, words: tuple) -> None:
    """Each at its line: the fence for the count, the entry's [[answers]] line, TOML's own line."""
    root = write_tree(tmp_path, en=with_exercises("en", change(BLOCK_TWO)), zh=with_exercises("zh"))
    path = root / "en" / "01-demo.md"
    needle, offset = at
    lines = path.read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(lines, 1) if needle.rstrip("\n") in text) + offset
    assert_problem(check_content(root), path, line, *words)


def test_exercises_without_a_block_and_a_block_outside_the_section(tmp_path: Path) -> None:
    root = write_tree(tmp_path, en=with_exercises("en", block=""), zh=with_exercises("zh"))
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "## Exercises"), "2 exercises but no tutor-answers")
    text = lesson_text("en").replace("## Exercises\n", "## Exercises\n\n1. First?\n2. Second?\n", 1)
    text = text.replace("## Summary\n", f"## Summary\n\n{BLOCK_TWO}\n", 1)
    root = write_tree(tmp_path / "b", en=text, zh=with_exercises("zh"))
    path = root / "en" / "01-demo.md"
    assert_problem(check_content(root), path, line_of(path, "```tutor-answers"), "belongs in the Exercises section")


def test_every_shipped_exercise_has_a_hint_and_an_answer() -> None:
    for lang in ("en", "zh"):
        for lesson in load_lessons(lang, content_dir()):
            count = exercises_in(lesson)[0]
            answers = lesson_answers(lesson)
            assert count and [a.n for a in answers] == list(range(1, count + 1)), (lang, lesson.id)
            assert all(a.hint.strip() and a.answer.strip() for a in answers), (lang, lesson.id)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_an_answer_link_opens_the_hint_and_the_key_shows_the_answer(store, lang: str) -> None:
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("layernorm")
        await settle(pilot)
        answers = lesson_answers(app.main.place.lesson)
        shown = display_markdown(app.main.place.lesson)
        assert f"](tutor:answer?id=layernorm&n={len(answers)})" in shown
        app.follow_now("tutor:answer?id=layernorm&n=2")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen)
        hint, answer = answers[1].hint, answers[1].answer
        box = screen_text(app, "AnswerScreen > VerticalScroll").splitlines()
        assert ("练习 2" if lang == "zh" else "exercise 2") in box[0]  # the title, in the border
        assert squeezed("提示" if lang == "zh" else "Hint") in squeezed("".join(box[1:3]))
        assert squeezed(hint)[:20] in squeezed(screen_text(app, "#hint"))
        hidden = squeezed(screen_text(app, "#answer-hidden"))
        assert squeezed("按 a 看答案" if lang == "zh" else "Press a to see the answer") in hidden
        start = squeezed(answer)[:20]
        assert start not in squeezed(screen_text(app))  # never shown unasked
        assert not app.screen.query_one("#answer").display
        footer = screen_text(app).splitlines()[-1]
        assert ("a 看答案" if lang == "zh" else "a Show the answer") in footer
        assert ("Esc 返回" if lang == "zh" else "Esc Back") in footer
        await pilot.press("a")
        await settle(pilot)
        assert start in squeezed(screen_text(app, "#answer"))
        assert squeezed("答案" if lang == "zh" else "Answer") in squeezed(screen_text(app, "#answer-heading"))
        assert not app.screen.query_one("#answer-hidden").display
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main


async def test_f9_lists_the_answers_and_follows_one(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("tokens")
        await settle(pilot)
        await pilot.press("f9")
        await settle(pilot)
        text = screen_text(app)
        count = exercises_in(app.main.place.lesson)[0]
        assert all(f"Exercise {n}: hint and answer" in text for n in range(1, count + 1))
        hrefs = [href for _, href in app.screen.links]
        await pilot.press(*["down"] * hrefs.index("tutor:answer?id=tokens&n=3"), "enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.answer.n == 3


async def test_an_answer_link_to_nothing_is_a_notice(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.follow_now("tutor:answer?id=tokens&n=99")
        await settle(pilot)
        assert app.screen is app.main
        assert any("no hint for exercise 99" in str(n.message) for n in app._notifications)
