"""How long a lesson takes to read: its prose and tables at a steady technical reading pace.

Code blocks (quoted live, skimmed rather than read), the checkers' blocks and link targets are not counted, nor
the inside of a fold (tutor/lessons/folds.py): the learner opens it if they want it, and it shows its own time.
The pace is a round figure for careful technical reading: 200 words a minute in English, 300 characters a
minute in Chinese (Latin words inside Chinese text count as English words).
"""

from __future__ import annotations

import math
import re

from tutor.lessons.folds import without_folds
from tutor.lessons.parse import Lesson

WORDS_PER_MINUTE = 200
CJK_PER_MINUTE = 300

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_.\-]*")


def reading_minutes(lesson: Lesson) -> int:
    """Whole minutes (at least 1) to read the lesson's prose and tables, its folds closed."""
    return text_minutes(without_folds(lesson.body))


def text_minutes(markdown: str) -> int:
    """Whole minutes (at least 1) to read `markdown`'s prose and tables."""
    words, characters = text_size(markdown)
    return max(1, math.ceil(words / WORDS_PER_MINUTE + characters / CJK_PER_MINUTE))


def text_size(markdown: str) -> tuple[int, int]:
    """(English words, Chinese characters) of `markdown`'s prose and tables, as `reading_minutes` counts them."""
    text = _LINK_TARGET.sub("]", _FENCE.sub("", markdown))
    text = "\n".join(line for line in text.split("\n") if not line.startswith("    "))  # indented code
    return len(_WORD.findall(text)), len(_CJK.findall(text))
