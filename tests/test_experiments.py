"""What every experiment screen does alike: Chinese everywhere, the footer too, and no colour."""

from __future__ import annotations

import pytest
from helpers import make_app, open_experiment, screen_text, settle


@pytest.mark.parametrize("name", ["positions", "layernorm-calc", "training"])
async def test_experiments_speak_chinese_footer_included(store, name: str) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_experiment(pilot, name)
        await pilot.press("f2")  # base 10 · the example · (nothing)
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
        await pilot.press("f" if name == "training" else "f2")  # the 4-block models · base 10 · the example
        await settle(pilot)
        text = screen_text(app)
        assert "Esc Back" in text
        if name == "training":  # the curves are drawn with their markers, not braille
            plot = "\n".join(line[8:] for line in text.split("\n") if line[7:8] in ("┤", "│"))
            assert "*" in plot and "@" in plot
            assert not any(0x2800 <= ord(ch) <= 0x28FF for ch in plot)
