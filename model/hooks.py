"""Hook points: how each formula hands its intermediate values to the trace.

A hook is any callable `hook(name, value)`. The formulas call it with the
TransformerLens name of what they just computed (`"hook_mean"`, `"hook_pattern"`, ...);
the forward pass gives them one that prefixes the block's name and stores the value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Hook = Callable[[str, np.ndarray], None]


def no_hook(name: str, value: np.ndarray) -> None:
    """The hook for a forward pass that records nothing."""


class Scoped:
    """`hook` with every name filed under `prefix`; scopes inside scopes join their prefixes,
    so a hook deep in a block is one call away from the trace, not three."""

    __slots__ = ("hook", "prefix")

    def __init__(self, hook: Hook, prefix: str) -> None:
        self.hook, self.prefix = hook, prefix

    def __call__(self, name: str, value: np.ndarray) -> None:
        self.hook(self.prefix + name, value)


def scoped(hook: Hook, prefix: str) -> Hook:
    """A hook that files every name under `prefix` (e.g. "blocks.0.ln1.")."""
    if hook is no_hook:
        return no_hook
    if isinstance(hook, Scoped):
        return Scoped(hook.hook, hook.prefix + prefix)
    return Scoped(hook, prefix)
