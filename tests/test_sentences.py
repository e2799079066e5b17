"""Every sentence the app writes about its numbers, checked against the table it reads (tutor/sentences.py).

Each rule is tested twice: with hypothesis over arbitrary numbers, and over every shipped model and the
lessons' prompts with the numbers the panel itself shows. A sentence is read back into the facts it states
("leads at exactly these points", "the sum is larger than the identity path") and those are compared with the
table, so a rule that can be false for some input fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import model
from model.train import RECIPES
from tutor.lens import lens_rows
from tutor.panels.backward_step import norms, residual_sentence
from tutor.panels.logit_lens_panel import lead_text
from tutor.sentences import EARLIER_NAMED, Sentence, lens_lead, residual_sum, settled_from

PROMPTS = ["猫追狗", "狗追猫", "猫追狗的一只猫", "一只猫", "猫猫猫猫", "的的的", "狗追猫，猫追狗。"]


@pytest.fixture(scope="module")
def shipped() -> dict[str, model.GPT]:
    return {name: model.load(name) for name in RECIPES}


# -- the logit lens: where the final guess leads ----------------------------------------------------------------


def leads_said(sentence: Sentence, labels: list[str]) -> set[str]:
    """The points at which the sentence says the final guess leads."""
    point, earlier = sentence.values["point"], set(sentence.values.get("earlier", []))
    if sentence.key in ("lens_settles", "lens_settles_earlier"):
        assert sentence.key.endswith("earlier") == bool(earlier)
        return set(labels[labels.index(point) :]) | earlier
    assert sentence.key in ("lens_last_only", "lens_last_and_earlier")
    assert point == labels[-1] and sentence.key.endswith("earlier") == bool(earlier)
    return {point} | earlier


ranks_ending_first = st.lists(st.integers(1, 5), min_size=0, max_size=30).map(lambda ranks: [*ranks, 1])


@given(ranks_ending_first)
@settings(max_examples=300)
def test_the_lens_sentence_names_exactly_the_points_where_the_final_guess_leads(ranks: list[int]) -> None:
    labels = [f"p{i}" for i in range(len(ranks))]
    sentence = lens_lead(ranks, labels)
    assert leads_said(sentence, labels) == {label for label, rank in zip(labels, ranks, strict=True) if rank == 1}
    first = settled_from(ranks)
    assert all(rank == 1 for rank in ranks[first:]) and (first == 0 or ranks[first - 1] != 1)


def test_the_lens_sentence_of_the_issue_s_example() -> None:
    """狗追猫 on tiny, token 猫: 狗 ranked #1 at B2 mlp, then lost it, then led at the last point; the app said
    "leads only at the last point"."""
    labels = ["embed", "B0 attn", "B0 mlp", "B1 attn", "B1 mlp", "B2 attn", "B2 mlp", "B3 attn", "B3 mlp"]
    sentence = lens_lead([9, 5, 4, 3, 2, 2, 1, 2, 1], labels)
    assert sentence.key == "lens_last_and_earlier" and sentence.values["earlier"] == ["B2 mlp"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_every_shipped_model_the_lens_sentence_is_true_to_the_lens_table(shipped, lang: str) -> None:
    kinds: set[str] = set()
    for name, gpt in shipped.items():
        for prompt in PROMPTS:
            trace = gpt.run(prompt)
            for token in range(len(trace.tokens)):
                rows = lens_rows(gpt, trace, token)
                labels = [row.point.label(lang) for row in rows]
                sentence = lens_lead([row.final_rank for row in rows], labels)
                truth = {row.point.label(lang) for row in rows if row.final_rank == 1}
                assert leads_said(sentence, labels) == truth, (name, prompt, token)
                said = lead_text(rows, lang, token="T", p="P")
                named = sentence.values.get("earlier", [])
                if len(named) <= EARLIER_NAMED:
                    assert all(label in said for label in named), said  # each earlier point is named on screen
                kinds.add(sentence.key)
    # the shipped models and prompts reach every kind of sentence but the rarest
    assert {"lens_settles", "lens_last_only", "lens_last_and_earlier"} <= kinds, kinds


# -- the residual add: larger or smaller than the identity path ------------------------------------------------


def check_residual(sentence: Sentence, identity: float, through: float, total: float, cos: float) -> None:
    """What the sentence says, against the numbers (shown to 2 decimals, as the panel shows them)."""
    if sentence.key == "residual_no_identity":
        assert identity == 0
        return
    ratio = total / identity
    threshold = -through / (2 * identity)
    if sentence.key == "residual_same":
        assert f"{ratio:.2f}" == "1.00"
        return
    larger = sentence.key == "residual_larger"
    assert sentence.key in ("residual_larger", "residual_smaller")
    assert float(f"{ratio:.2f}") > 1 if larger else float(f"{ratio:.2f}") < 1
    if sentence.values["compared"]:
        shown_cos, shown_threshold = float(f"{cos:+.2f}"), float(f"{threshold:+.2f}")
        assert shown_cos > shown_threshold if larger else shown_cos < shown_threshold


vectors = st.integers(1, 6).flatmap(
    lambda d: st.tuples(
        st.lists(st.floats(-10, 10, allow_nan=False, width=32), min_size=d, max_size=d),
        st.lists(st.floats(-10, 10, allow_nan=False, width=32), min_size=d, max_size=d),
    )
)


@given(vectors)
@settings(max_examples=400)
def test_the_residual_sentence_is_true_for_any_two_paths(pair: tuple[list[float], list[float]]) -> None:
    a, b = (np.array(v, dtype=np.float64) for v in pair)
    identity, through, total = (float(np.linalg.norm(v)) for v in (a, b, a + b))
    cos = float(a @ b / (identity * through)) if identity * through > 0 else 0.0
    sentence = residual_sum(identity, through, total, cos)
    check_residual(sentence, identity, through, total, cos)
    if identity > 0 and through > 0 and abs(total - identity) > 1e-9 * identity:
        # the rule the note teaches: smaller exactly when cos < −‖through F‖ / (2‖identity‖)
        assert (total < identity) == (cos < -through / (2 * identity))


def test_the_residual_sentence_of_the_issue_s_example() -> None:
    """Lesson 9's walk, block 3's add, token 只: cos −0.04 and sum ÷ identity 1.04 — larger, though cos < 0."""
    identity, through = 1.0, 0.3
    cos = -0.04
    total = float(np.sqrt(identity**2 + through**2 + 2 * identity * through * cos))
    sentence = residual_sum(identity, through, total, cos)
    assert sentence.key == "residual_larger" and sentence.values["compared"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_every_shipped_model_the_residual_sentence_is_true_to_its_table(shipped, lang: str) -> None:
    kinds: set[str] = set()
    for name, gpt in shipped.items():
        if not gpt.config.residual:
            continue
        for prompt in PROMPTS[:4]:
            trace = gpt.run(prompt, grads=True)
            for step in trace.steps:
                if step.kind != "residual":
                    continue
                identity, through_f, total = trace.residual_paths(step)
                for token in range(len(trace.tokens)):
                    sentence, said = residual_sentence(trace, step, token, lang)
                    a, b = identity[token].astype(np.float64), through_f[token].astype(np.float64)
                    sizes = [float(norms(v[None])[0]) for v in (a, b, total[token])]
                    cos = float(a @ b / (sizes[0] * sizes[1])) if sizes[0] * sizes[1] > 0 else 0.0
                    check_residual(sentence, *sizes, cos)
                    if sentence.key != "residual_no_identity":
                        assert f"{sizes[2] / sizes[0]:.2f}" in said, (name, prompt, step.name, token, said)
                    kinds.add(sentence.key)
    assert {"residual_larger", "residual_smaller", "residual_same"} <= kinds, kinds


# -- attention: where a query puts the most weight ----------------------------------------------------------------


def check_attention_most(sentence: Sentence, weights: list[float]) -> None:
    """The sentence read back against the row as the table shows it (two decimals)."""
    shown = [round(w, 2) for w in weights]
    keys, p = sentence.values["keys"], sentence.values["p"]
    assert p == max(shown) and keys == [k for k, w in enumerate(shown) if w == p]
    if sentence.key == "attn_most":  # "most weight on key k": above every other key as shown
        assert len(keys) == 1 and all(w < p for k, w in enumerate(shown) if k != keys[0])
    else:
        assert sentence.key == "attn_tied" and len(keys) >= 2


rows = st.lists(st.floats(0, 1), min_size=1, max_size=12).map(lambda w: [x / (sum(w) or 1) for x in w])


@given(st.one_of(rows, st.integers(1, 8).map(lambda n: [1 / n] * n)))
@settings(max_examples=400)
def test_the_attention_sentence_calls_one_key_most_only_when_it_is(weights: list[float]) -> None:
    from tutor.sentences import attention_most

    check_attention_most(attention_most(weights), weights)


def test_a_uniform_row_is_a_tie_not_the_first_key() -> None:
    from tutor.sentences import attention_most

    assert attention_most([0.25] * 4) == Sentence("attn_tied", {"key": 0, "keys": [0, 1, 2, 3], "p": 0.25})
    assert attention_most([0.251, 0.249, 0.25, 0.25]).key == "attn_tied"  # 0.25 four times on screen


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_every_shipped_model_the_attention_sentence_is_true_to_its_row(shipped, lang: str) -> None:
    from tutor.panels.attention_panel import readout
    from tutor.sentences import attention_most

    kinds = set()
    for name, gpt in shipped.items():
        for prompt in PROMPTS[:4]:
            trace = gpt.run(prompt)
            for block in range(gpt.config.n_layers):
                pattern = trace[f"blocks.{block}.attn.hook_pattern"].astype(np.float64)
                for head in range(gpt.config.n_heads):
                    for query in range(len(trace.tokens)):
                        row = pattern[head, query]
                        seen = [float(w) for w in row[: query + 1]] if gpt.config.causal else [float(w) for w in row]
                        sentence = attention_most(seen)
                        check_attention_most(sentence, seen)
                        kinds.add(sentence.key)
                        drawn = pattern[head].copy()
                        if gpt.config.causal:  # the panel's masked cells: NaN, not the 0 softmax gives
                            drawn[np.triu_indices(len(row), 1)] = np.nan
                        line = readout(drawn, head, query, trace.pieces, lang).split("\n")[0]
                        assert f"{sentence.values['p']:.2f}" in line, (name, prompt, line)
                        assert (sentence.key == "attn_tied") == (("share" in line) or ("并列" in line)), line
    assert "attn_most" in kinds


# -- the order lab: when the last position first changes ----------------------------------------------------------


@given(st.lists(st.one_of(st.just(0.0), st.floats(0, 1e-3), st.floats(0, 5)), min_size=1, max_size=20))
@settings(max_examples=400)
def test_the_order_sentence_names_the_first_row_that_shows_a_change(changes: list[float]) -> None:
    from tutor.sentences import first_change

    shown = [f"{value:.3f}" for value in changes]
    sentence = first_change(changes)
    if sentence.key == "last_never":
        assert all(text == "0.000" for text in shown)
    else:
        row = sentence.values["row"]
        assert shown[row] != "0.000" and all(text == "0.000" for text in shown[:row])
        assert (sentence.key == "last_at_once") == (row == 0)
        if row:
            assert sentence.values["before"] == row - 1


# -- the LayerNorm calculator: σ² against ε ----------------------------------------------------------------------


@given(st.floats(0, 1e-2, allow_subnormal=False), st.sampled_from([1e-5, 1e-6, 1e-3, 2.5e-5, 1e-12]))
@settings(max_examples=400)
def test_sigma_squared_is_called_smaller_than_epsilon_only_when_the_numbers_shown_say_so(var: float, eps: float):
    from tutor.screens.experiments.layernorm_calc import number_text
    from tutor.sentences import epsilon_against

    var_text, eps_text = number_text(var), f"{eps:g}"
    sentence = epsilon_against(var_text, eps_text)
    assert (sentence.key == "smaller") == (float(var_text.replace("−", "-")) < float(eps_text))


# -- the positions explorer: the most alike distance ----------------------------------------------------------------


def check_alike(sentence: Sentence, dots: list[float]) -> None:
    if len(dots) <= 4:
        assert sentence.key == "alike_none"
        return
    shown = [round(value, 2) for value in dots]
    best = max(shown[4:])
    assert sentence.values["best"] == best
    assert sentence.values["ks"] == [d for d in range(4, len(dots)) if shown[d] == best]
    assert (sentence.key == "alike_one") == (len(sentence.values["ks"]) == 1)


@given(st.lists(st.floats(-40, 40), min_size=0, max_size=40))
@settings(max_examples=300)
def test_the_most_alike_distance_is_the_largest_shown_and_ties_are_said(dots: list[float]) -> None:
    from tutor.sentences import most_alike

    check_alike(most_alike(dots), dots)


def test_the_most_alike_distance_on_the_explorer_s_tables() -> None:
    """The explorer's own tables: sinusoidal positions for the presets and a few odd bases and sizes."""
    from model import sinusoidal_positions
    from tutor.sentences import most_alike

    for base in (10.0, 2.5, 10000.0, 1e6):
        for n, d in ((5, 4), (16, 8), (64, 64), (128, 64)):
            pe = sinusoidal_positions(n, d, base).astype(np.float64)
            dots = [float(value) for value in pe @ pe[0]]
            check_alike(most_alike(dots), dots)
