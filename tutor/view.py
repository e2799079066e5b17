"""What the panels look at: one trace, the current step, token and head, and what the screen has read
besides (the lens). How a number reads in a cell: tutor/number_style.py; the stream's points:
tutor/stream_points.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from model import GPT, Step, Trace
from tutor.draw_settings import Sampling
from tutor.reach import EVERYTHING, Reach

if TYPE_CHECKING:
    from tutor.edits import EditedRun
    from tutor.lens import LensRow

FORWARD, BACKWARD = "forward", "backward"  # the directions the step bar can run in


@dataclass(frozen=True)
class View:
    """Everything a panel needs to draw itself. Panels never run the model; they read this."""

    gpt: GPT
    trace: Trace
    step_index: int
    token: int  # the token cursor, a position in the trace
    head: int
    lang: str
    direction: str = FORWARD  # BACKWARD: the step bar runs from the unembedding back, the panels show ∂L/∂x
    sampling: Sampling = field(default_factory=Sampling)  # the next-token panel's temperature, top-k, seed, last draw
    reach: Reach = EVERYTHING  # the details the lessons have explained so far (tutor/reach.py)
    lens: list[LensRow] | None = None  # the cursor token's logit lens, when the screen has it (tutor/lens.py)
    edited: EditedRun | None = None  # `trace` is an edited run: its clean twin, for the differences (tutor/edits.py)

    @property
    def backward(self) -> bool:
        return self.direction == BACKWARD

    @property
    def step(self) -> Step:
        return self.trace.steps[self.step_index]

    @property
    def n_tokens(self) -> int:
        return len(self.trace.tokens)

    @property
    def block(self) -> int:
        """The block the current step is in; before block 0 it is 0, after the last it is the last."""
        if self.step.block is not None:
            return self.step.block
        return 0 if self.step.kind == "embed" else self.gpt.config.n_layers - 1
