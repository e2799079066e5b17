"""F1 / ?: every key is on the screen (scrolled into view where the window is small), in both languages."""

from __future__ import annotations

import re

import pytest
from helpers import make_app, screen_text, settle
from textual.containers import VerticalScroll

from tutor.i18n import t
from tutor.screens.help import KEYS, HelpScreen


def squeezed(text: str) -> str:
    """Text without whitespace and the scrollbar's thumb: a description wrapped over lines of its
    column reads on unbroken, whichever line the thumb happens to sit beside."""
    return re.sub(r"[\s▁▂▃▄▅▆▇█]+", "", text)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(80, 24), (60, 16), (120, 40), (200, 60)])
async def test_help_shows_every_key_on_screen_and_scrolls_to_the_rest(store, lang, size) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one(VerticalScroll)
        assert box.region.width >= min(60, size[0]) and box.region.height >= min(10, size[1])
        assert t("help_title", lang) in screen_text(app)  # the frame's title
        seen: dict[int, str] = {}  # line of the help text → what the screen shows there
        content = box.content_region
        for _ in range(20):  # the keys read through the pilot, as the learner scrolls them
            strips = app.screen._compositor.render_strips()
            for y in range(content.y, content.bottom):
                line = "".join(s.text for s in strips[y].crop(content.x, content.right))
                seen[y - content.y + round(box.scroll_y)] = line
            if box.scroll_y >= box.max_scroll_y:
                break
            await pilot.press("pagedown")
            await pilot.pause()
        shown = squeezed("\n".join(seen[y] for y in sorted(seen)))
        for keys, en, zh in KEYS:
            assert squeezed(keys + (zh if lang == "zh" else en)) in shown, (keys, shown)
        if size == (60, 16):
            assert box.max_scroll_y > 0  # the window is too small for all of them: they scroll
        if size[0] >= 120:
            assert box.max_scroll_y == 0  # room for all: no scrolling needed
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_question_mark_opens_the_help_too_and_it_closes_with_q(store) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("tab")  # away from the prompt, where ? would be typed
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert "下一步 / 上一步（也可用 j / k）" in screen_text(app)
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_slash_does_what_help_says(store) -> None:
    """Help said "/ back to the prompt", and in the prompt / typed a slash: it says where / does which now."""
    from textual.widgets import Input

    from tutor.widgets.lesson_view import LessonView

    [(_, said, _zh)] = [row for row in KEYS if row[0] == "/"]
    assert "from the lesson or a panel" in said and "types /" in said
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        prompt = app.main.query_one("#prompt", Input)
        before = prompt.value
        app.main.query_one(LessonView).focus()
        await pilot.press("slash")
        await settle(pilot)
        assert app.focused is prompt and prompt.value == before  # back to the prompt, nothing typed
        await pilot.press("slash")
        await settle(pilot)
        assert prompt.value == before + "/"


def test_the_chinese_help_calls_the_lesson_f3_shows_what_the_footer_calls_it() -> None:
    """F3's line read "窗口小时在课程与面板间切换": 课程 is the course (F2's list), not the lesson's text that the
    footer's "f3 课文/面板" means, and "窗口小时" reads as "window hours"."""
    (zh,) = [zh for keys, _en, zh in KEYS if keys == "F3"]
    assert "课文" in zh and "课程" not in zh and "窗口小时" not in zh
