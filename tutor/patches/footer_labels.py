"""The footer's labels in the learner's language, by rewriting a node's own copy of its bindings.

Textual's BINDINGS are per class and their descriptions are fixed strings; the footer reads them from
the node's private `_bindings.key_to_bindings` (a BindingsMap). Here each binding whose action has a
label in `words` is replaced, in that node's copy only, by one with the label in `lang` (and, with
`tooltips`, the tooltip too). tests/test_patched_names.py checks the names this relies on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from tutor.i18n import pick

if TYPE_CHECKING:
    from textual.dom import DOMNode

_DECLARED_SHOW: WeakKeyDictionary[DOMNode, dict[tuple[str, str], bool]] = WeakKeyDictionary()


def localize_bindings(
    node: DOMNode,
    words: dict[str, tuple[str, str]],
    lang: str,
    tooltips: dict[str, tuple[str, str]] | None = None,
    held: frozenset[str] = frozenset(),
) -> None:
    """The footer's labels in the learner's language: `words` maps an action ("back", "preset('f2')")
    to its (en, zh) label, `tooltips` likewise to its tooltip; the actions in `held` are left out of the footer
    (they still work). Only this node's own copy of its bindings changes."""
    tooltips = tooltips or {}
    key_to_bindings = node._bindings.key_to_bindings
    # whether each binding was shown as declared: a key held back and let go again is shown as it was
    declared = _DECLARED_SHOW.setdefault(
        node, {(key, b.action): b.show for key, bindings in key_to_bindings.items() for b in bindings}
    )
    for key, bindings in key_to_bindings.items():
        key_to_bindings[key] = [
            replace(
                b,
                description=pick(words, b.action, lang),
                tooltip=pick(tooltips, b.action, lang) if b.action in tooltips else b.tooltip,
                show=declared.get((key, b.action), b.show) and b.action not in held,
            )
            if b.action in words
            else b
            for b in bindings
        ]
