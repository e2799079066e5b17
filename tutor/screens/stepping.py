"""The main screen's moves through the pass: step, block, token, head, direction and tab; each moves the
`Place`, opens the panel for the step, and draws."""

from __future__ import annotations

from textual.screen import Screen

from model import Step
from tutor.catalogue import FOLLOWING_PANELS, PANEL_FOR_KIND, TABS
from tutor.i18n import t
from tutor.place import Place
from tutor.widgets.panel_switcher import PanelSwitcher


class Stepping(Screen[None]):
    """Keys that move the learner through the pass: each moves the Place, then draws.

    A part of `MainScreen` (tutor/screens/main.py), which holds the state these methods use."""

    # MainScreen's, set in its __init__
    place: Place
    lang: str
    panel_switcher: PanelSwitcher  # the tabs, held (a query on every step key would walk the screen)

    def moved(self, moved: bool = True) -> None:
        """After a move of the step: the panel for the step's kind, the picture, the step kept for next time."""
        if not moved or self.place.trace is None:
            return
        tabs = self.panel_switcher
        step = self.place.trace.steps[self.place.step_index]
        if tabs.display and tabs.asked not in FOLLOWING_PANELS:  # before the panels are drawn: one layout and
            tabs.active = self.panel_for(step)  # one frame for the key
        self.refresh_panels()
        self.host.remember(step=step.name)

    def panel_for(self, step: Step) -> str:
        """The panel a step opens: backwards always the gradient's, forwards the one for the step's kind."""
        return "gradient" if self.place.backward else PANEL_FOR_KIND[step.kind]

    def goto_step_index(self, index: int) -> None:
        self.moved(self.place.go(index))

    def action_step(self, delta: int) -> None:
        self.moved(self.place.step_by(delta))

    def action_goto_step(self, index: int) -> None:
        """A click on a step's box (the overview): to that step."""
        self.moved(self.place.go(index))

    def action_first_step(self) -> None:
        self.moved(self.place.first_step())

    def action_last_step(self) -> None:
        self.moved(self.place.last_step())

    def action_block(self, delta: int) -> None:
        """To the first step of the next (or previous) block; past the last block, to the end."""
        self.moved(self.place.block_by(delta))

    def action_goto_block(self, block: int) -> None:
        if self.place.trace is not None and not self.place.goto_block(block):
            self.notify(t("block_range", self.lang, last=self.place.gpt.config.n_layers - 1), severity="warning")
        else:
            self.moved()

    def goto_step_name(self, name: str) -> bool:
        if self.place.trace is None:
            self.place.goto_step(name)  # kept for the pass on its way
            return True
        if not self.place.goto_step(name):
            self.no_such_step(name)
            return False
        self.moved()
        return True

    def no_such_step(self, name: str) -> None:
        self.notify(t("no_step", self.lang, model=self.place.gpt.name, name=name), severity="warning")

    def action_move_token(self, delta: int) -> None:
        if self.place.move_token(delta):
            self.refresh_panels()

    def action_turn(self) -> None:
        """b: the pass turned round — the step bar from the unembedding back, the gradient panel — at the same step."""
        self.place.turn()
        tabs = self.panel_switcher
        if self.place.trace is not None and tabs.display:
            tabs.active = self.panel_for(self.place.trace.steps[self.place.step_index])
        self.ensure_grads()  # the gradients of the pass on screen
        self.refresh_panels()

    def action_head(self, delta: int) -> None:
        self.place.move_head(delta)
        self.refresh_panels()

    def action_next_panel(self) -> None:
        tabs = self.panel_switcher
        order = list(TABS)  # "tokens" is always in view, not a tab
        asked = tabs.asked  # not `active`: the panel asked for may still be mounting
        tabs.active = order[(order.index(asked) + 1) % len(order)] if asked in order else order[0]
