"""LayerNorm at a norm step: μ and σ per token before, after normalising, after γ and β; ‖x̂‖ against √d —
and below the table, the vectors themselves as heatmap rows: the selected token's x → x̂ → y, then every token's.
For a model whose norms are RMSNorm the same tab shows x̂ = x / rms and y = γ·x̂: the rms column in place of
√(σ²+ε), μ left in (μ(x̂) is not 0), no β."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll

from model import Step, Trace
from tutor.edits import norm_edit
from tutor.i18n import t
from tutor.number_style import visible_piece
from tutor.panels.step_vectors_panel import dims, ln_prefix, norm_token_rows, short_hook, token_rows
from tutor.step_words import step_label
from tutor.text_table import Column, text_table
from tutor.view import View
from tutor.widgets.heatmap import GridRow, HeatmapGrid
from tutor.widgets.live_static import LiveStatic


def norm_step_for(view: View) -> Step | None:
    """The norm step to show: the current one, else the next one ahead, else the last one before."""
    norms = [s for s in view.trace.steps if s.kind == "norm"]
    if not norms:
        return None
    ahead = [s for s in norms if s.index >= view.step_index]
    return ahead[0] if ahead else norms[-1]


class LayerNormPanel(LiveStatic):
    DEFAULT_CSS = "LayerNormPanel { padding: 0 1; }"

    def show(self, view: View) -> None:
        self.redraw = partial(self.show, view)  # the table is cut to the width: again if the width was not right
        lang, trace = view.lang, view.trace
        step = norm_step_for(view)
        if not view.n_tokens:
            self.show_content(t("empty_prompt", lang), "empty")
            return
        if step is None:
            self.show_content(t("no_norm", lang), "none")
            return
        prefix = ln_prefix(step)  # "blocks.0.ln1"
        rms = view.gpt.config.is_rms
        x = trace[step.in_hook].astype(np.float64)
        x_hat = trace[prefix + ".hook_xhat"].astype(np.float64)
        y = trace[step.out_hook].astype(np.float64)
        eps = view.gpt.config.ln_eps
        scale = trace[prefix + ".hook_scale"][:, 0]
        mu = x.mean(axis=-1) if rms else trace[prefix + ".hook_mean"][:, 0]  # RMSNorm takes no μ: x's own, left in
        bypass = norm_edit(trace, prefix)
        bypassed = bypass is not None and bypass.frozen_from is None
        if bypassed:  # what if: LN(x) = x. The trace holds the identity's 0 and 1; the columns say x's own μ, σ
            mu = x.mean(axis=-1)
            scale = np.sqrt((x * x).mean(axis=-1) + eps) if rms else np.sqrt(x.var(axis=-1) + eps)
        d = x.shape[-1]
        columns = [Column(shrink=True)]  # narrow: the token labels give way, never the digits
        heads = ("μ", "σ", "rms" if rms else "√(σ²+ε)", "μ(x̂)", "σ(x̂)", "‖x̂‖", "μ(y)", "σ(y)")
        columns += [Column(h, justify="right") for h in heads]
        # each token's statistics, one reduction over all tokens a column (each row reduced alone, as before)
        x_std, x_hat_mean, x_hat_std = x.std(axis=-1), x_hat.mean(axis=-1), x_hat.std(axis=-1)
        y_mean, y_std = y.mean(axis=-1), y.std(axis=-1)
        rows = [
            [
                Text(f"{pos} {visible_piece(piece)} ", style="reverse" if pos == view.token else ""),
                f"{mu[pos]:+.3f}",
                f"{x_std[pos]:.3f}",
                f"{scale[pos]:.3f}",
                f"{x_hat_mean[pos]:+.3f}",
                f"{x_hat_std[pos]:.3f}",
                f"{np.linalg.norm(x_hat[pos]):.3f}",
                f"{y_mean[pos]:+.3f}",
                f"{y_std[pos]:.3f}",
            ]
            for pos, piece in enumerate(trace.pieces)
        ]
        table = text_table(columns, rows, width=self.available_width or None, gap=1)
        gamma = view.gpt.params[prefix + ".g"]
        label = step_label(step, lang, view.gpt.config.norm_kind)
        title = Text(t("rms_title" if rms else "ln_title", lang, label=label), style="bold")
        if step.index != view.step_index:
            title.append(t("ln_ahead", lang, n=step.index + 1), style="dim")  # numbered as the step line, from 1
        legend = Text(
            f"{t('ln_input', lang)}: μ, σ  →  {t('rms_xhat' if rms else 'ln_xhat', lang)}: "
            + ("" if rms else "≈0, ≈1, ")
            + f"‖x̂‖ ≈ √{d} = {math.sqrt(d):.2f}  →  {t('rms_output' if rms else 'ln_output', lang)}",
            style="dim",
        )
        if bypassed:
            legend = Text(t("rms_bypassed" if rms else "ln_bypassed", lang), style="bold yellow")
        elif bypass is not None:
            legend = Text(t("rms_frozen" if rms else "ln_frozen", lang), style="bold yellow")
        stats = dict(gm=f"{gamma.mean():.3f}", gs=f"{gamma.std():.3f}")
        if rms:
            gamma_line = Text(t("rms_gamma", lang, **stats), style="dim")
        else:
            beta = view.gpt.params[prefix + ".b"]
            gamma_line = Text(
                t("ln_gamma", lang, **stats, bm=f"{beta.mean():+.3f}", bs=f"{beta.std():.3f}"), style="dim"
            )
        self.show_content(Text("\n").join([title, legend, *table, gamma_line]), view.n_tokens)


def layernorm_rows(view: View, step: Step) -> list[GridRow]:
    """The rows under the table: the selected token's x, x̂, γ, β, y, then x̂ and y of every token."""
    trace, lang, prefix = view.trace, view.lang, ln_prefix(step)
    rows = norm_token_rows(trace, view.gpt, step, view.token, lang)
    xhat_hook = prefix + ".hook_xhat"
    xhat_words, y_words = ("sv_rms_xhat", "sv_rms_y") if view.gpt.config.is_rms else ("sv_ln_xhat", "sv_ln_y")
    rows += token_rows(trace, t(xhat_words, lang, hook=short_hook(xhat_hook)), trace[xhat_hook], view.token)
    return rows + token_rows(trace, t(y_words, lang, hook=short_hook(step.out_hook)), trace[step.out_hook], view.token)


class LayerNormPane(Vertical):
    """The LayerNorm tab: the stats table (scrolls when the tab is short), the vectors' rows in the rest."""

    DEFAULT_CSS = """
    /* a stable gutter: the table is made for one width whether it scrolls or not (no second making); no room
       kept for a horizontal scrollbar it never has (its auto height counted one, a blank row) */
    LayerNormPane > VerticalScroll {
        height: auto; max-height: 70%; scrollbar-gutter: stable; scrollbar-size-horizontal: 0;
    }
    LayerNormPane > HeatmapGrid { height: 1fr; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._trace: Trace | None = None  # what the grid shows: this trace, at _shown = (norm step, token, lang)
        self._shown: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield LayerNormPanel()
        yield HeatmapGrid(label_width=16, id="layernorm-grid")

    def show(self, view: View) -> None:
        self.query_one(LayerNormPanel).show(view)
        grid = self.query_one("#layernorm-grid", HeatmapGrid)
        step = norm_step_for(view) if view.n_tokens else None
        key = (step.index if step else None, view.token, view.lang)
        if view.trace is self._trace and key == self._shown:
            return  # the same rows: set again they would only be drawn again
        self._trace, self._shown = view.trace, key
        grid.display = step is not None
        if step is not None:
            grid.set_rows(layernorm_rows(view, step), dims(view.gpt.config.d_model))
