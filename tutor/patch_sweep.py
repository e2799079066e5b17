"""The patching view's numbers: the other prompt of the learner's patch put back into the prompt on screen, one
point of the residual stream at a time (`model.patching.resid_pre_grid`: every block's input at every position),
and how much of the other prompt's next-token preference each patch brings back.

Which preference: the other prompt's first guess after its last token (`answer`) against the prompt's own first
guess (`wrong`; its second when the two agree), as logit[answer] − logit[wrong] at the last position. Computed
with the pass (panels never run the model), only while a patch is among the edits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model import GPT, EditError, Trace
from model.patching import logit_difference, resid_pre_grid


@dataclass(frozen=True)
class PatchSweep:
    """The restored share per (block, position) of logit[answer] − logit[wrong], patching `source` into the
    prompt; `problem` instead of a grid when there is nothing to restore (one line)."""

    source: str
    answer: str = ""
    wrong: str = ""
    source_difference: float = 0.0  # logit[answer] − logit[wrong], the other prompt's run
    prompt_difference: float = 0.0  # the same, the prompt's own (clean) run
    grid: np.ndarray | None = None  # [block, position]: 0 nothing restored, 1 all of it
    problem: str = ""


def answer_and_wrong(source: Trace, prompt: Trace) -> tuple[int, int]:
    """The other prompt's first guess, and the prompt's first guess other than it."""
    answer = int(np.argmax(source.logits[-1]))
    order = np.argsort(-prompt.logits[-1], kind="stable")
    wrong = int(order[0]) if int(order[0]) != answer else int(order[1])
    return answer, wrong


def patch_sweep(gpt: GPT, source_text: str, source: Trace, prompt: Trace) -> PatchSweep:
    """Patch `source` (the run of `source_text`) into `prompt` (a run without edits) at every block's input."""
    answer, wrong = answer_and_wrong(source, prompt)
    piece = gpt.tokenizer.piece
    try:
        grid = resid_pre_grid(gpt, source, prompt, answer, wrong)
    except EditError as error:
        return PatchSweep(source_text, piece(answer), piece(wrong), problem=str(error))
    return PatchSweep(
        source_text,
        piece(answer),
        piece(wrong),
        float(logit_difference(source.logits, answer, wrong)),
        float(logit_difference(prompt.logits, answer, wrong)),
        grid,
    )
