"""The command palette (ctrl+p): each model variant described in one line, in the learner's language."""

from __future__ import annotations

import pytest
from helpers import make_app, screen_text, settle
from rich.cells import cell_len

from tutor.catalogue import MODEL_VARIANTS
from tutor.model_words import describe_variant


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_variant_has_a_line_of_its_own(lang: str) -> None:
    lines = {name: describe_variant(name, lang) for name in MODEL_VARIANTS}
    for name, line in lines.items():  # one line of the palette at 80 columns, where it has 74 cells
        assert line and cell_len(f"Model: {name} — {line}") <= 74, line
    assert len(set(lines.values())) == len(lines)  # no two variants read alike
    assert lines["nope"] == ("no positional encoding" if lang == "en" else "没有位置编码")
    assert lines["deep"] == ("16 blocks of width 32" if lang == "en" else "16 块，宽 32")
    assert lines["deep-postnorm-nowarmup"] == (
        "deep with post-norm, no warm-up" if lang == "en" else "deep，post-norm，没有预热"
    )


@pytest.mark.parametrize(
    ("lang", "line"), [("en", "Model: nope — no positional encoding"), ("zh", "模型: nope — 没有位置编码")]
)
async def test_the_palette_describes_each_variant(store, lang: str, line: str) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"nope")
        await pilot.pause(0.3)  # the palette searches in a worker of its own
        await settle(pilot)
        assert line in screen_text(app)


async def test_the_palette_lists_every_command_kind_of_the_model_shown(store) -> None:
    """Lessons, variants, every step of the model on screen, practice, the backward pass, the language and
    "show everything": the palette's commands, each kind present (a fault in one kind silently dropped
    the kinds after it)."""
    from tutor.app import TutorCommands

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        provider = TutorCommands(app.screen)
        titles = [title for title, _callback, _help in provider._commands()]
        steps = app.main.place.gpt.steps
        step_titles = [title for title in titles if title.startswith("Step ")]
        assert len(step_titles) == len(steps) == 27  # tiny: 4 blocks
        assert all(title.startswith(f"Step {step.index + 1}: ") for step, title in zip(steps, step_titles, strict=True))
        assert sum(t.startswith("Lesson ") for t in titles) == len(app.lessons)
        assert sum(t.startswith("Model: ") for t in titles) == len(MODEL_VARIANTS)
        assert "Backward pass: step back from the loss" in titles and "中文 / English" in titles
        assert titles[-1].startswith("Show everything")
