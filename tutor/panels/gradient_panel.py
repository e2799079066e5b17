"""The backward pass at the current step above, ‖∂L/∂x‖ at every point of the stream below."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from tutor.panels.backward_step import BackwardStep
from tutor.panels.residual_panel import ResidualPanel
from tutor.view import View


class GradientPanel(Vertical):
    DEFAULT_CSS = "GradientPanel { height: auto; } GradientPanel > ResidualPanel { margin-top: 1; }"

    def compose(self) -> ComposeResult:
        yield BackwardStep()
        yield ResidualPanel(grads=True)

    def show(self, view: View) -> None:
        self.query_one(BackwardStep).show(view)
        self.query_one(ResidualPanel).show(view)
