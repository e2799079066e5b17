"""In Chinese the learner reads Chinese: the title bar, the footer's palette key, the command palette's
own entries (Textual writes those in English), and F5 switches every one of them live."""

from __future__ import annotations

import re

import pytest
from helpers import make_app, screen_text, settle
from textual.app import App
from textual.command import CommandPalette

from tutor.patches.palette import SYSTEM_COMMANDS, WORDS
from tutor.paths import content_dir
from tutor.screens.help import HelpScreen
from tutor.screens.main_keys import FOOTER


def title_bar(app) -> str:
    return screen_text(app).splitlines()[0]


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def settled_footer(pilot, expect: str) -> str:
    """The footer once it shows `expect`: it composes its keys after a refresh, later on a busy machine
    (and a test that fails still fails, a second later)."""
    await settle(pilot)
    for _ in range(20):
        if expect in footer(pilot.app):
            break
        await pilot.pause(0.05)
    return footer(pilot.app)


async def open_palette(pilot, query: str = "") -> str:
    await pilot.press("ctrl+p")
    await settle(pilot)
    assert isinstance(pilot.app.screen, CommandPalette)
    if query:
        await pilot.press(*query)
    await pilot.pause(0.8)  # the palette searches in a worker, and says "no matches" after 0.5 s
    return screen_text(pilot.app)


async def test_title_bar_and_footer_follow_the_language_live(store) -> None:
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await settled_footer(pilot, "^p 命令面板")
        assert "模型 tiny" in title_bar(app) and "model" not in title_bar(app)
        assert "^p 命令面板" in shown and "palette" not in shown
        await pilot.press("f5")
        shown = await settled_footer(pilot, "^p palette")
        assert "model tiny" in title_bar(app) and "模型" not in title_bar(app)
        assert "^p palette" in shown and "命令面板" not in shown
        await pilot.press("f5")
        shown = await settled_footer(pilot, "^p 命令面板")
        assert "模型 tiny" in title_bar(app) and "^p 命令面板" in shown


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footers_palette_key_is_whole_in_the_last_cells(store, size) -> None:
    """No key of the footer lies beneath the palette key: none shows through its margin ("palettel"),
    and none cuts its Chinese (Textual blanks a double-width character divided at a widget's edge)."""
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=size) as pilot:
        for label in ("^p 命令面板 ", "^p palette "):
            shown = await settled_footer(pilot, label)
            assert shown.endswith(label), shown
            keys = shown.removesuffix(label).rstrip(" ▏")
            labels = [pair[1 if "命" in label else 0] for pair in FOOTER.values()]
            assert any(keys.endswith(" " + word) for word in labels), keys  # the last key shown is whole
            await pilot.press("f5")


async def test_the_command_palette_speaks_chinese_and_switches_with_f5(store) -> None:
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = await open_palette(pilot)
        assert "搜索命令…" in shown and "Search for commands" not in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "主题")
        assert "更换配色主题" in shown and "Change the current theme" not in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "退出")
        assert "立即退出程序" in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "qqqxz")
        assert "没有匹配的命令" in shown and "No matches" not in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "模型 tiny")
        assert "随附" in shown and "shipped" not in shown
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("f5")
        await settle(pilot)
        shown = await open_palette(pilot)
        assert "Search for commands…" in shown and "搜索命令" not in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "Theme")
        assert "Change the current theme" in shown and "主题" not in shown
        await pilot.press("escape")
        shown = await open_palette(pilot, "qqqxz")
        assert "No matches found" in shown


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_theme_picker_and_keys_from_the_palette(store, lang) -> None:
    app = make_app(store, content_dir(), lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_palette(pilot, "主题" if lang == "zh" else "Theme")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        shown = screen_text(app)
        assert WORDS["search_themes"][lang == "zh"] in shown
        await pilot.press("escape")
        await settle(pilot)
        await open_palette(pilot, "按键" if lang == "zh" else "Keys")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)  # the tutor's own list of every key, in the learner's language
        assert ("下一步 / 上一步" in screen_text(app)) == (lang == "zh")


async def test_every_system_command_textual_offers_has_a_chinese_title(store) -> None:
    """Textual's App.get_system_commands, where each of its commands appears (Maximize with a widget
    focused that can be maximised, Minimize with one maximised): none is left in English."""
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        english: set[str] = set()
        zh: set[str] = set()
        for step in ("focus", "maximize"):
            if step == "focus":
                app.main.query_one("#lesson").focus()  # a scroll view: it can be maximised
            else:
                app.main.action_maximize()
            await pilot.pause()
            english |= {c.title for c in App.get_system_commands(app, app.main)}
            zh |= {c.title for c in app.get_system_commands(app.main)}
        assert {"Maximize", "Minimize", "Theme", "Quit", "Keys", "Screenshot"} <= english
        assert english <= set(SYSTEM_COMMANDS), english - set(SYSTEM_COMMANDS)  # a new Textual command: translate it
        assert zh == {SYSTEM_COMMANDS[title][0] for title in english}


def english_footer_labels(app) -> list[str]:
    """The footer's shown labels with no Chinese in them (keys like "PgDn" are key_display, not labels)."""
    labels = [active.binding.description for active in app.active_bindings.values() if active.binding.show]
    return [
        label
        for label in labels
        if re.search("[A-Za-z]{2,}", label) and not any("\u4e00" <= ch <= "\u9fff" for ch in label)
    ]


async def test_every_screen_s_footer_speaks_chinese(store) -> None:
    """The quick check's footer was English in a Chinese session; every screen with a footer is checked."""
    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert english_footer_labels(app) == []
        hrefs = [href for _title, href in app.practice_items()]
        for index, href in enumerate(hrefs):
            if "exercise" in href and any("exercise" in seen for seen in hrefs[:index]):
                continue  # one exercise screen stands for all
            await pilot.press("f10")
            await settle(pilot)
            await pilot.press(*["down"] * index, "enter")
            await settle(pilot)
            assert english_footer_labels(app) == [], (href, english_footer_labels(app))
            await pilot.press("escape")
            await settle(pilot)


async def test_notices_about_missing_names_speak_chinese(store) -> None:
    """Notices such as "no lesson 'x'" and "this model has blocks 0–3" were English in a Chinese app."""
    from helpers import make_app, settle

    from tutor.paths import content_dir

    app = make_app(store, content_dir(), lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.open_lesson("nonexistent")
        await pilot.press("escape")  # the prompt has the focus: digits would type; a block key from the panels
        app.main.action_goto_block(9)
        app.main.goto_step_name("blocks.9.ln1")
        app.open_experiment("nope-lab")
        app.open_exercise("nope-exercise")
        await settle(pilot)
        notices = [notice.message for notice in app._notifications]
        assert len(notices) >= 5, notices
        for notice in notices:
            assert any("\u4e00" <= ch <= "\u9fff" for ch in notice), notice
