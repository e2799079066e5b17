"""The learner's language: Chinese or English, from `--lang` or the locale."""

from __future__ import annotations

import os
from collections.abc import Mapping

LANGUAGES = ("zh", "en")


def detect_language(environ: Mapping[str, str] = os.environ) -> str:
    """`zh` when the first locale variable that is set names Chinese, else `en`."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
