"""The reference cases each exercise is checked against, and how a learner's function enters the live model.

Every expected value comes from model/'s own function. Runs inside the checker's subprocess.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import numpy as np

import model
from model import GPT
from model.attention import multi_head_attention
from model.hooks import Hook, no_hook
from model.mlp import mlp
from model.norm import layer_norm
from model.positions import rope, sinusoidal_positions

LIVE_PROMPT = "猫追狗，狗追猫。"

# The modules whose globals the forward pass looks up (`model.attention` itself is the function, not the module)
ATTENTION_MODULE = importlib.import_module("model.attention")
GPT_MODULE = importlib.import_module("model.gpt")

WORDS: dict[str, tuple[str, str]] = {  # the cases' names, as the reports show them
    "tokens": ("{n} tokens of d = {d}", "{n} 个词元，d = {d}"),
    "one_vector": ("a single vector of d = {d} (1-D input)", "单个向量，d = {d}（一维输入）"),
    "d1": ("d = 1: every vector is its own mean", "d = 1：每个向量就是它自己的均值"),
    "constant": ("constant vectors: σ² = 0, ε keeps x̂ finite", "常数向量：σ² = 0，靠 ε 避免除以零"),
    "eps_large": ("ε = 1: ε goes inside the square root", "ε = 1：ε 应在平方根里面"),
    "batch": ("a 3-D input [2, 3, d]", "三维输入 [2, 3, d]"),
    "table": ("n_ctx = {n}, d = {d}, base = {base}", "n_ctx = {n}，d = {d}，base = {base}"),
    "one_position": ("one position", "只有一个位置"),
    "odd_d": ("odd d = {d}", "奇数 d = {d}"),
    "block": ("block {block} of the shipped model, {n} tokens", "内置模型的第 {block} 块，{n} 个词元"),
    "block_one": ("block {block}, a single token", "第 {block} 块，只有一个词元"),
    "heads": ("{h} heads, {n} tokens, d_head = {d}", "{h} 个头，{n} 个词元，d_head = {d}"),
    "one_token": ("a single token: it can only look at itself", "只有一个词元：它只能看自己"),
    "big_scores": ("large scores (±100s): softmax must subtract the max", "很大的分数（数百）：softmax 要先减去最大值"),
    "rope_start": ("positions 0–{last}, {h} heads, d_head = {d}", "位置 0–{last}，{h} 个头，d_head = {d}"),
    "rope_zero": ("position 0 only: θ = 0 turns nothing", "只有位置 0：θ = 0，不旋转"),
    "rope_later": ("positions {first}–{last}: the angles of later positions", "位置 {first}–{last}：后面位置的角度"),
    "rope_pair": ("d_head = 2: one pair", "d_head = 2：只有一对"),
    # the axes of an index into a result, to say where a mismatch is
    "axis_batch": ("batch {i}", "批 {i}"),
    "axis_token": ("token {i}", "词元 {i}"),
    "axis_position": ("position {i}", "位置 {i}"),
    "axis_head": ("head {i}", "头 {i}"),
    "axis_dim": ("dim {i}", "维 {i}"),
}


@dataclass
class Case:
    key: str  # a WORDS key naming the case
    args: tuple[Any, ...]
    expected: np.ndarray
    values: dict[str, Any] = field(default_factory=dict)  # to fill in the name
    axes: tuple[str, ...] = ()  # WORDS keys naming the result's axes, one per dimension


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    return (rng.normal(shift, scale, shape)).astype(np.float32)


def _layer_norm_cases(rng: np.random.Generator) -> list[Case]:
    def case(key: str, x: np.ndarray, eps: float = 1e-5, **values: Any) -> Case:
        d = x.shape[-1]
        gamma, beta = _normal(rng, d, scale=0.5, shift=1.0), _normal(rng, d, scale=0.5)
        axes = ("axis_batch", "axis_token", "axis_dim")[3 - x.ndim :]
        return Case(key, (x, gamma, beta, eps), layer_norm(x, gamma, beta, eps), values, axes)

    return [
        case("tokens", _normal(rng, 4, 8, scale=3.0, shift=1.0), n=4, d=8),
        case("one_vector", _normal(rng, 6, scale=2.0), d=6),
        case("d1", _normal(rng, 3, 1)),
        case("constant", np.full((2, 5), 7.0, dtype=np.float32)),
        case("eps_large", _normal(rng, 3, 4, scale=0.5), eps=1.0),
        case("batch", _normal(rng, 2, 3, 8, scale=2.0)),
    ]


def _sinusoidal_cases(rng: np.random.Generator) -> list[Case]:
    def case(key: str, n_ctx: int, d: int, base: float = 10000.0) -> Case:
        values = {"n": n_ctx, "d": d, "base": base}
        return Case(key, (n_ctx, d, base), sinusoidal_positions(n_ctx, d, base), values, ("axis_position", "axis_dim"))

    return [
        case("table", 8, 16),
        case("table", 6, 4),  # the lessons' d = 4 table
        case("one_position", 1, 8),
        case("odd_d", 5, 7),
        case("table", 10, 8, 10.0),
        case("table", 10, 8, 1e6),
        case("table", 64, 64),  # the shipped model's own table
    ]


def block_parts(gpt: GPT, i: int, rope_pe: np.ndarray | None = None) -> tuple[Callable[[np.ndarray], np.ndarray], ...]:
    """Block i's LayerNorms, attention and MLP as four callables of one [pos, d] array (no KV cache)."""
    p, cfg, b = gpt.params, gpt.config, f"blocks.{i}."

    def ln1(h: np.ndarray) -> np.ndarray:
        return layer_norm(h, p[b + "ln1.g"], p[b + "ln1.b"], cfg.ln_eps)

    def ln2(h: np.ndarray) -> np.ndarray:
        return layer_norm(h, p[b + "ln2.g"], p[b + "ln2.b"], cfg.ln_eps)

    def attn(h: np.ndarray) -> np.ndarray:
        w_qkv, b_qkv, w_out, b_out = (p[b + "attn." + n] for n in ("w_qkv", "b_qkv", "w_out", "b_out"))
        return multi_head_attention(h, w_qkv, b_qkv, w_out, b_out, cfg.n_heads, cfg.causal, rope_pe)

    def feed_forward(h: np.ndarray) -> np.ndarray:
        return mlp(h, p[b + "mlp.w_in"], p[b + "mlp.b_in"], p[b + "mlp.w_out"], p[b + "mlp.b_out"])

    return ln1, attn, ln2, feed_forward


def _block_cases(rng: np.random.Generator) -> list[Case]:
    gpt = model.load("tiny")
    d = gpt.config.d_model

    def case(key: str, block: int, n: int) -> Case:
        x = _normal(rng, n, d)
        expected = gpt.block(block, x, None, None, no_hook)
        return Case(key, (x, *block_parts(gpt, block)), expected, {"block": block, "n": n}, ("axis_token", "axis_dim"))

    return [case("block", 0, 5), case("block", 3, 7), case("block_one", 1, 1)]


def _attention_cases(rng: np.random.Generator) -> list[Case]:
    def case(key: str, h: int, n: int, d: int, scale: float = 1.0, **values: Any) -> Case:
        q, k, v = (_normal(rng, h, n, d, scale=scale) for _ in range(3))
        expected = ATTENTION_MODULE.attention(q, k, v, causal=True)
        return Case(key, (q, k, v), expected, {"h": h, "n": n, "d": d}, ("axis_head", "axis_token", "axis_dim"))

    return [
        case("heads", 4, 5, 16),
        case("heads", 1, 6, 4),
        case("one_token", 2, 1, 8),
        case("big_scores", 2, 4, 16, scale=10.0),
    ]


def _rope_cases(rng: np.random.Generator) -> list[Case]:
    def case(key: str, first: int, n: int, h: int, d: int) -> Case:
        x = _normal(rng, n, h, d)
        pe = sinusoidal_positions(first + n, d)[first:]
        values = {"first": first, "last": first + n - 1, "h": h, "d": d}
        return Case(key, (x, pe), rope(x, pe), values, ("axis_position", "axis_head", "axis_dim"))

    return [
        case("rope_start", 0, 5, 4, 16),
        case("rope_zero", 0, 1, 2, 8),
        case("rope_later", 20, 4, 2, 8),
        case("rope_pair", 0, 6, 1, 2),
    ]


CASES: dict[str, Callable[[np.random.Generator], list[Case]]] = {
    "layer_norm": _layer_norm_cases,
    "sinusoidal_positions": _sinusoidal_cases,
    "residual_block": _block_cases,
    "causal_attention": _attention_cases,
    "rope": _rope_cases,
}


def reference_cases(name: str, seed: int = 0) -> list[Case]:
    return CASES[name](np.random.default_rng(seed))


@contextmanager
def swapped_in(name: str, learner: Callable[..., np.ndarray], gpt: GPT) -> Iterator[GPT]:
    """`gpt` (or a copy) whose forward pass calls the learner's function where model/'s own would run."""
    if name == "layer_norm":

        def learner_layer_norm(
            x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5, hook: Hook = no_hook
        ) -> np.ndarray:
            return learner(x, gamma, beta, eps)

        with mock.patch.object(GPT_MODULE, "layer_norm", learner_layer_norm):
            yield gpt
    elif name == "sinusoidal_positions":  # the table is made when a GPT is built
        with mock.patch.object(GPT_MODULE, "sinusoidal_positions", learner):
            yield GPT(gpt.config, gpt.params, gpt.tokenizer, gpt.name, gpt.trained)
    elif name == "causal_attention":

        def learner_attention(
            q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = True, hook: Hook = no_hook
        ) -> np.ndarray:
            return learner(q, k, v)

        with (  # the formula, and the copy the forward pass runs (`multi_head_attention_kv`)
            mock.patch.object(ATTENTION_MODULE, "attention", learner_attention),
            mock.patch.object(ATTENTION_MODULE, "attention_cached_mask", learner_attention),
        ):
            yield gpt
    elif name == "rope":
        with mock.patch.object(ATTENTION_MODULE, "rope", learner):
            yield gpt
    elif name == "residual_block":
        copy = GPT(gpt.config, gpt.params, gpt.tokenizer, gpt.name, gpt.trained)

        def learner_block(i: int, x: np.ndarray, rope_pe: np.ndarray | None, cache: Any, hook: Hook) -> np.ndarray:
            return learner(x, *block_parts(copy, i, rope_pe))

        copy.block = learner_block  # type: ignore[method-assign]  # forward() calls self.block
        yield copy
    else:
        raise KeyError(name)
