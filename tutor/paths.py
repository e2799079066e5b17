"""Where tutor's data lives: lessons inside the installed package, or beside it in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def content_dir() -> Path:
    """The lessons folder: `tutor/content` in an installed wheel, `content/` in a source checkout."""
    packaged = _PACKAGE / "content"
    return packaged if packaged.is_dir() else _PACKAGE.parent / "content"
