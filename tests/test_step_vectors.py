"""The vectors a step reads and writes (tutor/panels/step_vectors_panel.py): every row is the trace's own array."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from helpers import make_app, screen_text, settle
from rich.cells import cell_len

import model
from model import GPT, Trace
from tutor.number_style import fmt, top_dims, visible_piece
from tutor.panels.layernorm_panel import LayerNormPane, layernorm_rows
from tutor.panels.step_vectors_panel import StepVectorsPanel, short_hook, step_picture, unembed_guesses
from tutor.panels.vectors_panel import VectorsPanel
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid
from tutor.widgets.legend import scale_text

PROMPT = "猫追狗"
TOKEN = 1  # not the last: the highlighted rows must follow the cursor, not the end


@cache
def traced(name: str) -> tuple[GPT, Trace]:
    gpt = model.load(name)
    return gpt, gpt.run(PROMPT)


def sections(rows: tuple[GridRow, ...] | list[GridRow]) -> list[tuple[str, list[GridRow]]]:
    """The rows cut at their section titles: [(title, rows under it)]."""
    out: list[tuple[str, list[GridRow]]] = []
    for row in rows:
        if row.values is None:
            out.append((row.label, []))
        else:
            out[-1][1].append(row)
    return out


def assert_token_rows(trace: Trace, rows: list[GridRow], array: np.ndarray, token: int = TOKEN) -> None:
    """One row per token: the trace's array exactly, the token and its norm in the label, the cursor lit."""
    assert len(rows) == len(trace.tokens)
    for pos, row in enumerate(rows):
        assert np.array_equal(row.values, array[pos]), (row.label, pos)
        norm = np.linalg.norm(array[pos].astype(np.float64))
        assert row.label == f"{pos} {trace.pieces[pos]} ‖{norm:.2f}‖"
        assert row.highlight == (pos == token)


VARIANTS = ["tiny", "deep-postnorm", "noresidual"]


@pytest.mark.parametrize("name", VARIANTS)
def test_every_step_kind_shows_the_arrays_of_the_trace(name: str) -> None:
    gpt, trace = traced(name)
    kinds = set()
    for step in trace.steps:
        view = View(gpt, trace, step.index, TOKEN, head=2, lang="en")
        picture = step_picture(view)
        parts = sections(picture.rows)
        titles = [title for title, _ in parts]
        kinds.add(step.kind)
        if step.kind == "norm":
            prefix = step.out_hook.rsplit(".", 1)[0]
            for title, start in zip(titles, ("x: input", "x̂ = (x − μ)/√(σ²+ε)", "y = γ·x̂ + β"), strict=False):
                assert title.startswith(start), title
            for (title, rows), hook in zip(parts, (step.in_hook, prefix + ".hook_xhat", step.out_hook), strict=False):
                assert short_hook(hook) in title
                assert_token_rows(trace, rows, trace[hook])
            gamma_beta = parts[3][1]
            assert [r.label for r in gamma_beta] == ["γ", "β"]
            assert np.array_equal(gamma_beta[0].values, gpt.params[prefix + ".g"])
            assert np.array_equal(gamma_beta[1].values, gpt.params[prefix + ".b"])
            mu = trace[prefix + ".hook_mean"][TOKEN, 0]
            assert f"μ {mu:+.3f}" in picture.note
        elif step.kind == "attention":
            assert short_hook(step.in_hook) in titles[0] and step.out_hook == f"blocks.{step.block}.hook_attn_out"
            assert_token_rows(trace, parts[0][1], trace[step.in_hook])
            assert_token_rows(trace, parts[1][1], trace[step.out_hook])
            scores = trace[f"blocks.{step.block}.attn.hook_attn_scores"][2]
            assert "scaled scores q·k/√d_head" in picture.scores_title and "head 2/" in picture.scores_title
            assert picture.score_columns == tuple(f"{p} {c}" for p, c in enumerate(trace.pieces))
            for pos, row in enumerate(picture.score_rows):
                masked = np.isneginf(scores[pos])
                assert np.array_equal(np.isnan(row.values), masked)  # masked cells drawn "·", never 0
                assert np.array_equal(row.values[~masked], scores[pos][~masked])
                assert row.highlight == (pos == TOKEN)
            assert fmt(float("nan")).strip() == "·"
            assert ("No residual" in picture.note) == (not gpt.config.residual)
        elif step.kind == "residual":
            assert step.added_hook is not None
            hooks = (step.in_hook, step.added_hook, step.out_hook)
            for (title, rows), hook in zip(parts, hooks, strict=True):
                assert short_hook(hook) in title
                assert_token_rows(trace, rows, trace[hook])
            assert np.array_equal(trace[step.in_hook] + trace[step.added_hook], trace[step.out_hook])
            assert ("Post-norm" in picture.note) == (gpt.config.norm == "post")
        elif step.kind == "mlp":
            pre, post = f"blocks.{step.block}.mlp.hook_pre", f"blocks.{step.block}.mlp.hook_post"
            width = trace[pre].shape[-1]
            assert picture.columns == tuple(str(i) for i in range(width)) and width == 4 * gpt.config.d_model
            hooks = (pre, post, step.in_hook, step.out_hook)
            for (title, rows), hook in zip(parts, hooks, strict=True):
                assert short_hook(hook) in title
                assert_token_rows(trace, rows, trace[hook])
            unit, value = top_dims(trace[post][TOKEN], 1)[0]
            assert f"{trace.pieces[TOKEN]}: {unit} {fmt(value).strip()}" in picture.note
        elif step.kind == "unembed":
            assert_token_rows(trace, parts[0][1], trace[step.in_hook])
            top = trace.top_k(5, position=TOKEN)
            w_rows = parts[1][1]
            assert len(w_rows) == 5
            for (token_id, piece, _), row in zip(top, w_rows, strict=True):
                logit = float(trace.logits[TOKEN, token_id])
                assert row.label == f"{fmt(logit).strip()} W_E[{visible_piece(piece)}]"
                assert np.array_equal(row.values, gpt.params["wte"][token_id])  # W_U is W_E: tied
                dot = float(trace[step.in_hook][TOKEN].astype(np.float64) @ row.values.astype(np.float64))
                assert dot == pytest.approx(logit, abs=1e-4)
            (product,) = parts[2][1]
            assert float(product.values.astype(np.float64).sum()) == pytest.approx(
                float(trace.logits[TOKEN, top[0][0]]), abs=1e-4
            )
            guess = unembed_guesses(trace, gpt, step, TOKEN, k=1)[0]
            assert f"= {guess.dot:+.3f}" in picture.note and f"{trace.logits[TOKEN, top[0][0]]:+.3f}" in picture.note
        else:
            assert step.kind == "embed"
    expected = {"embed", "attention", "mlp", "unembed"} | ({"norm"} if gpt.config.norm != "none" else set())
    assert kinds == expected | ({"residual"} if gpt.config.residual else set())


def test_unembedding_is_tied_to_the_embedding() -> None:
    gpt, trace = traced("tiny")
    x = trace["ln_final.hook_normalized"]
    assert np.allclose(x @ gpt.params["wte"].T, trace.logits, atol=1e-4)


def test_the_layernorm_tab_rows_follow_the_selected_token() -> None:
    gpt, trace = traced("tiny")
    step = next(s for s in trace.steps if s.name == "blocks.2.ln2")
    view = View(gpt, trace, step.index, TOKEN, head=0, lang="en")
    parts = sections(layernorm_rows(view, step))
    title, rows = parts[0]
    assert title.startswith(f"{TOKEN} {trace.pieces[TOKEN]}: x → x̂ → y")
    prefix = "blocks.2.ln2"
    expected = {
        "x": trace[step.in_hook][TOKEN],
        "x̂": trace[prefix + ".hook_xhat"][TOKEN],
        "γ": gpt.params[prefix + ".g"],
        "β": gpt.params[prefix + ".b"],
        "y": trace[step.out_hook][TOKEN],
    }
    assert [r.label.split()[0] for r in rows] == list(expected)
    for row in rows:
        assert np.array_equal(row.values, expected[row.label.split()[0]])
    assert_token_rows(trace, parts[1][1], trace[prefix + ".hook_xhat"])
    assert_token_rows(trace, parts[2][1], trace[step.out_hook])


def same_rows(a: list[GridRow] | tuple[GridRow, ...], b: list[GridRow] | tuple[GridRow, ...]) -> bool:
    """Row by row the same label, highlight, scale and values (NaN, a masked cell, equal to NaN)."""

    def key(row: GridRow) -> tuple[object, ...]:
        return (row.label, row.highlight, row.scale)

    return len(a) == len(b) and all(
        key(r) == key(s)
        and (r.values is None) == (s.values is None)
        and (r.values is None or np.array_equal(r.values, s.values, equal_nan=True))
        for r, s in zip(a, b, strict=True)
    )


def row_text(row: GridRow, cells: int = 5) -> str:
    """How a grid draws the row's first `cells` numbers."""
    return " ".join(fmt(float(v)) for v in row.values[:cells])


async def test_stepping_shows_the_step_vectors_panel_with_the_rows_of_each_step(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        main = app.main
        trace = main.place.trace
        await pilot.press("shift+up")
        tabs = main.query_one("#panels")
        for step in trace.steps:
            await pilot.pause()
            assert main.place.step_index == step.index
            if step.kind == "mlp":
                assert tabs.active == "vectors"  # the MLP opens the Vectors tab
            tabs.active = "vectors"
            main.refresh_panels()
            await pilot.pause()
            embed = step.kind == "embed"
            assert main.query_one(VectorsPanel).display == embed
            assert main.query_one(StepVectorsPanel).display == (not embed)
            if not embed:
                grid = main.query_one("#sv-grid", HeatmapGrid)
                picture = step_picture(View(main.place.gpt, trace, step.index, main.place.token, main.place.head, "en"))
                assert same_rows(grid.rows, picture.rows)
                text = screen_text(app, "#vectors")
                first = next(row for row in grid.rows if row.values is not None)
                assert picture.rows[0].label[:40] in text, step.name
                line = next(line for line in text.splitlines() if line.startswith(first.label))
                assert row_text(first) in line, (step.name, line)
                assert grid.legend is None  # sections on their own scales: each title shows its own legend
                for row in grid.rows[:3]:
                    if row.values is None and row.scale is not None and cell_len(row.label) + 32 <= grid.size.width:
                        title_line = next(line for line in text.splitlines() if line.startswith(row.label))
                        expected = (
                            f"−{scale_text(row.scale).lstrip('+')} ",
                            f" +{scale_text(row.scale).lstrip('+')}",
                        )
                        assert all(end in title_line for end in expected), (step.name, title_line)
                        values = next(r.values for r in grid.rows[grid.rows.index(row) + 1 :] if r.values is not None)
                        assert np.abs(values).max() <= row.scale
                if step.kind == "attention":
                    scores = main.query_one("#sv-scores", HeatmapGrid)
                    assert scores.display and same_rows(scores.rows, picture.score_rows)
                    assert "·" in text  # the masked cells
            await pilot.press("down")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_every_step_draws_at_80x24(store, lang: str) -> None:
    app = make_app(store, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        main = app.main
        tabs = main.query_one("#panels")
        for step in main.place.trace.steps:
            main.goto_step_index(step.index)
            for panel in ("vectors", "layernorm"):
                tabs.active = panel
                main.refresh_panels()
                await pilot.pause()
                text = screen_text(app, "#panels")
                if panel == "vectors" and step.kind != "embed":
                    label = next(r.label for r in main.query_one("#sv-grid", HeatmapGrid).rows if r.values is not None)
                    assert label[:6] in text, (step.name, text)
        assert main.query_one(LayerNormPane).query_one("#layernorm-grid", HeatmapGrid).rows


@pytest.mark.parametrize(("name", "steps"), [("deep-postnorm", 14), ("noresidual", None)])
async def test_post_norm_and_no_residual_steps_draw(store, name: str, steps: int | None) -> None:
    gpt, _ = traced(name)
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        main = app.main
        for step in main.place.trace.steps[:steps]:
            main.goto_step_index(step.index)
            main.query_one("#panels").active = "vectors"
            main.refresh_panels()
            await pilot.pause()
            text = screen_text(app, "#vectors")
            if step.kind == "residual":
                assert "Post-norm: the next step is a LayerNorm of this sum" in text
            if step.kind == "attention":
                assert ("No residual: this output is the new stream" in text) == (name == "noresidual")
            if step.kind != "embed":
                assert short_hook(step.out_hook) in text or step.kind == "unembed", (step.name, text)
