"""LayerNorm at a norm step: μ and σ per token before, after normalising, after γ and β; ‖x̂‖ against √d."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from rich.text import Text

from model import Step
from tutor.i18n import t
from tutor.step_words import step_label
from tutor.text_table import Column, text_table
from tutor.view import View, visible_piece
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
        prefix = step.out_hook.rsplit(".", 1)[0]  # "blocks.0.ln1"
        x = trace[step.in_hook].astype(np.float64)
        x_hat = trace[prefix + ".hook_xhat"].astype(np.float64)
        y = trace[step.out_hook].astype(np.float64)
        mu, scale = trace[prefix + ".hook_mean"][:, 0], trace[prefix + ".hook_scale"][:, 0]
        d = x.shape[-1]
        columns = [Column(shrink=True)]  # narrow: the token labels give way, never the digits
        columns += [Column(h, justify="right") for h in ("μ", "σ", "√(σ²+ε)", "μ(x̂)", "σ(x̂)", "‖x̂‖", "μ(y)", "σ(y)")]
        rows = [
            [
                Text(f"{pos} {visible_piece(piece)} ", style="reverse" if pos == view.token else ""),
                f"{mu[pos]:+.3f}",
                f"{x[pos].std():.3f}",
                f"{scale[pos]:.3f}",
                f"{x_hat[pos].mean():+.3f}",
                f"{x_hat[pos].std():.3f}",
                f"{np.linalg.norm(x_hat[pos]):.3f}",
                f"{y[pos].mean():+.3f}",
                f"{y[pos].std():.3f}",
            ]
            for pos, piece in enumerate(trace.pieces)
        ]
        table = text_table(columns, rows, width=self.available_width or None, gap=1)
        params = view.gpt.params
        gamma, beta = params[prefix + ".g"], params[prefix + ".b"]
        title = Text(t("ln_title", lang, label=step_label(step, lang)), style="bold")
        if step.index != view.step_index:
            title.append(f"  (→ {t('step', lang)} {step.index})", style="dim")
        legend = Text(
            f"{t('ln_input', lang)}: μ, σ  →  {t('ln_xhat', lang)}: ≈0, ≈1, ‖x̂‖ ≈ √{d} = {math.sqrt(d):.2f}"
            f"  →  {t('ln_output', lang)}",
            style="dim",
        )
        gamma_line = Text(
            t(
                "ln_gamma",
                lang,
                gm=f"{gamma.mean():.3f}",
                gs=f"{gamma.std():.3f}",
                bm=f"{beta.mean():+.3f}",
                bs=f"{beta.std():.3f}",
            ),
            style="dim",
        )
        self.show_content(Text("\n").join([title, legend, *table, gamma_line]), view.n_tokens)
