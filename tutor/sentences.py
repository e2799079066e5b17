"""Sentences the app writes about its own numbers: one function per kind of sentence.

A panel shows a table and, under it, a sentence that reads the table for the learner ("leads from B2 mlp on",
"the sum is larger"). Such a sentence is a claim about the numbers beside it, and it must be true for every
prompt and every model, not only for the one its author looked at. So each kind is chosen here, from the same
numbers the table shows, by a rule its docstring states; tests/test_sentences.py checks each rule against the
table it summarises, with hypothesis over arbitrary inputs and over every shipped model and the lessons'
prompts. A function returns a `Sentence`: the key of its words (in the panel's own table of both languages)
and the values to fill in, so the choice of words is tested apart from how a language says them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

EARLIER_NAMED = 3  # earlier points a lens sentence names one by one; past that it counts them


@dataclass(frozen=True)
class Sentence:
    key: str  # which words: a key of the panel's table of words
    values: dict[str, Any] = field(default_factory=dict)


def settled_from(final_ranks: Sequence[int]) -> int:
    """The first point from which the final guess ranks 1 at every later point (the last point, at least)."""
    first = len(final_ranks) - 1
    while first > 0 and final_ranks[first - 1] == 1:
        first -= 1
    return first


def lens_lead(final_ranks: Sequence[int], labels: Sequence[str]) -> Sentence:
    """Where the model's final guess leads the logit lens, from its rank at every stream point (`labels` names
    the points; the last point is the model's own output, where the final guess ranks 1 by definition).

    Let L be the points where it ranks 1, and f the first point of the run of 1s that ends at the last point.
    - `lens_settles`:           f is not the last point, and L holds no point before f ("from {point} on").
    - `lens_settles_earlier`:   f is not the last point, and L also holds points before f ("… and before that
                                only at {earlier}").
    - `lens_last_only`:         f is the last point and L holds nothing else ("only at the last point").
    - `lens_last_and_earlier`:  f is the last point and L holds earlier points ("at the last point, and before
                                that only at {earlier}").
    `earlier` names the earlier points (EARLIER_NAMED at most; past that `count` of them, from `first_earlier`).
    """
    if len(final_ranks) != len(labels) or not final_ranks:
        raise ValueError("one rank and one label a point, at least one point")
    last = len(final_ranks) - 1
    first = settled_from(final_ranks)
    earlier = [i for i in range(first) if final_ranks[i] == 1]
    values: dict[str, Any] = {"point": labels[first]}
    if earlier:
        values |= {"earlier": [labels[i] for i in earlier], "count": len(earlier), "first_earlier": labels[earlier[0]]}
    if first < last:
        return Sentence("lens_settles_earlier" if earlier else "lens_settles", values)
    return Sentence("lens_last_and_earlier" if earlier else "lens_last_only", values)


def residual_sum(identity: float, through: float, total: float, cos: float) -> Sentence:
    """What a residual add does to the gradient of one token, from the norms the table shows: ‖∂L/∂y‖ down the
    identity path, ‖∂F/∂x·∂L/∂y‖ through the sublayer, ‖their sum‖, and the cosine between the two paths.

    ‖a + b‖² = ‖a‖² + ‖b‖² + 2‖a‖‖b‖cos, so the sum is smaller than the identity path alone exactly when
    cos < −‖b‖ / (2‖a‖) (`threshold`): pointing apart is not enough, the sublayer's path must point against
    the identity's by more, the larger it is. The ratio r = ‖sum‖ ÷ ‖identity‖ decides, as shown to 2 decimals:
    - `residual_larger`  when r shows above 1.00, `residual_smaller` when below, `residual_same` when 1.00;
    - larger and smaller say "cos {cos} is above/below {threshold}" only when the two, shown to 2 decimals,
      differ in that direction (`compared`); else they leave the comparison out.
    No identity path to compare with (‖a‖ = 0): `residual_no_identity`.
    """
    if not identity > 0 or not all(math.isfinite(v) for v in (identity, through, total, cos)):
        return Sentence("residual_no_identity")
    ratio = total / identity
    threshold = -through / (2 * identity)
    shown = round(ratio, 2)
    values: dict[str, Any] = {"ratio": ratio, "cos": cos, "threshold": threshold}
    if shown == 1.0:
        return Sentence("residual_same", values)
    larger = shown > 1.0
    cos_shown, threshold_shown = round(cos, 2), round(threshold, 2)
    values["compared"] = cos_shown > threshold_shown if larger else cos_shown < threshold_shown
    return Sentence("residual_larger" if larger else "residual_smaller", values)


def attention_most(weights: Sequence[float], decimals: int = 2) -> Sentence:
    """Where a query puts the most weight, from its row of the pattern as the table shows it (`weights` over the
    keys it may see, each shown to `decimals` places).

    - `attn_most`: one key's shown weight is above every other's ("most weight on key {key}, {p}").
    - `attn_tied`: several keys share the largest shown weight ("keys {keys} share the most weight, {p} each"):
      calling the first of them "most" would be false to the eye (a uniform row, 0.25 four times).
    `key` is the first key with the largest shown weight, `keys` every such key, `p` that weight.
    """
    if not weights:
        raise ValueError("a query sees at least itself")
    shown = [round(float(w), decimals) for w in weights]
    top = max(shown)
    keys = [k for k, w in enumerate(shown) if w == top]
    values: dict[str, Any] = {"key": keys[0], "keys": keys, "p": top}
    return Sentence("attn_most" if len(keys) == 1 else "attn_tied", values)


def shown_zero(value: float, decimals: int = 3) -> bool:
    """Whether `value` (≥ 0) reads as zero in the table, printed with `decimals` places."""
    return f"{value:.{decimals}f}" == f"{0:.{decimals}f}"


def first_change(changes: Sequence[float], decimals: int = 3) -> Sentence:
    """When a position's vector first changes, from its max |Δ| after each block (`changes`, in order, each shown
    with `decimals` places): the first row whose shown value is not 0.

    - `last_never`:   every row shows 0 ("unchanged at every block").
    - `last_at_once`: the first row already shows a change ("changes already at {row}").
    - `last_from`:    rows before `row` show 0, `row` does not ("unchanged through {before}; first changes at
                      {row}"); `row` and `before` are row indices.
    """
    changed = [i for i, value in enumerate(changes) if not shown_zero(value, decimals)]
    if not changed:
        return Sentence("last_never")
    if changed[0] == 0:
        return Sentence("last_at_once", {"row": 0})
    return Sentence("last_from", {"row": changed[0], "before": changed[0] - 1})


def epsilon_against(var: str, eps: str) -> Sentence:
    """Why ε shrinks x̂, in words true to the two numbers as shown (`var`, `eps`: their texts): `smaller` only
    when σ² as shown is below ε as shown ("σ² = 4e-06 is smaller than ε = 1e-05"), else `not_negligible`."""
    return Sentence("smaller" if float(var.replace("−", "-")) < float(eps.replace("−", "-")) else "not_negligible")


def most_alike(dots: Sequence[float], nearest: int = 4, decimals: int = 2) -> Sentence:
    """Which distance d ≥ `nearest` has the largest dot product PE(0)·PE(d) (`dots[d]`, shown with `decimals`
    places): `alike_one` (one distance, `k`), `alike_tied` (several show the same largest value: `ks`, the first
    `k`), `alike_none` (no position that far); `best` the value as shown."""
    if len(dots) <= nearest:
        return Sentence("alike_none")
    shown = [round(float(value), decimals) for value in dots[nearest:]]
    best = max(shown)
    ks = [nearest + i for i, value in enumerate(shown) if value == best]
    return Sentence("alike_one" if len(ks) == 1 else "alike_tied", {"k": ks[0], "ks": ks, "best": best})
