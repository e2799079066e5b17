"""The attention panel: every head small, the selected one large. What each small map draws must be the trace's
own pattern, cell by cell, a masked cell a dot; the selected query follows the token keys; it fits 12 heads,
a 60-token prompt, and 80×24."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import make_app, screen_text, settle
from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip

import model
from model import GPT
from tutor.number_style import shade_glyph, visible_piece
from tutor.panels.attention_panel import AttentionPanel, attended, cell_style
from tutor.widgets.mini_maps import GAP, MARK, MASKED, MiniMap, MiniMaps, map_layout, window

PROMPT = "猫追狗的一是"
LONG = ("猫追狗的一是在不了有和这中大为上个我以要他时来用们生到作地于出就分对成会可" * 2)[
    :60
]  # 60 tokens of the tiny model


def chars(strip: Strip) -> list[tuple[str, Segment]]:
    """The strip one terminal cell at a time: (character, its segment)."""
    return [(ch, seg) for seg in strip for ch in seg.text]


def drawn_maps(mini: MiniMaps) -> tuple[dict[int, dict[tuple[int, int], Segment]], dict[int, set[int]]]:
    """What the small maps draw: for each map (by index), its cells' segments by (row, column), and the rows
    marked ▸ in it."""
    layout = mini.current_layout()
    assert layout is not None
    cells: dict[int, dict[tuple[int, int], Segment]] = {i: {} for i in range(len(mini.maps))}
    marked: dict[int, set[int]] = {i: set() for i in range(len(mini.maps))}
    for band in range(layout.bands):
        for index, row in enumerate(layout.rows):
            for sub in range(layout.cell_height):
                y = 1 + band * layout.band_height + 1 + index * layout.cell_height + sub
                line = chars(mini.render_line(y))
                for slot in range(layout.per_band):
                    m = band * layout.per_band + slot
                    if m >= len(mini.maps):
                        break
                    x0 = slot * (layout.slot + GAP)
                    if line[x0][0] == MARK:
                        marked[m].add(row)
                    for c, col in enumerate(layout.cols):
                        x = x0 + 1 + c * layout.cell_width
                        text = "".join(ch for ch, _ in line[x : x + layout.cell_width])
                        if sub == 0:
                            cells[m][(row, col)] = Segment(text, line[x][1].style)
    return cells, marked


def assert_maps_are_the_pattern(app, block: int) -> MiniMaps:
    """Every head's small map: each cell drawn is its pattern value's glyph on its colour; a masked one a dot."""
    trace = app.main.place.trace
    mini = app.main.query_one("#attention", AttentionPanel).heads
    pattern = trace[f"blocks.{block}.attn.hook_pattern"].astype(np.float64)
    cells, _ = drawn_maps(mini)
    assert len(cells) == trace.config.n_heads
    for head, drawn in cells.items():
        assert drawn, f"head {head} draws no cell"
        for (q, k), segment in drawn.items():
            if trace.config.causal and k > q:
                assert segment.text.strip() == MASKED, (head, q, k)
                assert segment.style is not None and segment.style.dim
            else:
                p = pattern[head, q, k]
                assert segment.text == shade_glyph(p) * len(segment.text), (head, q, k, p, segment.text)
                assert segment.style is not None and segment.style.bgcolor == cell_style(p).bgcolor, (head, q, k)
    return mini


# -- the layout, on its own ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_maps", [1, 4, 12])
@pytest.mark.parametrize("n", [1, 3, 11, 60])
@pytest.mark.parametrize("size", [(70, 20), (70, 8), (150, 30), (30, 6)])
def test_the_layout_fits_its_room_and_keeps_the_focus_in_view(n_maps: int, n: int, size: tuple[int, int]) -> None:
    width, height = size
    for focus in {0, n // 2, n - 1}:
        layout = map_layout(n_maps, n, n, width, height, (focus, focus), title_width=len(str(n_maps - 1)))
        assert layout is not None
        assert layout.height <= height
        assert layout.per_band * layout.slot + (layout.per_band - 1) * GAP <= width
        assert layout.per_band * layout.bands >= n_maps > (layout.bands - 1) * layout.per_band
        assert focus in layout.rows and focus in layout.cols
        assert layout.rows.start >= 0 and layout.rows.stop <= n and layout.cols.stop <= n


def test_a_window_is_centred_on_its_focus_inside_the_ends() -> None:
    assert window(5, 60, 30) == range(28, 33)
    assert window(5, 60, 0) == range(0, 5)
    assert window(5, 60, 59) == range(55, 60)
    assert window(10, 3, 1) == range(0, 3)


def test_what_fits_whole_is_drawn_whole_in_the_biggest_cells() -> None:
    layout = map_layout(4, 3, 3, 70, 20, (2, 2))
    assert layout is not None and (layout.cell_width, layout.cell_height) == (4, 2)
    assert (len(layout.rows), len(layout.cols), layout.bands) == (3, 3, 1)


# -- in the app --------------------------------------------------------------------------------------------------


async def test_every_small_map_is_its_heads_pattern_and_the_big_one_the_selected_head(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        app.main.goto_step_name("blocks.1.attn")
        await pilot.press("f4")
        await pilot.pause()
        mini = assert_maps_are_the_pattern(app, 1)
        layout = mini.current_layout()
        assert len(layout.rows) == len(layout.cols) == len(PROMPT)  # a short prompt: every cell in view
        assert [m.selected for m in mini.maps] == [h == 1 for h in range(4)]
        text = screen_text(app, "#attention")
        assert "Block 1 · head 1/4" in text and "· = masked" in text
        pattern = app.main.place.trace["blocks.1.attn.hook_pattern"][1]
        last = len(PROMPT) - 1
        row = next(line.split()[2:] for line in text.split("\n") if line.startswith(f"{last} {PROMPT[last]} "))
        assert row == [f"{p:.2f}" for p in pattern[last]]


async def test_the_read_out_is_the_selected_rows_argmax_and_entropy(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        app.main.goto_step_name("blocks.0.attn")
        await pilot.press("f4", "f4", "alt+left")
        await pilot.pause()
        q = len(PROMPT) - 2
        row = app.main.place.trace["blocks.0.attn.hook_pattern"][2, q].astype(np.float64)[: q + 1]
        k = int(np.argmax(row))
        entropy = -sum(p * math.log2(p) for p in row if p > 0)
        text = " ".join(screen_text(app, "#attention").split())
        assert f"Head 2, query {q} {PROMPT[q]}: most weight on key {k} {PROMPT[k]}, {row[k]:.2f}" in text
        assert f"entropy {entropy:.2f} bits ≤ log₂ {q + 1} = {math.log2(q + 1):.2f}" in text
        assert f"as spread as {2**entropy:.1f} equal keys" in text


def test_attended_reads_only_the_keys_a_query_sees() -> None:
    pattern = np.array([[1.0, np.nan, np.nan], [0.25, 0.75, np.nan], [0.5, 0.25, 0.25]])
    assert attended(pattern, 0) == (0, 1.0, 0.0, 1)
    key, weight, entropy, seen = attended(pattern, 1)
    assert (key, weight, seen) == (1, 0.75, 2) and entropy == pytest.approx(-(0.25 * -2 + 0.75 * math.log2(0.75)))
    assert attended(pattern, 2) == (0, 0.5, 1.5, 3)


async def test_the_selected_query_is_marked_in_every_map_and_follows_the_token_keys(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *PROMPT)
        await settle(pilot)
        app.main.goto_step_name("blocks.0.attn")
        await pilot.pause()
        panel = app.main.query_one("#attention", AttentionPanel)
        for keys in ([], ["alt+left"], ["alt+left", "alt+left"], ["alt+right"]):
            await pilot.press(*keys)
            await pilot.pause()
            token = app.main.place.token
            _, marked = drawn_maps(panel.heads)
            assert all(rows == {token} for rows in marked.values()), (token, marked)
            grid = panel.grid
            assert [row.highlight for row in grid.rows] == [q == token for q in range(len(PROMPT))]
            label = next(seg for seg in grid.render_line(1 + token - round(grid.scroll_y)) if seg.text.strip())
            assert label.text.startswith(f"{token} {PROMPT[token]}") and label.style.reverse
            assert f"▸ = query {token} {PROMPT[token]}" in screen_text(app, "#attention")


async def test_a_long_prompt_keeps_the_selected_query_in_the_window(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *LONG)
        await settle(pilot)
        app.main.goto_step_name("blocks.2.attn")
        await pilot.pause()
        panel = app.main.query_one("#attention", AttentionPanel)
        for moves in (0, 25, 34):  # the last token, one in the middle, the first
            await pilot.press(*["alt+left"] * moves)
            await pilot.pause()
            token = app.main.place.token
            layout = panel.heads.current_layout()
            assert len(layout.rows) < len(LONG) and token in layout.rows and token in layout.cols
            _, marked = drawn_maps(panel.heads)
            assert all(rows == {token} for rows in marked.values())
            assert_maps_are_the_pattern(app, 2)
            header = "".join(seg.text for seg in panel.grid.render_line(0))
            assert f"{token} {LONG[token]}" in header  # the big grid scrolled sideways to the query's own key
            shown = " ".join(screen_text(app, "#attention").split())
            assert f"rows {layout.rows[0]}–{layout.rows[-1]}, columns {layout.cols[0]}–{layout.cols[-1]} of 60" in shown
        assert app.main.place.token == 0
        stayed = 0  # moves that kept a window a centred one would have moved
        for _ in range(30):
            before = panel.heads.current_layout()
            await pilot.press("alt+right")
            await pilot.pause()
            token, after = app.main.place.token, panel.heads.current_layout()
            if token in before.rows and token in before.cols:  # still inside: the window stays, the marker moves
                assert (after.rows, after.cols) == (before.rows, before.cols)
                stayed += after.rows != window(len(after.rows), len(LONG), token)
            else:  # it left: centred on the token again
                assert after.rows == window(len(after.rows), len(LONG), token)
            _, marked = drawn_maps(panel.heads)
            assert all(rows == {token} for rows in marked.values())
        assert stayed


async def test_twelve_heads_wrap_or_shrink_and_each_is_its_own_pattern(store, make_gpt) -> None:
    gpt: GPT = make_gpt(n_heads=12, d_model=24)
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的一是在不了")
        await settle(pilot)
        app.main.goto_step_name("blocks.1.attn")
        await pilot.press("shift+f4")
        await pilot.pause()
        mini = assert_maps_are_the_pattern(app, 1)
        layout = mini.current_layout()
        assert layout.bands > 1 or layout.cell_width == 1
        assert [m.title for m in mini.maps] == [str(h) for h in range(12)] and mini.maps[11].selected
        assert "head 11/12" in screen_text(app, "#attention")


async def test_without_a_causal_mask_nothing_is_masked_and_the_title_says_so(store, make_gpt) -> None:
    app = make_app(store, gpt=make_gpt(causal=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        app.main.goto_step_name("blocks.0.attn")
        await pilot.pause()
        mini = assert_maps_are_the_pattern(app, 0)
        cells, _ = drawn_maps(mini)
        assert all(seg.text.strip() != MASKED for drawn in cells.values() for seg in drawn.values())
        text = " ".join(screen_text(app, "#attention").split())  # the title may wrap at a space
        assert "(no causal mask)" in text and "masked" not in text


async def test_at_80x24_the_big_grid_stays_alone_with_a_line_of_heads(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        app.main.goto_step_name("blocks.1.attn")
        await pilot.press("f4")
        await pilot.pause()
        panel = app.main.query_one("#attention", AttentionPanel)
        assert panel.has_class("-small") and not panel.heads.display
        text = screen_text(app, "#attention")
        assert "Heads: 0 [1] 2 3" in text and "All 4 heads" not in text
        pattern = app.main.place.trace["blocks.1.attn.hook_pattern"][1]
        row = next(line.split()[2:] for line in text.split("\n") if line.startswith("3 的 "))
        assert row == [f"{p:.2f}" for p in pattern[3]]


async def test_chinese_words_and_a_step_in_the_block_draws_nothing_again(store) -> None:
    app = make_app(store, lang="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"猫追狗的")
        await settle(pilot)
        app.main.goto_step_name("blocks.0.attn")
        await pilot.pause()
        text = screen_text(app, "#attention")
        assert "全部 4 个头，▸ = 查询 3 的" in text and "权重最大的是键" in text and "被掩码遮住" in text
        panel = app.main.query_one("#attention", AttentionPanel)
        strips = [panel.heads.render_line(y) for y in range(panel.heads.size.height)]
        key = panel.heads._key
        view = app.main.view()
        for step in view.trace.steps:
            if step.block == 0:  # any step of block 0: the same maps, the same strips
                panel.show(type(view)(**{**view.__dict__, "step_index": step.index}))
        assert panel.heads._key is key
        assert all(panel.heads.render_line(y) is strip for y, strip in enumerate(strips))
        assert not panel.heads.set_maps(
            panel.heads.maps,
            caption=panel.heads.caption,
            selected_row=panel.heads.selected_row,
            focus=panel.heads.focus_cell,
            style_for=panel.heads.style_for,
            fraction=panel.heads.fraction,
            glyph=panel.heads.glyph,
            window_words=panel.heads.window_words,
            reserve=panel.heads.reserve,
            share=panel.heads.share,
        )


async def test_one_token_and_an_empty_prompt(store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", "猫")
        await settle(pilot)
        app.main.goto_step_name("blocks.0.attn")
        await pilot.pause()
        assert_maps_are_the_pattern(app, 0)
        text = " ".join(screen_text(app, "#attention").split())
        assert "most weight on key 0 猫, 1.00" in text and "entropy 0.00 bits ≤ log₂ 1 = 0.00" in text
        await pilot.press("ctrl+u")
        await settle(pilot)
        panel = app.main.query_one("#attention", AttentionPanel)
        assert panel.heads.current_layout() is None and not panel.grid.rows


# -- the widget on its own: any grids, any colours ----------------------------------------------------------------


class MapsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield MiniMaps()


async def test_the_widget_draws_any_grids_with_the_callers_glyphs_and_fits_its_room() -> None:
    rng = np.random.default_rng(0)
    grids = [rng.uniform(-1, 1, (5, 7)) for _ in range(3)]
    grids[1][2, 3] = np.nan
    app = MapsApp()
    async with app.run_test(size=(40, 12)) as pilot:
        mini = app.query_one(MiniMaps)
        changed = mini.set_maps(
            [MiniMap(f"g{i}", g, i == 2) for i, g in enumerate(grids)],
            caption="three grids",
            selected_row=4,
            style_for=lambda v: Style(bgcolor="red" if v > 0 else "blue"),
            fraction=abs,
            glyph=shade_glyph,
        )
        await pilot.pause()
        assert changed and 0 < mini.size.height <= 12
        layout = mini.current_layout()
        assert layout.per_band * layout.slot + (layout.per_band - 1) * GAP <= 40
        cells, marked = drawn_maps(mini)
        for i, drawn in cells.items():
            assert marked[i] == ({4} if 4 in layout.rows else set())
            for (r, c), segment in drawn.items():
                v = grids[i][r, c]
                if np.isnan(v):
                    assert segment.text.strip() == MASKED
                else:
                    assert segment.text == shade_glyph(abs(v)) * layout.cell_width
                    assert segment.style.bgcolor.name == ("red" if v > 0 else "blue")
        assert (2, 3) in cells[1] or 3 not in layout.cols or 2 not in layout.rows
        first = "".join(seg.text for seg in mini.render_line(0))
        titles = "".join(seg.text for seg in mini.render_line(1))
        assert first.startswith("three grids") and "g0" in titles and "[g2]" in titles


async def test_a_gpt2_folder_with_twelve_heads_and_bpe_pieces(store, tmp_path) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors.numpy")
    from test_hf_gpt2 import write_folder

    folder = tmp_path / "gpt2-12"
    write_folder(folder, d=48, n_head=12)
    gpt = model.load(str(folder))
    assert gpt.config.n_heads == 12
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+u", *"The cat chased the dog.")
        await settle(pilot)
        app.main.goto_step_name("blocks.1.attn")
        await pilot.press("alt+left")
        await pilot.pause()
        mini = assert_maps_are_the_pattern(app, 1)
        assert len(mini.maps) == 12
        trace = app.main.place.trace
        q = app.main.place.token
        row = trace["blocks.1.attn.hook_pattern"][0, q].astype(np.float64)[: q + 1]
        k = int(np.argmax(row))
        pieces = [visible_piece(p) for p in trace.pieces]
        text = " ".join(screen_text(app, "#attention").split())
        assert f"Head 0, query {q} {pieces[q]}: most weight on key {k} {pieces[k]}, {row[k]:.2f}" in text
