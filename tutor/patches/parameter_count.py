"""A callback's parameters counted once per function, not on every call.

Textual calls every callback through `textual._callback.count_parameters`, which keeps the count on the
callable. `call_later` (and `call_after_refresh`, `call_next`) wrap the callback in a new `functools.partial`
each time, so the count kept on that partial is thrown away with it, and the next call reads the function's
signature again (`inspect.signature`, ~10 µs). Textual's pilot waits for a key by `call_later` on every widget:
the tutor's 75 widgets, twice a key, 150 signatures read per key. Here the count of a plain function's own
parameters is kept on the function, so that only the first call reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

import textual._callback

_ATTRIBUTE = "_tutor_parameter_count"  # its own name: Textual's `_param_count` on a function may be a bound count


def install() -> None:
    """Process-wide, once."""
    original = textual._callback._count_parameters
    if getattr(original, "_tutor_parameter_count_patch", False):
        return

    def _count_parameters(func: Callable[..., Any]) -> int:
        if type(func) is not FunctionType:  # a bound method, a class, a builtin: counted as Textual counts it
            return original(func)
        try:
            return func.__dict__[_ATTRIBUTE]
        except KeyError:
            count = func.__dict__[_ATTRIBUTE] = original(func)
            return count

    _count_parameters._tutor_parameter_count_patch = True  # type: ignore[attr-defined]
    _count_parameters.__wrapped__ = original  # type: ignore[attr-defined]
    textual._callback._count_parameters = _count_parameters
