"""The patching view, at the top of the Residual tab while a patch is among the edits: the other prompt put back
into the prompt on screen at every block's input and every position, one at a time, as a heatmap of how much of
the other prompt's preference each brings back (tutor/patch_sweep.py computes it with the pass)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tutor.i18n import Words, say
from tutor.number_style import diverging_style, visible_piece
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid

WORDS: dict[str, Words] = {
    "title": (
        "Patching “{src}” into “{prompt}”, one point at a time: the share of logit[“{a}”] − logit[“{w}”] at the last"
        " token it brings back ({src_d} in “{src}”, {prompt_d} here; 1 = all of it, 0 = none)",
        "把“{src}”的值一次一处换进“{prompt}”：最后一个词元处 logit[“{a}”] − logit[“{w}”] 恢复了多少"
        "（“{src}”里是 {src_d}，这里是 {prompt_d}；1 = 全部恢复，0 = 没有变化）",
    ),
    "problem": ("Patching “{src}” into “{prompt}”: {why}", "把“{src}”换进“{prompt}”：{why}"),
    "row": ("B{b} input", "第 {b} 块输入"),
}


class PatchingPanel(Vertical):
    """A title, then the grid: a row per block (its input, hook_resid_pre), a column per position."""

    def compose(self) -> ComposeResult:
        yield Static(classes="patching-title", markup=False)
        yield HeatmapGrid(label_width=12)

    def show(self, view: View) -> None:
        sweep = view.edited.sweep if view.edited is not None else None
        self.display = sweep is not None
        if sweep is None:
            return
        lang, title = view.lang, self.query_one(".patching-title", Static)
        prompt = "".join(view.trace.pieces)
        if sweep.grid is None:
            title.update(say(WORDS["problem"], lang, src=sweep.source, prompt=prompt, why=sweep.problem))
            self.query_one(HeatmapGrid).set_rows([], [])
            return
        title.update(
            say(
                WORDS["title"],
                lang,
                src=sweep.source,
                prompt=prompt,
                a=visible_piece(sweep.answer),
                w=visible_piece(sweep.wrong),
                src_d=f"{sweep.source_difference:+.2f}",
                prompt_d=f"{sweep.prompt_difference:+.2f}",
            )
        )
        columns = [f"{pos} {visible_piece(piece)}" for pos, piece in enumerate(view.trace.pieces)]
        rows = [
            GridRow(say(WORDS["row"], lang, b=block), values, block == view.block)
            for block, values in enumerate(sweep.grid)
        ]
        self.query_one(HeatmapGrid).set_rows(
            rows, columns, scale=1.0, style_for=diverging_style, number=lambda v: f"{v:+.2f}"
        )
