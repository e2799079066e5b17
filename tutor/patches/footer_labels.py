"""The footer's labels in the learner's language, by rewriting a node's own copy of its bindings.

Textual's BINDINGS are per class and their descriptions are fixed strings; the footer reads them from
the node's private `_bindings.key_to_bindings` (a BindingsMap). Here each binding whose action has a
label in `words` is replaced, in that node's copy only, by one with the label in `lang` (and, with
`tooltips`, the tooltip too). tests/test_patched_names.py checks the names this relies on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tutor.i18n import pick

if TYPE_CHECKING:
    from textual.dom import DOMNode


def localize_bindings(
    node: DOMNode,
    words: dict[str, tuple[str, str]],
    lang: str,
    tooltips: dict[str, tuple[str, str]] | None = None,
) -> None:
    """The footer's labels in the learner's language: `words` maps an action ("back", "preset('f2')")
    to its (en, zh) label, `tooltips` likewise to its tooltip. Only this node's own copy of its bindings
    changes."""
    tooltips = tooltips or {}
    key_to_bindings = node._bindings.key_to_bindings
    for key, bindings in key_to_bindings.items():
        key_to_bindings[key] = [
            replace(
                b,
                description=pick(words, b.action, lang),
                tooltip=pick(tooltips, b.action, lang) if b.action in tooltips else b.tooltip,
            )
            if b.action in words
            else b
            for b in bindings
        ]
