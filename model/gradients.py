"""The whole model's loss and gradients on a batch of token windows: forward, then backward.

`forward_with_tape` is `GPT.forward` for a batch `[batch, pos]`, built from the same formula
functions (`embed`, `layer_norm`, `attention`, `rope`, `mlp`, `unembed`), whose hooks fill a
tape with what the backward pass needs: the same hook names as a trace, batch axis kept, plus
`blocks.{i}.hook_attn_in` / `hook_mlp_in` (what each sublayer read). `backward_from_tape` walks
the pass in reverse, one `*_backward` function (model/backward.py) per forward formula.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from model.attention import attention
from model.backward import (
    cross_entropy,
    cross_entropy_and_backward,
    embed_backward,
    fold_heads,
    layer_norm_backward,
    learned_positions_backward,
    mlp_backward,
    multi_head_attention_backward,
    unembed_backward,
    unfold_heads,
)
from model.config import GPTConfig
from model.embedding import embed, unembed
from model.hooks import Hook, scoped
from model.mlp import mlp
from model.norm import layer_norm
from model.params import Params
from model.positions import rope, sinusoidal_positions

Tape = dict[str, np.ndarray]
Grads = dict[str, np.ndarray]


@lru_cache(maxsize=16)
def _sinusoidal_table(n_ctx: int, d: int, base: float) -> np.ndarray:
    table = sinusoidal_positions(n_ctx, d, base)
    table.flags.writeable = False  # shared between calls
    return table


def multi_head_attention_batch(
    x: np.ndarray,
    w_qkv: np.ndarray,
    b_qkv: np.ndarray,
    w_out: np.ndarray,
    b_out: np.ndarray,
    n_heads: int,
    causal: bool,
    rope_pe: np.ndarray | None,
    hook: Hook,
) -> np.ndarray:
    """`multi_head_attention` for `x` of `[batch, pos, d]`: each (sequence, head) is one head of `attention`."""
    batch, n, d = x.shape
    q, k, v = (t.reshape(batch, n, n_heads, d // n_heads) for t in np.split(x @ w_qkv + b_qkv, 3, axis=-1))
    hook("hook_q", q)
    hook("hook_k", k)
    hook("hook_v", v)
    if rope_pe is not None:
        q, k = rope(q, rope_pe), rope(k, rope_pe)
        hook("hook_rot_q", q)
        hook("hook_rot_k", k)
    z = unfold_heads(attention(fold_heads(q), fold_heads(k), fold_heads(v), causal, hook), batch)
    hook("hook_z", z)
    return z.reshape(batch, n, d) @ w_out + b_out


def forward_with_tape(params: Params, config: GPTConfig, tokens: np.ndarray) -> tuple[np.ndarray, Tape]:
    """logits `[batch, pos, vocab]` for token windows `[batch, pos]`, and the tape of the pass."""
    cfg, p = config, params
    tape: Tape = {}

    def keep(name: str, value: np.ndarray) -> None:
        tape[name] = value

    n = tokens.shape[-1]
    x = embed(tokens, p["wte"])
    rope_pe = None
    if cfg.positional == "sinusoidal":
        x = x + _sinusoidal_table(cfg.n_ctx, cfg.d_model, cfg.pos_base)[:n]
    elif cfg.positional == "learned":
        x = x + p["wpe"][:n]
    elif cfg.positional == "rope":
        rope_pe = _sinusoidal_table(cfg.n_ctx, cfg.d_head, cfg.pos_base)[:n]

    for i in range(cfg.n_layers):
        b = f"blocks.{i}."
        hook = scoped(keep, b)

        def attend(h: np.ndarray, b: str = b, hook: Hook = hook) -> np.ndarray:
            return multi_head_attention_batch(
                h,
                p[b + "attn.w_qkv"],
                p[b + "attn.b_qkv"],
                p[b + "attn.w_out"],
                p[b + "attn.b_out"],
                cfg.n_heads,
                cfg.causal,
                rope_pe,
                scoped(hook, "attn."),
            )

        def feed_forward(h: np.ndarray, b: str = b, hook: Hook = hook) -> np.ndarray:
            return mlp(
                h, p[b + "mlp.w_in"], p[b + "mlp.b_in"], p[b + "mlp.w_out"], p[b + "mlp.b_out"], scoped(hook, "mlp.")
            )

        x = _sublayer(cfg, p, i, "attn", "ln1", attend, x, hook)
        x = _sublayer(cfg, p, i, "mlp", "ln2", feed_forward, x, hook)
        hook("hook_resid_post", x)

    if cfg.has_final_norm:
        x = layer_norm(x, p["ln_final.g"], p["ln_final.b"], cfg.ln_eps, scoped(keep, "ln_final."))
    return unembed(x, p["wte"]), tape


def _sublayer(
    cfg: GPTConfig,
    p: Params,
    i: int,
    name: str,
    ln: str,
    f: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    hook: Hook,
) -> np.ndarray:
    """`GPT.sublayer` on a batch: x + F(LN(x)), LN(x + F(x)) or x + F(x), the "x +" only with residuals."""
    norm = f"blocks.{i}.{ln}."
    h = layer_norm(x, p[norm + "g"], p[norm + "b"], cfg.ln_eps, scoped(hook, ln + ".")) if cfg.norm == "pre" else x
    hook(f"hook_{name}_in", h)
    out = f(h)
    if cfg.residual:
        out = x + out
    if cfg.norm == "post":
        out = layer_norm(out, p[norm + "g"], p[norm + "b"], cfg.ln_eps, scoped(hook, ln + "."))
    return out


def backward_from_tape(
    params: Params, config: GPTConfig, tokens: np.ndarray, tape: Tape, d_logits: np.ndarray
) -> Grads:
    """∂L/∂(every parameter), from ∂L/∂logits and the forward's tape: the forward pass read backwards."""
    cfg, p = config, params
    grads: Grads = {}

    def norm_backward(d_y: np.ndarray, name: str) -> np.ndarray:
        d_x, grads[name + ".g"], grads[name + ".b"] = layer_norm_backward(
            d_y, tape[name + ".hook_xhat"], tape[name + ".hook_scale"], p[name + ".g"]
        )
        return d_x

    last = "ln_final.hook_normalized" if cfg.has_final_norm else f"blocks.{cfg.n_layers - 1}.hook_resid_post"
    d_x, d_wte_unembed = unembed_backward(d_logits, tape[last], p["wte"])
    if cfg.has_final_norm:
        d_x = norm_backward(d_x, "ln_final")

    rope_pe = None
    if cfg.positional == "rope":
        rope_pe = _sinusoidal_table(cfg.n_ctx, cfg.d_head, cfg.pos_base)[: tokens.shape[-1]]

    for i in reversed(range(cfg.n_layers)):
        b = f"blocks.{i}."

        def attend_backward(d_out: np.ndarray, b: str = b) -> np.ndarray:
            rotated = "rot_" if rope_pe is not None else ""
            d_h, *weight_grads = multi_head_attention_backward(
                d_out,
                tape[b + "hook_attn_in"],
                tape[b + f"attn.hook_{rotated}q"],
                tape[b + f"attn.hook_{rotated}k"],
                tape[b + "attn.hook_v"],
                tape[b + "attn.hook_pattern"],
                tape[b + "attn.hook_z"],
                p[b + "attn.w_qkv"],
                p[b + "attn.w_out"],
                rope_pe,
            )
            grads.update(
                zip([b + "attn." + w for w in ("w_qkv", "b_qkv", "w_out", "b_out")], weight_grads, strict=True)
            )
            return d_h

        def feed_forward_backward(d_out: np.ndarray, b: str = b) -> np.ndarray:
            d_h, *weight_grads = mlp_backward(
                d_out,
                tape[b + "hook_mlp_in"],
                tape[b + "mlp.hook_pre"],
                tape[b + "mlp.hook_post"],
                p[b + "mlp.w_in"],
                p[b + "mlp.w_out"],
            )
            grads.update(zip([b + "mlp." + w for w in ("w_in", "b_in", "w_out", "b_out")], weight_grads, strict=True))
            return d_h

        d_x = _sublayer_backward(cfg, b + "ln2", feed_forward_backward, norm_backward, d_x)
        d_x = _sublayer_backward(cfg, b + "ln1", attend_backward, norm_backward, d_x)

    if cfg.positional == "learned":
        grads["wpe"] = learned_positions_backward(d_x, cfg.n_ctx)
    grads["wte"] = d_wte_unembed + embed_backward(d_x, tokens, cfg.vocab_size)  # tied: both shares
    return grads


def _sublayer_backward(
    cfg: GPTConfig,
    norm: str,
    f_backward: Callable[[np.ndarray], np.ndarray],
    norm_backward: Callable[[np.ndarray, str], np.ndarray],
    d_y: np.ndarray,
) -> np.ndarray:
    """Back through one sublayer. The residual "x +" hands ∂L/∂(sum) to x unchanged — the
    gradient highway — and F's own path adds to it: ∂L/∂x = ∂L/∂s + ∂L/∂s · ∂F/∂x.
    """
    d_sum = norm_backward(d_y, norm) if cfg.norm == "post" else d_y
    d_h = f_backward(d_sum)
    d_x_through_f = norm_backward(d_h, norm) if cfg.norm == "pre" else d_h
    return d_sum + d_x_through_f if cfg.residual else d_x_through_f


def loss_and_gradients(
    params: Params, config: GPTConfig, inputs: np.ndarray, targets: np.ndarray
) -> tuple[float, Grads]:
    """Mean next-token cross-entropy on `inputs` → `targets` (both `[batch, pos]`) and its gradients."""
    logits, tape = forward_with_tape(params, config, inputs)
    loss, d_logits = cross_entropy_and_backward(logits, targets)
    return loss, backward_from_tape(params, config, inputs, tape, d_logits)


def loss_only(params: Params, config: GPTConfig, inputs: np.ndarray, targets: np.ndarray) -> float:
    """The same loss without the backward pass (validation)."""
    logits, _ = forward_with_tape(params, config, inputs)
    return cross_entropy(logits, targets)
