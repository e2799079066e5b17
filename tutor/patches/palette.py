"""Textual's own words in the command palette, in the learner's language.

Textual writes its palette in English: the search field's placeholder ("Search for commands…"),
the system commands (`App.get_system_commands`: Theme, Quit, Keys, Maximize, Minimize, Screenshot),
the theme picker's placeholder and "No matches found". The app passes each of them through here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rich.align import Align
from rich.text import Text
from textual.app import App, SystemCommand
from textual.command import CommandList, CommandPalette
from textual.widgets.option_list import Option

from tutor.i18n import pick, say
from tutor.patches.footer_labels import localize_bindings

WORDS: dict[str, tuple[str, str]] = {
    "search": ("Search for commands…", "搜索命令…"),
    "search_themes": ("Search for themes…", "搜索主题…"),
    "no_matches": ("No matches found", "没有匹配的命令"),
    "palette": ("palette", "命令面板"),  # the footer's "^p palette"
    "palette_tooltip": ("Open the command palette", "打开命令面板"),
    "keys_help": ("Every key and what it does (F1)", "全部按键及其作用（F1）"),
}

SYSTEM_COMMANDS: dict[str, tuple[str, str]] = {  # Textual's title: (zh title, zh help)
    "Theme": ("主题", "更换配色主题"),
    "Quit": ("退出", "立即退出程序（进度随时自动保存）"),
    "Keys": ("按键", "显示当前焦点控件的帮助和可用按键"),
    "Maximize": ("最大化", "把当前焦点控件放大到整个窗口"),
    "Minimize": ("还原", "把放大的控件还原为原来的大小"),
    "Screenshot": ("截图", "把当前屏幕保存为 SVG “截图”"),
}
HIDE_KEYS = "Hide the keys and widget help panel"  # the "Keys" entry while Textual's key panel is open


def word(key: str, lang: str) -> str:
    return pick(WORDS, key, lang)


def localize_key(app: App[Any], lang: str) -> None:
    """The footer's "^p palette" (a binding Textual adds to the app) in `lang`."""
    localize_bindings(app, {"command_palette": WORDS["palette"]}, lang, {"command_palette": WORDS["palette_tooltip"]})


def system_commands(
    commands: Iterable[SystemCommand], lang: str, keys: Callable[[], Any] | None = None
) -> Iterator[SystemCommand]:
    """Textual's system commands, titled and described in `lang` (a command it adds later stays English).

    With `keys`, "Keys" runs that (the tutor's own list of every key, in the learner's language) in place
    of Textual's panel of the focused widget's bindings."""
    for command in commands:
        title, help_text, callback = command.title, command.help, command.callback
        if keys is not None and title == "Keys" and help_text != HIDE_KEYS:
            help_text, callback = word("keys_help", lang), keys
        elif title in SYSTEM_COMMANDS:  # Textual's own English, or ours in Chinese
            help_text = say(
                (help_text, "隐藏按键帮助面板" if help_text == HIDE_KEYS else SYSTEM_COMMANDS[title][1]), lang
            )
        if title in SYSTEM_COMMANDS:
            title = say((title, SYSTEM_COMMANDS[title][0]), lang)
        yield command._replace(title=title, help=help_text, callback=callback)


class TutorPalette(CommandPalette):
    """Textual's command palette, with its placeholder and its "No matches found" in `lang`."""

    def __init__(self, lang: str, *args: Any, placeholder: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, placeholder=placeholder or word("search", lang), **kwargs)
        self.lang = lang

    def _start_no_matches_countdown(self, search_value: str) -> None:
        # as Textual's own (textual/command.py, pinned in pyproject.toml), in the learner's language
        self._stop_no_matches_countdown()

        def show_no_matches() -> None:
            if search_value:
                self.query_one(CommandList).add_option(
                    Option(
                        Align.center(Text(word("no_matches", self.lang), style="not bold")),
                        disabled=True,
                        id=self._NO_MATCHES,
                    )
                )
                self._list_visible = True
            else:
                self._list_visible = False

        self._no_matches_timer = self.set_timer(self._NO_MATCHES_COUNTDOWN, show_no_matches)
