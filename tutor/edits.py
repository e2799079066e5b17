"""What if? The edits a learner asks of the model shown — a head silenced, a sublayer skipped, a residual add
or a LayerNorm taken out, a point patched from another prompt — as plain records the screen can list, say in
either language, write into a link and turn into `model/`'s edits (model/interventions.py) for each pass.

An `Edit` here names its piece by block, head and hook, and a patch by its other prompt's text (not a trace):
the same edit fits the next prompt typed and another model, or says in one line why it does not.

Link form (`tutor:show?edit=…`, several joined by `;`):

    head:B.H                    head H of block B silenced (zₕ ← 0)
    skip:B.attn  skip:B.mlp     block B's sublayer adds nothing (F(x) ← 0)
    drop:B.attn  drop:B.mlp     block B's residual add taken out (y = F(x))
    bypass:NORM                 LayerNorm NORM (blocks.0.ln1, ln_final) as the identity
    patch:HOOK@T:PROMPT         HOOK at token T from PROMPT's pass (HOOK blocks.1.hook_resid_pre, or
                                blocks.1.attn.hook_z.H for head H); @T left out: every position
    none                        no edits: the model as trained
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import model
from model import GPT, Step, Trace
from model.attention import softmax
from model.backward import cross_entropy
from model.interventions import PATCHABLE, EditError, plan_edits
from tutor.i18n import Words, say

if TYPE_CHECKING:
    from tutor.patch_sweep import PatchSweep

KINDS = ("head", "skip", "drop", "bypass", "patch")
SUBLAYER_WORDS: dict[str, Words] = {"attn": ("attention", "注意力"), "mlp": ("MLP", " MLP ")}  # zh: spaced from hanzi
MAX_EDITS = 8  # a link or a learner asking for more is told so: the bar lists each, and each costs a pass
MAX_SOURCE = 200  # characters of a patch's other prompt (it is run as a pass of its own)
_HEAD_HOOK = re.compile(r"^(blocks\.\d+\.attn\.hook_z)\.(\d+)$")
_PATCHABLE_HOOK = re.compile(r"blocks\.\d+\.(" + "|".join(re.escape(p) for p in PATCHABLE) + ")")


class EditWordsError(ValueError):
    """An edit's link form that cannot be read: one line, saying what was expected."""


@dataclass(frozen=True)
class Edit:
    """One edit as the learner asked it. `kind` is one of KINDS; the other fields are what that kind names."""

    kind: str
    block: int = 0
    head: int | None = None  # head: the head silenced; patch at hook_z: the head patched (None: all heads)
    sublayer: str = ""  # skip, drop: "attn" or "mlp"
    hook: str = ""  # bypass: the norm ("blocks.0.ln1"); patch: the hook ("blocks.1.hook_resid_pre")
    token: int | None = None  # patch: the position patched (None: every position)
    source: str = ""  # patch: the other prompt

    def link(self) -> str:
        """The edit's link form (see the module's docstring); `parse_edits` reads it back."""
        if self.kind == "head":
            return f"head:{self.block}.{self.head}"
        if self.kind in ("skip", "drop"):
            return f"{self.kind}:{self.block}.{self.sublayer}"
        if self.kind == "bypass":
            return f"bypass:{self.hook}"
        hook = self.hook + (f".{self.head}" if self.head is not None else "")
        at = f"@{self.token}" if self.token is not None else ""
        return f"patch:{hook}{at}:{self.source}"

    def words(self, lang: str) -> str:
        """The edit in a few words, as the edits bar lists it."""
        if self.kind == "head":
            return say(("head {h} of block {b} silenced", "第 {b} 块的 {h} 号头置零"), lang, b=self.block, h=self.head)
        part = say(SUBLAYER_WORDS.get(self.sublayer, (self.sublayer, self.sublayer)), lang)
        if self.kind == "skip":
            return say(("block {b}'s {part} skipped", "跳过第 {b} 块的{part}"), lang, b=self.block, part=part).strip()
        if self.kind == "drop":
            return say(
                ("block {b}'s {part} add without x: y = F(x)", "第 {b} 块的{part}去掉残差：y = F(x)"),
                lang,
                b=self.block,
                part=part,
            ).replace("  ", " ")
        if self.kind == "bypass":
            return say(("{norm} bypassed: LN(x) = x", "绕过 {norm}：LN(x) = x"), lang, norm=self.hook)
        where = self.hook
        if self.head is not None:
            where += say((" head {h}", " 的 {h} 号头"), lang, h=self.head)
        if self.token is None:
            return say(("{where} from “{src}”", "{where} 换成“{src}”里的值"), lang, where=where, src=self.source)
        return say(
            ("{where} at token {t} from “{src}”", "{where} 第 {t} 个词元换成“{src}”里的值"),
            lang,
            where=where,
            t=self.token,
            src=self.source,
        )


def parse_edits(text: str) -> tuple[Edit, ...]:
    """A link's `edit=` value (edits joined by `;`, or `none`) → edits; EditWordsError (one line) for what cannot
    be read."""
    if text.strip() == "none":
        return ()
    edits = tuple(parse_edit(part.strip()) for part in text.split(";") if part.strip())
    if not edits:
        raise EditWordsError("edit= names no edit (head:B.H, skip:B.attn, drop:B.mlp, bypass:NORM, patch:HOOK:PROMPT)")
    if len(edits) > MAX_EDITS:
        raise EditWordsError(f"at most {MAX_EDITS} edits at once, got {len(edits)}")
    return edits


def parse_edit(text: str) -> Edit:
    kind, _, rest = text.partition(":")
    if kind not in KINDS:
        raise EditWordsError(f"unknown edit '{kind}' (known: {', '.join(KINDS)})")
    if kind == "head":
        block, head = _two_numbers(rest, "head:B.H, block and head numbers")
        return Edit("head", block=block, head=head)
    if kind in ("skip", "drop"):
        block_text, _, sublayer = rest.partition(".")
        if not block_text.isdigit() or sublayer not in SUBLAYER_WORDS:
            raise EditWordsError(f"{kind}: wants B.attn or B.mlp, got '{rest}'")
        return Edit(kind, block=int(block_text), sublayer=sublayer)
    if kind == "bypass":
        if not re.fullmatch(r"blocks\.\d+\.ln[12]|ln_final", rest):
            raise EditWordsError(f"bypass: wants a LayerNorm (blocks.B.ln1, blocks.B.ln2, ln_final), got '{rest}'")
        return Edit("bypass", block=_block_of(rest), hook=rest)
    where, _, source = rest.partition(":")
    hook, _, token_text = where.partition("@")
    head = None
    if matched := _HEAD_HOOK.match(hook):
        hook, head = matched.group(1), int(matched.group(2))
    if not _PATCHABLE_HOOK.fullmatch(hook):
        raise EditWordsError(f"patch: wants blocks.B.{' | '.join(PATCHABLE)}, got '{hook}'")
    if token_text and not token_text.isdigit():
        raise EditWordsError(f"patch: the token after @ must be a position, got '{token_text}'")
    if not source.strip():
        raise EditWordsError("patch: wants the other prompt after the hook (patch:HOOK@T:PROMPT)")
    if len(source) > MAX_SOURCE:
        raise EditWordsError(f"patch: the other prompt is over {MAX_SOURCE} characters")
    token = int(token_text) if token_text else None
    return Edit("patch", block=_block_of(hook), head=head, hook=hook, token=token, source=source)


def _two_numbers(text: str, wanted: str) -> tuple[int, int]:
    first, _, second = text.partition(".")
    if not (first.isdigit() and second.isdigit()):
        raise EditWordsError(f"wants {wanted}, got '{text}'")
    return int(first), int(second)


def _block_of(hook: str) -> int:
    matched = re.match(r"blocks\.(\d+)\.", hook)
    return int(matched.group(1)) if matched else 0


# -- the edit of the step on screen ---------------------------------------------------------------------------


def step_edit(step: Step, head: int) -> Edit | None:
    """The edit `x` makes at `step`: a norm bypassed, the selected head silenced, the MLP skipped, the residual
    add taken out. None at the embedding and the unembedding (nothing there to take out)."""
    if step.kind == "norm":
        return Edit("bypass", block=step.block or 0, hook=step.name)
    if step.block is None:
        return None
    if step.kind == "attention":
        return Edit("head", block=step.block, head=head)
    if step.kind == "mlp":
        return Edit("skip", block=step.block, sublayer="mlp")
    if step.kind == "residual":
        return Edit("drop", block=step.block, sublayer="attn" if step.name.endswith("attn_add") else "mlp")
    return None


def patch_hook(step: Step) -> str | None:
    """Where "patch this point" patches at `step`: what the step writes when it is a patchable point (a stream
    after an add, a sublayer's output), else the stream it reads (a LayerNorm's input); None where neither is."""
    for hook in (step.out_hook, step.in_hook):
        if _PATCHABLE_HOOK.fullmatch(hook):
            return hook
    return None


def patch_edit(step: Step, head: int, token: int, source: str) -> Edit | None:
    """ "Patch this point from `source`" at `step`, the selected token (and at attention, the selected head)."""
    if step.kind == "attention" and step.block is not None:
        return Edit(
            "patch", block=step.block, head=head, hook=f"blocks.{step.block}.attn.hook_z", token=token, source=source
        )
    hook = patch_hook(step)
    if hook is None:
        return None
    return Edit("patch", block=_block_of(hook), hook=hook, token=token, source=source)


def edits_at(step: Step, edits: Sequence[Edit]) -> list[Edit]:
    """The edits that act at `step`: its LayerNorm bypassed, a head of its attention silenced, its sublayer
    skipped, its residual add taken out, the point it writes (or reads) patched."""
    found = []
    for edit in edits:
        if edit.kind == "bypass":
            hit = step.kind == "norm" and step.name == edit.hook
        elif edit.kind == "head":
            hit = step.kind == "attention" and step.block == edit.block
        elif edit.kind == "skip":
            hit = step.block == edit.block and step.kind == ("attention" if edit.sublayer == "attn" else "mlp")
        elif edit.kind == "drop":
            hit = step.kind == "residual" and step.name == f"blocks.{edit.block}.{edit.sublayer}_add"
        elif edit.hook.endswith("attn.hook_z"):
            hit = step.kind == "attention" and step.block == edit.block
        else:
            hit = patch_hook(step) == edit.hook  # the point alt+p patches at this step
        if hit:
            found.append(edit)
    return found


def norm_edit(trace: Trace, norm: str) -> model.BypassNorm | None:
    """How the run of `trace` changed LayerNorm `norm` ("blocks.0.ln1"): its `BypassNorm` (the identity, or μ and
    √(σ²+ε) frozen from another run), None when it ran as trained."""
    return next((e for e in trace.edits if isinstance(e, model.BypassNorm) and e.norm == norm), None)


def fitting(edited: EditedRun | None) -> list[Edit]:
    """The edits an edited run was made with: those asked, less those that did not fit."""
    if edited is None:
        return []
    unfit = {edit for edit, _ in edited.unfit}
    return [edit for edit in edited.asked if edit not in unfit]


# -- from the learner's edits to the model's --------------------------------------------------------------------


@dataclass(frozen=True)
class EditedRun:
    """What an edited pass brings besides its trace: the clean trace it is compared with, the edits it was asked
    for, and those that did not fit this model or prompt, each with why (one line)."""

    asked: tuple[Edit, ...]
    clean: Trace
    unfit: tuple[tuple[Edit, str], ...] = ()
    sweep: PatchSweep | None = None  # with a patch among the edits: its other prompt patched in point by point


def model_edits(
    gpt: GPT, edits: Sequence[Edit], n_tokens: int, run_source: Callable[[str], Trace]
) -> tuple[list[model.Edit], list[tuple[Edit, str]]]:
    """`edits` as `model/`'s, for a prompt of `n_tokens` on `gpt`: those that fit, and those that do not with
    the model's one-line reason. `run_source` runs a patch's other prompt (on the same model)."""
    fit: list[model.Edit] = []
    unfit: list[tuple[Edit, str]] = []
    for edit in edits:
        try:
            candidate = _model_edit(gpt, edit, run_source)
            plan_edits(gpt, n_tokens, [*fit, candidate])  # checked with the ones before: a second add dropped …
        except EditError as error:
            unfit.append((edit, str(error)))
            continue
        fit.append(candidate)
    return fit, unfit


def _model_edit(gpt: GPT, edit: Edit, run_source: Callable[[str], Trace]) -> model.Edit:
    if edit.kind == "head":
        return model.AblateHead(block=edit.block, head=edit.head or 0)
    if edit.kind == "skip":
        return model.SkipSublayer(block=edit.block, sublayer=edit.sublayer)
    if edit.kind == "drop":
        return model.DropResidual(block=edit.block, sublayer=edit.sublayer)
    if edit.kind == "bypass":
        return model.BypassNorm(norm=edit.hook)
    positions = (edit.token,) if edit.token is not None else None
    try:
        source = run_source(edit.source)
    except model.Stopped:
        raise
    except Exception as error:  # a source the tokenizer refuses: this edit does not fit, the others run
        raise EditError(f"the other prompt “{edit.source}” cannot run: {error}") from error
    return model.Patch(edit.hook, source, positions=positions, head=edit.head)


# -- what the edits changed: the edited run against its clean twin --------------------------------------------


@dataclass(frozen=True)
class Guess:
    """A next token at the cursor, with its probability in the clean and in the edited run."""

    piece: str
    clean: float
    edited: float


@dataclass(frozen=True)
class Differences:
    """What the edits changed, read from the two traces: the prompt's loss, the size of what the step on screen
    writes at the cursor token (`hook`), and the edited run's top guesses after the cursor token."""

    loss: tuple[float, float] | None  # (clean, edited); None: a prompt of one token has no loss
    hook: str
    norm: tuple[float, float]  # ‖hook[token]‖, clean and edited
    guesses: tuple[Guess, ...]


def prompt_loss(trace: Trace) -> float | None:
    """The prompt's own loss: the mean cross-entropy of positions 0 … n−2 predicting tokens 1 … n−1."""
    if len(trace.tokens) < 2:
        return None
    return cross_entropy(trace.logits[:-1], np.asarray(trace.tokens[1:], dtype=np.intp))


def differences(gpt: GPT, edited: Trace, clean: Trace, step: Step, token: int, top: int = 3) -> Differences:
    """The edited run against the clean one at `step` and `token`: the edited run's `top` guesses (and the
    clean run's first, when it is not among them), each with both probabilities."""
    clean_loss, edited_loss = prompt_loss(clean), prompt_loss(edited)
    loss = (clean_loss, edited_loss) if clean_loss is not None and edited_loss is not None else None
    norm = (
        float(np.linalg.norm(clean[step.out_hook][token])),
        float(np.linalg.norm(edited[step.out_hook][token])),
    )
    p_clean, p_edited = softmax(clean.logits[token]), softmax(edited.logits[token])
    order = [int(i) for i in np.argsort(-p_edited, kind="stable")[:top]]
    first_clean = int(np.argmax(p_clean))
    if first_clean not in order:
        order.append(first_clean)
    guesses = tuple(Guess(gpt.tokenizer.piece(i), float(p_clean[i]), float(p_edited[i])) for i in order)
    return Differences(loss, step.out_hook, norm, guesses)
