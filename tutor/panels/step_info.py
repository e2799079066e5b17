"""The current step in words: what it computes, what it reads and writes, and for the token cursor the numbers."""

from __future__ import annotations

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.text import Text

from model import Step
from tutor.edits import edits_at, fitting
from tutor.i18n import t
from tutor.number_style import grad_text
from tutor.step_words import step_formula, step_label
from tutor.view import View
from tutor.widgets.live_static import LiveStatic


def hooks_line(step: Step, lang: str, width: int) -> str:
    """ "reads A adds B → writes C" in `width` cells, C always whole: what is written is the hook to look
    up in a trace. Narrower, the read hooks lose the block prefix they share with C ("…hook_mlp_out"),
    then their words ("A + B → writes C"), then their end ("…"); `width` 0 (not laid out yet) is no limit."""
    tail = f" → {t('writes', lang)} {step.out_hook}"
    reads = [(t("reads", lang), step.in_hook)] + ([(t("adds", lang), step.added_hook)] if step.added_hook else [])

    def head(names: list[tuple[str, str]]) -> str:
        return " ".join(f"{word} {name}" for word, name in names)

    line = head(reads) + tail
    if not width or cell_len(line) <= width:
        return line
    parts = step.out_hook.split(".")
    prefix = ".".join(parts[:2]) + "." if parts[0] == "blocks" and len(parts) > 2 else None
    if prefix:
        reads = [(word, "…" + name.removeprefix(prefix) if name.startswith(prefix) else name) for word, name in reads]
    line = head(reads) + tail
    if cell_len(line) <= width:
        return line
    line = " + ".join(name for _, name in reads) + tail  # "…hook_resid_mid + …hook_mlp_out → writes …"
    if cell_len(line) <= width:
        return line
    room = width - cell_len(tail) - 1  # a cell for "…"
    if room >= cell_len(t("reads", lang)) + 2:
        return set_cell_size(head(reads), room).rstrip() + "…" + tail
    return tail.lstrip()  # too narrow for anything but what is written (cut by the widget's own ellipsis)


class StepInfo(LiveStatic):
    DEFAULT_CSS = "StepInfo { height: 4; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    _view: View | None = None

    def show(self, view: View) -> None:
        self._view = view
        self.redraw = self._show_again  # the hooks' line is made for a width: made again for a new one
        step, lang = view.step, view.lang
        if view.backward:
            self.show_backward(view)
            return
        formula = step_formula(step, view.gpt.config)
        here = edits_at(step, fitting(view.edited))  # what if: this step is not what the formula says
        text = Text.assemble(
            # counted from 1, as lessons and heads are
            (t("step_of", lang, i=step.index + 1, n=len(view.trace.steps)) + " · ", "dim"),
            (step_label(step, lang, view.gpt.config.norm_kind), "bold"),
            "\n",
            ("✕ " + " · ".join(edit.words(lang) for edit in here) + "  ", "bold yellow") if here else "",
            (formula, "dim italic" if here else "italic"),
            no_wrap=True,
            overflow="ellipsis",
        )
        if view.reach.shows("hooks"):  # the names a trace keeps, from the lesson that names them
            text.append("\n" + hooks_line(step, lang, self.available_width), style="dim")
        if view.n_tokens:
            before = view.trace[step.in_hook][view.token].astype(np.float64)
            after = view.trace[step.out_hook][view.token].astype(np.float64)
            text.append(f"\n[{view.token}] ")
            text.append(f"‖x‖ {np.linalg.norm(before):.3f} → {np.linalg.norm(after):.3f}", style="bold")
            if view.reach.shows("stats"):  # μ and σ, from the LayerNorm lesson on
                text.append(
                    f"   μ {before.mean():+.3f} → {after.mean():+.3f}   σ {before.std():.3f} → {after.std():.3f}"
                )
        self.show_content(text, "four lines")

    def show_backward(self, view: View) -> None:
        """The step going back: what it does to the gradient, what it gets and hands on, and at the cursor
        the gradient's size before and after it, with the loss it all comes from."""
        step, lang, trace = view.step, view.lang, view.trace
        text = Text.assemble(
            (t("step_of", lang, i=step.index + 1, n=len(trace.steps)) + " · ", "dim"),
            (t("backward", lang) + " · ", "bold magenta"),
            (step_label(step, lang, view.gpt.config.norm_kind), "bold"),
            "\n",
            (step_formula(step, view.gpt.config, backward=True), "italic"),
            no_wrap=True,
            overflow="ellipsis",
        )
        text.append("\n" + t("grad_reads", lang, out=step.out_hook, into=step.in_hook), style="dim")
        if view.n_tokens and trace.has_grads and trace.loss is not None:
            enters = np.linalg.norm(trace[step.out_hook + "_grad"][view.token].astype(np.float64))
            leaves = np.linalg.norm(trace[step.in_hook + "_grad"][view.token].astype(np.float64))
            text.append(f"\nL {trace.loss:.3f}   [{view.token}] ")
            text.append(f"‖∂L/∂y‖ {grad_text(enters)} → ‖∂L/∂x‖ {grad_text(leaves)}", style="bold")
        elif view.n_tokens:
            text.append("\n" + t("grad_needs_two", lang), style="italic")
        self.show_content(text, "four lines")

    def _show_again(self) -> None:
        if self._view is not None:
            self.show(self._view)
