"""Each shipped model variant in one line, in both languages: what makes it differ from `tiny`, or a
`deep-…` variant from `deep`. One line of the command palette at 80 columns (74 cells).

The line is read off the training recipes (`model.train.RECIPES`), so it says what the variant is,
not what someone once wrote about it: "nope — no positional encoding", "deep-postnorm-nowarmup —
deep with post-norm, no warm-up".
"""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.i18n import pick, t

if TYPE_CHECKING:
    from model import GPTConfig

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
    "norm_kind_rms": ("RMSNorm instead of LayerNorm", "用 RMSNorm 代替 LayerNorm"),
    "norm_kind_layer": ("LayerNorm instead of RMSNorm", "用 LayerNorm 代替 RMSNorm"),
    "no_residual": ("no residual connections", "没有残差连接"),
    "no_warmup": ("no warm-up", "没有预热"),
    "warmup": ("warm-up {steps}", "预热 {steps} 步"),
    "rate": ("lr {rate}", "学习率 {rate}"),
    "heads": ("{heads} heads", "{heads} 个注意力头"),
    "steps": ("{steps} steps", "{steps} 步"),
    "no_clip": ("no gradient clipping", "不裁剪梯度"),
    "clip": ("gradients clipped at {clip}", "梯度裁剪到 {clip}"),
    "trained": (
        "trained {step} of {steps} steps, validation loss {loss:.3f}",
        "训练了 {step}/{steps} 步，验证损失 {loss:.3f}",
    ),
    "diverged": (
        "diverged at step {step}: this is its last good checkpoint",
        "第 {step} 步发散：这是它最后一个正常的检查点",
    ),
    "checkpoint": ("Model {name}: {what}", "模型 {name}：{what}"),
    "same_as": ("{base}'s recipe", "与 {base} 相同的配方"),
    "separator": (", ", "，"),
    "variant_of": ("{base} with {what}", "{base}，{what}"),
    "ln_is_rms": ("{wiring}, LN = RMSNorm", "{wiring}，LN 是 RMSNorm"),
}


def norm_named(wiring: str, config: GPTConfig, lang: str) -> str:
    """A model's wiring in words ("pre-norm x + F(LN(x))"), with ", LN = RMSNorm" after it where its norms are
    RMSNorms (a Llama folder, the rmsnorm variants): the formulas write every norm as LN."""
    if config.is_rms and config.norm != "none":
        return pick(WORDS, "ln_is_rms", lang, wiring=wiring)
    return wiring


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
    return describe_recipe(recipe, base, lang)


def describe_recipe(recipe: Any, base: Any, lang: str, name_base: bool = False) -> str:
    """What sets `recipe` apart from `base` (both `model.train.Recipe`), in one line; `name_base`: say which base
    even when it is the default model."""
    from model import DEFAULT_MODEL

    if name_base and recipe == replace(base, name=recipe.name):
        return pick(WORDS, "same_as", lang, base=base.name)
    if recipe == replace(base, name=recipe.name):
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
    if recipe.norm_kind != base.norm_kind:
        parts.append(pick(WORDS, f"norm_kind_{recipe.norm_kind}", lang))
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
    if recipe.steps != base.steps:
        parts.append(pick(WORDS, "steps", lang, steps=recipe.steps))
    if recipe.n_heads != base.n_heads:
        parts.append(pick(WORDS, "heads", lang, heads=recipe.n_heads))
    if recipe.grad_clip != base.grad_clip:
        clip = (
            pick(WORDS, "clip", lang, clip=f"{recipe.grad_clip:g}")
            if recipe.grad_clip
            else pick(WORDS, "no_clip", lang)
        )
        parts.append(clip)
    what = pick(WORDS, "separator", lang).join(parts)
    if base.name == DEFAULT_MODEL and not name_base:
        return what
    return pick(WORDS, "variant_of", lang, base=base.name, what=what)


def describe_checkpoint(path: Path, lang: str) -> str | None:
    """For a checkpoint `tutor train` wrote: its recipe against the variant it started from, how far it trained
    and its last validation loss, in one line; None for a file with no training record (or a shipped one)."""
    from model.train import RECIPES, Recipe
    from model.weights import WeightsError, read_safetensors

    try:
        metadata = read_safetensors(path)[1]
        info = json.loads(metadata["training"])
        known = {f.name for f in fields(Recipe)}
        recipe = Recipe(**{k: v for k, v in info["recipe"].items() if k in known})
        step, steps, loss = int(info["step"]), int(info["total_steps"]), float(info["val_loss"][-1][1])
    except (WeightsError, OSError, KeyError, TypeError, ValueError, IndexError):
        return None
    base = RECIPES.get(str(recipe.name).split("+")[0], RECIPES["tiny"])
    parts = [
        describe_recipe(recipe, base, lang, name_base=True),
        pick(WORDS, "trained", lang, step=step, steps=steps, loss=loss),
    ]
    if isinstance(info.get("diverged"), dict) and isinstance(info["diverged"].get("step"), int):
        parts.append(pick(WORDS, "diverged", lang, step=info["diverged"]["step"]))
    name = "".join(ch for ch in path.name if ch.isprintable())  # a file name is text a stranger may have chosen
    return pick(WORDS, "checkpoint", lang, name=name, what=pick(WORDS, "separator", lang).join(parts))


def rope_scaling_note(cfg: GPTConfig, lang: str) -> str:
    """What a scaled RoPE (`rope_scaling`) does to the angles, in a sentence; "" for plain RoPE."""
    if cfg.rope_scaling == "linear":
        return t("rope_scaling_linear", lang, factor=f"{cfg.rope_factor:g}")
    if cfg.rope_scaling == "llama3":
        ctx = cfg.rope_original_ctx
        low, high = ctx / cfg.rope_low_freq_factor, ctx / cfg.rope_high_freq_factor
        return t("rope_scaling_llama3", lang, factor=f"{cfg.rope_factor:g}", ctx=ctx, low=f"{low:g}", high=f"{high:g}")
    return ""
