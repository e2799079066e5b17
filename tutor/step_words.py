"""A step of the forward pass in words, in either language: "Block 0 · LayerNorm 1", "第 0 块 · LayerNorm 1".

model/ names a step by its place in the network (`blocks.0.ln1`, kind "norm", block 0) and stays
language-neutral; the words the learner reads are made here from that name, kind and block — and, for a norm,
the model's `norm_kind`: an RMSNorm model's norms are "RMSNorm 1", "Final RMSNorm".
"""

from __future__ import annotations

from model import GPTConfig, Step
from tutor.i18n import (
    BACKWARD_FORMS,
    BACKWARD_FORMULAS,
    EMBED_FORMULAS,
    FORMS,
    FORMULAS,
    RMS_BACKWARD_FORMULA,
    RMS_FORMULA,
    pick,
)

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "embed": ("Token embedding", "词元嵌入"),
    "embed_positions": ("Token + position embedding", "词元嵌入 + 位置向量"),
    "ln1": ("LayerNorm 1", "LayerNorm 1"),
    "ln2": ("LayerNorm 2", "LayerNorm 2"),
    "attn": ("Attention", "注意力"),
    "mlp": ("MLP", "MLP 前馈"),
    "attn_add": ("residual add", "残差相加"),
    "mlp_add": ("residual add", "残差相加"),
    "in_block": ("Block {block} · {what}", "第 {block} 块 · {what}"),
    "ln_final": ("Final LayerNorm", "最后的 LayerNorm"),
    "ln1_rms": ("RMSNorm 1", "RMSNorm 1"),
    "ln2_rms": ("RMSNorm 2", "RMSNorm 2"),
    "ln_final_rms": ("Final RMSNorm", "最后的 RMSNorm"),
    "unembed": ("Unembed → logits", "反嵌入 → logits"),
    # the Llama family's forms of a step (`Step.form`)
    "attn_grouped": ("Grouped-query attention", "分组查询注意力"),
    "mlp_gated": ("Gated MLP", "门控 MLP"),
    "unembed_untied": ("Unembed (own W_U) → logits", "反嵌入（独立的 W_U）→ logits"),
    "kv_shared": (
        "query heads {a}–{b} share key/value head {g}",
        "查询头 {a}–{b} 共用第 {g} 个键/值头",
    ),
}


def step_label(step: Step, lang: str = "en", norm_kind: str = "layer") -> str:
    """The step's name as the stepper shows it: "Block 1 · residual add", "Token + position embedding";
    a norm of a model whose `norm_kind` is "rms", "Block 0 · RMSNorm 1"."""
    part = step.name.rsplit(".", 1)[-1] + (f"_{step.form}" if step.form else "")  # "Gated MLP"
    if step.kind == "norm" and norm_kind == "rms":
        part += "_rms"
    if step.kind == "embed":
        return pick(WORDS, "embed_positions" if step.added_hook else "embed", lang)
    what = pick(WORDS, part, lang) if part in WORDS else step.name
    if step.block is None:
        return what
    return pick(WORDS, "in_block", lang, block=step.block, what=what)


def kv_sharing(config: GPTConfig, head: int, lang: str = "en") -> str:
    """Which key/value head query head `head` reads, and which query heads share it: "query heads 2–3 share
    key/value head 1" (grouped-query attention: head h reads key/value head h // group); "" when every query
    head has its own."""
    if config.group == 1:
        return ""
    g = head // config.group
    return pick(WORDS, "kv_shared", lang, a=g * config.group, b=(g + 1) * config.group - 1, g=g)


def step_formula(step: Step, config: GPTConfig, backward: bool = False) -> str:
    """The formula the step runs (with `backward`, what it does to the gradient), for this model's form of it:
    LayerNorm's or RMSNorm's, attention with or without shared key/value heads and b_O, GELU's MLP or the gated
    one, the tied unembedding or W_U."""
    if backward:
        if step.kind == "norm" and config.is_rms:
            return RMS_BACKWARD_FORMULA
        return BACKWARD_FORMS.get(f"{step.kind}.{step.form}", BACKWARD_FORMULAS[step.kind])
    if step.kind == "embed":
        return EMBED_FORMULAS[config.positional]
    if step.kind == "norm" and config.is_rms:
        return RMS_FORMULA
    if step.kind == "attention":
        out = ",  out = z W_O" + (" + b_O" if config.biases == "all" else "")
        if config.group > 1:  # query head h reads key/value head g = h // group
            return f"zₕ = softmax(qₕ·k_gᵀ / √d_head) · v_g,  g = h // {config.group}" + out
        return "z = softmax(q·kᵀ / √d_head) · v" + out
    return FORMS.get(f"{step.kind}.{step.form}", FORMULAS[step.kind])
