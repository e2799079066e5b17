"""Let the app wrap Chinese between any two characters, as Chinese is written.

Textual 8 lays text out with Rich's word wrapper, which breaks at whitespace only, so a run of
Chinese is one long "word" that jumps whole to the next line and leaves ragged gaps. This
widens Rich's word pattern so that each CJK character is a word of its own, with closing
punctuation kept on the character before it (a line never starts with "，" or "。").
tests/test_app.py checks the effect, so an upgrade that moves the pattern is noticed.
"""

from __future__ import annotations

import re

import rich._wrap

_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_CLOSING = "，。、；：？！）》」』】”’…,.;:?!)"
CJK_AWARE_WORD = re.compile(rf"\s*(?:[{_CJK}][{_CLOSING}]*|[^\s{_CJK}]+)\s*")


def install() -> None:
    rich._wrap.re_word = CJK_AWARE_WORD
