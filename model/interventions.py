"""What if? The trained model run with one piece changed: `gpt.run(prompt, edits=[...])`.

    >>> clean = gpt.run("猫追狗")
    >>> gpt.run("猫追狗", edits=[AblateHead(block=0, head=2)])               # z of head 2 ← 0
    >>> gpt.run(other, edits=[Patch("blocks.1.hook_resid_pre", clean, positions=(0,))])  # as long as 猫追狗

An edit is a small dataclass that names where it acts by TransformerLens' hook names (the trace's own
keys), not a callable as in TransformerLens' `run_with_hooks(fwd_hooks=[(name, fn)])`: a learner (and the
tutor's screen) can read, list, compare and check an edit before it runs, a bad one is refused with one
line before the pass starts, and the backward pass knows exactly what each edit did to the graph, so
`grads=True` follows the edited graph and not the clean one.

    AblateHead    zₕ ← 0, or zₕ ← its mean over another trace's positions    at blocks.i.attn.hook_z
    ScaleHead     zₕ ← s · zₕ                                               at blocks.i.attn.hook_z
    SkipSublayer  F(x) ← 0                                                  at blocks.i.hook_attn_out / hook_mlp_out
    DropResidual  y = F(x) instead of x + F(x)                              block i's attention or MLP add
    BypassNorm    LN(x) = x, or LN with μ and √(σ²+ε) frozen from another trace (RMSNorm: the rms alone)
    Patch         a ← the same activation of another prompt's trace         at a stream point, a sublayer's
                                                                            output or hook_z (one head or all)

A patch acts at `blocks.i.` + one of `PATCHABLE` (the stream before, between and after the sublayers, their
outputs, hook_z); the embedding is patched at `blocks.0.hook_resid_pre`. Edits at a hook may name positions
(default all); a residual add and a LayerNorm are edited whole.

Every edit at a hook is `a' = m ⊙ a + c`, with m the share of the model's own value kept (1, 0 or s) and c
what replaces it; the backward pass hands ∂L/∂a' on as ∂L/∂a = m ⊙ ∂L/∂a'. The edited trace files ∂L/∂a'
under the hook's name (the gradient of what the trace shows there). A mean, a patch and frozen statistics
come from another trace: constants of the edited run.

The clean trace is never changed: an edited run is a run of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from model.hooks import Hook, no_hook, scoped
from model.trace import Trace

if TYPE_CHECKING:
    from model.gpt import GPT, KVCache

SUBLAYERS = ("attn", "mlp")
PATCHABLE = ("hook_resid_pre", "hook_resid_mid", "hook_resid_post", "hook_attn_out", "hook_mlp_out", "attn.hook_z")


class EditError(ValueError):
    """An edit the model or the prompt cannot take: a hook it does not have, a head it does not have, a
    source of another length. The message is one line."""


Positions = tuple[int, ...] | None


@dataclass(frozen=True)
class AblateHead:
    """Head `head` of block `block` silenced at `blocks.{block}.attn.hook_z`: zₕ ← 0, or with `mean_from`,
    zₕ ← the mean of that trace's zₕ over its positions (mean-ablation)."""

    block: int
    head: int
    positions: Positions = None
    mean_from: Trace | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ScaleHead:
    """Head `head` of block `block` turned up or down: zₕ ← factor · zₕ."""

    block: int
    head: int
    factor: float
    positions: Positions = None


@dataclass(frozen=True)
class SkipSublayer:
    """Block `block`'s attention or MLP (`sublayer` "attn" or "mlp") adds nothing: F(x) ← 0."""

    block: int
    sublayer: str
    positions: Positions = None


@dataclass(frozen=True)
class DropResidual:
    """Block `block`'s attention or MLP without its residual add: y = F(x) instead of x + F(x)."""

    block: int
    sublayer: str


@dataclass(frozen=True)
class BypassNorm:
    """LayerNorm `norm` ("blocks.0.ln1", "ln_final") replaced: by the identity, LN(x) = x, or with
    `frozen_from`, by the LayerNorm of that trace's μ and √(σ²+ε) at each position (same length).
    In an RMSNorm model only the rms √(mean(x²)+ε) is frozen: RMSNorm has no μ to freeze."""

    norm: str
    frozen_from: Trace | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Patch:
    """Activation patching: the activation at `hook` (a full hook name, "blocks.1.hook_resid_pre") replaced
    by `source`'s at the same hook and positions; at `blocks.i.attn.hook_z`, `head` picks one head."""

    hook: str
    source: Trace = field(compare=False)
    positions: Positions = None
    head: int | None = None


Edit = AblateHead | ScaleHead | SkipSublayer | DropResidual | BypassNorm | Patch


# -- the formulas the edits bring in ------------------------------------------------------------------------------


def replace_at(a: np.ndarray, keep: np.ndarray, value: np.ndarray) -> np.ndarray:
    """An edit at a hook: a' = m ⊙ a + c, where m is the share of a kept (1 untouched, 0 replaced,
    s scaled) and c what stands in for it."""
    return keep * a + value


def replace_at_backward(d_edited: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """∂L/∂a = m ⊙ ∂L/∂a': c is a constant, so a replaced entry passes no gradient back."""
    return keep * d_edited


def frozen_layer_norm(
    x: np.ndarray, mu: np.ndarray, scale: np.ndarray, gamma: np.ndarray, beta: np.ndarray, hook: Hook = no_hook
) -> np.ndarray:
    """LayerNorm with μ and s = √(σ²+ε) given, not measured on x:

        x̂ = (x − μ₀) / s₀
        y = γ · x̂ + β

    With μ₀ = 0, s₀ = 1, γ = 1, β = 0 it is the identity, y = x.
    """
    hook("hook_mean", mu)
    hook("hook_scale", scale)
    x_hat = (x - mu) / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat + beta
    hook("hook_normalized", y)
    return y


def frozen_rms_norm(x: np.ndarray, scale: np.ndarray, gamma: np.ndarray, hook: Hook = no_hook) -> np.ndarray:
    """RMSNorm with the rms r₀ given, not measured on x (there is no μ: RMSNorm never centres):

        x̂ = x / r₀
        y = γ · x̂

    With r₀ = 1 and γ = 1 it is the identity, y = x.
    """
    hook("hook_scale", scale)
    x_hat = x / scale
    hook("hook_xhat", x_hat)
    y = gamma * x_hat
    hook("hook_normalized", y)
    return y


def frozen_rms_norm_backward(
    d_y: np.ndarray, x_hat: np.ndarray, scale: np.ndarray, gamma: np.ndarray, hook: Hook = no_hook
) -> tuple[np.ndarray, np.ndarray]:
    """y = γ · x / r₀ with r₀ a constant:

        ∂L/∂x = γ · ∂L/∂y / r₀             (no x̂ · mean(g · x̂) term: r₀ does not move with x)
        ∂L/∂γ = Σ ∂L/∂y · x̂

    The hooks get what `rms_norm_backward` hands them: ∂L/∂x̂, and ∂L/∂r₀ as a constant.
    """
    g = d_y * gamma
    if hook is not no_hook:
        hook("hook_xhat", g)
        hook("hook_scale", -(g * x_hat).sum(axis=-1, keepdims=True) / scale)
    flat_d_y = d_y.reshape(-1, d_y.shape[-1])
    return g / scale, (flat_d_y * x_hat.reshape(flat_d_y.shape)).sum(axis=0)


def frozen_layer_norm_backward(
    d_y: np.ndarray, x_hat: np.ndarray, scale: np.ndarray, gamma: np.ndarray, hook: Hook = no_hook
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y = γ · (x − μ₀)/s₀ + β with μ₀, s₀ constants:

        ∂L/∂x = γ · ∂L/∂y / s₀             (no −mean terms: μ₀ and s₀ do not move with x)
        ∂L/∂γ = Σ ∂L/∂y · x̂,   ∂L/∂β = Σ ∂L/∂y

    The hooks get what `layer_norm_backward` hands them: ∂L/∂x̂, and ∂L/∂s₀, ∂L/∂μ₀ as constants.
    """
    g = d_y * gamma
    if hook is not no_hook:
        hook("hook_xhat", g)
        hook("hook_scale", -(g * x_hat).sum(axis=-1, keepdims=True) / scale)
        hook("hook_mean", -g.sum(axis=-1, keepdims=True) / scale)
    flat_d_y = d_y.reshape(-1, d_y.shape[-1])
    return g / scale, (flat_d_y * x_hat.reshape(flat_d_y.shape)).sum(axis=0), flat_d_y.sum(axis=0)


# -- edits checked against the model and the prompt, as one plan -------------------------------------------------


@dataclass(frozen=True)
class FrozenNorm:
    """What `frozen_layer_norm` takes in place of a model's LayerNorm; `identity` when it is LN(x) = x.
    An RMSNorm's has no μ and no β (None): `frozen_rms_norm` takes the rms and γ alone."""

    mu: np.ndarray | None
    scale: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray | None
    identity: bool


@dataclass
class EditPlan:
    """The edits of one run as the forward and backward passes use them: per hook, the kept share m and
    the value c of `replace_at`; the residual adds dropped, by (block, sublayer); the LayerNorms replaced."""

    keep: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    dropped: set[tuple[int, str]] = field(default_factory=set)
    norms: dict[str, FrozenNorm] = field(default_factory=dict)

    def apply(self, name: str, a: np.ndarray) -> np.ndarray:
        """a' = m ⊙ a + c at hook `name`, or a itself where no edit acts."""
        edit = self.keep.get(name)
        return a if edit is None else replace_at(a, *edit)

    def back(self, name: str, d: np.ndarray) -> np.ndarray:
        """∂L/∂a from ∂L/∂a' at hook `name` (∂L/∂a' itself where no edit acts)."""
        edit = self.keep.get(name)
        return d if edit is None else replace_at_backward(d, edit[0])


NO_EDITS = EditPlan()


def plan_edits(gpt: GPT, n: int, edits: Sequence[Edit]) -> EditPlan:
    """Check every edit against `gpt` and a prompt of `n` positions, and gather them into one plan.
    Edits at the same hook compose in order: m₂(m₁a + c₁) + c₂. A bad edit raises `EditError`."""
    plan = EditPlan()
    for edit in edits:
        _add(plan, gpt, n, edit)
    return plan


def _add(plan: EditPlan, gpt: GPT, n: int, edit: Edit) -> None:
    cfg, dtype = gpt.config, gpt.params["wte"].dtype
    if isinstance(edit, (AblateHead, ScaleHead)):
        _check_block(gpt, edit.block)
        _check_head(gpt, edit.head)
        name = f"blocks.{edit.block}.attn.hook_z"
        keep, value = _fresh(plan, name, (n, cfg.n_heads, cfg.d_head), dtype)
        rows = _rows(edit.positions, n)
        if isinstance(edit, ScaleHead):
            if not math.isfinite(edit.factor):
                raise EditError(f"a head's scale must be a finite number, got {edit.factor!r}")
            _compose(plan, name, keep, value, rows, (edit.head,), edit.factor, 0.0)
            return
        mean = 0.0
        if edit.mean_from is not None:
            mean = _source(edit.mean_from, name, (cfg.n_heads, cfg.d_head))[:, edit.head].mean(axis=0)
        _compose(plan, name, keep, value, rows, (edit.head,), 0.0, mean)
    elif isinstance(edit, SkipSublayer):
        _check_block(gpt, edit.block)
        _check_sublayer(edit.sublayer)
        name = f"blocks.{edit.block}.hook_{edit.sublayer}_out"
        keep, value = _fresh(plan, name, (n, cfg.d_model), dtype)
        _compose(plan, name, keep, value, _rows(edit.positions, n), (), 0.0, 0.0)
    elif isinstance(edit, DropResidual):
        _check_block(gpt, edit.block)
        _check_sublayer(edit.sublayer)
        if not cfg.residual:
            raise EditError(f"model {gpt.name} has no residual add to drop: it is trained without residuals")
        plan.dropped.add((edit.block, edit.sublayer))
    elif isinstance(edit, BypassNorm):
        plan.norms[edit.norm] = _frozen_norm(gpt, n, edit)
    elif isinstance(edit, Patch):
        _add_patch(plan, gpt, n, edit)
    else:
        raise EditError(f"not an edit: {edit!r}")


def _add_patch(plan: EditPlan, gpt: GPT, n: int, edit: Patch) -> None:
    cfg = gpt.config
    block, _, point = edit.hook.partition(".")[2].partition(".")
    if not (edit.hook.startswith("blocks.") and block.isdigit() and point in PATCHABLE):
        raise EditError(f"cannot patch {edit.hook!r}: patch blocks.i. followed by one of {', '.join(PATCHABLE)}")
    _check_block(gpt, int(block))
    per_position = (cfg.n_heads, cfg.d_head) if point == "attn.hook_z" else (cfg.d_model,)
    source = _source(edit.source, edit.hook, per_position)
    if len(source) != n:
        raise EditError(f"the patch source has {len(source)} positions and this prompt {n}: they must match")
    heads: tuple[int, ...] = ()
    if edit.head is not None:
        if point != "attn.hook_z":
            raise EditError(f"only blocks.i.attn.hook_z has heads; {edit.hook} has none")
        _check_head(gpt, edit.head)
        heads = (edit.head,)
    rows = _rows(edit.positions, n)
    keep, value = _fresh(plan, edit.hook, (n, *per_position), gpt.params["wte"].dtype)
    patched = source[rows][:, heads] if heads else source[rows]
    _compose(plan, edit.hook, keep, value, rows, heads, 0.0, patched)


def _frozen_norm(gpt: GPT, n: int, edit: BypassNorm) -> FrozenNorm:
    norms, rms = gpt_norms(gpt), gpt.config.is_rms
    if edit.norm not in norms:
        have = ", ".join(norms[:3] + (["…"] if len(norms) > 3 else [])) or "none"
        kind = "RMSNorm" if rms else "LayerNorm"
        raise EditError(f"model {gpt.name} has no {kind} {edit.norm!r} (its {kind}s: {have})")
    dtype = gpt.params["wte"].dtype
    if edit.frozen_from is None:
        d = gpt.config.d_model
        ones, zeros = np.ones(d, dtype=dtype), np.zeros(d, dtype)
        if rms:
            return FrozenNorm(None, np.ones((n, 1), dtype), ones, None, True)
        return FrozenNorm(np.zeros((n, 1), dtype), np.ones((n, 1), dtype), ones, zeros, True)
    scale = _source(edit.frozen_from, edit.norm + ".hook_scale", (1,))
    if len(scale) != n:
        kind = "RMSNorm" if rms else "LayerNorm"
        raise EditError(f"the frozen {kind}'s source has {len(scale)} positions and this prompt {n}: they must match")
    weights = gpt.params  # μ and s are copied: the edited trace records them, and must not share the source's
    if rms:  # the rms alone: RMSNorm has no μ (and no β)
        return FrozenNorm(None, scale.copy(), weights[edit.norm + ".g"], None, False)
    mu = _source(edit.frozen_from, edit.norm + ".hook_mean", (1,))
    return FrozenNorm(mu.copy(), scale.copy(), weights[edit.norm + ".g"], weights[edit.norm + ".b"], False)


def gpt_norms(gpt: GPT) -> list[str]:
    """The names of `gpt`'s LayerNorms: ln1 and ln2 of every block (pre- and post-norm), ln_final (pre-norm)."""
    if gpt.config.norm == "none":
        return []
    blocks = [f"blocks.{i}.{ln}" for i in range(gpt.config.n_layers) for ln in ("ln1", "ln2")]
    return blocks + (["ln_final"] if gpt.config.has_final_norm else [])


def _check_block(gpt: GPT, block: int) -> None:
    if not 0 <= block < gpt.config.n_layers:
        raise EditError(f"block {block} is out of range: model {gpt.name} has blocks 0 to {gpt.config.n_layers - 1}")


def _check_head(gpt: GPT, head: int) -> None:
    if not 0 <= head < gpt.config.n_heads:
        raise EditError(f"head {head} is out of range: model {gpt.name} has heads 0 to {gpt.config.n_heads - 1}")


def _check_sublayer(sublayer: str) -> None:
    if sublayer not in SUBLAYERS:
        raise EditError(f"a sublayer is 'attn' or 'mlp', got {sublayer!r}")


def _rows(positions: Positions, n: int) -> list[int]:
    if positions is None:
        return list(range(n))
    bad = [p for p in positions if not -n <= p < n]
    if bad:
        raise EditError(f"position {bad[0]} is out of range: the prompt has positions 0 to {n - 1}")
    return sorted({p % n for p in positions})


def _source(trace: Trace, name: str, per_position: tuple[int, ...]) -> np.ndarray:
    found = trace.activations.get(name)
    if found is None:
        raise EditError(f"the source trace has no {name!r}")
    if found.shape[1:] != per_position:
        raise EditError(f"the source's {name} is {found.shape[1:]} per position; this model's is {per_position}")
    return found


def _fresh(plan: EditPlan, name: str, shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The (m, c) already planned at `name`, or m = 1, c = 0: nothing changed yet."""
    return plan.keep.get(name) or (np.ones(shape, dtype), np.zeros(shape, dtype))


def _compose(
    plan: EditPlan,
    name: str,
    keep: np.ndarray,
    value: np.ndarray,
    rows: list[int],
    heads: tuple[int, ...],
    factor: float,
    new: float | np.ndarray,
) -> None:
    """One more edit a ← factor · a + new on `rows` (and `heads`) after those already planned at `name`."""
    where = np.ix_(rows, heads) if heads else np.ix_(rows)
    keep, value = keep.copy(), value.copy()
    keep[where] *= factor
    value[where] = value[where] * factor + new
    plan.keep[name] = (keep, value)


# -- the forward pass with the edits in it ---------------------------------------------------------------------------


def edited(gpt: GPT, plan: EditPlan) -> GPT:
    """`gpt` with `plan` wired in: the same weights (shared, not copied), the same forward pass, and at
    each edited point the edit. Only `run` makes one."""
    from model.gpt import GPT

    class EditedGPT(GPT):
        def block(
            self, i: int, x: np.ndarray, rope_pe: np.ndarray | None, cache: KVCache | None, hook: Hook
        ) -> np.ndarray:
            return super().block(i, plan.apply(f"blocks.{i}.hook_resid_pre", x), rope_pe, cache, hook)

        def sublayer(
            self, i: int, name: str, ln: str, f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, hook: Hook
        ) -> np.ndarray:
            """`GPT.sublayer` with its output, its add and its stream point open to edits."""
            cfg, b = self.config, f"blocks.{i}."
            h = self._layer_norm(b + ln, x, scoped(hook, ln + ".")) if cfg.norm == "pre" else x
            out = plan.apply(f"{b}hook_{name}_out", f(h))
            hook(f"hook_{name}_out", out)
            if cfg.residual:
                out = out if (i, name) in plan.dropped else x + out
                if cfg.norm == "post":
                    hook(f"hook_{name}_add", out)
            if cfg.norm == "post":
                out = self._layer_norm(b + ln, out, scoped(hook, ln + "."))
            return plan.apply(b + ("hook_resid_mid" if name == "attn" else "hook_resid_post"), out)

        def attn(
            self, i: int, h: np.ndarray, rope_pe: np.ndarray | None, cache: KVCache | None, hook: Hook
        ) -> np.ndarray:
            """`GPT.attn`, and where heads are edited: out = concat(z′) W_O + b_O from the edited z′."""
            name = f"blocks.{i}.attn.hook_z"
            if name not in plan.keep:
                return super().attn(i, h, rope_pe, cache, hook)
            inner = scoped(hook, "attn.")
            seen: dict[str, np.ndarray] = {}

            def look(key: str, value: np.ndarray) -> None:
                if key == "hook_z":  # the trace gets the edited z, below
                    seen[key] = value
                else:
                    inner(key, value)

            self.attention(i, h, rope_pe, None, look)
            z = plan.apply(name, seen["hook_z"])
            inner("hook_z", z)
            return self.heads_out(i, z)

        def _layer_norm(self, name: str, x: np.ndarray, hook: Hook) -> np.ndarray:
            frozen = plan.norms.get(name)
            if frozen is None:
                return super()._layer_norm(name, x, hook)
            if frozen.mu is None or frozen.beta is None:  # an RMSNorm's: the rms alone is frozen
                return frozen_rms_norm(x, frozen.scale, frozen.gamma, hook)
            return frozen_layer_norm(x, frozen.mu, frozen.scale, frozen.gamma, frozen.beta, hook)

    other = EditedGPT.__new__(EditedGPT)
    other.__dict__.update(gpt.__dict__)
    other.edit_plan = plan
    return other
