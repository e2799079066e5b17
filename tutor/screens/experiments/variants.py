"""The shipped model variants the experiments load by name, each loaded once per process."""

from __future__ import annotations

from functools import cache

import model
from model import GPT


@cache
def shipped(name: str) -> GPT:
    """`model.load(name)`, kept: the weights are memory-mapped, so a second screen costs next to nothing (0.27 MB)."""
    return model.load(name)


def variant_names() -> list[str]:
    """The shipped variants, `tiny` first."""
    names = sorted(model.shipped_models())
    return sorted(names, key=lambda name: name != model.DEFAULT_MODEL)
