"""Canaries: the private Textual and Rich names the tutor replaces or calls, each checked by name.

Raising the Textual or Rich pin fails here, with the reason, before it fails somewhere on screen.
(Issue 15 gathers these workarounds in one folder; until then this file lists the new ones.)
"""

from __future__ import annotations

import inspect

import rich._wrap
import rich.text
from textual.command import CommandPalette


def test_rich_word_pattern_is_what_cjk_wrap_replaces() -> None:
    # tutor/cjk_wrap.py sets rich._wrap.re_word; Rich's divide_line must still read it from the module
    assert hasattr(rich._wrap, "re_word"), "rich._wrap.re_word is gone: tutor/cjk_wrap.py patches nothing"
    assert "re_word" in inspect.getsource(rich._wrap.words), "rich._wrap.words no longer uses re_word"


def test_rich_rstrip_end_keeps_the_signature_cjk_wrap_replaces() -> None:
    # tutor/cjk_wrap.py replaces Text.rstrip_end(self, size) with a version that counts cells
    assert list(inspect.signature(rich.text.Text.rstrip_end).parameters) == ["self", "size"], (
        "Text.rstrip_end changed: tutor/cjk_wrap._rstrip_end_in_cells must follow it"
    )
    assert "rstrip_end" in inspect.getsource(rich.text.Text.wrap), "Text.wrap no longer calls rstrip_end"


def test_command_palette_no_matches_names_tutor_palette_overrides() -> None:
    # tutor/palette.TutorPalette overrides _start_no_matches_countdown and uses these private names
    for name in ("_start_no_matches_countdown", "_stop_no_matches_countdown", "_NO_MATCHES", "_NO_MATCHES_COUNTDOWN"):
        assert hasattr(CommandPalette, name), f"CommandPalette.{name} is gone: tutor/palette.py must follow"
    source = inspect.getsource(CommandPalette._start_no_matches_countdown)
    assert "_list_visible" in source and "_no_matches_timer" in source, "the no-matches countdown changed"
    assert list(inspect.signature(CommandPalette._start_no_matches_countdown).parameters) == ["self", "search_value"]
