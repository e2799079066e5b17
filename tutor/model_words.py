"""Each shipped model variant in one line, in both languages: what makes it differ from `tiny`, or a
`deep-…` variant from `deep`. One line of the command palette at 80 columns (74 cells).

The line is read off the training recipes (`model.train.RECIPES`), so it says what the variant is,
not what someone once wrote about it: "nope — no positional encoding", "deep-postnorm-nowarmup —
deep with post-norm, no warm-up".
"""

from __future__ import annotations

from tutor.i18n import pick

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "default": (
        "the default: {blocks} blocks of width {d}, sinusoidal, pre-norm",
        "默认模型：{blocks} 块，宽 {d}，正弦位置编码，pre-norm",
    ),
    "depth": ("{blocks} blocks of width {d}", "{blocks} 块，宽 {d}"),
    "pos_learned": ("learned positions", "可学习的位置向量"),
    "pos_rope": ("RoPE positions", "RoPE 位置编码"),
    "pos_none": ("no positional encoding", "没有位置编码"),
    "pos_sinusoidal": ("sinusoidal positions", "正弦位置编码"),
    "base": ("sinusoidal base {base} instead of {default}", "正弦位置编码的 base 为 {base}（默认 {default}）"),
    "norm_post": ("post-norm", "post-norm"),
    "norm_none": ("no LayerNorm", "没有 LayerNorm"),
    "norm_pre": ("pre-norm", "pre-norm"),
    "no_residual": ("no residual connections", "没有残差连接"),
    "no_warmup": ("no warm-up", "没有预热"),
    "warmup": ("{steps} warm-up steps", "预热 {steps} 步"),
    "rate": ("learning rate {rate}", "学习率 {rate}"),
    "separator": (", ", "，"),
    "variant_of": ("{base} with {what}", "{base}，{what}"),
}


def short_number(value: float) -> str:
    """10, 10000, 1e6, 1e-3: as the variants' names write them."""
    text = f"{value:g}" if value >= 1 else f"{value:.0e}"
    return text.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def describe_variant(name: str, lang: str) -> str:
    """What sets the variant `name` apart from the default model, in one line; "" for a name with no recipe."""
    from model import DEFAULT_MODEL
    from model.train import RECIPES  # here, not at import: only the palette asks, and it costs 50 ms

    recipe = RECIPES.get(name)
    if recipe is None:
        return ""
    family = name.split("-")[0]  # "deep-postnorm" is deep's variant, "deep" and "nope" are tiny's
    base = RECIPES[family] if family != name and family in RECIPES else RECIPES[DEFAULT_MODEL]
    if recipe == base:
        return pick(WORDS, "default", lang, blocks=base.n_layers, d=base.d_model)
    parts = []
    if (recipe.n_layers, recipe.d_model) != (base.n_layers, base.d_model):
        parts.append(pick(WORDS, "depth", lang, blocks=recipe.n_layers, d=recipe.d_model))
    if recipe.positional != base.positional:
        parts.append(pick(WORDS, f"pos_{recipe.positional}", lang))
    if recipe.pos_base != base.pos_base:
        parts.append(pick(WORDS, "base", lang, base=short_number(recipe.pos_base), default=short_number(base.pos_base)))
    if recipe.norm != base.norm:
        parts.append(pick(WORDS, f"norm_{recipe.norm}", lang))
    if recipe.residual != base.residual:
        parts.append(pick(WORDS, "no_residual", lang))
    if recipe.warmup_steps != base.warmup_steps:
        parts.append(
            pick(WORDS, "warmup", lang, steps=recipe.warmup_steps)
            if recipe.warmup_steps
            else pick(WORDS, "no_warmup", lang)
        )
    if recipe.learning_rate != base.learning_rate:
        parts.append(
            pick(WORDS, "rate", lang, rate=short_number(recipe.learning_rate), default=short_number(base.learning_rate))
        )
    what = pick(WORDS, "separator", lang).join(parts)
    return what if base.name == DEFAULT_MODEL else pick(WORDS, "variant_of", lang, base=base.name, what=what)
