"""Timing helpers: wall-clock samples and their percentiles."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable


def seconds(function: Callable[[], object], repeats: int, warmup: int = 3) -> list[float]:
    """Wall-clock seconds of `repeats` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def percentile(samples: list[float], fraction: float) -> float:
    """The sample below which `fraction` of them lie (nearest rank; 0.5 is the median)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def spread_text(samples: list[float], unit: float, digits: int = 1, unit_name: str = "ms") -> str:
    """ "best 1.2, median 1.3, p95 1.9 ms": what a row prints of its calls."""
    best, middle, p95 = min(samples) / unit, median(samples) / unit, percentile(samples, 0.95) / unit
    return f"best {best:.{digits}f}, median {middle:.{digits}f}, p95 {p95:.{digits}f} {unit_name}"
