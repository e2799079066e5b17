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


class Stopped(Exception):
    """A forward pass given up half-way because its `stop` callback said so."""


class Recording(dict[str, np.ndarray]):
    """Where a traced pass files its activations: the hook is the dict's own `__setitem__`, which
    costs no Python frame (a pass calls ~90 hooks). Each scope records into a dict of its own;
    `activations()` joins them under their full names, scope by scope in the order they opened.

    `stop` is asked as every scope opens (each block, LayerNorm, attention and MLP): when it says
    True the pass raises `Stopped`.
    """

    __slots__ = ("prefix", "scopes", "stop")  # set right after creation: no Python __init__ per scope
    prefix: str
    stop: Callable[[], bool] | None
    scopes: list[Recording]

    @classmethod
    def start(cls, stop: Callable[[], bool] | None = None) -> Recording:
        root = cls()
        root.prefix, root.stop, root.scopes = "", stop, [root]
        return root

    def child(self, prefix: str) -> Recording:
        if self.stop is not None and self.stop():
            raise Stopped(self.prefix + prefix)
        scope = Recording()
        scope.prefix, scope.stop, scope.scopes = self.prefix + prefix, self.stop, self.scopes
        self.scopes.append(scope)
        return scope

    def activations(self) -> dict[str, np.ndarray]:
        """Every scope's values under its full name; the recording is spent after it.

        Each scope refers to the list of scopes and the list to each scope: a cycle, which would keep
        the pass's arrays alive until Python's garbage collector came round, not until the trace is
        dropped. Emptying the list breaks it (measured on `tiny`: 1–4 page faults less per pass).
        """
        joined = {scope.prefix + name: value for scope in self.scopes for name, value in scope.items()}
        self.scopes.clear()
        return joined


def scoped(hook: Hook, prefix: str) -> Hook:
    """A hook that files every name under `prefix` (e.g. "blocks.0.ln1.")."""
    if hook is no_hook:
        return no_hook
    recording = getattr(hook, "__self__", None)  # a Recording's own __setitem__
    if isinstance(recording, Recording):
        return recording.child(prefix).__setitem__
    if isinstance(hook, Scoped):
        return Scoped(hook.hook, hook.prefix + prefix)
    return Scoped(hook, prefix)
