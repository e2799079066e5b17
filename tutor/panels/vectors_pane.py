"""The vectors tab: the token and position vectors at the embedding (VectorsPanel), the step's own vectors at every
other step (StepVectorsPanel); one of the two is shown, and draws the view."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from tutor.panels.step_vectors_panel import StepVectorsPanel
from tutor.panels.vectors_panel import VectorsPanel
from tutor.view import View


class VectorsPane(Vertical):
    def compose(self) -> ComposeResult:
        yield VectorsPanel()
        yield StepVectorsPanel()

    def show(self, view: View) -> None:
        embed = view.step.kind == "embed"
        vectors, step_vectors = self.query_one(VectorsPanel), self.query_one(StepVectorsPanel)
        if vectors.display != embed or step_vectors.display == embed:
            vectors.display, step_vectors.display = embed, not embed
        (vectors if embed else step_vectors).show(view)
