"""How far the lessons have taken the learner: what the panels and the footer show waits for the lesson that
explains it.

A new learner's first screen showed hook names, μ and σ, λ, PE(p)·PE(q), waves and a heatmap of positions at
step 1, and a footer of ten keys, before any lesson had said what they are. Each such detail (and each footer
key after the first few) names the lesson that introduces it; it is shown once the learner has opened that lesson
or a later one, and at once for everyone who asks for everything (the command palette's "Show everything", kept
for next time). A detail whose lesson is not among the lessons loaded (a teacher's own set) is always shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# detail → the id of the lesson that explains it
DETAILS: dict[str, str] = {
    "stats": "layernorm",  # μ and σ beside ‖x‖ in the step's numbers
    "hooks": "layernorm",  # "reads hook_… → writes hook_…": lesson 7 first names the hooks a trace keeps
    "positions": "sinusoidal",  # the positions' pictures at the embedding: λ, waves, PE(p)·PE(q), the base
}

# footer key (its action) → the id of the lesson that first uses it; the rest (↓↑, F3, alt+↓↑, F8, F9, F1) from
# the first lesson on. Every key works from the start: F1 lists them all.
FOOTER_KEYS: dict[str, str] = {
    "practice": "tokens",  # F10: the experiments, exercises and quick checks (lesson 1's quick check has its link)
    "lessons": "tokens",  # F2
    "toggle_language": "tokens",  # F5
    "move_token(1)": "tokens",  # alt+→
    "block(1)": "attention",  # PgDn
    "head(1)": "attention",  # F4
    "next_panel": "attention",  # F6
    "turn": "gradient-walk",  # ctrl+r: lesson 9 walks the gradient back
    "sample": "forward-pass",  # alt+n, alt+t: lesson 11 draws the next token
    "temperature(1)": "forward-pass",
}


@dataclass(frozen=True)
class Reach:
    """The details shown (`DETAILS`' names) and the footer keys held back (actions); `everything`: all shown."""

    shown: frozenset[str] = frozenset(DETAILS)
    held_keys: frozenset[str] = frozenset()
    everything: bool = True

    def shows(self, detail: str) -> bool:
        return self.everything or detail in self.shown


EVERYTHING = Reach()


def reach_of(order_of: Mapping[str, int], opened: Iterable[str], everything: bool = False) -> Reach:
    """The reach of a learner who has opened the lessons `opened`, among lessons whose ids map to their order
    (`order_of`): every detail whose lesson comes no later than the furthest opened — or is not loaded at all."""
    if everything:
        return EVERYTHING
    furthest = max(
        (order_of[lesson] for lesson in opened if lesson in order_of), default=min(order_of.values(), default=0)
    )

    def taught(lesson: str) -> bool:
        return lesson not in order_of or order_of[lesson] <= furthest

    return Reach(
        shown=frozenset(detail for detail, lesson in DETAILS.items() if taught(lesson)),
        held_keys=frozenset(action for action, lesson in FOOTER_KEYS.items() if not taught(lesson)),
        everything=False,
    )
