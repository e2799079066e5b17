"""The GPT: embeddings, a stack of blocks, the unembedding — with every activation on record."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Unpack

import numpy as np

from model.attention import merge_heads, multi_head_attention_kv
from model.backward import position_losses_and_backward
from model.config import ConfigChanges, GPTConfig
from model.embedding import embed, unembed
from model.gradients import backward
from model.hooks import Hook, Recording, no_hook, scoped
from model.interventions import NO_EDITS, Edit, EditPlan, edited, plan_edits
from model.layout import for_forward
from model.llama import gated_mlp
from model.mlp import mlp
from model.norm import layer_norm, rms_norm
from model.params import Params, parameter_shapes
from model.positions import angle_table, model_rope_frequencies, sinusoidal_positions
from model.sampling import sample, sample_rng
from model.text import printable
from model.tokenizer import Tokenizer, TokenizerError
from model.trace import Trace, build_steps

NAME_LIMIT = 80  # a model's name is shown in titles and notices


class ContextError(ValueError):
    """More positions than the model's context holds."""


class NoTargetError(ValueError):
    """A loss asked of a prompt too short to have one: a position needs a next token to predict."""


@dataclass
class KVCache:
    """Keys (after RoPE's turn) and values of the positions already seen, per block, `[pos, head, d_head]` each;
    with grouped-query attention, its n_kv_heads key/value heads (the query heads share them)."""

    kv: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    length: int = 0


class GPT:
    """A decoder-only transformer, wired by its `GPTConfig`: GPT-2's wiring and the lessons' variants, or the
    Llama family's (RMSNorm, grouped-query attention, the gated MLP, RoPE's half-split pairs, an untied W_U).

    `run(prompt)` returns a `Trace` of the whole forward pass (with `grads=True`, of the backward
    pass too); `forward` is the bare pass, over one sequence `[pos]` or a batch `[batch, pos]`.
    `params` are the raw parameters, by name; the forward multiplies by copies laid out for speed
    (`model/layout.py`) unless `lay_out=False`, which training asks for: it changes `params` in place.
    Parameters are float32; the gradient checks ask for `dtype=np.float64`.
    """

    edit_plan: EditPlan = NO_EDITS  # what `run(prompt, edits=…)` wires in (model/interventions.py)

    def __init__(
        self,
        config: GPTConfig,
        params: Params,
        tokenizer: Tokenizer,
        name: str = "custom",
        trained: bool = False,
        lay_out: bool = True,
        dtype: type[np.floating] = np.float32,
    ) -> None:
        expected = parameter_shapes(config)
        if set(params) != set(expected):
            missing, extra = sorted(set(expected) - set(params)), sorted(set(params) - set(expected))
            raise ValueError(f"parameters do not fit the config: missing {missing}, unexpected {extra}")
        for key, shape in expected.items():
            if params[key].shape != shape:
                raise ValueError(f"parameter {key} has shape {params[key].shape}, expected {shape}")
            if params[key].dtype != dtype:  # one float64 array would promote the whole pass
                raise ValueError(f"parameter {key} is {params[key].dtype}, expected {np.dtype(dtype).name}")
        if tokenizer.vocab_size != config.vocab_size:
            raise ValueError(f"tokenizer has {tokenizer.vocab_size} tokens but the config says {config.vocab_size}")
        self.config = config
        self.params = params
        self._weights = for_forward(params) if lay_out else params  # big matrices turned round for OpenBLAS
        self.tokenizer = tokenizer
        self.name = printable(name, limit=NAME_LIMIT)  # a file's metadata: it must not drive the terminal
        self.trained = trained
        self.steps = build_steps(config)
        self._position_table = self._make_position_table(dtype)

    def _make_position_table(self, dtype: type[np.floating]) -> np.ndarray | None:
        cfg = self.config
        if cfg.positional == "learned":
            return self.params["wpe"]
        if cfg.positional == "sinusoidal":
            table = sinusoidal_positions(cfg.n_ctx, cfg.d_model, cfg.pos_base).astype(dtype, copy=False)
        elif cfg.positional == "rope" and cfg.rope_scaling != "none":  # Llama 3's scaled frequencies, say
            table = angle_table(cfg.n_ctx, model_rope_frequencies(cfg)).astype(dtype, copy=False)
        elif cfg.positional == "rope":  # RoPE turns q and k by the same angles, per head
            table = sinusoidal_positions(cfg.n_ctx, cfg.d_head, cfg.pos_base).astype(dtype, copy=False)
        else:
            return None
        table.flags.writeable = False  # every trace's hook_pos_embed is a view of it
        return table

    def position_rows(self, start: int, n: int) -> np.ndarray:
        """Rows start … start+n−1 of the position table: the vectors added to the tokens (sinusoidal,
        learned) or RoPE's sin/cos angles. A model with no positions (`nope`) has no table: ValueError."""
        if self._position_table is None:
            raise ValueError(f"model {self.name} has no position table (positional = {self.config.positional})")
        return self._position_table[start : start + n]

    def with_config(self, **changes: Unpack[ConfigChanges]) -> GPT:
        """The same weights under a changed wiring (say another `pos_base`): off-training."""
        other = GPT(
            replace(self.config, **changes), self.params, self.tokenizer, self.name, self.trained, lay_out=False
        )
        other._weights = self._weights  # laid out once, shared
        return other

    # -- the forward pass -------------------------------------------------------------------

    def forward(self, tokens: np.ndarray, cache: KVCache | None = None, hook: Hook = no_hook) -> np.ndarray:
        """logits = unembed(LN_final(blocks(embed(tokens) + positions))), `[pos, vocab]`.

        `tokens` is `[pos]` or `[batch, pos]` (then every activation has the batch axis in front).
        With a `cache`, `tokens` continue the positions already in it.
        """
        cfg, p = self.config, self._weights
        start, n = (cache.length if cache is not None else 0), tokens.shape[-1]
        if start + n > cfg.n_ctx:
            raise ContextError(f"{start + n} positions do not fit the context of {cfg.n_ctx}")

        x = embed(tokens, p["wte"])
        hook("hook_embed", x)
        rope_pe = None
        if cfg.positional in ("sinusoidal", "learned"):
            pos_embed = self.position_rows(start, n)
            hook("hook_pos_embed", pos_embed)
            x = x + pos_embed
        elif cfg.positional == "rope":
            rope_pe = self.position_rows(start, n)

        for i in range(cfg.n_layers):
            x = self.block(i, x, rope_pe, cache, scoped(hook, f"blocks.{i}."))

        logits = self.read_out(x, hook)
        hook("logits", logits)
        if cache is not None:
            cache.length += n
        return logits

    def read_out(self, x: np.ndarray, hook: Hook = no_hook) -> np.ndarray:
        """The end of the pass, from the last stream to scores: logits = unembed(LN_final(x)).

        Only pre-norm has the final LayerNorm; post-norm and no-norm models read x · W_Eᵀ directly.
        """
        if self.config.has_final_norm:
            x = self._layer_norm("ln_final", x, scoped(hook, "ln_final."))
        return unembed(x, self._weights["wte"]) if self.config.tied else x @ self._weights["w_u"]

    def block(self, i: int, x: np.ndarray, rope_pe: np.ndarray | None, cache: KVCache | None, hook: Hook) -> np.ndarray:
        """One transformer block: attention, then the MLP, each as a `sublayer` (pre-norm: x + F(LN(x)))."""
        hook("hook_resid_pre", x)
        x = self.sublayer(i, "attn", "ln1", lambda h: self.attn(i, h, rope_pe, cache, hook), x, hook)
        hook("hook_resid_mid", x)
        x = self.sublayer(i, "mlp", "ln2", lambda h: self.mlp(i, h, hook), x, hook)
        hook("hook_resid_post", x)
        return x

    def attn(self, i: int, h: np.ndarray, rope_pe: np.ndarray | None, cache: KVCache | None, hook: Hook) -> np.ndarray:
        """Block i's `multi_head_attention` on its own weights. Run as `multi_head_attention_kv`: the same
        numbers, and with a `cache` only the new positions, their keys and values joining the cache's."""
        out, kv = self.attention(i, h, rope_pe, cache.kv.get(i) if cache is not None else None, scoped(hook, "attn."))
        if cache is not None:
            cache.kv[i] = kv
        return out

    def attention(
        self, i: int, h: np.ndarray, rope_pe: np.ndarray | None, past: tuple[np.ndarray, np.ndarray] | None, hook: Hook
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """`multi_head_attention_kv` with block i's weights and the config's wiring: its output and (k, v).
        `hook` is attention's own (`blocks.i.attn.`)."""
        cfg, p, b = self.config, self._weights, f"blocks.{i}.attn."
        return multi_head_attention_kv(
            h, p[b + "w_qkv"], p.get(b + "b_qkv"), p[b + "w_out"], p.get(b + "b_out"), cfg.n_heads, cfg.causal,
            rope_pe, past, hook, cfg.kv_heads, cfg.rope_style,
        )  # fmt: skip

    def heads_out(self, i: int, z: np.ndarray) -> np.ndarray:
        """Block i's attention output from its heads' z: out = concat(z₁ … z_H) W_O (+ b_O)."""
        p, b = self._weights, f"blocks.{i}.attn."
        out = merge_heads(z) @ p[b + "w_out"]
        return out + p[b + "b_out"] if b + "b_out" in p else out

    def mlp(self, i: int, h: np.ndarray, hook: Hook) -> np.ndarray:
        """Block i's `mlp` (or `gated_mlp`) on its own weights."""
        p, b = self._weights, f"blocks.{i}.mlp."
        if self.config.mlp_kind == "gated":
            return gated_mlp(h, p[b + "w_gate"], p[b + "w_in"], p[b + "w_out"], scoped(hook, "mlp."))
        return mlp(h, p[b + "w_in"], p[b + "b_in"], p[b + "w_out"], p[b + "b_out"], scoped(hook, "mlp."))

    def sublayer(
        self, i: int, name: str, ln: str, f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, hook: Hook
    ) -> np.ndarray:
        """One sublayer F with its norm and residual, as the config wires it:

        pre-norm:   x + F(LN(x))
        post-norm:  LN(x + F(x))      ("Add & Norm")
        no norm:    x + F(x)
        no residual drops the "x +": F(LN(x)), LN(F(x)), F(x).
        """
        cfg = self.config
        h = self._layer_norm(f"blocks.{i}.{ln}", x, scoped(hook, ln + ".")) if cfg.norm == "pre" else x
        out = f(h)
        hook(f"hook_{name}_out", out)
        if cfg.residual:
            out = x + out
            if cfg.norm == "post":
                hook(f"hook_{name}_add", out)
        if cfg.norm == "post":
            out = self._layer_norm(f"blocks.{i}.{ln}", out, scoped(hook, ln + "."))
        return out

    def _layer_norm(self, name: str, x: np.ndarray, hook: Hook) -> np.ndarray:
        """The norm `name` ("blocks.0.ln1", "ln_final"): LayerNorm, or RMSNorm when `norm_kind` is "rms"."""
        w, eps = self._weights, self.config.ln_eps
        if self.config.is_rms:
            return rms_norm(x, w[name + ".g"], eps, hook)
        return layer_norm(x, w[name + ".g"], w[name + ".b"], eps, hook)

    # -- prompts, traces and generation ------------------------------------------------------

    def prompt_tokens(self, prompt: str | Sequence[int]) -> tuple[list[int], int]:
        """The prompt's token ids, cut to the last `n_ctx` if longer, and how many were cut."""
        if isinstance(prompt, str):
            ids = self.tokenizer.encode(prompt)
        else:
            numbers = prompt.tolist() if isinstance(prompt, np.ndarray) else prompt  # int(NumPy scalar): 5× slower
            ids = [int(t) for t in numbers]
            bad = [t for t in ids if not 0 <= t < self.config.vocab_size]
            if bad:
                raise TokenizerError(f"token id {bad[0]} is outside the vocabulary (0..{self.config.vocab_size - 1})")
        dropped = max(0, len(ids) - self.config.n_ctx)
        return ids[dropped:], dropped

    def run(
        self,
        prompt: str | Sequence[int],
        stop: Callable[[], bool] | None = None,
        grads: bool = False,
        edits: Sequence[Edit] = (),
    ) -> Trace:
        """The forward pass over `prompt` with every activation recorded.

        With `grads`, the backward pass too, from the prompt's own loss L — the mean cross-entropy of
        positions 0 … n−2 predicting tokens 1 … n−1 (the last position has no next token): the trace
        then holds `loss`, each position's loss, ∂L/∂a for every activation a as `trace[a + "_grad"]`,
        and ∂L/∂θ for every parameter (`trace.param_grads`). A prompt of fewer than two tokens has no
        loss: `NoTargetError`.

        `stop` is asked as each block and sublayer begins; when it says True the pass raises `Stopped`
        (an app gives up a pass whose prompt the learner has already changed: at GPT-2 size a pass takes a while).

        `edits` (model/interventions.py) run the model with pieces changed: a head ablated, a residual add
        dropped, an activation patched from another trace … The trace keeps them in `trace.edits`; a bad
        edit raises `EditError` before the pass starts.
        """
        ids, dropped = self.prompt_tokens(prompt)
        if grads and len(ids) < 2:
            raise NoTargetError(
                f"a loss needs at least 2 tokens (each position predicts the next one); this prompt has {len(ids)}"
            )
        runner = edited(self, plan_edits(self, len(ids), edits)) if edits else self
        tokens = np.asarray(ids, dtype=np.intp)
        recording = Recording.start(stop)
        runner.forward(tokens, hook=recording.__setitem__)
        trace = Trace(ids, recording.activations(), self.steps, self.config, self.tokenizer, dropped)
        trace.edits = tuple(edits)
        trace.kept = {name: keep for name, (keep, _) in runner.edit_plan.keep.items()}
        trace.dropped_adds = frozenset(runner.edit_plan.dropped)
        if grads:
            runner._add_backward(trace)
        return trace

    def _add_backward(self, trace: Trace) -> None:
        """The backward pass of `trace`'s own loss, from its recorded activations, into the trace."""
        tokens = np.asarray(trace.tokens, dtype=np.intp)
        losses, d_logits = position_losses_and_backward(trace.logits, tokens)
        gradients: dict[str, np.ndarray] = {}

        def keep(name: str, value: np.ndarray) -> None:
            gradients[name + "_grad"] = value

        trace.param_grads = backward(self, tokens, trace.activations, d_logits, keep, self.edit_plan)
        trace.grads, trace.losses = gradients, losses

    # -- one token more, through the KV cache --------------------------------------------------

    def extend_refusal(self, trace: Trace) -> str | None:
        """Why `extend` cannot add a token to `trace` through the KV cache, or None when it can:
        "not_causal" (without the mask, every old position would see the new token and change too),
        "context_full" (the window must slide: every position moves), "empty" (no positions to keep)."""
        if not self.config.causal:
            return "not_causal"
        if trace.dropped or len(trace.tokens) >= self.config.n_ctx:
            return "context_full"
        if not trace.tokens:
            return "empty"
        return None

    def cache_of(self, trace: Trace) -> KVCache:
        """The KV cache of `trace`'s positions, from its own recorded keys (after RoPE's turn) and values."""
        rotated = self.config.positional == "rope"
        kv = {}
        for i in range(self.config.n_layers):
            k = trace[f"blocks.{i}.attn.hook_rot_k" if rotated else f"blocks.{i}.attn.hook_k"]
            kv[i] = (k, trace[f"blocks.{i}.attn.hook_v"])
        return KVCache(kv, len(trace.tokens))

    def extend(self, trace: Trace, token: int) -> Trace:
        """`trace` with `token` appended, computing only the new position: its query meets the keys and values
        already in the trace (the KV cache); every old position's activations are kept as they are, which a
        causal mask makes exact. Equals `run(trace.tokens + [token])` hook for hook, up to float32 rounding
        (one row or many take other BLAS kernels); with gradients when `trace` has them (the backward pass
        runs over every position: a new token changes the loss of none before it, but adds one more)."""
        refusal = self.extend_refusal(trace)
        if trace.edits:  # the new position would meet the clean model's keys, not the edited one's
            raise ValueError("cannot extend an edited trace through the KV cache: run the longer prompt with the edits")
        if refusal is not None:
            raise ValueError(f"cannot extend this trace through the KV cache: {refusal}")
        ids, _ = self.prompt_tokens([*trace.tokens, token])
        recording = Recording.start()
        self.forward(np.asarray(ids[-1:], dtype=np.intp), self.cache_of(trace), hook=recording.__setitem__)
        new = recording.activations()
        activations = {name: append_position(name, trace.activations[name], row) for name, row in new.items()}
        longer = Trace(ids, activations, self.steps, self.config, self.tokenizer, trace.dropped)
        if trace.has_grads:
            self._add_backward(longer)
        return longer

    def new_cache(self) -> KVCache:
        if not self.config.causal:
            raise ValueError("a KV cache needs the causal mask: without it, old positions see new tokens")
        return KVCache()

    def generate(
        self,
        prompt: str,
        n_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        seed: int = 0,
    ) -> str:
        """Sample `n_tokens` after `prompt`, one at a time (temperature 0 takes the likeliest).

        Token n is drawn with `sample_rng(seed, n)`, as the app draws its n-th token: the same seed
        writes the same text here and in a fresh session of `tutor`. Causal models feed each new
        token through a KV cache; when the context is full the window slides and the last `n_ctx`
        tokens are run afresh.
        """
        if n_tokens < 0 or temperature < 0:
            raise ValueError("n_tokens and temperature must not be negative")
        window, _ = self.prompt_tokens(prompt)
        window = window or [self.tokenizer.end_of_text]
        new: list[int] = []
        cache = self.new_cache() if self.config.causal else None
        logits = self.forward(np.asarray(window, dtype=np.intp), cache)[-1]
        while len(new) < n_tokens:
            token = sample(logits, temperature, top_k, sample_rng(seed, len(new)))
            new.append(token)
            window.append(token)
            if len(new) == n_tokens:
                break
            if cache is not None and cache.length < self.config.n_ctx:
                logits = self.forward(np.asarray([token], dtype=np.intp), cache)[-1]
            else:
                window = window[-self.config.n_ctx :]
                cache = self.new_cache() if self.config.causal else None
                logits = self.forward(np.asarray(window, dtype=np.intp), cache)[-1]
        return self.tokenizer.decode(new)


def append_position(name: str, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """An activation of n positions and the new position's row → the activation of n + 1 positions.

    Most are `[pos, …]`. Attention's scores and pattern are `[head, q_pos, k_pos]`: the old queries get a
    column for the new key, which the causal mask hides from them (a score of −∞, a weight of 0)."""
    if name.endswith(("hook_attn_scores", "hook_pattern")):
        hidden = -np.inf if name.endswith("hook_attn_scores") else 0.0
        column = np.full((*old.shape[:-1], 1), hidden, dtype=old.dtype)
        return np.concatenate([np.concatenate([old, column], axis=-1), new], axis=-2)
    return np.concatenate([old, new], axis=0)
