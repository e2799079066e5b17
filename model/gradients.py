"""The backward pass of the whole model: `GPT.forward` read backwards, one `*_backward` per formula.

`backward` takes what one forward pass recorded through its hooks (any batch axes in front), and
∂L/∂logits, and walks the same wiring in reverse: the unembedding, the final LayerNorm, every
block's two sublayers from the last to the first, the embeddings. It hands ∂L/∂a for every
activation a to `hook` under the activation's own hook name (the trace files it as `name + "_grad"`,
as TransformerLens' `run_with_cache(incl_bwd=True)` does), and returns ∂L/∂θ for every parameter.

Training calls `loss_and_gradients` on a batch of windows; `GPT.run(prompt, grads=True)` calls
`backward` on one prompt. There is one forward pass, `GPT.forward`, for both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from model.backward import (
    cross_entropy,
    cross_entropy_and_backward,
    embed_backward,
    gated_mlp_backward,
    layer_norm_backward,
    learned_positions_backward,
    mlp_backward,
    multi_head_attention_backward,
    rms_norm_backward,
    unembed_backward,
    unembed_untied_backward,
)
from model.hooks import Hook, Recording, no_hook, scoped
from model.interventions import NO_EDITS, EditPlan, frozen_layer_norm_backward, frozen_rms_norm_backward

if TYPE_CHECKING:
    from model.gpt import GPT

Activations = dict[str, np.ndarray]
Grads = dict[str, np.ndarray]


def record_forward(gpt: GPT, tokens: np.ndarray) -> tuple[np.ndarray, Activations]:
    """logits and every activation of `gpt.forward(tokens)`, by full hook name (batch axes kept)."""
    recording = Recording.start()
    logits = gpt.forward(tokens, hook=recording.__setitem__)
    return logits, recording.activations()


def backward(
    gpt: GPT,
    tokens: np.ndarray,
    acts: Activations,
    d_logits: np.ndarray,
    hook: Hook = no_hook,
    edits: EditPlan = NO_EDITS,
) -> Grads:
    """∂L/∂θ for every parameter from ∂L/∂logits and the forward's activations; ∂L/∂a to `hook`.

    The order mirrors `GPT.forward`: logits = unembed(LN_final(blocks(embed + positions))). With `edits`
    (model/interventions.py), it goes back through the edited graph the forward ran.
    """
    cfg, p = gpt.config, gpt.params
    grads: dict[str, np.ndarray] = {}
    hook("logits", d_logits)
    last = "ln_final.hook_normalized" if cfg.has_final_norm else f"blocks.{cfg.n_layers - 1}.hook_resid_post"
    if cfg.tied:
        d_x, d_wte_unembed = unembed_backward(d_logits, acts[last], p["wte"])
    else:
        d_x, grads["w_u"] = unembed_untied_backward(d_logits, acts[last], p["w_u"])
    if cfg.has_final_norm:
        hook("ln_final.hook_normalized", d_x)
        d_x = _layer_norm_backward(gpt, "ln_final", d_x, acts, grads, scoped(hook, "ln_final."), edits)

    rope_pe = gpt.position_rows(0, tokens.shape[-1]) if cfg.positional == "rope" else None
    for i in reversed(range(cfg.n_layers)):
        d_x = block_backward(gpt, i, d_x, rope_pe, acts, grads, scoped(hook, f"blocks.{i}."), edits)

    hook("hook_embed", d_x)  # x = W_E[token] + PE[pos]: both receive ∂L/∂x whole
    if cfg.positional in ("sinusoidal", "learned"):
        hook("hook_pos_embed", d_x)
    if cfg.positional == "learned":
        grads["wpe"] = learned_positions_backward(d_x, cfg.n_ctx)
    d_wte_embed = embed_backward(d_x, tokens, cfg.vocab_size)
    grads["wte"] = d_wte_unembed + d_wte_embed if cfg.tied else d_wte_embed  # tied: both shares
    return grads


def block_backward(
    gpt: GPT,
    i: int,
    d_x: np.ndarray,
    rope_pe: np.ndarray | None,
    acts: Activations,
    grads: Grads,
    hook: Hook,
    edits: EditPlan = NO_EDITS,
) -> np.ndarray:
    """Back through block i: the MLP's sublayer, then attention's. `d_x` is ∂L/∂(the block's output)."""
    cfg, p, b = gpt.config, gpt.params, f"blocks.{i}."

    def attend_backward(d_out: np.ndarray, h: np.ndarray) -> np.ndarray:
        rotated = "rot_" if rope_pe is not None else ""
        d_h, *weight_grads = multi_head_attention_backward(
            d_out,
            h,
            acts[b + f"attn.hook_{rotated}q"],
            acts[b + f"attn.hook_{rotated}k"],
            acts[b + "attn.hook_v"],
            acts[b + "attn.hook_pattern"],
            acts[b + "attn.hook_z"],
            p[b + "attn.w_qkv"],
            p[b + "attn.w_out"],
            rope_pe,
            scoped(hook, "attn."),
            edits.keep.get(b + "attn.hook_z", (None,))[0],
            cfg.rope_style,
        )
        names = [b + "attn." + w for w in ("w_qkv", "b_qkv", "w_out", "b_out")]
        grads.update((n, g) for n, g in zip(names, weight_grads, strict=True) if n in p)  # only the biases it has
        return d_h

    def feed_forward_backward(d_out: np.ndarray, h: np.ndarray) -> np.ndarray:
        if cfg.mlp_kind == "gated":
            d_h, *weight_grads = gated_mlp_backward(
                d_out, h, acts[b + "mlp.hook_pre"], acts[b + "mlp.hook_pre_linear"], acts[b + "mlp.hook_post"],
                p[b + "mlp.w_gate"], p[b + "mlp.w_in"], p[b + "mlp.w_out"], scoped(hook, "mlp."),
            )  # fmt: skip
            grads.update(zip([b + "mlp." + w for w in ("w_gate", "w_in", "w_out")], weight_grads, strict=True))
            return d_h
        d_h, *weight_grads = mlp_backward(
            d_out, h, acts[b + "mlp.hook_pre"], acts[b + "mlp.hook_post"], p[b + "mlp.w_in"], p[b + "mlp.w_out"],
            scoped(hook, "mlp."),
        )  # fmt: skip
        grads.update(zip([b + "mlp." + w for w in ("w_in", "b_in", "w_out", "b_out")], weight_grads, strict=True))
        return d_h

    hook("hook_resid_post", d_x)
    d_x = edits.back(b + "hook_resid_post", d_x)
    d_x = sublayer_backward(gpt, i, "mlp", "ln2", feed_forward_backward, d_x, acts, grads, hook, edits)
    hook("hook_resid_mid", d_x)
    d_x = edits.back(b + "hook_resid_mid", d_x)
    d_x = sublayer_backward(gpt, i, "attn", "ln1", attend_backward, d_x, acts, grads, hook, edits)
    hook("hook_resid_pre", d_x)
    return edits.back(b + "hook_resid_pre", d_x)


def sublayer_backward(
    gpt: GPT,
    i: int,
    name: str,
    ln: str,
    f_backward: Callable[[np.ndarray, np.ndarray], np.ndarray],
    d_y: np.ndarray,
    acts: Activations,
    grads: Grads,
    hook: Hook,
    edits: EditPlan = NO_EDITS,
) -> np.ndarray:
    """Back through `GPT.sublayer`. For y = x + F(x) the sum hands ∂L/∂y to x unchanged — the
    gradient highway — and F's own path adds to it:

        ∂L/∂x = ∂L/∂y + ∂L/∂y · ∂F/∂x            (∂y/∂x = 1 + ∂F/∂x)

    so the through-F path is ∂L/∂x − ∂L/∂y, both on record. Without the residual only the second term is left.
    """
    cfg, b = gpt.config, f"blocks.{i}."
    stream = b + ("hook_resid_pre" if name == "attn" else "hook_resid_mid")  # what the sublayer read
    d_sum = d_y
    if cfg.norm == "post":  # y = LN(x + F(x)): first back through the norm
        hook(f"{ln}.hook_normalized", d_y)
        d_sum = _layer_norm_backward(gpt, b + ln, d_y, acts, grads, scoped(hook, ln + "."), edits)
        if cfg.residual:
            hook(f"hook_{name}_add", d_sum)
    hook(f"hook_{name}_out", d_sum)
    d_out = edits.back(f"{b}hook_{name}_out", d_sum)
    if cfg.norm == "pre":  # y = x + F(LN(x))
        d_h = f_backward(d_out, acts[f"{b}{ln}.hook_normalized"])
        hook(f"{ln}.hook_normalized", d_h)
        d_through_f = _layer_norm_backward(gpt, b + ln, d_h, acts, grads, scoped(hook, ln + "."), edits)
    else:
        d_through_f = f_backward(d_out, acts[stream])
    residual = cfg.residual and (i, name) not in edits.dropped
    return d_sum + d_through_f if residual else d_through_f


def _layer_norm_backward(
    gpt: GPT, name: str, d_y: np.ndarray, acts: Activations, grads: Grads, hook: Hook, edits: EditPlan = NO_EDITS
) -> np.ndarray:
    """Back through the norm `name`: LayerNorm's backward, or RMSNorm's (γ only, no β) for an rms model."""
    x_hat, scale = acts[name + ".hook_xhat"], acts[name + ".hook_scale"]
    frozen = edits.norms.get(name)
    if gpt.config.is_rms:
        if frozen is None:
            d_x, grads[name + ".g"] = rms_norm_backward(d_y, x_hat, scale, gpt.params[name + ".g"], hook)
            return d_x
        d_x, d_gamma = frozen_rms_norm_backward(d_y, x_hat, scale, frozen.gamma, hook)
        grads[name + ".g"] = np.zeros_like(d_gamma) if frozen.identity else d_gamma  # identity: γ not in the graph
        return d_x
    if frozen is None:
        d_x, grads[name + ".g"], grads[name + ".b"] = layer_norm_backward(
            d_y, x_hat, scale, gpt.params[name + ".g"], hook
        )
        return d_x
    d_x, d_gamma, d_beta = frozen_layer_norm_backward(d_y, x_hat, scale, frozen.gamma, hook)
    if frozen.identity:  # LN(x) = x: γ and β are not in the graph
        d_gamma, d_beta = np.zeros_like(d_gamma), np.zeros_like(d_beta)
    grads[name + ".g"], grads[name + ".b"] = d_gamma, d_beta
    return d_x


def loss_and_gradients(
    gpt: GPT, inputs: np.ndarray, targets: np.ndarray, look: Callable[[np.ndarray, Activations], None] | None = None
) -> tuple[float, Grads]:
    """Mean next-token cross-entropy on `inputs` → `targets` (both `[batch, pos]`) and its gradients.

    `look(logits, activations)`, if given, reads the forward pass before the backward reuses its arrays.
    """
    logits, acts = record_forward(gpt, inputs)
    if look is not None:
        look(logits, acts)
    loss, d_logits = cross_entropy_and_backward(logits, targets)
    return loss, backward(gpt, inputs, acts, d_logits)


def loss_only(gpt: GPT, inputs: np.ndarray, targets: np.ndarray) -> float:
    """The same loss without the backward pass (validation): the bare forward, nothing recorded."""
    return cross_entropy(gpt.forward(inputs), targets)
