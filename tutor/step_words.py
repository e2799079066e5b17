"""A step of the forward pass in words, in either language: "Block 0 · LayerNorm 1", "第 0 块 · LayerNorm 1".

model/ names a step by its place in the network (`blocks.0.ln1`, kind "norm", block 0) and stays
language-neutral; the words the learner reads are made here from that name, kind and block — and, for a norm,
the model's `norm_kind`: an RMSNorm model's norms are "RMSNorm 1", "Final RMSNorm".
"""

from __future__ import annotations

from model import Step
from tutor.i18n import pick

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
}


def step_label(step: Step, lang: str = "en", norm_kind: str = "layer") -> str:
    """The step's name as the stepper shows it: "Block 1 · residual add", "Token + position embedding";
    a norm of a model whose `norm_kind` is "rms", "Block 0 · RMSNorm 1"."""
    part = step.name.rsplit(".", 1)[-1]
    if step.kind == "norm" and norm_kind == "rms":
        part += "_rms"
    if step.kind == "embed":
        return pick(WORDS, "embed_positions" if step.added_hook else "embed", lang)
    what = pick(WORDS, part, lang) if part in WORDS else step.name
    if step.block is None:
        return what
    return pick(WORDS, "in_block", lang, block=step.block, what=what)
