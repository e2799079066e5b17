"""Let the app wrap Chinese between any two characters, as Chinese is written, and never where it must not.

Textual 8 lays text out with Rich's word wrapper, which breaks at whitespace only, so a run of
Chinese is one long "word" that jumps whole to the next line and leaves ragged gaps. This
widens Rich's word pattern so that each CJK character is a word of its own, and keeps together
what Chinese typesetting keeps together (the rules of 避头尾, "avoid at head and tail"):

- closing punctuation (，。、：；！？）》」』】” …) stays with what comes before it, also after
  Latin text ("LayerNorm、") and across a space ("· …"): no line starts with it;
- opening punctuation (（《「『【“) stays with what comes after it: no line ends with it;
- a dash (——) stays with the character before it;
- a number written in digit groups (1 000 000, 263 232, thin or no-break spaces too) is one word.

Rich's `Text.rstrip_end` counts characters where it means cells, so a wrapped line of Chinese kept
its trailing space past the width and `Text.wrap` then truncated it with "…" in place of its last
character (a table cell showed "（也可用 …" for "（也可用 l"); `install` mends that too.

A "word" is what Rich's `divide_line` never breaks inside (unless it is wider than the line).
tests/test_cjk_wrap.py renders every zh lesson at several widths, so an upgrade that moves the
pattern is noticed.
"""

from __future__ import annotations

import re

import rich._wrap
import rich.text

_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"  # ideographs, kana, CJK and full-width punctuation
_CLOSING_CJK = "、，。．）］｝〕〉》」』】〗〙〛〞”’…‥：；！？％"  # glued to the word before, even across a space
_CLOSING = _CLOSING_CJK + "—,.;:?!)]}%"  # glued to the word before when they touch it
_OPENING = "（［｛〔〈《「『【〖〘〚〝“‘"  # glued to the word after
_QUOTES = "“‘"  # opening quotes outside the CJK range: a Latin run must not take them as its tail
_GROUPED_NUMBER = r"\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?!\d)"
_CORE = rf"(?:{_GROUPED_NUMBER}|[{_CJK}]|[^\s{_CJK}{_QUOTES}]+|\S)"
CJK_AWARE_WORD = re.compile(
    rf"\s*[{re.escape(_OPENING)}]*{_CORE}(?:[{re.escape(_CLOSING)}]|\s*[{re.escape(_CLOSING_CJK)}])*\s*"
)


_TRAILING_SPACE = re.compile(r"\s+$")


def _rstrip_end_in_cells(self: rich.text.Text, size: int) -> None:
    """Remove whitespace beyond `size` cells at the end of the text (Rich's own measures characters)."""
    excess = self.cell_len - size
    if excess > 0 and (space := _TRAILING_SPACE.search(self.plain)) is not None:
        self.right_crop(min(len(space.group(0)), excess))


def install() -> None:
    rich._wrap.re_word = CJK_AWARE_WORD
    rich.text.Text.rstrip_end = _rstrip_end_in_cells  # type: ignore[method-assign]
