"""The catalogue: every panel, experiment and model variant the tutor knows, each named here once.

Names and labels only, no Textual and no NumPy: the lesson parser, `tutor lessons --check`, the commands and the
screens all read it, and a class is named by its path (`module:Class`) and imported by the screen that shows it.

- A panel is one line of `PANEL_LIST` (the name a lesson's `panels` and a link's `panel=` use, its tab's label,
  the widget that draws it: a `show(view)` in tutor/panels/) plus that widget's file. The main screen builds its
  tabs, their order, the panel each step opens and its drawing from these lines (`tutor.panels.panes`).
- An experiment is one line of `EXPERIMENT_LIST` (the name `tutor:experiment?name=` uses, its title, its screen in
  tutor/screens/experiments/, whose `NAME` is the same) plus that screen's file.
- A model variant is one line of model/variants.toml (its recipe and its look) plus its weights: `model.train`
  trains from that file and this module reads its names and looks, without importing model/ (no NumPy here).

tests/test_hygiene.py keeps it the only list: no other module spells out the panels, experiments or variants.
"""

from __future__ import annotations

import importlib
import tomllib
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from tutor.i18n import Words, say


@dataclass(frozen=True)
class Panel:
    name: str
    label: Words  # (en, zh): its tab's name; short, at 80 columns every tab fits on the one line
    widget: str  # "module:Class" of the widget that draws it (its `show(view)`)
    steps: tuple[str, ...] = ()  # the step kinds (`model.trace.Step.kind`) that open it, forwards
    scrolls: bool = False  # shown inside a VerticalScroll (the widget grows with what it shows)
    follows: bool = False  # shows every step: a step key keeps it in view, not the step's own panel
    tab: bool = True  # False: always in view above the tabs


@dataclass(frozen=True)
class Experiment:
    name: str
    title: Words  # (en, zh)
    screen: str  # "module:Class" of its screen (an `ExperimentScreen`)


@dataclass(frozen=True)
class Variant:
    name: str
    colour: str = "#d0d0d0"  # its curves' colour, and …
    marker: str = "?"  # … their marker (NO_COLOR, the legend)


PANEL_LIST = (
    Panel("tokens", ("Tokens", "词元"), "tutor.panels.token_strip:TokenStrip", tab=False),
    # the embedding's vectors at the embed step, the step's own vectors at every other
    Panel("vectors", ("Vectors", "向量"), "tutor.panels.vectors_pane:VectorsPane", steps=("embed", "mlp")),
    Panel("layernorm", ("LayerNorm", "LayerNorm"), "tutor.panels.layernorm_panel:LayerNormPane", steps=("norm",)),
    # the lines, the logit lens and the table; it scrolls itself
    Panel("residual", ("Residual", "残差流"), "tutor.panels.stream_panel:StreamPanel", steps=("residual",)),
    Panel("attention", ("Attention", "注意力"), "tutor.panels.attention_panel:AttentionPanel", steps=("attention",)),
    Panel(
        "next", ("Next token", "下一个词元"), "tutor.panels.next_token_panel:NextTokenPanel", ("unembed",), scrolls=True
    ),
    Panel("gradient", ("∂L/∂x", "梯度"), "tutor.panels.gradient_panel:GradientPanel", scrolls=True),  # backwards
    Panel("similarity", ("Cosine", "相似度"), "tutor.panels.similarity_panel:SimilarityPanel"),
    Panel("overview", ("Overview", "总览"), "tutor.panels.overview_panel:OverviewPanel", follows=True),
)
EXPERIMENT_LIST = (
    Experiment(
        "compare",
        ("Compare two models on one prompt", "同一提示词，对比两个模型"),
        "tutor.screens.experiments.compare:CompareScreen",
    ),
    Experiment(
        "positions",
        ("Positional-encoding explorer", "位置编码探索"),
        "tutor.screens.experiments.positions:PositionsScreen",
    ),
    Experiment(
        "order",
        ("Swap tokens: what changes?", "交换词元：什么会变？"),
        "tutor.screens.experiments.order:OrderScreen",
    ),
    Experiment(
        "drift",
        ("Drift over 30 layers, with and without normalising", "30 层的漂移：有无归一化"),
        "tutor.screens.experiments.drift:DriftScreen",
    ),
    Experiment(
        "layernorm-calc",
        ("LayerNorm calculator, and BatchNorm beside it", "LayerNorm 计算器（附 BatchNorm 对照）"),
        "tutor.screens.experiments.layernorm_calc:LayerNormCalcScreen",
    ),
    Experiment(
        "training",
        ("Training: loss curves of the variants", "训练：各变体的损失曲线"),
        "tutor.screens.experiments.training:TrainingScreen",
    ),
    Experiment("depth", ("The depth lab", "深度实验室"), "tutor.screens.experiments.depth_lab:DepthLabScreen"),
    Experiment(
        "stability",
        ("The stability lab: learning rates that train, over seeds", "稳定性实验室：哪些学习率训练得动（多个种子）"),
        "tutor.screens.experiments.stability:StabilityScreen",
    ),
)


def variants_file() -> Path:
    """model/variants.toml, found without importing model/ (whose package imports NumPy)."""
    spec = find_spec("model")
    folders = spec.submodule_search_locations if spec is not None else None
    if not folders:
        raise ImportError("the model package is not installed beside tutor")
    return Path(next(iter(folders))) / "variants.toml"


def read_variants(path: Path | None = None) -> tuple[Variant, ...]:
    """The variants' names and looks, in the file's order (`model.train.read_recipes` reads their recipes)."""
    lines = tomllib.loads((path or variants_file()).read_text(encoding="utf-8"))
    return tuple(Variant(name, *line.get("look", ())) for name, line in lines.items())


VARIANT_LIST = read_variants()

PANELS = tuple(panel.name for panel in PANEL_LIST)  # every name a lesson may give
TABS = tuple(panel.name for panel in PANEL_LIST if panel.tab)  # the tabs, in F6's order
EXPERIMENTS = tuple(experiment.name for experiment in EXPERIMENT_LIST)
MODEL_VARIANTS = tuple(variant.name for variant in VARIANT_LIST)  # model.train.RECIPES' names, in its order

PANEL = {panel.name: panel for panel in PANEL_LIST}
EXPERIMENT = {experiment.name: experiment for experiment in EXPERIMENT_LIST}
VARIANT = {variant.name: variant for variant in VARIANT_LIST}
PANEL_FOR_KIND = {kind: panel.name for panel in PANEL_LIST for kind in panel.steps}  # a step's kind → its panel
FOLLOWING_PANELS = tuple(panel.name for panel in PANEL_LIST if panel.follows)


def panel_label(name: str, lang: str) -> str:
    """A panel's tab label in `lang`."""
    return say(PANEL[name].label, lang)


def experiment_title(name: str, lang: str) -> str:
    return say(EXPERIMENT[name].title, lang)


def load_class(path: str) -> Any:
    """The class a "module:Class" path names, its module imported now (a screen imports what it shows, when it does)."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)
