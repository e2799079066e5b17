"""The overview panel: the whole model at a glance, drawn for its wiring, the current step marked, ‖x‖ right."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_app, screen_text, settle

import model
from tutor.panels.overview_panel import overview_lines
from tutor.view import View
from tutor.widgets.step_bar import short_name

WIRINGS = ["tiny", "postnorm", "nonorm", "noresidual", "deep-postnorm", "rope"]


@pytest.mark.parametrize("name", WIRINGS)
def test_every_step_is_one_box_in_order_the_current_one_marked_and_the_norms_right(name: str) -> None:
    gpt = model.load(name)
    trace = gpt.run("猫追狗的")
    for current in (0, 5, len(trace.steps) - 1):
        view = View(gpt, trace, current, 2, 0, "en", "forward", None)
        lines, lit = overview_lines(view)
        text = [line.plain for line in lines]
        rows = [line.split("│", 1)[1].split("  ")[0] for line in text[2:-1]]  # the boxes, before the numbers
        boxes = [box.strip("▸ ") for row in rows for box in row.split("→")]
        assert boxes == [short_name(step) for step in trace.steps]  # every step once, in the pass's order
        assert sum(line.count("▸") for line in text[:-1]) == 1 and "▸" in text[lit]  # the last line: the key
        block = trace.steps[current].block
        assert text[lit].split("│")[0].strip() == (f"B{block}" if block is not None else "")
        for b in range(gpt.config.n_layers):  # ‖x‖ after attention → after the MLP, for the cursor token
            row = next(line for line in text if line.split("│")[0].strip() == f"B{b}")
            norms = [np.linalg.norm(trace[f"blocks.{b}.hook_resid_{p}"][2].astype(np.float64)) for p in ("mid", "post")]
            assert row.endswith(f"‖x‖ {norms[0]:.2f} → {norms[1]:.2f}"), row


async def test_the_overview_follows_the_step_keys_and_a_click_on_a_box_goes_there(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.main
        if main.has_class("-lesson"):
            await pilot.press("f3")
            await settle(pilot)
        main.query_one("#panels").active = "overview"
        await settle(pilot)
        before = main.place.step_index
        await pilot.press("down")
        await settle(pilot)
        assert main.place.step_index == before + 1
        assert main.query_one("#panels").active == "overview"  # it shows every step: a step key keeps it
        assert "▸" in screen_text(app, "#overview")
        main.action_goto_step(7)  # what a click on the eighth box does
        await settle(pilot)
        assert main.place.step_index == 7 and main.query_one("#panels").active == "overview"
