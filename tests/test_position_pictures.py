"""Positional encoding as pictures: the heatmap, the waves, PE(p)·PE(q) against the distance, RoPE's dials.

Every drawn cell and point is compared with numbers recomputed from `model.sinusoidal_positions` (or the
learned table); the pictures are keyed by their inputs, so a keystroke that leaves them alone redraws nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import make_app, open_experiment, screen_text, settle
from rich.segment import Segment
from textual.app import App, ComposeResult

import model
from model import pe_distance, pe_dot_by_distance, pe_wavelengths, sinusoidal_positions
from tutor.number_style import diverging_style, shade_glyph
from tutor.panels.vectors_panel import VectorsPanel
from tutor.position_picture_data import dots_by_distance, rope_pair_angles, wave_dims
from tutor.widgets.dials import Dial, Dials, Hand, hand_cells
from tutor.widgets.line_chart import LineChart
from tutor.widgets.position_pictures import PositionPictures
from tutor.widgets.value_map import HALF, HEADER, ValueMap, glyph_fraction

BASES = [2.5, 10.0, 10000.0, 1e6]

# -- the maths -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("d", [4, 16, 64])
def test_the_dot_product_depends_only_on_the_distance(d: int, base: float) -> None:
    n = 64
    pe = sinusoidal_positions(n, d, base).astype(np.float64)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    assert np.allclose(pe @ pe.T, pe_dot_by_distance(distance, d, base), atol=1e-5)
    assert pe_dot_by_distance(0, d, base) == pytest.approx(d / 2)


@pytest.mark.parametrize("d", [4, 64])
def test_the_distance_between_two_positions_depends_only_on_how_far_apart_they_are(d: int) -> None:
    pe = sinusoidal_positions(64, d, 10000.0).astype(np.float64)
    k = np.arange(1, 40)
    for p in (0, 7, 24):
        assert np.allclose(np.linalg.norm(pe[p + k] - pe[p], axis=1), pe_distance(k, d, 10000.0), atol=1e-5)
    rows = pe_distance(k, d, np.array(BASES))  # a list of bases: one row each
    for row, base in zip(rows, BASES, strict=True):
        assert np.allclose(row, pe_distance(k, d, base))


@pytest.mark.parametrize("base", BASES)
def test_each_pair_turns_once_per_wavelength(base: float) -> None:
    d, n = 16, 40
    pe = sinusoidal_positions(n, d, base).astype(np.float64)
    wavelengths = pe_wavelengths(d, base)
    pos = np.arange(n)[:, None]
    assert np.allclose(pe[:, 0::2], np.sin(2 * math.pi * pos / wavelengths), atol=1e-6)
    assert np.allclose(pe[:, 1::2], np.cos(2 * math.pi * pos / wavelengths), atol=1e-6)
    assert wavelengths[0] == pytest.approx(2 * math.pi)


def test_wave_dims_are_sines_from_fast_to_slow() -> None:
    assert wave_dims(64) == (0, 16, 32, 62)
    assert wave_dims(4) == (0, 2)
    assert all(j % 2 == 0 for j in wave_dims(768))


def test_dots_by_distance_averages_each_diagonal() -> None:
    table = np.random.default_rng(0).normal(size=(6, 3))
    mean, low, high = dots_by_distance(table)
    pairs = [(p, p + 2) for p in range(4)]
    dots = [table[p] @ table[q] for p, q in pairs]
    assert mean[2] == pytest.approx(np.mean(dots)) and low[2] == pytest.approx(min(dots))
    assert high[2] == pytest.approx(max(dots))
    assert mean[0] == pytest.approx(np.mean((table**2).sum(axis=1)))


def test_rope_pair_angles_turn_by_the_distance() -> None:
    d_head, base = 16, 10000.0
    for pair in range(8):
        omega = 1 / base ** (2 * pair / d_head)
        a, b, delta = rope_pair_angles(9, 4, omega)
        assert a == pytest.approx((9 * omega) % (2 * math.pi), abs=1e-5)
        assert b == pytest.approx((4 * omega) % (2 * math.pi), abs=1e-5)
        assert delta == pytest.approx(math.remainder(5 * omega, 2 * math.pi), abs=1e-5)


# -- the widgets alone -----------------------------------------------------------------------------------------


class Host(App[None]):
    def __init__(self, *widgets: object) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self.widgets  # type: ignore[misc]


def cell_segments(value_map: ValueMap, y: int) -> list[Segment]:
    """The cells of line y of the map (after the label)."""
    strip = value_map.render_line(y)
    segments = [s for s in strip if s.text]
    return segments[1 : 1 + value_map.values.shape[1]]


def assert_map_draws(value_map: ValueMap, table: np.ndarray, no_color: bool) -> None:
    """Every cell in view is drawn from the table: half blocks in the two rows' colours, or shade glyphs."""
    scale = value_map.scale
    for y in range(HEADER, value_map.scrollable_content_region.height):
        line = y - HEADER + round(value_map.scroll_y)
        if line >= value_map.lines_of_rows():
            break
        cells = cell_segments(value_map, y)
        assert len(cells) == min(table.shape[1], value_map.scrollable_content_region.width - value_map.label_width)
        for j, cell in enumerate(cells):
            if no_color:
                assert cell.text == shade_glyph(glyph_fraction(float(table[line, j]), scale))
                continue
            upper, lower = float(table[2 * line, j]), float(table[2 * line + 1, j])
            assert cell.text == HALF
            assert cell.style.color == diverging_style(upper, scale).bgcolor
            assert cell.style.bgcolor == diverging_style(lower, scale).bgcolor


@pytest.mark.parametrize("no_color", [False, True])
async def test_value_map_cells_are_the_table(no_color: bool, monkeypatch) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    table = sinusoidal_positions(64, 64, 10000.0)
    value_map = ValueMap()
    app = Host(value_map)
    async with app.run_test(size=(90, 30)) as pilot:
        assert app.no_color == no_color
        assert value_map.set_values(table, scale=1.0, row_title="pos", column_title="PE", key=("k", 1))
        await pilot.pause()
        assert_map_draws(value_map, table, no_color)
        assert not value_map.set_values(table, scale=1.0, row_title="pos", column_title="PE", key=("k", 1))
        value_map.scroll_to(y=5, animate=False)
        await pilot.pause()
        assert_map_draws(value_map, table, no_color)  # scrolled: still the right rows
        if no_color:
            assert {s.text for y in range(2, 10) for s in cell_segments(value_map, y)} >= set("░▒▓█")


def test_glyph_fraction_reads_the_sign() -> None:
    assert shade_glyph(glyph_fraction(-1.0, 1.0)) == " "
    assert shade_glyph(glyph_fraction(1.0, 1.0)) == "█"
    assert shade_glyph(glyph_fraction(0.0, 1.0)) == "▒"


async def test_dials_put_each_label_past_its_hand() -> None:
    dials = Dials()
    app = Host(dials)
    hands = (Hand(0.0, "q", "blue"), Hand(math.pi / 2, "p", "red"))
    async with app.run_test(size=(60, 12)) as pilot:
        dials.set_dials([Dial("pair 0", hands, ("caption",))])
        await pilot.pause()
        rows = dials.plot_rows(dials.size.height)
        lines = ["".join(s.text for s in dials.render_line(y)) for y in range(dials.size.height)]
        assert lines[0].startswith("pair 0") and lines[1 + rows].startswith("caption")
        for hand in hands:
            (tx, ty), (lx, ly) = hand_cells(hand.angle, rows)
            assert lines[1 + ly][lx] == hand.label
            assert "\u2800" < lines[1 + ty][tx] <= "\u28ff"  # the tip: braille dots
        (_, _), (qx, qy) = hand_cells(0.0, rows)
        (_, _), (px, py) = hand_cells(math.pi / 2, rows)
        assert qx > px and py < qy  # → is right, ↑ is up


# -- in the app: the Vectors tab at the embedding step ------------------------------------------------------------


def pictures_of(app) -> PositionPictures:
    return app.main.query_one(VectorsPanel).query_one(PositionPictures)


async def test_vectors_panel_draws_the_sinusoidal_table(store) -> None:
    app = make_app(store)
    gpt = app.main.place.gpt
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        pictures = pictures_of(app)
        assert pictures.display and pictures.region.height >= 12
        cfg = gpt.config
        table = sinusoidal_positions(cfg.n_ctx, cfg.d_model, cfg.pos_base)
        value_map = pictures.value_map
        assert np.array_equal(value_map.values, table)
        assert value_map.region.height >= 4
        assert_map_draws(value_map, table, no_color=False)
        waves = {s.name: s for s in pictures.waves.series}
        assert list(waves) == ["dim 0 λ6.28", "dim 16 λ62.8", "dim 32 λ628", "dim 62 λ4.71e+04"]
        for j, series in zip(wave_dims(cfg.d_model), waves.values(), strict=True):
            assert np.array_equal(np.asarray(series.ys), table[:, j])
        (curve,) = pictures.dots.series
        pe = table.astype(np.float64)
        assert np.allclose(curve.ys, pe[0] @ pe.T, atol=1e-5)  # the curve is PE(0)·PE(k) …
        assert np.allclose(curve.ys[:54], pe[10] @ pe[10:].T, atol=1e-5)  # … and PE(10)·PE(10+k): the distance only
        gap = np.abs(pe @ pe.T - pe_dot_by_distance(np.abs(np.subtract.outer(range(64), range(64))), 64, 10000.0))
        assert pictures.gap == pytest.approx(gap.max())
        assert f"≤ {gap.max():.1e}." in str(pictures.query_one("#pp-note").render())
        assert value_map.marked == frozenset({2})  # the selected token's position is lit


async def test_typing_does_not_rebuild_the_pictures(store, monkeypatch) -> None:
    app = make_app(store)
    built: list[object] = []
    original = ValueMap.set_values

    def counting(self: ValueMap, *args: object, **kwargs: object) -> bool:
        redrawn = original(self, *args, **kwargs)
        if redrawn:
            built.append(kwargs.get("key"))
        return redrawn

    charts: list[str] = []
    set_series = LineChart.set_series

    def counting_charts(self: LineChart, *args: object, **kwargs: object) -> None:
        charts.append(str(self.id))
        set_series(self, *args, **kwargs)

    monkeypatch.setattr(ValueMap, "set_values", counting)
    monkeypatch.setattr(LineChart, "set_series", counting_charts)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追")
        await settle(pilot)
        before, charts_before = len(built), len(charts)
        await pilot.press(*"狗的猫", "alt+left", "down", "up")
        await settle(pilot)
        assert len(built) == before and len(charts) == charts_before  # same model, base, d: nothing rebuilt
        assert pictures_of(app).value_map.marked == frozenset({3})
        await pilot.press("ctrl+u")  # an empty prompt hides the pictures …
        await settle(pilot)
        assert not pictures_of(app).region.height
        await pilot.press(*"猫追")  # … and typing again shows them as they were, not rebuilt (GPT-2's: ~80 ms)
        await settle(pilot)
        assert pictures_of(app).region.height >= 12
        assert len(built) == before and len(charts) == charts_before
        await pilot.press("f5")  # another language: the titles change, so it is drawn again
        await settle(pilot)
        assert len(built) == before + 1


async def test_vectors_panel_learned_table(store) -> None:
    gpt = model.load("learned")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pictures = pictures_of(app)
        table = gpt.position_rows(0, gpt.config.n_ctx)
        assert np.array_equal(pictures.value_map.values, table)
        assert_map_draws(pictures.value_map, table, no_color=False)
        mean, low, high = (series.ys for series in pictures.dots.series)
        rows = table.astype(np.float64)
        dots = rows @ rows.T
        for k in (0, 1, 5, 63):
            assert mean[k] == pytest.approx(np.diagonal(dots, k).mean(), rel=1e-6)
            assert low[k] == pytest.approx(np.diagonal(dots, k).min(), rel=1e-6)
            assert high[k] == pytest.approx(np.diagonal(dots, k).max(), rel=1e-6)
        assert "Learned W_pos" in screen_text(app)


async def test_vectors_panel_rope_dials(store) -> None:
    gpt = model.load("rope")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        pictures = pictures_of(app)
        dials = pictures.query_one(Dials)
        assert dials.display and not pictures.value_map.display
        text = screen_text(app)
        d_head, base = gpt.config.d_head, gpt.config.pos_base
        for dial, pair in zip(dials.dials, (0, 4, 7), strict=True):
            a, b, delta = rope_pair_angles(3, 2, 1 / base ** (2 * pair / d_head))
            assert dial.caption == (f"p=3 {a:.2f} q=2 {b:.2f}", f"(p−q)·ω {delta:+.2f}")
            assert [h.angle for h in dial.hands] == [b, a]
            assert f"(p−q)·ω {delta:+.2f}" in text
        assert "pair 0 ω=1" in text and "pair 7 ω=0.000316" in text


async def test_vectors_panel_nope_says_so(store) -> None:
    app = make_app(store, gpt=model.load("nope"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "No positions here, so no picture" in screen_text(app)
        pictures = pictures_of(app)
        assert not any(w.display for w in (pictures.value_map, pictures.query_one(Dials)))


@pytest.mark.parametrize("name", ["tiny", "learned", "rope", "nope"])
async def test_vectors_panel_at_80x24_keeps_the_numbers(store, monkeypatch, name: str) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store, gpt=model.load(name), lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗")
        await settle(pilot)
        assert not pictures_of(app).display  # no room: the rows of numbers keep it
        assert "猫" in screen_text(app)
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert pictures_of(app).display  # room again: the pictures are back


# -- in the positions explorer -------------------------------------------------------------------------------------


async def test_explorer_pictures_follow_the_typed_base(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        screen = app.screen
        table_pictures = screen.query_one("#pos-table-pictures", PositionPictures)
        similarity = screen.query_one("#pos-similarity-pictures", PositionPictures)
        rope = screen.query_one("#pos-rope-pictures", PositionPictures)
        for base in (10.0, 1e6, 2.5):
            await pilot.press("ctrl+u", *f"{base:g}")
            await settle(pilot)
            assert screen.base == base
            table = sinusoidal_positions(64, 64, base)
            assert np.array_equal(table_pictures.value_map.values, table)
            assert_map_draws(table_pictures.value_map, table, no_color=False)
            for j, series in zip(wave_dims(64), table_pictures.waves.series, strict=True):
                assert np.array_equal(np.asarray(series.ys), table[:, j])
                assert f"λ{2 * math.pi * base ** ((j // 2 * 2) / 64):.3g}" in series.name
            curve, trained = similarity.dots.series
            pe = table.astype(np.float64)
            assert np.allclose(curve.ys, pe[0] @ pe.T, atol=1e-5)
            assert trained.dashed and trained.name == "base 10000, trained"
            assert np.array_equal(trained.ys, pe_dot_by_distance(np.arange(64), 64, 10000.0))
            p = max(1, len(screen.gpt.prompt_tokens(screen.prompt)[0]) - 1)  # the prompt's last token
            dials = rope.query_one(Dials).dials
            a, _, delta = rope_pair_angles(p, 0, 1.0)  # pair 0 turns 1 radian a position, at any base
            assert dials[0].caption[1] == f"(p−q)·ω {delta:+.2f}"
            assert dials[0].hands[1].angle == a
        assert table_pictures.value_map.marked == frozenset(range(3))  # the prompt's positions
        await pilot.press("alt+p", "alt+p")  # 10, then back to the trained base: one curve
        await settle(pilot)
        assert len(similarity.dots.series) == 1


async def test_explorer_prompt_keystrokes_keep_the_pictures(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        screen = app.screen
        value_map = screen.query_one("#pos-table-pictures", PositionPictures).value_map
        key, drawn = value_map.key, set(value_map._lines)
        assert drawn
        await pilot.press("tab", "end", *"的猫")
        await settle(pilot)
        assert screen.prompt == "猫追狗的猫"
        assert value_map.key == key  # not rebuilt: only the marks moved, the unmarked rows' lines are reused
        assert drawn & set(value_map._lines) and len(drawn & set(value_map._lines)) > 10
        assert value_map.marked == frozenset(range(5))


async def test_explorer_at_80x24_hides_the_pictures(store, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(store, lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_experiment(pilot, "positions")
        await pilot.press("f6", "f6")
        await settle(pilot)
        assert not app.screen.query_one("#pos-rope-pictures").display
        assert "位置 1" in screen_text(app)
