"""Screenshots of the app at 80×24 and 120×40, in Chinese and English, compared with accepted ones.

After a deliberate change of the look (or of the shipped weights or lessons), look at the new
screenshots and accept them with `pytest tests/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import model
from tutor.app import TutorApp
from tutor.paths import content_dir
from tutor.progress import Progress, ProgressStore

# "typed" (ctrl+u, 猫追狗 from the start) is not a state of its own: the first lesson's prompt is 猫追狗, so it drew
# the start screen again; the states below type it first anyway.
STATES = {
    "start": [],
    "layernorm": ["ctrl+u", *"猫追狗", "shift+up", "down"],
    "residual": ["ctrl+u", *"猫追狗", "shift+up", "pagedown", "pagedown", "down", "down"],
    # block 0's first residual add, the cursor on 追: its ‖x‖ line on top, the logit lens settling on 狗 from B0 mlp
    "lens": ["ctrl+u", *"猫追狗", "shift+up", "down", "down", "down", "alt+left"],
    # backwards from the unembedding: the final LayerNorm, then block 3's residual add with its two paths
    "backward": ["ctrl+u", *"猫追狗的", "shift+up", "ctrl+r", "down", "down"],
    "similarity": ["ctrl+u", *"猫追狗的", "shift+up", "pagedown", "pagedown", *["f6"] * 5],
    # every head of block 1 small, head 1 large with its digits, query 3 marked; a 40-token prompt windows the maps
    "attention": ["ctrl+u", *"猫追狗的", "shift+up", "pagedown", "pagedown", "down", "f4"],
    "attention-long": [
        "ctrl+u",
        *"猫追狗的一是在不了有和这中大为上个我以要他时来用们生到作地于出就分对成会可猫追狗的一是",
        "shift+up",
        "pagedown",
        "down",
        *["alt+left"] * 12,
    ],
    # the step's own vectors: the MLP opens them (hidden units before and after GELU); the unembedding's rows of W_U
    "mlp-vectors": ["ctrl+u", *"猫追狗", "shift+up", *["down"] * 5],
    "unembed-vectors": ["ctrl+u", *"猫追狗", "shift+down", *["f6"] * 4],  # next → ∂L/∂x → cosine → overview →
    # the whole model at a glance (the overview), at the unembedding
    "overview": ["ctrl+u", *"猫追狗", "shift+down", *["f6"] * 3],
    # the depth lab (F10 → The depth lab): as it opens (the loss curves), and its ‖∂L/∂θ‖ per block
    "depth": ["experiment:depth"],
    "depth-grad": ["experiment:depth", "v", "v", "v"],
    # the next-token panel at T = 0.7, top-k 10, after one seeded draw: model p beside drawn p, "KV cache: 1 new …"
    "sample": ["ctrl+u", *"猫追狗", "shift+down", "alt+shift+t", "alt+shift+k", "alt+shift+k", "alt+n"],
    # the positions explorer's pictures: the PE heatmap and waves, the PE(p)·PE(q) curve, RoPE's dials
    "positions-pictures": ["experiment:positions"],
    "positions-curve": ["experiment:positions", "f6"],
    "positions-dials": ["experiment:positions", "f6", "f6"],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("state", list(STATES))
def test_snapshot(snap_compare, tmp_path: Path, lang: str, size: tuple[int, int], state: str) -> None:
    store = ProgressStore(tmp_path / "progress.json")
    if state != "start":  # a panel in full: a learner who asked for everything; "start" is a new learner's screen
        store.save(Progress(last={"everything": True}))
    app = TutorApp(model.load("tiny"), lang, store=store, content=content_dir())

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        keys = STATES[state]
        if keys and size[0] < 110 and not keys[0].startswith("experiment:"):  # a small window shows the lesson:
            keys = ["f3", *keys]  # F3 for the panels
        for key in keys:
            if key.startswith("experiment:"):
                pilot.app.open_experiment(key.removeprefix("experiment:"))
            else:
                await pilot.press(key)
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
