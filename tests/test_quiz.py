"""Quick checks: graded in the app, explained at once, kept in progress."""

from __future__ import annotations

import pytest
from helpers import LESSON_EN, make_app, screen_text, settle

from tutor.lessons.parse import load_lessons
from tutor.lessons.quiz import Question, grade, lesson_quiz, parse_quiz
from tutor.paths import content_dir
from tutor.screens.quiz import QuizScreen


def test_every_shipped_lesson_has_a_quiz_that_parses_whole() -> None:
    for lang in ("en", "zh"):
        for lesson in load_lessons(lang, content_dir()):
            questions = lesson_quiz(lesson)
            raw = sum(block.count("[[questions]]") for block in _quiz_blocks(lesson.body))
            assert questions and len(questions) == raw, (lang, lesson.id)


def _quiz_blocks(body: str) -> list[str]:
    from tutor.lessons.parse import blocks_in

    return [block.text for block in blocks_in(body) if block.kind == "tutor-quiz"]


def test_malformed_questions_are_skipped_not_raised() -> None:
    text = """
[[questions]]
question = "ok?"
choices = ["no", "yes"]
answer = 1
explanation = "because"

[[questions]]
question = "answer out of range"
choices = ["a", "b"]
answer = 5

[[questions]]
question = "answer is a bool"
choices = ["a", "b"]
answer = true
"""
    assert parse_quiz(text) == [Question("ok?", ("no", "yes"), 1, "because")]
    assert parse_quiz("this is [not toml") == []


def test_grade_counts_only_right_picks() -> None:
    questions = [Question("q", ("a", "b"), 1, ""), Question("q", ("a", "b", "c"), 2, "")]
    assert grade(questions, [1, 0])["score"] == 1
    assert grade(questions, [1, 2])["score"] == 2
    assert grade(questions, [None, None]) | {"at": ""} == {"score": 0, "total": 2, "picks": [None, None], "at": ""}


async def test_quiz_from_the_practice_menu_is_graded_explained_and_saved(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.open_lesson("layernorm")
        await settle(pilot)
        questions = lesson_quiz(app.main.place.lesson)
        await pilot.press("f10")
        await pilot.pause()
        assert "Quick check: LayerNorm" in screen_text(app)
        await pilot.press("enter")  # the quick check is the first item
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        assert questions[0].text in screen_text(app)

        await pilot.press("right")  # not answered yet: no moving on
        await pilot.pause()
        assert app.screen.index == 0

        wrong = (questions[0].answer + 1) % len(questions[0].choices)
        await pilot.press("abcdef"[wrong])
        await pilot.pause()
        text = screen_text(app)
        assert f"the answer is {'ABCDEF'[questions[0].answer]}" in text
        assert questions[0].explanation[:40] in text.replace("\n", " ").replace("  ", " ")
        await pilot.press("abcdef"[questions[0].answer])  # the first answer counts
        assert app.screen.picks[0] == wrong

        for question in questions[1:]:
            await pilot.press("n", "abcdef"[question.answer])
            await pilot.pause()
            assert "✓ Right." in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        total = len(questions)
        assert f"{total - 1} of {total} right" in screen_text(app)

    saved, notice = store.load()
    assert notice is None
    record = saved.quiz["layernorm"]
    assert (record["score"], record["total"], record["best"]) == (total - 1, total, total - 1)
    assert record["picks"][0] == wrong


async def test_retaking_keeps_the_best_score(store) -> None:
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("layernorm")
        await settle(pilot)
        questions = lesson_quiz(app.main.place.lesson)
        app.open_quiz("layernorm")
        await pilot.pause()
        for question in questions:
            await pilot.press("abcdef"[question.answer], "n")
        await pilot.pause()
        assert f"答对 {len(questions)} 题" in screen_text(app)
        await pilot.press("r")
        for question in questions:
            await pilot.press("abcdef"[(question.answer + 1) % len(question.choices)], "n")
        await pilot.pause()
        assert "答对 0 题" in screen_text(app)
        record = app.progress.quiz["layernorm"]
        assert (record["score"], record["best"]) == (0, len(questions))
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main


async def test_a_quiz_link_to_a_lesson_without_one_is_a_notice(store, tmp_path) -> None:
    (tmp_path / "content" / "en").mkdir(parents=True)
    (tmp_path / "content" / "en" / "01-demo.md").write_text(LESSON_EN, encoding="utf-8")
    app = make_app(store, tmp_path / "content")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_quiz("demo")
        await pilot.pause()
        assert app.screen is app.main
        assert any("has no quick check" in str(n.message) for n in app._notifications)


async def test_the_lesson_list_shows_quiz_scores(store) -> None:
    progress, _ = store.load()
    progress.quiz["layernorm"] = {"score": 3, "total": 4, "picks": [1, 2, 1, 0], "at": "2026-11-30T06:00:00"}
    store.save(progress)
    app = make_app(store, content_dir())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        lines = [line for line in screen_text(app).split("\n") if "LayerNorm" in line]
        assert any("3/4" in line for line in lines), lines


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_code_in_a_quiz_is_shown_as_code_not_as_backticks(store, lang: str) -> None:
    """Lesson 10's quiz names the `deep` model in its question, a choice, an explanation and so the score view:
    each showed its backticks."""
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("norm-placement")
        await settle(pilot)
        questions = lesson_quiz(app.main.place.lesson)
        assert any("`" in question.text for question in questions)
        app.open_quiz("norm-placement")
        await pilot.pause()
        for question in questions:
            assert "`" not in screen_text(app)
            await pilot.press("abcdef"[(question.answer + 1) % len(question.choices)])  # a wrong pick: the review
            await pilot.pause()
            assert "`" not in screen_text(app)
            await pilot.press("n")
        await pilot.pause()
        assert "deep" in screen_text(app) and "`" not in screen_text(app)  # the score view quotes the answers
