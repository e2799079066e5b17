"""The experiments: one screen each, opened from a lesson link, the practice menu (F10) or the palette.

Each experiment lives in its own module here; the table below names the module and the screen class,
so the app imports an experiment only when the learner opens it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from model import GPT
from tutor.i18n import say
from tutor.lessons.parse import EXPERIMENTS

if TYPE_CHECKING:  # base.py imports this module (its titles)
    from tutor.screens.experiments.base import ExperimentScreen

SCREENS: dict[str, tuple[str, str]] = {  # name → (module, class)
    "compare": ("tutor.screens.experiments.compare", "CompareScreen"),
    "positions": ("tutor.screens.experiments.positions", "PositionsScreen"),
    "order": ("tutor.screens.experiments.order", "OrderScreen"),
    "drift": ("tutor.screens.experiments.drift", "DriftScreen"),
    "layernorm-calc": ("tutor.screens.experiments.layernorm_calc", "LayerNormCalcScreen"),
    "training": ("tutor.screens.experiments.training", "TrainingScreen"),
    "depth": ("tutor.screens.experiments.depth_lab", "DepthLabScreen"),
    "stability": ("tutor.screens.experiments.stability", "StabilityScreen"),
}
TITLES: dict[str, tuple[str, str]] = {  # name → (en, zh)
    "compare": ("Compare two models on one prompt", "同一提示词，对比两个模型"),
    "positions": ("Positional-encoding explorer", "位置编码探索"),
    "order": ("Swap tokens: what changes?", "交换词元：什么会变？"),
    "drift": ("Drift over 30 layers, with and without normalising", "30 层的漂移：有无归一化"),
    "layernorm-calc": ("LayerNorm calculator, and BatchNorm beside it", "LayerNorm 计算器（附 BatchNorm 对照）"),
    "training": ("Training: loss curves of the variants", "训练：各变体的损失曲线"),
    "depth": ("The depth lab", "深度实验室"),
    "stability": (
        "The stability lab: learning rates that train, over seeds",
        "稳定性实验室：哪些学习率训练得动（多个种子）",
    ),
}
assert tuple(SCREENS) == EXPERIMENTS == tuple(TITLES)


def title(name: str, lang: str) -> str:
    return say(TITLES[name], lang)


def experiment_screen(name: str, gpt: GPT, prompt: str, lang: str) -> ExperimentScreen:
    """A new screen for experiment `name`, starting from the model and prompt on the main screen."""
    module_name, class_name = SCREENS[name]
    screen_class = getattr(importlib.import_module(module_name), class_name)
    screen: ExperimentScreen = screen_class(gpt=gpt, prompt=prompt, lang=lang)
    return screen
