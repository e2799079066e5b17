"""The experiments: one screen each, opened from a lesson link, the practice menu (F10) or the palette.

Each experiment lives in its own module here; the catalogue (`tutor.catalogue.EXPERIMENT_LIST`) names it, its
title and its screen class, so the app imports an experiment only when the learner opens it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model import GPT
from tutor.catalogue import EXPERIMENT, load_class

if TYPE_CHECKING:  # the type only: a screen's module (and base.py) is imported when it is opened
    from tutor.screens.experiments.base import ExperimentScreen


def experiment_screen(name: str, gpt: GPT, prompt: str, lang: str) -> ExperimentScreen:
    """A new screen for experiment `name`, starting from the model and prompt on the main screen."""
    screen: ExperimentScreen = load_class(EXPERIMENT[name].screen)(gpt=gpt, prompt=prompt, lang=lang)
    return screen
