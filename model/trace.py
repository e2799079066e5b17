"""What one forward pass leaves behind: every activation by name, and the steps to walk through it."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from model.attention import softmax
from model.config import GPTConfig
from model.tokenizer import Tokenizer

if TYPE_CHECKING:
    from model.interventions import Edit

STEP_KINDS = ("embed", "norm", "attention", "residual", "mlp", "unembed")


@dataclass(frozen=True)
class Step:
    """One sublayer of the forward pass, as the stepper shows it.

    `in_hook` is the stream the step reads, `out_hook` what it writes; for a residual add
    (and the position add of the embedding) `added_hook` is the vector added to the stream.
    `form` says which of its kind's forms the model has, where it has more than one: "grouped" attention
    (query heads share key/value heads), a "gated" MLP, an "untied" unembedding (W_U of its own); "" otherwise.
    Its name in words, in either language, is tutor/'s (`tutor.step_words.step_label`).
    """

    index: int
    name: str
    kind: str
    block: int | None
    in_hook: str
    out_hook: str
    added_hook: str | None = None
    form: str = ""


def build_steps(config: GPTConfig) -> tuple[Step, ...]:
    """The ordered sublayer steps of a model wired as `config` says.

    Pre-norm block:  ln1, attention, residual add, ln2, MLP, residual add.
    Post-norm block: attention, residual add, ln1, MLP, residual add, ln2.
    No residual: the adds disappear and each sublayer's output is the new stream.
    """
    specs: list[tuple[str, str, int | None, str, str, str | None, str]] = []
    forms = {
        "attention": "grouped" if config.group > 1 else "",
        "mlp": "gated" if config.mlp_kind == "gated" else "",
        "unembed": "" if config.tied else "untied",
    }

    def add(name: str, kind: str, block: int | None, src: str, dst: str, added: str | None = None) -> None:
        specs.append((name, kind, block, src, dst, added, forms.get(kind, "")))

    if config.positional in ("sinusoidal", "learned"):
        add("embed", "embed", None, "hook_embed", "blocks.0.hook_resid_pre", "hook_pos_embed")
    else:
        add("embed", "embed", None, "hook_embed", "blocks.0.hook_resid_pre")

    for i in range(config.n_layers):
        b = f"blocks.{i}."
        stream = b + "hook_resid_pre"
        for sub, ln in (("attn", "ln1"), ("mlp", "ln2")):
            sub_out = b + f"hook_{sub}_out"
            done = b + ("hook_resid_mid" if sub == "attn" else "hook_resid_post")
            if config.norm == "pre":
                add(b + ln, "norm", i, stream, b + ln + ".hook_normalized")
                add(b + sub, _kind(sub), i, b + ln + ".hook_normalized", sub_out)
            else:
                add(b + sub, _kind(sub), i, stream, sub_out)
            if config.residual:
                summed = b + f"hook_{sub}_add" if config.norm == "post" else done
                add(b + sub + "_add", "residual", i, stream, summed, sub_out)
            else:
                summed = sub_out
            if config.norm == "post":
                add(b + ln, "norm", i, summed, b + ln + ".hook_normalized")
            stream = done

    last = f"blocks.{config.n_layers - 1}.hook_resid_post"
    if config.has_final_norm:
        add("ln_final", "norm", None, last, "ln_final.hook_normalized")
        last = "ln_final.hook_normalized"
    add("unembed", "unembed", None, last, "logits")
    return tuple(Step(index, *spec) for index, spec in enumerate(specs))


def _kind(sublayer: str) -> str:
    return "attention" if sublayer == "attn" else "mlp"


@dataclass
class Trace:
    """Every activation of one forward pass, keyed by TransformerLens hook names, batch axis dropped.

    `trace["blocks.0.attn.hook_pattern"]` is `[head, q_pos, k_pos]`; `trace.steps` walks the pass.
    `dropped` counts tokens cut from the front of a prompt longer than the context.

    A trace run with `grads=True` also holds the backward pass (otherwise these are empty):
    `losses[t]`, position t's cross-entropy for the next token `targets[t]` (t = 0 … n−2: the last
    position has no target), `loss` their mean, `trace[name + "_grad"]` = ∂loss/∂(that activation)
    as TransformerLens' backward cache names it (`blocks.0.hook_resid_pre_grad`), and `param_grads`,
    ∂loss/∂θ for every parameter by its name.

    `edits` are the interventions the run was made with (`GPT.run(prompt, edits=…)`); empty for the
    model as trained. What they did to the graph, for reading the gradients: `kept[name]`, the share m of
    the model's own value an edit kept at that hook (a' = m ⊙ a + c), and `dropped_adds`, the residual
    adds taken out, as (block, "attn" | "mlp").
    """

    tokens: list[int]
    activations: dict[str, np.ndarray]
    steps: tuple[Step, ...]
    config: GPTConfig
    tokenizer: Tokenizer
    dropped: int = 0
    pieces: list[str] = field(init=False)
    grads: dict[str, np.ndarray] = field(default_factory=dict)
    param_grads: dict[str, np.ndarray] = field(default_factory=dict)
    losses: np.ndarray | None = None
    edits: tuple[Edit, ...] = ()
    kept: dict[str, np.ndarray] = field(default_factory=dict)
    dropped_adds: frozenset[tuple[int, str]] = frozenset()

    def __post_init__(self) -> None:
        self.pieces = [self.tokenizer.piece(token) for token in self.tokens]

    def __getitem__(self, name: str) -> np.ndarray:
        found = self.grads.get(name) if name.endswith("_grad") else self.activations.get(name)
        if found is not None:
            return found
        if name.endswith("_grad") and not self.grads:
            raise KeyError(f"no gradient {name!r}: this trace has no backward pass (run it with grads=True)")
        close = difflib.get_close_matches(name, [*self.activations, *self.grads], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no activation {name!r} in this trace{hint}")

    def __contains__(self, name: object) -> bool:
        return name in self.activations or name in self.grads

    @property
    def has_grads(self) -> bool:
        return self.losses is not None

    @property
    def loss(self) -> float | None:
        """The prompt's language-modelling loss: mean cross-entropy of positions 0 … n−2, in nats."""
        return float(self.losses.astype(np.float64).mean()) if self.losses is not None else None

    @property
    def targets(self) -> list[int]:
        """The token each position t = 0 … n−2 is scored on: the next one, tokens[t + 1]."""
        return self.tokens[1:]

    def residual_paths(self, step: Step) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The two paths of ∂L/∂x back through a residual add y = x + F(x), per token `[pos, d]`:

            identity path   ∂L/∂y                       (the "1 +" of ∂y/∂x = 1 + ∂F/∂x)
            through F       ∂L/∂y · ∂F/∂x = ∂L/∂x − ∂L/∂y
            their sum       ∂L/∂x

        read from the recorded gradients of the step's output (y) and input (x, the stream before
        the sublayer, which only the sum and F read). Needs a `residual` step of a trace with grads.

        In an edited run, an edit at y passes on m ⊙ ∂L/∂y (`kept`), and an add taken out
        (`dropped_adds`) has no identity path: all of ∂L/∂x goes through F.
        """
        if step.kind != "residual":
            raise ValueError(f"{step.name} is a {step.kind} step, not a residual add")
        identity, total = self[step.out_hook + "_grad"], self[step.in_hook + "_grad"]
        if step.out_hook in self.kept:
            identity = self.kept[step.out_hook] * identity
        if (step.block, step.name.rsplit(".", 1)[-1].removesuffix("_add")) in self.dropped_adds:
            identity = np.zeros_like(total)
        return identity, total - identity, total

    def param_grad_norms(self) -> dict[str, float]:
        """‖∂L/∂θ‖ for every parameter tensor, by name."""
        return {name: float(np.linalg.norm(g.astype(np.float64))) for name, g in self.param_grads.items()}

    def __repr__(self) -> str:
        edited = f", {len(self.edits)} edits" if self.edits else ""
        return (
            f"Trace({''.join(self.pieces)!r}, {len(self.tokens)} tokens, {len(self.activations)} activations{edited})"
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self.activations)

    def __len__(self) -> int:
        return len(self.activations)

    @property
    def hook_names(self) -> list[str]:
        return list(self.activations)

    @property
    def logits(self) -> np.ndarray:
        return self.activations["logits"]

    def next_token_probs(self, position: int = -1) -> np.ndarray:
        """softmax of the logits at `position`: the model's guess for the token after it."""
        return softmax(self.logits[position].astype(np.float64))

    def top_k(self, k: int = 5, position: int = -1) -> list[tuple[int, str, float]]:
        """The k likeliest next tokens after `position` as (id, text, probability)."""
        if not self.tokens:
            return []
        probs = self.next_token_probs(position)
        best = np.argsort(-probs, kind="stable")[:k]
        return [(int(t), self.tokenizer.piece(int(t)), float(probs[t])) for t in best]
