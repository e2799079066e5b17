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
