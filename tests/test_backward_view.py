"""The backward view, the gradient panel and the similarity panel: every number on screen is the trace's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_app, screen_text, settle

import model
from model.depth import mean_position_similarity, position_cosines
from tutor.number_style import grad_text, visible_piece
from tutor.panels.similarity_panel import SimilarityPanel
from tutor.stream_points import residual_points
from tutor.widgets.heatmap import HeatmapGrid


def norm(values: np.ndarray) -> float:
    return float(np.linalg.norm(values.astype(np.float64)))


async def type_prompt(pilot, text: str) -> None:
    await pilot.press("ctrl+u", *text)
    await settle(pilot)


async def test_ctrl_r_turns_the_pass_round_and_shows_the_loss_each_positions_loss_and_target(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")  # the lesson out of the way: the panels have the room
        await type_prompt(pilot, "猫追狗的一")
        await pilot.press("shift+up", "ctrl+r")
        await settle(pilot)
        main = app.main
        trace = main.place.trace
        assert main.place.backward and trace is not None and trace.has_grads
        assert trace.steps[main.place.step_index].name == "unembed"  # b at the embedding: the gradient's start
        assert main.query_one("#panels").active == "gradient"  # type: ignore[attr-defined]
        assert main.place.token == 3  # off the last token, which no gradient reaches
        text = screen_text(app)
        assert "backward" in text and f"L = {trace.loss:.3f}" in text
        assert trace.losses is not None
        for pos, loss in enumerate(trace.losses):
            target = visible_piece(trace.pieces[pos + 1])
            assert f"{pos} {visible_piece(trace.pieces[pos])}→{target} {float(loss):.2f}" in text
            assert f"{np.exp(-float(loss)):.3f}" in text  # p(target) in the unembedding's table
        d_logits = trace["logits_grad"][3]
        assert grad_text(norm(d_logits)) in text
        # the bar steps back: ↓ is the final LayerNorm, with ∂L/∂γ and ∂L/∂β
        await pilot.press("down")
        await settle(pilot)
        assert trace.steps[main.place.step_index].name == "ln_final"
        text = screen_text(app)
        assert f"‖∂L/∂γ‖ {grad_text(norm(trace.param_grads['ln_final.g']))}" in text
        assert f"‖∂L/∂β‖ {grad_text(norm(trace.param_grads['ln_final.b']))}" in text
        # ↓ again: block 3's residual add, the two paths for every token
        await pilot.press("down")
        await settle(pilot)
        step = trace.steps[main.place.step_index]
        assert step.name == "blocks.3.mlp_add"
        identity, through_f, total = trace.residual_paths(step)
        text = screen_text(app)
        for pos in range(4):
            row = next(line for line in text.splitlines() if line.strip().startswith(f"{pos} {trace.pieces[pos]} "))
            for paths in (identity, through_f, total):
                assert grad_text(norm(paths[pos])) in row, (pos, row)
        ratio = norm(total[3]) / norm(identity[3])
        assert f"sum ÷ identity = {ratio:.2f}" in text.replace("\n", " ").replace("  ", " ")
        # ctrl+r again: forwards, at the same step
        index = main.place.step_index
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert not main.place.backward and main.place.step_index == index
        assert main.query_one("#panels").active == "residual"  # type: ignore[attr-defined]


async def test_the_gradient_chart_shows_the_vanishing_gradient_of_deep_noresidual(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        assert app.main.switch_model("deep-noresidual")
        await settle(pilot)
        await type_prompt(pilot, "猫追狗的一只")
        await pilot.press("ctrl+r", "shift+down")  # backwards to its last step: the embedding
        await settle(pilot)
        main, trace = app.main, app.main.place.trace
        assert trace is not None and trace.steps[main.place.step_index].kind == "embed"
        points = residual_points(trace)
        grads = [norm(trace[p.hook + "_grad"][main.place.token]) for p in points]
        assert grads[-1] > 1e-4 and grads[1] < 1e-20  # vanished on its way down sixteen blocks
        text = screen_text(app)
        assert "(log)" in text
        for label, value in (("B15 mlp", grads[-1]), ("B0 attn", grads[1])):
            row = next((line for line in text.splitlines() if line.strip().startswith(label)), None)
            if row is not None:  # rows below the fold scroll; the ones in view carry the trace's number
                assert grad_text(value) in row, (label, row)
        embed_row = next(line for line in text.splitlines() if line.strip().startswith(("▶  embed", "embed")))
        assert grad_text(grads[0]) in embed_row


async def test_the_similarity_panel_shows_the_collapse_without_residuals(store) -> None:
    app = make_app(store, gpt=model.load("noresidual"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await type_prompt(pilot, "猫追狗的一只")
        await pilot.press("shift+up", "pagedown", "pagedown")  # block 1: the stream after block 0
        await settle(pilot)
        app.main.query_one("#panels").active = "similarity"  # type: ignore[attr-defined]
        await settle(pilot)
        trace = app.main.place.trace
        assert trace is not None
        x = trace["blocks.0.hook_resid_post"]
        mean = mean_position_similarity(x[None].astype(np.float64))
        assert mean > 0.99  # measured: every position carries one direction after block 0
        text = screen_text(app)
        assert f"cos(x_s, x_t) of the stream after B0 mlp: mean over pairs s ≠ t {mean:.2f}" in text
        grid = app.main.query_one(SimilarityPanel).query_one(HeatmapGrid)
        shown = np.array([row.values for row in grid.rows])
        assert np.allclose(shown, position_cosines(x.astype(np.float64)))
        assert "+1.00" in text


async def test_repeated_tokens_without_positions_have_identical_rows(store) -> None:
    app = make_app(store, gpt=model.load("nope"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await type_prompt(pilot, "猫猫猫")
        await pilot.press("shift+down")
        app.main.query_one("#panels").active = "similarity"  # type: ignore[attr-defined]
        await settle(pilot)
        grid = app.main.query_one(SimilarityPanel).query_one(HeatmapGrid)
        rows = np.array([row.values for row in grid.rows])
        assert np.allclose(rows, 1.0, atol=1e-5)  # three identical vectors: every pair has cos 1


async def test_the_gradient_panel_forwards_runs_the_pass_with_gradients(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await type_prompt(pilot, "猫追狗")
        assert app.main.place.trace is not None and not app.main.place.trace.has_grads  # forwards: no gradient work
        app.main.query_one("#panels").active = "gradient"  # type: ignore[attr-defined]
        await settle(pilot)
        trace = app.main.place.trace
        assert trace is not None and trace.has_grads and not app.main.place.backward
        assert f"L = {trace.loss:.3f}" in screen_text(app)
        await type_prompt(pilot, "猫追狗的")  # each new pass too, while the panel is shown
        assert app.main.place.trace is not None and app.main.place.trace.has_grads


async def test_a_one_token_prompt_backwards_says_why_there_is_no_gradient(store) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await type_prompt(pilot, "猫")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.main.place.backward and app.main.place.trace is not None and not app.main.place.trace.has_grads
        assert "至少要 2 个词元" in screen_text(app)
        await type_prompt(pilot, "猫追")  # one more token: the gradient comes
        assert app.main.place.trace is not None and app.main.place.trace.has_grads
        assert "反向" in screen_text(app)


async def test_a_lesson_link_opens_the_backward_walk(store) -> None:
    from tutor.lessons.links import parse_link

    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        href = "tutor:show?model=noresidual&prompt=猫追狗的一只猫&direction=backward&step=unembed&panel=gradient"
        await app.follow(parse_link(href))
        await settle(pilot)
        main = app.main
        assert main.place.gpt.name == "noresidual" and main.place.backward
        assert main.place.trace is not None and main.place.trace.has_grads and main.place.token == 5
        assert main.place.trace.steps[main.place.step_index].name == "unembed"
        assert main.query_one("#panels").active == "gradient"  # type: ignore[attr-defined]
        await app.follow(parse_link("tutor:show?direction=forward"))
        await settle(pilot)
        assert not main.place.backward


def turn_label(app) -> str:
    return next(active.binding.description for key, active in app.active_bindings.items() if key == "ctrl+r")


@pytest.mark.parametrize(
    ("lang", "backward", "forward"), [("en", "Backward", "Forward"), ("zh", "反向传播", "正向计算")]
)
async def test_ctrl_r_s_label_says_where_it_takes_the_learner(store, lang: str, backward: str, forward: str) -> None:
    """The footer said "^r Backward" in both directions."""
    app = make_app(store, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert turn_label(app) == backward
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.main.place.backward and turn_label(app) == forward
        await pilot.press("f5")  # the language switched while backwards: still where the key goes
        await settle(pilot)
        assert turn_label(app) in ("Forward", "正向计算")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert turn_label(app) in ("Backward", "反向传播")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_loss_line_wraps_between_positions_never_inside_one(store, size: tuple[int, int]) -> None:
    """The positions' losses ("5 ␣→6 2.69 · …") wrapped where the words ran out: "5" ended one line and "␣→6 2.69"
    began the next; at 120×40 "no loss" went on a line of its own. Each position's part is now whole on a line."""
    import re

    from tutor.panels.backward_step import BackwardStep

    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.main.query_one("#prompt").value = "猫追狗& 66=1>>猫追狗的"
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        if not app.main.query_one(BackwardStep).region.height:
            await pilot.press("f3")  # a small window started on the lesson: the panels
            await settle(pilot)
        trace = app.main.place.trace
        rows = [row.plain for row in app.main.query_one(BackwardStep).rows]
        loss_rows = rows[1 : next(i for i, row in enumerate(rows) if i and not row.strip())]
        assert len(loss_rows) > 1, rows  # a line long enough to wrap
        pieces = [visible_piece(p) for p in trace.pieces]
        for pos in range(len(pieces) - 1):
            part = f"{pos} {pieces[pos]}→{pieces[pos + 1]} {float(trace.losses[pos]):.2f}"
            assert sum(part in row for row in loss_rows) == 1, (part, loss_rows)
        last = f"{len(pieces) - 1} {pieces[-1]}: no next token, no loss"
        assert any(last in row for row in loss_rows), loss_rows
        assert all(re.match(r"\d", row) for row in loss_rows), loss_rows  # each line starts with a position
