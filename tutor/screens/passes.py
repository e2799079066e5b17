"""The main screen's model passes: the prompt typed, one runner (the latest pass wins), the pass received."""

from __future__ import annotations

from dataclasses import replace

from textual import on
from textual.screen import Screen
from textual.widgets import Input

import model
from model import GPT, Trace
from tutor.draw_settings import Sampled
from tutor.edits import Edit, EditedRun, fitting, model_edits
from tutor.lens import LensReadings
from tutor.panels.next_token_panel import sampled_text
from tutor.patch_sweep import patch_sweep
from tutor.place import Place
from tutor.runner import PassRunner, Stop, failure_words
from tutor.widgets.panel_switcher import PanelSwitcher

# a pass: its prompt, model and trace, the token drawn for it, and (with edits) the clean run beside it
Ready = tuple[str, GPT, Trace, Sampled | None, EditedRun | None]


class Passes(Screen[None]):
    """The prompt and the passes: every keystroke's pass goes through `self.passes`, one `PassRunner`.

    A part of `MainScreen` (tutor/screens/main.py), which holds the state these methods use."""

    # MainScreen's, set in its __init__
    place: Place
    lang: str
    passes: PassRunner[Ready]
    lens: LensReadings
    generate_pause: float
    sample_text: str | None
    requested: tuple[str, GPT, bool] | None
    drawn_trace: Trace | None

    @on(Input.Changed, "#prompt")
    def prompt_changed(self, event: Input.Changed) -> None:
        # kept now, not when the model is done: a line that drops (or a busy machine) must not lose what was typed
        self.host.remember(prompt=event.value)
        if event.value != event.input.value or (self.place.trace is not None and event.value == self.place.prompt):
            return  # overtaken by a newer keystroke, or on screen already (first frame, or prompt_typed)
        if event.value == self.sample_text:
            return  # a token drawn: its one new position is being computed already (see draw_token)
        self.run_model(event.value)  # a big model (GPT-2): typing must not wait; the latest pass wins

    def prompt_typed(self, value: str) -> None:
        """The prompt's text changed (called inside the keystroke). A quick model runs here and now, so
        that the character and its numbers come in one frame; a slow one waits for `prompt_changed`."""
        if value == self.sample_text:
            return  # the text of a draw (see draw_token): not a second, full pass
        self.sample_text = None
        if self.place.stop_generating():  # the learner typed: a run of draws gives way
            self.notify_stopped()
        if self.drawn_trace is not None and value != self.place.prompt and self.passes.quick_for(self.work_of(value)):
            self.run_model(value, inline=True)

    def set_prompt(self, text: str) -> None:
        prompt = self.query_one("#prompt", Input)
        if prompt.value == text:
            self.run_model(text)
        else:
            prompt.value = text  # Input.Changed runs the model
        prompt.cursor_position = len(text)
        if self.drawn_trace is None:  # the very first picture: a pass of a few tokens takes milliseconds, wait for it
            self.run_model(text, inline=True)

    def needs_grads(self) -> bool:
        """Backwards, and in the gradient panel, the pass records the gradients too (≈ 3× a forward pass)."""
        return self.place.backward or (
            self.is_mounted and self.query_one("#panels", PanelSwitcher).active == "gradient"
        )

    def work_of(self, prompt: str, grads: bool | None = None) -> int:
        """A pass's size for the runner's guess of its time: the prompt's characters (about its tokens), three
        times over with the gradients."""
        return len(prompt) * (3 if (self.needs_grads() if grads is None else grads) else 1)

    def run_model(self, prompt: str, inline: bool = False) -> None:
        """A pass of `prompt` on the model shown — with its gradients when they are shown, with the learner's
        edits when there are any (and then the clean pass beside it, taken from the screen when it is there)."""
        gpt, grads, edits = self.place.gpt, self.needs_grads(), self.place.edits
        clean = self.clean_on_screen(prompt, gpt, grads) if edits else None
        self.requested = (prompt, gpt, grads)

        def compute(stop: Stop) -> Ready:
            trace, edited = self.run_pass(gpt, prompt, grads, stop, edits, clean)
            return prompt, gpt, trace, None, edited

        work = self.work_of(prompt, grads) * (2 if edits and clean is None else 1)
        self.passes.run(compute, inline=inline, work=work)

    def clean_on_screen(self, prompt: str, gpt: GPT, grads: bool) -> Trace | None:
        """The clean pass of `prompt` on `gpt` when the screen holds it already (an edit added or taken back
        reruns only the edited pass)."""
        place = self.place
        if place.trace is None or place.prompt != prompt or place.gpt is not gpt:
            return None
        clean = place.edited.clean if place.edited is not None else place.trace
        return clean if clean.has_grads or not grads or len(clean.tokens) < 2 else None

    @staticmethod
    def run_pass(
        gpt: GPT, prompt: str, grads: bool, stop: Stop, edits: tuple[Edit, ...] = (), clean: Trace | None = None
    ) -> tuple[Trace, EditedRun | None]:
        """`gpt.run`; backwards, with the gradients, unless the prompt has no token to score (then forwards:
        the panels say why there is no ∂L/∂x). With `edits`, the edited run, and beside it the clean one
        (`clean`, or run here) and the edits that do not fit this model or prompt."""
        if clean is None:
            clean = Passes.clean_pass(gpt, prompt, grads, stop)
        if not edits:
            return clean, None
        sources: dict[str, Trace] = {}  # a patch's other prompt, run once

        def run_source(text: str) -> Trace:
            if text not in sources:
                sources[text] = gpt.run(text, stop=stop)
            return sources[text]

        fit, unfit = model_edits(gpt, edits, len(clean.tokens), run_source)
        trace = gpt.run(prompt, grads=clean.has_grads, stop=stop, edits=fit) if fit else clean
        run = EditedRun(edits, clean, tuple(unfit))
        patches = [edit.source for edit in fitting(run) if edit.kind == "patch"]  # the last patch's prompt is swept
        sweep = patch_sweep(gpt, patches[-1], sources[patches[-1]], clean) if patches else None
        return trace, replace(run, sweep=sweep)

    @staticmethod
    def clean_pass(gpt: GPT, prompt: str, grads: bool, stop: Stop) -> Trace:
        if grads:
            try:
                return gpt.run(prompt, grads=True, stop=stop)
            except model.NoTargetError:
                pass
        return gpt.run(prompt, stop=stop)

    def ensure_grads(self) -> None:
        """The gradients are to be shown and the pass on screen has none: the pass again, with them — once (a
        request already on its way is not made twice), and not for a prompt with no token to score."""
        trace = self.place.trace
        if trace is None or trace.has_grads or len(trace.tokens) < 2 or not self.needs_grads():
            return
        if self.requested != (self.place.prompt, self.place.gpt, True):
            self.run_model(self.place.prompt, inline=self.passes.quick_for(self.work_of(self.place.prompt, True)))

    def lens_failed(self, error: Exception) -> None:
        self.notify(failure_words(error, self.lang), severity="error", markup=False)

    def pass_failed(self, error: Exception) -> None:
        self.requested = None
        self.sample_text = None
        self.place.stop_generating()
        self.notify(failure_words(error, self.lang), severity="error", markup=False)

    def pass_ready(self, result: Ready) -> None:
        prompt, gpt, trace, sampled, edited = result
        self.requested = None
        if sampled is not None and prompt == self.sample_text:
            self.sample_text = None
        if gpt is not self.place.gpt or prompt != self.typed_prompt:
            return  # a model or a prompt that is no longer on screen
        if (edited.asked if edited is not None else ()) != self.place.edits:
            return  # made with edits since added or taken back: their own pass is on its way
        missing = self.place.receive(trace, prompt, sampled, edited)
        if missing is not None:
            self.no_such_step(missing)
        more = sampled is not None and sampled.run is not None and self.place.generated_one()
        self.refresh_panels()
        self.host.remember(prompt=prompt, step=trace.steps[self.place.step_index].name)
        if sampled is not None and not more and not self.next_panel_shown():
            self.notify(sampled_text(sampled, self.lang), markup=False)  # the panel that says it is out of view
        if sampled is not None:
            self.ensure_grads()  # backwards, and the pass before had none to carry on (a prompt of one token)
        if more:
            self.set_timer(self.generate_pause, self.generate_next)
