"""The whole model at a glance: the embedding, every block's sublayers in the order this model wires them, the
final LayerNorm and the unembedding — the current step lit, the stream's ‖x‖ after each block for the cursor
token, and every box a click away from its step."""

from __future__ import annotations

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from model import Step
from tutor.i18n import pick
from tutor.model_words import norm_named
from tutor.number_style import visible_piece
from tutor.stream_points import residual_points
from tutor.view import View
from tutor.widgets.live_static import LiveStatic
from tutor.widgets.step_bar import short_name

WORDS: dict[str, tuple[str, str]] = {
    "title": ("{model}: {blocks} blocks, {wiring}", "{model}：{blocks} 个块，{wiring}"),
    "pre": ("pre-norm, each block x ← x + F(LN(x))", "pre-norm，每块 x ← x + F(LN(x))"),
    "post": ("post-norm, each block x ← LN(x + F(x))", "post-norm，每块 x ← LN(x + F(x))"),
    "none": ("no LayerNorm, each block x ← x + F(x)", "没有 LayerNorm，每块 x ← x + F(x)"),
    "pre_nores": ("no residual, each block x ← F(LN(x))", "没有残差，每块 x ← F(LN(x))"),
    "post_nores": ("no residual, each block x ← LN(F(x))", "没有残差，每块 x ← LN(F(x))"),
    "none_nores": ("no residual, each block x ← F(x)", "没有残差，每块 x ← F(x)"),
    "tokens": ("{n} tokens", "{n} 个词元"),
    "norms": (
        "right: ‖x‖ of {token}'s stream after the embedding, after each block's attention → MLP",
        "右边：{token} 的残差流在嵌入之后、每块注意力之后 → MLP 之后的 ‖x‖",
    ),
    "guess": ("next: {piece} {p:.1%}", "下一个：{piece} {p:.1%}"),
    "how": (
        "▸ this step · click a box to go to its step · ↓↑ step · PgDn a block",
        "▸ 当前这一步 · 点一个方框就跳到那一步 · ↓↑ 逐步 · PgDn 逐块",
    ),
}
LABEL = 6  # cells for the row's name: "B15 │"


def wiring_key(norm: str, residual: bool) -> str:
    return norm if residual else f"{norm}_nores"


class OverviewPanel(VerticalScroll):
    """A vertical scroll (a 16-block model is taller than a small window) holding the diagram."""

    DEFAULT_CSS = "OverviewPanel { height: 1fr; } OverviewPanel > LiveStatic { padding: 0 1; }"

    def compose(self) -> ComposeResult:
        yield LiveStatic(id="overview-diagram")

    def show(self, view: View) -> None:
        lines, current_line = overview_lines(view)
        self.query_one("#overview-diagram", LiveStatic).show_content(Text("\n").join(lines), len(lines))
        # the lit row in view: a deep model's current block may be below a small window's fold
        if current_line < self.scroll_y + 1 or current_line >= self.scroll_y + self.size.height - 1:
            self.scroll_to(y=max(0, current_line - self.size.height // 2), animate=False)


def step_box(step: Step, current: int) -> Text:
    """One sublayer as a box a click goes to: the current one lit."""
    here = step.index == current
    style = Style(bold=True, reverse=True) if here else Style()
    style += Style.from_meta({"@click": f"screen.goto_step({step.index})"})
    return Text(f"{'▸' if here else ' '}{short_name(step)} ", style=style)  # ▸: lit without colour too


def overview_lines(view: View) -> tuple[list[Text], int]:
    """The diagram's lines, and which of them holds the current step."""
    trace, lang, config = view.trace, view.lang, view.gpt.config
    steps, current = trace.steps, view.step_index
    token = view.token
    norms = {
        point.hook: float(np.linalg.norm(trace[point.hook][token].astype(np.float64)))
        for point in residual_points(trace)
    }
    words = norm_named(pick(WORDS, wiring_key(config.norm, config.residual), lang), config, lang)
    lines = [Text(pick(WORDS, "title", lang, model=view.gpt.name, blocks=config.n_layers, wiring=words), style="bold")]
    here = f"{token} {visible_piece(trace.pieces[token])}" if trace.pieces else ""
    lines.append(Text(pick(WORDS, "norms", lang, token=here), style="dim"))

    def row(name: str, boxes: list[Step], after: str) -> Text:
        line = Text(f"{name:>{LABEL - 2}} │", style="dim")
        for k, step in enumerate(boxes):
            if k:
                line.append("→", style="dim")
            line.append_text(step_box(step, current))
        if after:
            line.append("  " + after, style="dim")
        return line

    first_block = min((step.index for step in steps if step.block is not None), default=len(steps))
    before = [step for step in steps if step.block is None and step.index < first_block]
    end = [step for step in steps if step.block is None and step.index > first_block]
    embed_norm = norms.get("blocks.0.hook_resid_pre")
    tokens = pick(WORDS, "tokens", lang, n=len(trace.tokens))
    lines.append(row("", before, f"{tokens} · ‖x‖ {embed_norm:.2f}" if embed_norm is not None else tokens))
    for block in range(config.n_layers):
        boxes = [step for step in steps if step.block == block]
        mid, post = norms.get(f"blocks.{block}.hook_resid_mid"), norms.get(f"blocks.{block}.hook_resid_post")
        after = " → ".join(f"{value:.2f}" for value in (mid, post) if value is not None)
        lines.append(row(f"B{block}", boxes, f"‖x‖ {after}" if after else ""))
    top = trace.top_k(1, token)[0] if trace.tokens else None
    guess = pick(WORDS, "guess", lang, piece=visible_piece(top[1]), p=top[2]) if top else ""
    lines.append(row("", end, guess))
    lines.append(Text(pick(WORDS, "how", lang), style="dim"))
    block = steps[current].block  # the row it is on: after the two heading lines, the start, block by block, the end
    current_line = 2 + (block + 1 if block is not None else 0 if current < first_block else config.n_layers + 1)
    return lines, current_line
