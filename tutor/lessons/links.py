"""`tutor:` links, the directives that tie a lesson to the panels: `tutor:show?step=blocks.0.ln1`.

The format is written down in `content/README.md`. `LessonError` is here because a link is the
first thing that raises it; lesson files turn it into a warning (see `tutor.lessons.parse`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SCHEME = "tutor"
SHOW_KEYS = ("prompt", "step", "panel", "model", "head", "token", "direction", "edit")  # edit: tutor/edits.py
ACTIONS: dict[str, tuple[str, ...]] = {  # action → the query keys it accepts
    "show": SHOW_KEYS,
    "lesson": ("id", "heading"),
    # left, right, view: the depth lab's (DEPTH_LAB_VIEWS; view also the LayerNorm calculator's); shape, warmup:
    # the stability lab's (STABILITY_LAB_OPTIONS)
    "experiment": ("name", "left", "right", "view", "shape", "warmup"),
    "exercise": ("name",),
    "quiz": ("id",),
    "answer": ("id", "n"),  # exercise n's hint and answer (the lesson's tutor-answers block)
}
# what a link may open the depth lab on: its left and right model (shipped variants) and its view
DEPTH_LAB_VIEWS = ("loss", "stream_norm", "stream_grad", "param_grad", "similarity", "family", "seeds")
# what a link may open the stability lab on: a shape of the shipped sweep, warm-up on or off
STABILITY_LAB_OPTIONS = {"shape": ("4x64", "16x32"), "warmup": ("on", "off")}
# the LayerNorm calculator's views: one typed vector, or a prompt's matrix through LayerNorm and BatchNorm
LAYERNORM_CALC_VIEWS = ("vector", "batchnorm")
_LINK = re.compile(r"\]\(\s*(?:<(?P<angled>tutor:[^>\n]*)>|(?P<href>tutor:[^)\s>]*))\s*\)")


class LessonError(ValueError):
    """A problem in a lesson file, located as `path:line: message`."""


@dataclass(frozen=True)
class Link:
    """A `tutor:` link: `tutor:show?prompt=猫追狗&step=blocks.0.ln1` is action "show" with two params."""

    action: str
    params: dict[str, str]
    href: str


def parse_link(href: str) -> Link:
    """`tutor:ACTION?key=value&...` → Link. Values are percent-decoded; `+` stays a plus."""
    parts = urlsplit(href)
    if parts.scheme != SCHEME:
        raise LessonError(f"not a tutor link: {href}")
    action = parts.path
    if action not in ACTIONS:
        raise LessonError(f"unknown directive tutor:{action} (known: {', '.join(ACTIONS)})")
    params: dict[str, str] = {}
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        key = unquote(key)
        if key not in ACTIONS[action]:
            raise LessonError(f"tutor:{action} takes no '{key}' (it takes {', '.join(ACTIONS[action])})")
        params[key] = unquote(value)
    if not params:
        raise LessonError(f"tutor:{action} needs at least one of {', '.join(ACTIONS[action])}")
    return Link(action, params, href)


def links_in(text: str) -> list[tuple[int, str]]:
    """Every `tutor:` link target in `text`, with its line number (1-based, within `text`)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group("angled") or m.group("href")) for m in _LINK.finditer(text)]


# Markdown's emphasis and code marks in a link's text: * and `, and _ only at a word's edge (causal_attention keeps it)
_MARKUP = re.compile(r"[*`]|(?<!\w)_|_(?!\w)")
_LABELLED_LINK = re.compile(r"\[(?P<label>[^\]\n]*)\]" + _LINK.pattern[2:])


def labelled_links(text: str) -> list[tuple[str, str]]:
    """Every `tutor:` link in `text` as (its text, its target), in reading order: the keyboard's way in."""
    return [
        (_MARKUP.sub("", m.group("label")).strip(), m.group("angled") or m.group("href"))
        for m in _LABELLED_LINK.finditer(text)
    ]
