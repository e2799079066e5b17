"""A Textual `Strip` makes its seven caches when one is first used, not all seven when it is made.

Every drawn line is a `Strip`, and `Strip.__init__` gives each one seven `FIFOCache`s (crop, style, divide,
filter, line length, crop-and-extend, offsets), each an object and a dict: ~1 KB a line, though most lines use
none of them. At the first screen a tutor keeps ~1,900 strips (13,000 empty caches, ~1.3 MB of its PSS); after a
prompt and a walk through the steps ~5,900 (41,000 caches, ~5 MB). Textual's own `Content` already makes its
cache on first use; here `Strip` does the same: `__init__` sets the plain slots only, and `__getattr__` (which
Python calls only for a slot not set yet) makes the cache asked for, sized as Textual sizes it, and keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.segment import Segment
from textual.cache import FIFOCache
from textual.strip import Strip

# slot -> the size Textual's Strip.__init__ gives that cache (tests/test_patched_names.py reads it from there)
CACHE_SIZES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
PLAIN = {"_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"}  # set by __init__ as before


def _init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _cache_on_first_use(self: Strip, name: str) -> Any:
    size = CACHE_SIZES.get(name)
    if size is None:
        raise AttributeError(f"'Strip' object has no attribute {name!r}")
    cache: FIFOCache[Any, Any] = FIFOCache(size)
    setattr(self, name, cache)
    return cache


def install() -> None:
    """Process-wide, once."""
    if Strip.__init__ is _init:
        return
    _init.__wrapped__ = Strip.__init__  # type: ignore[attr-defined]  # what the canary reads (inspect.unwrap)
    Strip.__init__ = _init  # type: ignore[method-assign]
    Strip.__getattr__ = _cache_on_first_use  # type: ignore[attr-defined]
