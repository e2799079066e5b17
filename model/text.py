"""Text a file supplies, made safe to show: a model's name, a message that quotes a file."""

from __future__ import annotations

import unicodedata

_BREAKS = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029")
# Cc: C0 and C1 controls and DEL (ESC starts the sequences that retitle the window or write the clipboard);
# Cf: format characters (bidi overrides reorder what follows them); Cs: lone surrogates
_UNSEEN = frozenset({"Cc", "Cf", "Cs"})


def printable(text: str, limit: int | None = None) -> str:
    """`text` as one line that a terminal shows as written: tabs and line breaks become spaces, every other
    control or format character is taken out (a file's text must never drive the terminal); a text longer
    than `limit` is cut, with "…"."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    if text.isprintable():  # the usual case and the quick one
        return text
    return "".join(_shown(ch) for ch in text)


def _shown(ch: str) -> str:
    if ch.isprintable():
        return ch
    if ch in _BREAKS:
        return " "
    return "" if unicodedata.category(ch) in _UNSEEN else ch  # the other spaces (U+3000, NBSP) stay
