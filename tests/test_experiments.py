"""What every experiment screen does alike: Chinese everywhere, the footer too, and no colour."""

from __future__ import annotations

import pytest
from helpers import footer_misses, make_app, open_experiment, screen_text, settle


@pytest.mark.parametrize("name", ["positions", "layernorm-calc", "training"])
async def test_experiments_speak_chinese_footer_included(store, name: str) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_experiment(pilot, name)
        await pilot.press({"positions": "alt+p", "layernorm-calc": "alt+e", "training": "f"}[name])  # a base · …
        await settle(pilot)
        text = screen_text(app)
        assert "返回" in text and "Back" not in text
        chinese, english = {
            "positions": ("训练之外", "OFF-TRAINING"),
            "layernorm-calc": ("方差", "variance"),
            "training": ("验证损失", "Validation loss"),
        }[name]
        assert chinese in text and english not in text


@pytest.mark.parametrize("name", ["positions", "layernorm-calc", "training"])
async def test_experiments_draw_without_colour(store, monkeypatch, name: str) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await open_experiment(pilot, name)
        await pilot.press({"positions": "alt+p", "layernorm-calc": "alt+e", "training": "f"}[name])  # a base · …
        await settle(pilot)
        text = screen_text(app)
        assert "Esc Back" in text
        if name == "training":  # the curves are drawn with their markers, not braille
            plot = "\n".join(line[8:] for line in text.split("\n") if line[7:8] in ("┤", "│"))
            assert "*" in plot and "@" in plot
            assert not any(0x2800 <= ord(ch) <= 0x28FF for ch in plot)


def tutor_screens() -> list[type]:
    """Every screen class the app defines (each module under tutor/screens imported)."""
    import importlib
    import pkgutil

    from textual.screen import Screen

    import tutor.screens

    for module in pkgutil.walk_packages(tutor.screens.__path__, "tutor.screens."):
        importlib.import_module(module.name)

    def screens(cls: type) -> list[type]:
        return [cls, *(each for sub in cls.__subclasses__() for each in screens(sub))]

    return [cls for cls in screens(Screen) if cls.__module__.startswith("tutor.")]


def test_no_key_is_one_a_terminal_cannot_send() -> None:
    """alt+digits arrive as ESC 1 …, which Textual reads as ¡ ™ £ (macOS's option characters), and alt+b, alt+f as
    ESC b, ESC f: ctrl+left, ctrl+right. Seen under tmux: alt+1 typed ¡ into the positions explorer's base field."""
    unsendable = {*(f"alt+{n}" for n in range(10)), "alt+b", "alt+f"}
    from tutor.app import TutorApp

    bad = [
        (cls.__name__, key)
        for cls in [*tutor_screens(), TutorApp]
        for binding in cls.BINDINGS
        if not isinstance(binding, tuple)
        for key in binding.key.split(",")
        if key in unsendable
    ]
    assert not bad, bad


def test_f2_and_f3_mean_one_thing_on_every_screen() -> None:
    """F2 is the lesson list and F3 the lesson (or the panels) on the main screen; no practice screen takes them
    for something else (they were the left and right model, an example, a base: four meanings on four screens)."""
    from tutor.screens.main import MainScreen

    meanings: dict[str, set[str]] = {}
    for cls in tutor_screens():
        for binding in cls.BINDINGS:
            if isinstance(binding, tuple):
                continue
            for key in binding.key.split(","):
                if key in ("f2", "f3", "f4", "f6"):
                    meanings.setdefault(key, set()).add(binding.action.split("(")[0])
    main = {b.key: b.action.split("(")[0] for b in MainScreen.BINDINGS if b.key in ("f2", "f3")}
    assert len(meanings) >= 2 and "compare" in {cls.__module__.rsplit(".", 1)[-1] for cls in tutor_screens()}
    # the lesson list closes with F2 too (it is what F2 opened)
    assert meanings["f2"] <= {main["f2"], "dismiss_none"} and meanings["f3"] == {main["f3"]}, meanings


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["compare", "order"])
async def test_an_experiment_s_keys_all_fit_its_footer_at_80_columns(store, name: str, lang: str) -> None:
    """At 80×24 the footer left out compare's shift+↑↓ (the right model) and, in Chinese, order's F6: keys that
    do not fit beside the palette key are not drawn, and these screens name them nowhere else."""
    app = make_app(store, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, name)
        await pilot.pause(0.2)  # the footer composes its keys after a refresh
        assert footer_misses(app) == [], screen_text(app).splitlines()[-1]
