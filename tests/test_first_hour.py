"""A new learner's first hour (issue 14): each lesson on its own model, the lesson first in a small window and
scrolled from a key in the footer, "done" only for a lesson read or passed, a prompt that a stray key does not
erase, and a long prompt's selected token kept in view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import make_app, screen_text, settle
from textual.widgets import Input

from tutor.lessons.links import parse_link
from tutor.lessons.parse import load_lessons
from tutor.panels.token_strip import TokenStrip
from tutor.paths import content_dir
from tutor.progress import Progress
from tutor.widgets.lesson_view import LessonView

READING = "\n\n".join(f"Paragraph {n}: something to read before the end of the lesson." for n in range(40))
PLAIN = f"""+++
id = "plain"
order = 1
title = "A lesson on the default model"
prompt = "猫追狗"
+++
## What you will understand

[Try post-norm](tutor:show?model=postnorm)

{READING}

The last line of the plain lesson.
"""
ROPED = f"""+++
id = "roped"
order = 2
title = "A lesson on RoPE"
prompt = "狗追猫"
model = "rope"
+++
## What you will understand

{READING}

```tutor-quiz
[[questions]]
question = "Which model is this lesson on?"
choices = ["tiny", "rope"]
answer = 1
explanation = "Its front matter says model = \\"rope\\"."
```

The last line of the RoPE lesson.
"""


@pytest.fixture
def two_lessons(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    for lang in ("en", "zh"):
        (root / lang).mkdir(parents=True)
        (root / lang / "01-plain.md").write_text(PLAIN, encoding="utf-8")
        (root / lang / "02-roped.md").write_text(ROPED, encoding="utf-8")
    return root


def notices(app) -> list[str]:
    return [notification.message for notification in app._notifications]


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def footer_has(pilot, text: str, present: bool = True) -> bool:
    """Whether the footer shows `text` (or, `present` False, no longer does), waiting up to two seconds: the
    footer is recomposed a moment after the keys it shows change."""
    for _ in range(100):
        if (text in footer(pilot.app)) == present:
            return True
        await pilot.pause(0.02)
    return False


async def read_to_the_end(pilot) -> None:
    lesson = pilot.app.main.query_one(LessonView)
    while lesson.scroll_y < lesson.max_scroll_y:
        await pilot.press("alt+down")
        await pilot.pause()


# -- item 2: a lesson opens on its own model ------------------------------------------------------


@pytest.mark.parametrize(
    "lang, opens_on, back_to",
    [
        ("en", "This lesson runs on model rope.", "back to the default, tiny"),
        ("zh", "本课使用模型 rope。", "换回默认模型 tiny"),
    ],
)
async def test_a_lesson_opens_on_its_own_model_and_says_so(store, two_lessons, lang, opens_on, back_to) -> None:
    app = make_app(store, two_lessons, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        assert main.place.lesson.id == "plain" and main.place.gpt.name == "tiny"
        await app.follow(parse_link("tutor:show?model=postnorm"))  # a link switches the model
        await settle(pilot)
        assert main.place.gpt.name == "postnorm"
        await pilot.press("f8")
        await settle(pilot)
        assert main.place.lesson.id == "roped" and main.place.gpt.name == "rope"
        assert main.place.trace is not None and main.place.trace.pieces == list("狗追猫")
        assert any(opens_on in message for message in notices(app))
        await pilot.press("f7")  # back: the default model, not the one the previous lesson (or a link) chose
        await settle(pilot)
        assert main.place.lesson.id == "plain" and main.place.gpt.name == "tiny"
        assert any(back_to in message for message in notices(app))
        assert main.place.trace is not None and main.place.trace.pieces == list("猫追狗")
        app.clear_notifications()
        app.open_lesson_now("plain")  # the same model: no notice
        await settle(pilot)
        assert main.place.gpt.name == "tiny" and not [m for m in notices(app) if "model" in m or "模型" in m]


async def test_resuming_keeps_the_learners_model_but_another_lesson_opens_on_its_own(store, two_lessons) -> None:
    store.save(Progress(last={"lesson": "plain", "model": "postnorm", "prompt": "猫猫"}))
    app = make_app(store, two_lessons)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        assert main.place.lesson.id == "plain" and main.place.gpt.name == "postnorm"  # where the learner left off
        assert main.query_one("#prompt").value == "猫猫"
        await pilot.press("f8", "f7")
        await settle(pilot)
        assert main.place.lesson.id == "plain" and main.place.gpt.name == "tiny"

    store.save(Progress(last={"lesson": "gone", "model": "postnorm"}))  # a lesson no longer there: the first one
    again = make_app(store, two_lessons)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.main.place.lesson.id == "plain" and again.main.place.gpt.name == "tiny"


# -- item 5: a small window starts on the lesson, which scrolls from a key in the footer -----------


async def test_a_new_learner_in_a_small_window_starts_on_lesson_one(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.main
        lesson = main.query_one(LessonView)
        assert lesson.display and not main.query_one("#work").display and app.focused is lesson
        assert "How to use the tutor" in screen_text(app)
        assert await footer_has(pilot, "PgDn Scroll"), footer(app)
        await pilot.press("pagedown")
        assert lesson.scroll_y > 0 and main.place.step_index == 0
        await pilot.press("f3")  # the panels; a returning learner starts where they left
        await settle(pilot)
        assert main.query_one("#work").display and app.focused is main.query_one("#prompt")
    again = make_app(store, content_dir())
    async with again.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert again.main.query_one("#work").display and not again.main.query_one(LessonView).display
        await pilot.press("f3")  # back to the lesson, and so the next time
        await settle(pilot)
    third = make_app(store, content_dir())
    async with third.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert third.main.query_one(LessonView).display and not third.main.query_one("#work").display


async def test_a_small_window_that_started_on_the_lesson_shows_both_when_widened(store) -> None:
    app = make_app(store, content_dir())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.resize_terminal(140, 40)
        await settle(pilot)
        assert app.main.query_one(LessonView).display and app.main.query_one("#work").display


@pytest.mark.parametrize("lang, label", [("en", "alt+↓↑ Scroll"), ("zh", "alt+↓↑ 滚动")])
async def test_the_lesson_beside_the_panels_scrolls_from_a_key_in_the_footer(store, lang, label) -> None:
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        lesson = main.query_one(LessonView)
        assert app.focused is main.query_one("#prompt")
        assert await footer_has(pilot, label), footer(app)
        await pilot.press("alt+down", "alt+down")
        assert lesson.scroll_y > lesson.scrollable_content_region.height
        await pilot.press("alt+up")
        assert 0 < lesson.scroll_y <= lesson.scrollable_content_region.height + 1
        assert main.place.step_index == 0 and app.focused is main.query_one("#prompt")  # the panels did not move
        await pilot.press("f3")  # the lesson hidden: the same key scrolls the panel, and leaves the lesson be
        await settle(pilot)
        assert await footer_has(pilot, label), footer(app)
        where = lesson.scroll_y
        await pilot.press("alt+down")
        assert lesson.scroll_y == where and main.place.step_index == 0


def test_lesson_one_says_how_to_scroll_it_in_both_languages() -> None:
    for lang in ("en", "zh"):
        first = load_lessons(lang)[0]
        top = first.body.split("\n## ", 1)[0]  # before the first section: what a learner reads first
        for key in ("PgDn", "alt+↓", "F3"):
            assert key in top, (lang, key)


# -- item 6: "done" means done ----------------------------------------------------------------------


async def test_f8_marks_a_lesson_done_only_when_read_to_its_end(store, two_lessons) -> None:
    app = make_app(store, two_lessons)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        await pilot.press("alt+down")  # a page, not the end
        await pilot.press("f8")
        await settle(pilot)
        assert main.place.lesson.id == "roped" and app.progress.done == []
        assert any("Not marked done" in message for message in notices(app))
        await pilot.press("f7")
        await settle(pilot)
        await read_to_the_end(pilot)
        await pilot.press("alt+up")  # scrolled back up a little: it was read all the same
        await pilot.press("f8")
        await settle(pilot)
        assert app.progress.done == ["plain"]
        await pilot.press("f7")
        await settle(pilot)
        assert main.query_one(LessonView).plain_lines[0] == "Lesson 1/2 · 3 min read  ✓"
    saved, _ = store.load()
    assert saved.done == ["plain"]


async def test_the_last_lesson_shows_its_tick_at_once_and_a_passed_quick_check_counts(store, two_lessons) -> None:
    store.save(Progress(last={"lesson": "roped"}))
    app = make_app(store, two_lessons)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        main = app.main
        lesson = main.query_one(LessonView)
        assert main.place.lesson.id == "roped"
        await pilot.press("f8")
        await settle(pilot)
        assert app.progress.done == [] and lesson.plain_lines[0] == "Lesson 2/2 · 3 min read"
        app.open_quiz("roped")
        await settle(pilot)
        await pilot.press("b", "n", "escape")  # the right answer, the score, back
        await settle(pilot)
        assert app.screen is main
        await pilot.press("alt+down")
        top = lesson.scroll_y
        await pilot.press("f8")
        await settle(pilot)
        assert app.progress.done == ["roped"]
        # at once, where the learner is
        assert lesson.plain_lines[0] == "Lesson 2/2 · 3 min read  ✓" and lesson.scroll_y == top


def test_a_quick_check_is_passed_with_two_thirds_right() -> None:
    from tutor.lessons.quiz import passed

    assert passed({"score": 2, "total": 3}) and passed({"score": 1, "total": 3, "best": 3})
    assert not passed({"score": 1, "total": 3}) and not passed({"score": 0, "total": 0}) and not passed(None)
    assert not passed({"score": True, "total": 1}) and not passed({"score": "3", "total": 3})


# -- item 7: the focus coming back keeps the prompt as it was ---------------------------------------


async def test_the_focus_coming_back_to_the_prompt_selects_nothing(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        prompt = app.main.query_one("#prompt")
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        for keys in (("f3", "f3"), ("f10", "escape"), ("f2", "escape")):  # lesson and back; a screen, closed
            await pilot.press(*keys)
            await settle(pilot)
            assert app.focused is prompt, keys
            assert prompt.selection.is_empty, keys
        await pilot.press("的")
        await settle(pilot)
        assert prompt.value == "猫追狗的"


# -- item 8: a long prompt keeps its selected token in view -----------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_long_paste_keeps_the_selected_token_in_the_strip_and_the_attention_rows(store, size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        main = app.main
        main.set_prompt("猫追狗的" * 1250)  # 5000 characters: the last 64 tokens are kept
        await settle(pilot)
        main.query_one("#panels").active = "attention"
        await settle(pilot)
        assert main.place.token == 63
        strip = screen_text(app, "#tokens")
        assert "4936 dropped" in " ".join(strip.split()) and "▸63 的" in strip, strip
        rows = screen_text(app, "#attention").splitlines()
        assert any(line.startswith("63 的") for line in rows), rows
        await pilot.press(*["alt+left"] * 40)
        await settle(pilot)
        assert main.place.token == 23
        assert "▸23 的" in screen_text(app, "#tokens")
        rows = screen_text(app, "#attention").splitlines()
        assert any(line.startswith("23 的") for line in rows), rows


@pytest.mark.parametrize("size", [(60, 16), (80, 24), (120, 40)])
async def test_the_token_strip_never_breaks_a_token_across_lines(store, size: tuple[int, int]) -> None:
    """At 60×16, 猫追狗的一只 ×3 + 猫 drew "5 只" at a line's end and "·408" at the next one's start."""
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.main.query_one("#prompt", Input).value = "猫追狗的一只猫追狗的一只猫追狗的一只猫"
        await settle(pilot)
        if not app.main.query_one(TokenStrip).region.height:
            await pilot.press("f3")  # a small window started on the lesson: the panels
            await settle(pilot)
        shown = screen_text(app, "TokenStrip").split("\n")
        chip = r"[▸ ]?\d+ \S+·\d+"
        assert shown and all(re.fullmatch(rf"\s*(?:{chip}\s*)+", line) for line in shown if line.strip()), shown
        seen = [int(n) for n in re.findall(r"(\d+) \S+·\d+", "\n".join(shown))]
        assert seen == list(range(seen[0], seen[0] + len(seen)))  # consecutive tokens, none lost at a line's end


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_lesson_s_model_switch_is_said_without_covering_the_lesson(store, monkeypatch, size) -> None:
    """At 80×24 the notice "This lesson runs on model nope." covered the lesson's text: a small window lights the
    model's name in the top bar instead; a wide one keeps the notice."""
    from textual.widgets import Static

    from tutor.screens import course

    monkeypatch.setattr(course, "MODEL_FLASH_SECONDS", 1.5)  # long enough for a busy machine to look first
    app = make_app(store, content_dir())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await app.open_lesson("order")  # lesson 4 runs on nope
        await settle(pilot)
        notices = [notice.message for notice in app._notifications]
        topbar = app.main.query_one("#topbar", Static).visual
        lit = any("reverse" in str(span.style) for span in getattr(topbar, "spans", []))
        assert app.main.place.gpt.name == "nope"
        if size == (80, 24):
            assert not any("nope" in notice for notice in notices) and lit, (notices, app.main.classes)
            await pilot.pause(1.8)
            topbar = app.main.query_one("#topbar", Static).visual
            assert not any("reverse" in str(span.style) for span in getattr(topbar, "spans", []))
        else:
            assert any("nope" in notice for notice in notices) and not lit


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_in_a_small_window_the_lesson_says_what_its_links_and_keys_do_behind_it(store, lang) -> None:
    """At 80×24 the lesson fills the window: a link that changes a panel says "F3 shows it", a character typed
    (there is no prompt in view) is said rather than dropped silently, and / brings back the prompt."""
    from tutor.i18n import t

    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.main
        assert main.lesson_only()
        await app.follow(parse_link("tutor:show?step=blocks.0.ln1&panel=layernorm"))
        await settle(pilot)
        notices = [notice.message for notice in app._notifications]
        assert t("f3_shows_it", lang) in notices, notices
        app.clear_notifications()
        await pilot.press("x", "y")
        notices = [notice.message for notice in app._notifications]
        assert notices == [t("typing_in_lesson", lang)], notices  # once, not once a character
        await pilot.press("slash")
        await settle(pilot)
        assert not main.lesson_only() and app.focused is main.query_one("#prompt")
        app.clear_notifications()
        await app.follow(parse_link("tutor:show?step=blocks.0.attn&panel=attention"))  # in view: nothing to say
        await pilot.press("z")
        assert not app._notifications and main.typed_prompt.endswith("z")
