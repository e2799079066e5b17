"""The current step in words: what it computes, what it reads and writes, and for the token cursor the numbers."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.widgets import Static

from tutor.i18n import FORMULAS, t
from tutor.view import View


class StepInfo(Static):
    DEFAULT_CSS = "StepInfo { height: auto; padding: 0 1; }"

    def show(self, view: View) -> None:
        step, lang = view.step, view.lang
        text = Text.assemble(
            (t("step_of", lang, i=step.index, n=len(view.trace.steps) - 1) + " · ", "dim"),
            (step.label(lang), "bold"),
            "   ",
            (FORMULAS[step.kind], "italic"),
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
        self.update(text)
