"""Hands-on coding exercises, rustlings-style (being built: see issue #6)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    name: str
    title_en: str
    title_zh: str

    def title(self, lang: str) -> str:
        return self.title_zh if lang == "zh" else self.title_en


EXERCISES: dict[str, Exercise] = {}
