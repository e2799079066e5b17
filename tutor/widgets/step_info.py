"""The current step in words: what it computes, what it reads and writes, and for the token cursor the numbers."""

from __future__ import annotations

import numpy as np
from rich.text import Text

from tutor.i18n import EMBED_FORMULAS, FORMULAS, t
from tutor.view import View
from tutor.widgets.live_static import LiveStatic


class StepInfo(LiveStatic):
    DEFAULT_CSS = "StepInfo { height: 4; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, view: View) -> None:
        step, lang = view.step, view.lang
        text = Text.assemble(
            (t("step_of", lang, i=step.index, n=len(view.trace.steps) - 1) + " · ", "dim"),
            (step.label(lang), "bold"),
            "\n",
            (EMBED_FORMULAS[view.gpt.config.positional] if step.kind == "embed" else FORMULAS[step.kind], "italic"),
            no_wrap=True,
            overflow="ellipsis",
        )
        text.append(f"\n{t('reads', lang)} {step.in_hook}", style="dim")
        if step.added_hook:
            text.append(f" {t('adds', lang)} {step.added_hook}", style="dim")
        text.append(f" → {t('writes', lang)} {step.out_hook}", style="dim")
        if view.n_tokens:
            before = view.trace[step.in_hook][view.token].astype(np.float64)
            after = view.trace[step.out_hook][view.token].astype(np.float64)
            text.append(f"\n[{view.token}] ")
            text.append(f"‖x‖ {np.linalg.norm(before):.3f} → {np.linalg.norm(after):.3f}", style="bold")
            text.append(f"   μ {before.mean():+.3f} → {after.mean():+.3f}   σ {before.std():.3f} → {after.std():.3f}")
        self.show_content(text, "four lines")
