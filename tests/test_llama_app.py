"""A Llama-family folder (a random Qwen2-shaped one) in the app at 120×40 with a Chinese prompt: the steps say
grouped-query attention and the gated MLP, the Attention tab says which key/value head each query head reads, the
tokens strip shows the bytes of a split character, never "�", and every tab draws at the attention, MLP and
unembedding steps, forwards and backwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import make_app, screen_text, settle

import model
from tutor.catalogue import PANEL_LIST

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")
from test_llama_family import write_llama


async def test_a_qwen2_folder_in_the_app(store, tmp_path: Path) -> None:
    write_llama(tmp_path / "qwen2")
    gpt = model.load(tmp_path / "qwen2")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+u", *"猫追狗小猫")
        await settle(pilot)
        pieces = app.main.place.trace.pieces
        assert any(piece.startswith("<0x") for piece in pieces)  # 小's bytes are not one token in this vocabulary
        strip = screen_text(app, "#tokens")
        assert "<0x" in strip and "\ufffd" not in strip
        app.main.goto_step_name("blocks.1.attn")
        tabs = app.screen.query_one("#panels")
        tabs.active = "attention"
        app.main.refresh_panels()
        await settle(pilot)
        text = " ".join(screen_text(app).split())
        assert "Block 1 · Grouped-query attention" in text and "out = z W_O" in text and "+ b_O" not in text
        assert "query heads 0–1 share key/value head 0" in " ".join(screen_text(app, "#attention").split())
        await pilot.press("f4", "f4", "f4")  # head 3
        await settle(pilot)
        assert "query heads 2–3 share key/value head 1" in " ".join(screen_text(app, "#attention").split())
        app.main.goto_step_name("embed")
        tabs.active = "vectors"
        app.main.refresh_panels()
        await settle(pilot)
        assert "(q_i, q_{i+d/2})" in " ".join(screen_text(app, "#vectors").split())  # RoPE's pairs, Llama's way
        app.main.goto_step_name("blocks.0.mlp")
        app.main.refresh_panels()
        await settle(pilot)
        vectors = " ".join(screen_text(app, "#vectors").split())
        assert "gate x W_gate, before silu (mlp.hook_pre)" in vectors and "GELU" not in vectors
        assert "up projection x W_in (mlp.hook_pre_linear)" in vectors
        app.main.goto_step_name("blocks.1.ln1")
        tabs.active = "layernorm"
        app.main.refresh_panels()
        await settle(pilot)
        norm = " ".join(screen_text(app, "#layernorm").split())
        assert "x̂ = x / rms (ln1.hook_xhat)" in norm and "μ)/√(σ²+ε) (ln1" not in norm  # every x̂ row RMSNorm's
        from tutor.panels.logit_lens_panel import formula_of

        assert formula_of(gpt) == "softmax(RMSNorm_final(x)·W_U)"  # the lens reads out through the model's own end
        for backward, name in ((False, "blocks.0.mlp"), (True, "blocks.1.attn")):
            if backward:
                await pilot.press("ctrl+r")
                await settle(pilot)
            app.main.goto_step_name(name)
            for panel in (p.name for p in PANEL_LIST if p.tab):
                tabs.active = panel
                app.main.refresh_panels()
                await pilot.pause()
                assert "\ufffd" not in screen_text(app, "#tokens")


LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 32,
}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_llama3_scaled_folder_shows_its_scaled_angles_and_says_so(store, tmp_path: Path, lang: str) -> None:
    """head size 8 at base 50: wavelengths 6.3 (kept, < 32/4), 16.7 (blended), 44.4 and 118 (divided by 8, > 32)."""
    import numpy as np

    from tutor.panels.vectors_panel import VectorsPanel
    from tutor.widgets.dials import Dials
    from tutor.widgets.heatmap import HeatmapGrid

    write_llama(tmp_path / "m", family="Llama", rope_scaling=LLAMA3)
    gpt = model.load(tmp_path / "m")
    omega = model.model_rope_frequencies(gpt.config)
    plain = model.rope_frequencies(gpt.config.d_head, 50.0)
    assert omega[0] == plain[0] and omega[3] == plain[3] / 8 and plain[1] / 8 < omega[1] < plain[1]
    app = make_app(store, gpt=gpt, lang=lang)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+u", *"猫追狗的人")
        await settle(pilot)
        app.main.goto_step_name("embed")
        app.screen.query_one("#panels").active = "vectors"
        app.main.refresh_panels()
        await settle(pilot)
        vectors = " ".join(screen_text(app, "#vectors").split())
        if lang == "en":
            assert "Llama 3 scaling (factor 8, trained on 32 positions)" in vectors
            assert "fewer than 8 keeps its speed" in vectors
        else:  # Chinese wraps anywhere: read it without the line breaks
            assert "Llama3缩放（factor8，原训练长度32个位置）" in "".join(vectors.split())
        n = len(app.main.place.trace.pieces)
        angles = app.main.query_one(VectorsPanel).query_one("#angles-grid", HeatmapGrid)
        scaled = np.mod(np.arange(n)[:, None] * omega, 2 * np.pi)
        assert np.allclose([row.values for row in angles.rows if row.values is not None], scaled, atol=1e-5)
        slowest = app.main.query_one(VectorsPanel).query_one(Dials).dials[-1]  # pair 3: ω divided by 8
        assert slowest.title.endswith(f"ω={omega[3]:.3g}") and slowest.caption[1].endswith(f"{omega[3]:+.2f}")


async def test_the_positions_explorer_turns_a_llama3_folder_by_its_scaled_frequencies(store, tmp_path: Path) -> None:
    """The explorer's RoPE tab on a half-split, scaled model: its own angles and a note that says both (the
    half-split note once raised KeyError on its braces)."""
    import numpy as np
    from helpers import grid_values, open_experiment

    from tutor.screens.experiments.positions import rope_angles
    from tutor.widgets.heatmap import HeatmapGrid

    write_llama(tmp_path / "m", family="Llama", rope_scaling=LLAMA3)
    gpt = model.load(tmp_path / "m")
    app = make_app(store, gpt=gpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_experiment(pilot, "positions")
        await settle(pilot)
        angles = grid_values(app.screen.query_one("#pos-rope", HeatmapGrid))
        n = len(angles)
        expected = rope_angles(model.angle_table(n, model.model_rope_frequencies(gpt.config)))
        assert np.allclose(angles, expected, atol=1e-6)
        app.screen.query_one("#pos-tabs").active = "pos-rope-tab"
        await settle(pilot)
        note = " ".join(screen_text(app, "#pos-rope-note").split())
        assert "(q_i, q_{i+d/2})" in note and "Llama 3 scaling (factor 8, trained on 32 positions)" in note
