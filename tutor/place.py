"""Where the learner is: the model, the prompt and its pass, the step, token and head, the direction,
the lesson — one plain record and its moves, which know nothing of Textual.

The main screen holds one `Place`; a key changes it through one of the moves below, and the screen
draws `place.view(lang)`. Every move keeps the record valid (a step, token and head that exist in
the pass and the model shown), so the panels never see an index out of range.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from model import GPT, Step, Trace
from tutor.draw_settings import TEMPERATURES, TOP_KS, Sampled, Sampling
from tutor.edits import MAX_EDITS, Edit, EditedRun
from tutor.lessons.parse import Lesson
from tutor.reach import EVERYTHING, Reach
from tutor.view import BACKWARD, FORWARD, View


@dataclass
class Place:
    """The one record of where the learner is on the main screen."""

    gpt: GPT  # the model shown
    home_gpt: GPT  # what the app started with (tiny, or the command line's): a lesson naming none opens on it
    trace: Trace | None = None  # the pass on screen, of `prompt` on `gpt` (None until it has come)
    prompt: str = ""  # the prompt `trace` is of (what is typed may be ahead of it)
    step_index: int = 0
    token: int = 0  # a position in the trace
    head: int = 0
    direction: str = FORWARD  # the step bar runs from the embedding on, or from the unembedding back
    pending_step: str | None = None  # a step a lesson or link asked for, taken when the next pass arrives
    pending_token: int | None = None  # likewise a token, counted in the prompt that is coming
    lesson: Lesson | None = None
    lesson_position: str = ""  # of the lesson shown: "2/9"
    sampling: Sampling = field(default_factory=Sampling)  # temperature, top-k, seed, the last token drawn
    reach: Reach = EVERYTHING  # what the lessons opened so far have explained (tutor/reach.py)
    edits: tuple[Edit, ...] = ()  # what if? the edits asked of the model (tutor/edits.py); a pass runs with them
    edited: EditedRun | None = None  # the trace on screen is an edited run: its clean twin, the edits that fit

    # -- what is shown ----------------------------------------------------------------------------

    @property
    def backward(self) -> bool:
        return self.direction == BACKWARD

    @property
    def step(self) -> Step | None:
        return self.trace.steps[self.step_index] if self.trace is not None else None

    @property
    def n_tokens(self) -> int:
        return len(self.trace.tokens) if self.trace is not None else 0

    def view(self, lang: str) -> View | None:
        if self.trace is None:
            return None
        return View(
            self.gpt,
            self.trace,
            self.step_index,
            self.token,
            self.head,
            lang,
            self.direction,
            self.sampling,
            self.reach,
            edited=self.edited,
        )

    # -- the model and its passes -------------------------------------------------------------------

    def use_model(self, gpt: GPT) -> None:
        """Another model: its pass is yet to come; the step stays where it is (by index, clamped on arrival)."""
        self.gpt = gpt
        self.trace = None
        self.head = 0

    def receive(
        self, trace: Trace, prompt: str, sampled: Sampled | None = None, edited: EditedRun | None = None
    ) -> str | None:
        """A pass of `prompt` on the model shown has come: take it, keeping step, token and head valid.

        A cursor on the last token stays on the last token as the prompt grows; a pending step or
        token (from a lesson or a link) is taken now. `sampled`: the pass is of a token just drawn and
        appended (the cursor goes to the end, to the new token). Returns a pending step the model does not have."""
        old = self.trace
        was_at_end = old is None or self.token >= self._end(len(old.tokens)) or sampled is not None
        last = sampled if sampled is not None else (self.sampling.last if prompt == self.prompt else None)
        self.sampling = replace(self.sampling, last=last)  # a typed prompt's last token was not drawn
        self.trace, self.prompt, self.edited = trace, prompt, edited
        n = len(trace.tokens)
        self.token = self._end(n) if was_at_end else min(self.token, max(0, n - 1))
        self.step_index = min(self.step_index, len(trace.steps) - 1)
        if self.pending_token is not None:
            self.token = self.pending_token % n if n else 0
            self.pending_token = None
        missing, self.pending_step = self.pending_step, None
        if missing is not None and self.goto_step(missing):
            missing = None
        return missing

    # -- stepping -----------------------------------------------------------------------------------

    def go(self, index: int) -> bool:
        """To step `index` (clamped); False when there is no pass to step through yet."""
        if self.trace is None:
            return False
        self.step_index = max(0, min(index, len(self.trace.steps) - 1))
        return True

    def step_by(self, delta: int) -> bool:
        """`delta` steps on in the direction shown: down the pass forwards, up it backwards."""
        return self.go(self.step_index + (-delta if self.backward else delta))

    def first_step(self) -> bool:
        """The first step in the direction shown (the unembedding, when stepping backwards)."""
        if self.trace is None:
            return False
        return self.go(len(self.trace.steps) - 1 if self.backward else 0)

    def last_step(self) -> bool:
        if self.trace is None:
            return False
        return self.go(0 if self.backward else len(self.trace.steps) - 1)

    def block_by(self, delta: int) -> bool:
        """To the first step of the next (or previous) block in the direction shown; past the last block,
        to the end. Backwards, "the next block" is the one below, and its first step is its last sublayer."""
        if self.trace is None:
            return False
        if self.backward:
            return self._block_backward(delta)
        steps = self.trace.steps
        current = steps[self.step_index].block
        if delta > 0:
            target = next(
                (
                    s.index
                    for s in steps[self.step_index :]
                    if s.block is not None and (current is None or s.block > current)
                ),
                len(steps) - 1,
            )
            if current is None and steps[self.step_index].kind != "embed":
                target = len(steps) - 1
        else:
            here = current if current is not None else (-1 if steps[self.step_index].kind == "embed" else self._layers)
            starts = [
                s.index
                for s in steps
                if s.block is not None and s.block < here and (s.index == 0 or steps[s.index - 1].block != s.block)
            ]
            target = starts[-1] if starts else 0
        return self.go(target)

    def _block_backward(self, delta: int) -> bool:
        """Backwards, a block's first step is its last sublayer: PgDn goes down the stack, PgUp up it."""
        assert self.trace is not None
        steps = self.trace.steps
        step = steps[self.step_index]
        here = step.block if step.block is not None else (-1 if step.kind == "embed" else self._layers)
        ends = {s.block: s.index for s in steps if s.block is not None}  # each block's last step
        if delta > 0:
            below = [b for b in ends if b < here]
            return self.go(ends[max(below)] if below else 0)
        above = [b for b in ends if b > here]
        return self.go(ends[min(above)] if above else len(steps) - 1)

    def goto_block(self, block: int) -> bool:
        """To the first step of block `block` in the direction shown; False when the model has no such block."""
        if self.trace is None:
            return False
        indices = [s.index for s in self.trace.steps if s.block == block]
        if not indices:
            return False
        return self.go(indices[-1] if self.backward else indices[0])

    def goto_step(self, name: str) -> bool:
        """To the step called `name` (kept for the next pass if none has come); False when the model has none."""
        if self.trace is None:
            self.pending_step = name
            return True
        index = next((s.index for s in self.trace.steps if s.name == name), None)
        if index is None:
            return False
        return self.go(index)

    def turn(self) -> None:
        """Forward ↔ backward, at the same step — except from the first step of a direction, which is the last
        of the other: there the other direction starts at its own first step (b at the embedding: the
        unembedding, where the gradient starts). Backwards, a cursor on the last token moves to the one
        before: the last token is scored on nothing, and in a causal model no later token could send it a
        gradient, so its ∂L/∂x is 0 everywhere."""
        at_start = self.trace is not None and self.step_index == (len(self.trace.steps) - 1 if self.backward else 0)
        self.direction = FORWARD if self.backward else BACKWARD
        if at_start:
            self.first_step()
        if self.backward and self.token > self._end(self.n_tokens):
            self.token = self._end(self.n_tokens)

    # -- token and head -----------------------------------------------------------------------------

    def move_token(self, delta: int) -> bool:
        if not self.n_tokens:
            return False
        self.token = max(0, min(self.token + delta, self.n_tokens - 1))
        return True

    def set_token(self, token: int, coming: bool) -> None:
        """Token `token` (negative: from the end); `coming`: of the prompt whose pass is on its way."""
        if coming or self.trace is None:
            self.pending_token = token
        else:
            self.token = token % self.n_tokens if self.n_tokens else 0

    def move_head(self, delta: int) -> None:
        self.head = (self.head + delta) % self.gpt.config.n_heads

    def set_head(self, head: int) -> None:
        self.head = head % self.gpt.config.n_heads

    # -- sampling the next token ------------------------------------------------------------------

    def temperature_by(self, delta: int) -> bool:
        """The next temperature up (`delta` > 0) or down the steps of TEMPERATURES; False past either end."""
        index = _nearest(TEMPERATURES, self.sampling.temperature) + delta
        if not 0 <= index < len(TEMPERATURES):
            return False
        self.sampling = replace(self.sampling, temperature=TEMPERATURES[index])
        return True

    def top_k_by(self, delta: int) -> bool:
        """More (`delta` > 0) or fewer tokens to draw from, along TOP_KS (1 … all); False past either end."""
        index = TOP_KS.index(self.sampling.top_k) + delta if self.sampling.top_k in TOP_KS else len(TOP_KS) - 1
        if not 0 <= index < len(TOP_KS):
            return False
        self.sampling = replace(self.sampling, top_k=TOP_KS[index])
        return True

    def draw(self) -> int:
        """The number of the draw about to be made (`model.sample_rng(seed, number)`); the count goes on."""
        number = self.sampling.draws
        self.sampling = replace(self.sampling, draws=number + 1)
        return number

    def start_generating(self, n: int) -> None:
        """`n` tokens to draw in a row, none drawn yet."""
        self.sampling = replace(self.sampling, generating=(0, n) if n > 0 else None)

    def generated_one(self) -> bool:
        """One more of the run drawn; True while more are to come."""
        run = self.sampling.generating
        if run is None:
            return False
        done = run[0] + 1
        self.sampling = replace(self.sampling, generating=(done, run[1]) if done < run[1] else None)
        return done < run[1]

    def stop_generating(self) -> bool:
        """The run stops where it is; False when none was going."""
        going = self.sampling.generating is not None
        self.sampling = replace(self.sampling, generating=None)
        return going

    # -- what if? ------------------------------------------------------------------------------------

    def toggle_edit(self, edit: Edit) -> bool | None:
        """`edit` added (True), or taken back if it is there already (False); None: the list is full. The pass
        on screen is of the old list until the next one comes."""
        if edit in self.edits:
            self.edits = tuple(e for e in self.edits if e != edit)
            return False
        if len(self.edits) >= MAX_EDITS:
            return None
        self.edits = (*self.edits, edit)
        return True

    def remove_edit(self, index: int) -> bool:
        """Edit `index` (0-based) taken back; False when there is none."""
        if not 0 <= index < len(self.edits):
            return False
        self.edits = self.edits[:index] + self.edits[index + 1 :]
        return True

    def set_edits(self, edits: tuple[Edit, ...]) -> bool:
        """Exactly `edits` (a link's scene); False when they are the ones there already."""
        if edits == self.edits:
            return False
        self.edits = edits
        return True

    def clear_edits(self) -> bool:
        """Every edit taken back: the clean model again. False when there were none."""
        had = bool(self.edits)
        self.edits = ()
        return had

    # -- a link's `show` ----------------------------------------------------------------------------

    def show(self, params: Mapping[str, str]) -> str | None:
        """What a `tutor:show?…` link asks of the direction, step, token and head (the model, panel and prompt are the
        screen's: loading a model and typing a prompt are not moves of the record). A step or token of a
        prompt or model that is still coming waits for its pass. Returns a step the model does not have."""
        coming = "prompt" in params or "model" in params
        missing = None
        if params.get("direction") in (FORWARD, BACKWARD):
            self.direction = params["direction"]
        elif "step" in params:  # a step named without a direction is read forwards: backward mode from an earlier
            self.direction = FORWARD  # link (lesson 9's walk) no longer carries over into the next lesson's links
        if "step" in params:
            if "prompt" in params or self.trace is None:  # a model switched to has no pass yet either
                self.pending_step = params["step"]
            elif not self.goto_step(params["step"]):
                missing = params["step"]
        if "token" in params and params["token"].lstrip("-").isdigit():
            self.set_token(int(params["token"]), coming)
        if "head" in params and params["head"].isdigit():
            self.set_head(int(params["head"]))
        return missing

    def _end(self, n: int) -> int:
        """Where a cursor "at the end" of `n` tokens sits: the last token; backwards, the last one with a
        gradient (see `turn`)."""
        if self.backward and self.gpt.config.causal and n >= 2:
            return n - 2
        return max(0, n - 1)

    @property
    def _layers(self) -> int:
        return self.gpt.config.n_layers


def _nearest(steps: tuple[float, ...], value: float) -> int:
    """The index of the step closest to `value`."""
    return min(range(len(steps)), key=lambda i: abs(steps[i] - value))
