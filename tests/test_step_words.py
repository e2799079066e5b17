"""The steps' names in words are tutor/'s: model/ names a step by its place, and stays language-neutral."""

from __future__ import annotations

import pytest
from helpers import small_config

import model
from tutor.step_words import step_label


def labels(lang: str, **changes: object) -> list[str]:
    return [step_label(step, lang) for step in model.build_steps(small_config(n_layers=1, **changes))]


def test_a_pre_norm_block_in_both_languages() -> None:
    assert labels("en") == [
        "Token + position embedding",
        "Block 0 · LayerNorm 1",
        "Block 0 · Attention",
        "Block 0 · residual add",
        "Block 0 · LayerNorm 2",
        "Block 0 · MLP",
        "Block 0 · residual add",
        "Final LayerNorm",
        "Unembed → logits",
    ]
    assert labels("zh") == [
        "词元嵌入 + 位置向量",
        "第 0 块 · LayerNorm 1",
        "第 0 块 · 注意力",
        "第 0 块 · 残差相加",
        "第 0 块 · LayerNorm 2",
        "第 0 块 · MLP 前馈",
        "第 0 块 · 残差相加",
        "最后的 LayerNorm",
        "反嵌入 → logits",
    ]


def test_no_positions_is_a_token_embedding_and_post_norm_ends_the_block_with_its_norms() -> None:
    assert labels("en", positional="rope", norm="post")[:4] == [
        "Token embedding",
        "Block 0 · Attention",
        "Block 0 · residual add",
        "Block 0 · LayerNorm 1",
    ]
    assert labels("zh", positional="none")[0] == "词元嵌入"


@pytest.mark.parametrize("name", ["tiny", "deep", "postnorm", "nonorm", "noresidual", "nope"])
def test_every_shipped_step_has_words_in_both_languages(name: str) -> None:
    for step in model.load(name).steps:
        en, zh = step_label(step, "en"), step_label(step, "zh")
        assert en and zh and en != zh and step.name not in (en, zh), step.name


LLAMA = dict(positional="rope", norm_kind="rms", n_kv_heads=1, mlp_kind="gated", rope_style="half", biases="none")


def test_a_llama_block_says_rmsnorm_grouped_query_attention_and_gated_mlp() -> None:
    from tutor.step_words import step_formula

    config = small_config(n_layers=1, tied=False, **LLAMA)
    steps = model.build_steps(config)
    assert [step_label(step, "en", "rms") for step in steps] == [
        "Token embedding",
        "Block 0 · RMSNorm 1",
        "Block 0 · Grouped-query attention",
        "Block 0 · residual add",
        "Block 0 · RMSNorm 2",
        "Block 0 · Gated MLP",
        "Block 0 · residual add",
        "Final RMSNorm",
        "Unembed (own W_U) → logits",
    ]
    assert [step_label(step, "zh", "rms") for step in steps][2::3] == [
        "第 0 块 · 分组查询注意力",
        "第 0 块 · 门控 MLP",
        "反嵌入（独立的 W_U）→ logits",
    ]
    formulas = {step.kind: step_formula(step, config) for step in steps}
    assert formulas["attention"] == "zₕ = softmax(qₕ·k_gᵀ / √d_head) · v_g,  g = h // 2,  out = z W_O"  # no b_O
    assert formulas["mlp"].startswith("out = (silu(x W_gate) ⊙ x W_in) W_out") and formulas["unembed"].startswith(
        "logits = x · W_U"
    )
    tiny = small_config(n_layers=1)  # GPT-2's forms keep their words and formulas
    assert [step_formula(s, tiny) for s in model.build_steps(tiny) if s.kind == "attention"] == [
        "z = softmax(q·kᵀ / √d_head) · v,  out = z W_O + b_O"
    ]


@pytest.mark.parametrize(("n_heads", "kv", "head", "words"), [(4, 2, 3, "query heads 2–3 share key/value head 1"),
    (6, 2, 2, "query heads 0–2 share key/value head 0"), (4, 4, 3, "")])  # fmt: skip
def test_which_key_value_head_a_query_head_reads(n_heads: int, kv: int, head: int, words: str) -> None:
    from tutor.step_words import kv_sharing

    config = small_config(d_model=24, n_heads=n_heads, n_kv_heads=kv)
    assert kv_sharing(config, head, "en") == words
    if words:
        g = head // (n_heads // kv)
        assert kv_sharing(config, head, "zh").endswith(f"共用第 {g} 个键/值头")
