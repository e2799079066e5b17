"""The Residual tab: each token's ‖x‖ as lines, and the logit lens — softmax(LN_final(x)·W_Eᵀ) at every
stream point — for the cursor token. Every drawn number is compared with one recomputed here."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import make_app, screen_text, settle

import model
from model import logit_lens, softmax
from tutor.catalogue import PANELS
from tutor.lens import LensRow, lens_probabilities, lens_rows, top_tokens
from tutor.number_style import visible_piece
from tutor.panels.logit_lens_panel import LogitLensPanel, guess_text, prob_text
from tutor.panels.residual_lines import ResidualLines, shown_others
from tutor.panels.residual_panel import ResidualPanel, reached_points
from tutor.panels.stream_panel import StreamPanel
from tutor.sentences import settled_from
from tutor.stream_points import residual_points
from tutor.widgets.line_chart import LineChart, Series, place_labels
from tutor.widgets.panel_switcher import PanelSwitcher

VARIANTS = ["tiny", "postnorm", "nonorm", "noresidual", "deep-postnorm", "deep-nonorm", "deep-noresidual", "rope"]
PROMPT = "猫追狗"


def direct_lens(gpt: model.GPT, x: np.ndarray) -> np.ndarray:
    """The formula written out, in float64: LN_final(x) · W_Eᵀ, or x · W_Eᵀ without a final LayerNorm."""
    x = x.astype(np.float64)
    if gpt.config.has_final_norm:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        g, b = gpt.params["ln_final.g"].astype(np.float64), gpt.params["ln_final.b"].astype(np.float64)
        x = g * (x - mu) / np.sqrt(var + gpt.config.ln_eps) + b
    return x @ gpt.params["wte"].astype(np.float64).T


@pytest.mark.parametrize("name", VARIANTS)
def test_the_lens_is_the_formula_and_at_the_last_point_the_model_output(name: str) -> None:
    gpt = model.load(name)
    trace = gpt.run("猫追狗的一只猫")
    points = residual_points(trace)
    for point in points:
        np.testing.assert_allclose(logit_lens(gpt, trace[point.hook]), direct_lens(gpt, trace[point.hook]), atol=2e-4)
    # at the model's own [pos, d] shape the read-out of the last stream is its output, bit for bit
    assert np.array_equal(logit_lens(gpt, trace[points[-1].hook]), trace.logits)
    assert logit_lens(gpt, trace[points[-1].hook]).dtype == np.float32


@pytest.mark.parametrize("name", VARIANTS)
def test_the_panel_rows_are_the_lens_of_the_cursor_token(name: str) -> None:
    """The cursor-only product agrees with the lens of the whole stream; its last row is the model's output."""
    gpt = model.load(name)
    trace = gpt.run("猫追狗的一只猫")
    points = residual_points(trace)
    for token in range(len(trace.tokens)):
        probs = lens_probabilities(gpt, trace, token, points)
        whole = np.stack([softmax(logit_lens(gpt, trace[p.hook]).astype(np.float64))[token] for p in points])
        np.testing.assert_allclose(probs, whole, rtol=1e-4, atol=1e-6)  # float32 rounding of another shape
        assert np.array_equal(probs[-1], trace.next_token_probs(token))  # exactly the model's output
        rows = lens_rows(gpt, trace, token)
        assert rows[-1].top == trace.top_k(3, token)  # ids, pieces and probabilities, exactly
        assert rows[-1].final_rank == 1
        for row, p in zip(rows, whole, strict=True):
            assert [i for i, _, _ in row.top] == list(np.argsort(-p, kind="stable")[:3])


def test_top_tokens_is_a_stable_argsort_of_the_head() -> None:
    probs = np.array([0.1, 0.3, 0.05, 0.3, 0.25, 0.0])
    assert top_tokens(probs) == [1, 3, 4] == list(np.argsort(-probs, kind="stable")[:3])
    assert top_tokens(np.full(5, 0.2)) == [0, 1, 2]
    assert top_tokens(np.array([0.4, 0.6])) == [1, 0]


def test_settled_from_is_the_first_point_of_the_final_guess_s_last_run() -> None:
    assert settled_from([2, 1, 1, 1]) == 1
    assert settled_from([1, 2, 1, 1]) == 2
    assert settled_from([1, 1, 3, 1]) == 3  # the last point only
    assert settled_from([1, 1, 1]) == 0


def test_prob_text_fits_five_cells() -> None:
    assert [prob_text(p) for p in (0.739, 0.0004, 1.0, 0.99996)] == ["73.9%", "0.0%", "100%", "100%"]
    assert guess_text("<0x0F>long", 0.5).plain == "<0x0F… 50.0%"
    assert guess_text("猫猫猫猫", 0.5).plain == "猫猫 … 50.0%"  # cut by cells: six, not five characters


def test_tiny_on_cat_chases_dog() -> None:
    """What the lens shows on 猫追狗: the embedding reads the token itself back (tied embeddings); 追's
    guess 狗 leads from block 0's MLP on; 狗's final guess leads only at the very end."""
    gpt = model.load("tiny")
    trace = gpt.run(PROMPT)
    cat, chase, dog = (lens_rows(gpt, trace, token) for token in range(3))
    assert cat[0].top[0][1] == "猫" and chase[0].top[0][1] == "追"
    assert chase[-1].top[0][1] == "狗"
    assert chase[settled_from([row.final_rank for row in chase])].point.label("en") == "B0 mlp"
    assert settled_from([row.final_rank for row in dog]) == len(dog) - 1


# -- the line chart ------------------------------------------------------------------------------


def test_line_chart_named_ticks_marker_and_legend() -> None:
    assert place_labels([(0, "emb"), (2, "B0"), (8, "B1")], 12) == "emb     B1  "  # B0 would touch emb: every 2nd
    crowded = [(0, "emb"), *((2 + 3 * i, f"B{i}") for i in range(6))]  # three cells apart: "B10" would not fit
    assert place_labels(crowded, 20) == "emb  B1    B3    B5 "  # every second block, evenly
    assert place_labels([(0, "嵌入"), (6, "B0")], 8) == "嵌入  B0"  # 嵌入 takes four cells
    assert place_labels([(9, "B3")], 10) == "        B3"  # kept on the line
    chart = LineChart()
    chart.set_series(
        [Series("a", [0, 1, 2], [0, 0, 0], "red", "*"), Series("b", [0, 1, 2], [1, 1, 1], "grey", ".", legend=False)],
        x_marker=1,
    )
    cells = chart._plot_cells(5, 3, (0, 2), (0, 1), braille=False)
    assert ["".join(ch for ch, _ in row) for row in cells] == [".....", "  ┊  ", "*****"]
    assert [seg.text for line in chart.legend_lines(40) for seg in line] == ["━*━", " a  "]


async def test_the_lines_are_the_norms_and_mark_the_step(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        await pilot.press("down", "down", "down")  # block 0's first residual add
        await settle(pilot)
        main = app.main
        assert main.query_one("#panels").active == "residual"  # type: ignore[attr-defined]
        trace, token = main.place.trace, main.place.token
        lines = main.query_one(ResidualLines)
        assert lines.display and lines.size.height >= 9
        points = residual_points(trace)
        norms = np.array([np.linalg.norm(trace[p.hook].astype(np.float64), axis=-1) for p in points])
        assert lines.series[0].ys == norms[:, token].tolist() and "(cursor)" in lines.series[0].name
        assert [s.ys for s in lines.series[1:]] == [norms[:, pos].tolist() for pos in shown_others(token, 3)]
        _, current = reached_points(points, main.view())
        assert points[current].hook == "blocks.0.hook_resid_mid" and lines.x_marker == current
        text = screen_text(app, "#residual")
        assert "┊ this step: B0 attn" in text and "emb" in text and "B3" in text
        await pilot.press("alt+left")  # another token: its line on top
        await settle(pilot)
        assert lines.series[0].ys == norms[:, main.place.token].tolist()


def test_shown_others_are_the_nearest() -> None:
    assert shown_others(2, 5) == [0, 1, 3, 4]
    assert shown_others(0, 40, most=3) == [1, 2, 3]
    assert shown_others(20, 40, most=4) == [18, 19, 21, 22]


# -- the lens on screen --------------------------------------------------------------------------


def drawn_lens_rows(text: str, labels: list[str]) -> list[list[str]]:
    """The lens table's rows on screen, by their stream point labels (the lens comes before the table)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Logit lens"))
    rows = []
    for label in labels:
        line = next(line for line in lines[start:] if line.strip().lstrip("▶ ").startswith(label + " "))
        rows.append(line.strip().lstrip("▶ ")[len(label) :].split())
    return rows


def expected_fields(row: LensRow, k: int) -> list[str]:
    fields = []
    for _, piece, p in row.top[:k]:
        fields += [visible_piece(piece), prob_text(p)]
    return [*fields, prob_text(row.final_p), f"#{row.final_rank}"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["tiny", "postnorm", "nonorm", "noresidual", "deep-postnorm"])
async def test_the_drawn_lens_rows_are_the_recomputed_ones(store, name: str, lang: str) -> None:
    gpt = model.load(name)
    app = make_app(store, gpt=gpt, lang=lang)
    size = (120, 70) if gpt.config.n_layers > 4 else (120, 40)  # the whole lens in view: 33 rows for 16 blocks
    async with app.run_test(size=size) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        adds = [s.index for s in app.main.place.trace.steps if s.kind == "residual"]
        steps = adds[:1] if adds else [s.index for s in app.main.place.trace.steps if s.kind == "mlp"][:1]
        await pilot.press(*["down"] * steps[0])
        await settle(pilot)
        for _ in range(len(PANELS)):  # a residual add opens the Residual tab; without residuals F6 goes there
            if app.main.query_one("#panels", PanelSwitcher).active == "residual":
                break
            await pilot.press("f6")
            await settle(pilot)
        main = app.main
        text = screen_text(app, "LogitLensPanel")
        if lang == "zh":
            text = text.replace("Logit lens ·", "Logit lens")
        trace, token = main.place.trace, main.place.token
        rows = lens_rows(gpt, trace, token)
        k = 3 if "top 3" in text or "前 3 个" in text else 2
        drawn = drawn_lens_rows(text, [row.point.label(lang) for row in rows])
        assert drawn == [expected_fields(row, k) for row in rows]
        assert rows[-1].top[0][1:] == trace.top_k(1, token)[0][1:]
        cfg = gpt.config
        formula = "softmax(LN_final(x)·W_Eᵀ)" if cfg.has_final_norm else "softmax(x·W_Eᵀ)"
        assert formula in text and "TransformerLens" in text
        joined = "".join(text.split())
        if lang == "en":
            assert "notwhatthemodeloutputs" in joined
            assert ("post-normhasnofinalLayerNorm" in joined) == (cfg.norm == "post")
            assert ("hasnoLayerNormatall" in joined or "thismodelhasnoLayerNorm" in joined) == (cfg.norm == "none")
            assert ("Noresidualhere" in joined) == (not cfg.residual)
        else:
            assert "不是模型的输出" in joined
            assert ("post-norm没有最后的LayerNorm" in joined) == (cfg.norm == "post")
            assert ("这个模型没有LayerNorm" in joined) == (cfg.norm == "none")
            assert ("没有残差连接" in joined) == (not cfg.residual)
        once = main.lens.rows(main.place.gpt, main.place.trace, main.place.token)
        assert once is main.lens.rows(main.place.gpt, main.place.trace, main.place.token)  # read once each


async def test_at_80x24_the_table_stands_in_for_the_lines(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        await pilot.press("down", "down", "down")
        await settle(pilot)
        main = app.main
        assert not main.query_one(ResidualLines).display
        stream = main.query_one(StreamPanel)
        table, lens = stream.query_one(ResidualPanel), stream.query_one(LogitLensPanel)
        assert table.region.y < lens.virtual_region.y  # the table first, the lens below it
        text = screen_text(app, "#residual")
        assert "‖x‖ of the residual stream, token 2 狗" in text and "B3 mlp" in text
        await pilot.resize_terminal(120, 40)  # room again: the lines back, the lens above the table
        await settle(pilot)
        assert main.query_one(ResidualLines).display
        assert lens.virtual_region.y < table.virtual_region.y
        assert lens.region.bottom <= stream.region.bottom  # the whole lens in view under the chart at 120×40


async def test_a_step_key_repaints_the_marker_and_two_lens_rows_not_the_whole_tab(store, monkeypatch) -> None:
    """Bytes per step key: the chart sends its title row and the marker's two columns, the lens its two rows."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        main = app.main
        # the Residual tab kept from block 0's MLP to its add (a step key opens each step's own tab: the MLP's is
        # the Vectors tab; what is measured here is the panel's repaint when it is shown at both)
        monkeypatch.setattr(main, "panel_for", lambda step: "residual")
        await pilot.press("down", "down", "down", "down", "down")  # block 0's MLP
        await settle(pilot)
        lines, lens = main.query_one(ResidualLines), main.query_one(LogitLensPanel)
        before = [row.plain for row in lens.rows]
        calls: list[tuple[object, ...]] = []
        for widget in (lines, lens):
            original = widget.refresh

            def spy(*regions, _widget=widget, _original=original, **kwargs):  # type: ignore[no-untyped-def]
                calls.append((_widget, regions, kwargs))
                return _original(*regions, **kwargs)

            monkeypatch.setattr(widget, "refresh", spy)
        await pilot.press("down")  # the MLP's residual add: the same tab, the next stream point
        await settle(pilot)
        assert main.place.trace.steps[main.place.step_index].name == "blocks.0.mlp_add"
        chart_regions = [r for w, regions, _ in calls if w is lines for r in regions]
        lens_regions = [r for w, regions, _ in calls if w is lens for r in regions]
        assert chart_regions and all(r.width == 1 for r in chart_regions[1:]) and chart_regions[0].height == 1
        assert not any(kw.get("layout") for _, _, kw in calls)
        after = [row.plain for row in lens.rows]
        assert sorted(r.y for r in lens_regions) == [
            y for y, (a, b) in enumerate(zip(before, after, strict=True)) if a != b
        ]
        assert len(lens_regions) == 2  # the ▶ left one row for the next
        assert "┊ this step: B0 mlp" in screen_text(app, "#residual")


@pytest.mark.parametrize("key", ["alt+pagedown", "alt+down"])
async def test_at_80x24_the_keyboard_reaches_the_lens_below_the_table(store, key: str) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        if app.main.lesson_shown():  # a small window opens on the lesson: F3 swaps in the panels
            await pilot.press("f3")
        await pilot.press("down", "down", "down")  # block 0's first residual add: the Residual tab
        await settle(pilot)
        panel = app.main.query_one(StreamPanel)
        assert panel.scroll_y == 0 and panel.max_scroll_y > 0
        assert "Logit lens" not in screen_text(app)
        await pilot.press(key)  # alt+↓ scrolls the lesson while it is in view, the panel while it is not
        await settle(pilot)
        assert panel.scroll_y > 0 and "Logit lens" in screen_text(app)
        await pilot.press(key, key)
        await settle(pilot)
        assert panel.scroll_y == panel.max_scroll_y and "leads only at the last point" in screen_text(app)
        assert app.main.place.trace.steps[app.main.place.step_index].kind == "residual"  # the step stayed put
        await pilot.press("alt+pageup" if key == "alt+pagedown" else "alt+up")
        await settle(pilot)
        assert panel.scroll_y < panel.max_scroll_y


async def test_a_big_models_lens_is_read_in_the_worker_and_fills_in(store, monkeypatch) -> None:
    """GPT-2's lens (25 × 768 × 50,257 multiply-adds, ~80 ms) must not hold the keystroke: it is read in a
    worker, one line says so meanwhile, and the rows come in equal to the ones read on the spot."""
    from tutor import lens

    monkeypatch.setattr(lens, "INLINE_LENS", 0)  # tiny's lens as if it were GPT-2's
    read_in: list[str] = []
    real = lens.lens_rows
    release = threading.Event()

    def recording(gpt, trace, token):  # type: ignore[no-untyped-def]
        read_in.append(threading.current_thread().name)
        release.wait(10)  # held until the screen has been looked at
        return real(gpt, trace, token)

    monkeypatch.setattr(lens, "lens_rows", recording)  # read by the lens's runner, in its worker
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        await pilot.press("down", "down", "down")  # the first residual add: the Residual tab
        main, panel = app.main, app.main.query_one(LogitLensPanel)
        waiting = [line.plain for line in panel._lines_shown]
        assert any("in the background" in line and "1,044 logits" in line for line in waiting)
        release.set()
        await settle(pilot)
        assert read_in and all(name != threading.main_thread().name for name in read_in)
        text = screen_text(app, "LogitLensPanel")
        rows = real(main.place.gpt, main.place.trace, main.place.token)
        assert drawn_lens_rows(text, [row.point.label("en") for row in rows]) == [expected_fields(r, 3) for r in rows]
        assert "in the background" not in text
