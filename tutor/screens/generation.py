"""The main screen's sampling: one token drawn after the prompt (alt+n), a run of them (alt+g), the temperature
and top-k; each new token computed through the KV cache."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Input

import model
from model import GPT
from tutor.draw_settings import GENERATE_N, Sampled, appended
from tutor.i18n import t
from tutor.layout import Layout
from tutor.place import Place
from tutor.runner import PassRunner, Stop
from tutor.screens.passes import Ready
from tutor.widgets.panel_switcher import PanelSwitcher

GENERATE_PAUSE = 0.1  # seconds between the tokens of a run: each is drawn on screen, and keys get in between


class Generation(Screen[None]):
    """Drawing the next token: its draw, its pass through the KV cache, runs of draws and their settings.

    A part of `MainScreen` (tutor/screens/main.py), which holds the state these methods use."""

    # MainScreen's, set in its __init__
    place: Place
    lang: str
    passes: PassRunner[Ready]
    layout_now: Layout
    sample_text: str | None
    requested: tuple[str, GPT, bool] | None

    def draw_token(self, run: tuple[int, int] | None = None) -> bool:
        """Draw a token after the prompt's last one at the learner's temperature and top-k (draw n of the seed),
        append it to the prompt and compute only its position (`GPT.extend`, through the KV cache) — or, where
        the cache cannot serve (no causal mask, a full context, a text that re-tokenizes otherwise), the whole
        pass of the new text, and say why. The prompt box shows the new text without a pass of its own."""
        trace, prompt, gpt = self.place.trace, self.place.prompt, self.place.gpt
        if trace is None or not trace.tokens:
            self.notify(t("sample_no_prompt", self.lang))
            return False
        if self.typed_prompt != prompt or self.sample_text is not None:
            self.notify(t("sample_wait", self.lang))
            return False
        settings = self.place.sampling
        number = self.place.draw()
        logits = trace.logits[-1]
        token = model.sample(logits, settings.temperature, settings.top_k, model.sample_rng(settings.seed, number))
        raw = float(model.sampling_probs(logits, 1.0)[token])
        p = float(model.sampling_probs(logits, settings.temperature, settings.top_k)[token])
        text, reason = appended(gpt, trace, prompt, token)  # reason: why not the KV cache (None: it serves)
        if reason is None and self.place.edits:
            reason = "edited"  # the cache holds the edited run's keys, but `extend` runs the clean model
        grads, edits = self.needs_grads(), self.place.edits

        def compute(stop: Stop) -> Ready:
            edited = None
            if reason is None:
                longer = gpt.extend(trace, token)
            else:
                longer, edited = self.run_pass(gpt, text, grads, stop, edits)
            sampled = Sampled(
                number,
                token,
                gpt.tokenizer.piece(token),
                raw,
                p,
                settings.temperature,
                settings.top_k,
                computed=1 if reason is None else len(longer.tokens),
                kept=len(trace.tokens) if reason is None else 0,
                full_reason=reason,
                run=run,
                backward=longer.has_grads,
            )
            return text, gpt, longer, sampled, edited

        self.sample_text = text
        box = self.query_one("#prompt", Input)
        box.value = text  # prompt_typed and prompt_changed see `sample_text`: no pass of their own
        box.cursor_position = len(text)
        self.requested = (text, gpt, grads if reason is not None else trace.has_grads)
        # one position through the cache: run inline if a pass of the text would be quick, and not measured
        # (its time says nothing of a whole pass's)
        work = self.work_of(text, grads)
        self.passes.run(compute, inline=self.passes.quick_for(work), work=work if reason is not None else 0)
        return True

    def next_panel_shown(self) -> bool:
        """Whether a next-token panel is in view (the tab, or beside the tabs in a wide window)."""
        if self.layout_now.wide:
            return True
        tabs = self.query_one("#panels", PanelSwitcher)
        return tabs.active == "next" and tabs.display and self.layout_now.panels_shown

    def action_sample(self) -> None:
        """alt+n: one token drawn and appended."""
        if self.place.stop_generating():
            self.notify_stopped()
        self.draw_token()

    def action_generate(self) -> None:
        """alt+g: GENERATE_N tokens in a row, each drawn on screen as it comes; alt+g again (or Esc) stops."""
        if self.place.stop_generating():
            self.notify_stopped()
            self.refresh_panels()
            return
        self.place.start_generating(GENERATE_N)
        tabs = self.query_one("#panels", PanelSwitcher)
        if tabs.display and not self.layout_now.wide:
            tabs.active = "next"  # where the run's progress and each token's numbers are
        if not self.draw_token(run=(1, GENERATE_N)):
            self.place.stop_generating()
        self.refresh_panels()

    def generate_next(self) -> None:
        run = self.place.sampling.generating
        if run is None:
            return  # stopped in the meantime
        if not self.draw_token(run=(run[0] + 1, run[1])):
            self.place.stop_generating()
            self.refresh_panels()

    def action_stop_generating(self) -> None:
        if self.place.stop_generating():
            self.notify_stopped()
            self.refresh_panels()

    def notify_stopped(self) -> None:
        run = self.place.sampling.last.run if self.place.sampling.last is not None else None
        done, n = run if run is not None else (0, GENERATE_N)
        self.notify(t("generate_stopped", self.lang, done=done, n=n))

    def action_temperature(self, delta: int) -> None:
        if self.place.temperature_by(delta):
            self.settings_changed(t("temperature_set", self.lang, T=f"{self.place.sampling.temperature:g}"))

    def action_top_k(self, delta: int) -> None:
        if self.place.top_k_by(delta):
            top_k = self.place.sampling.top_k
            self.settings_changed(
                t("top_k_set", self.lang, k=top_k if top_k is not None else t("sample_all", self.lang))
            )

    def settings_changed(self, words: str) -> None:
        """The panel redrawn with the new probabilities; a notice says the new setting when it is out of view."""
        self.refresh_panels()
        if not self.next_panel_shown():
            self.notify(words, timeout=2)
