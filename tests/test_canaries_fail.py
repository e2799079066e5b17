"""The canaries of tests/test_patched_names.py fail, with their named reason, when what they watch moves:
each private name is broken here once (monkeypatched away or given another signature) and its canary run."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
import rich._wrap
import rich.style
import rich.text
import test_patched_names as canaries
import textual._callback
import textual._compositor
import textual.app
import textual.binding
import textual.command
import textual.dom
import textual.drivers._writer_thread
import textual.drivers.linux_driver
import textual.screen
import textual.scroll_view
import textual.strip
import textual.widget
import textual.widgets
import textual.worker_manager
from textual.cache import FIFOCache


def _bindings_changed_renamed_flag(self: object, screen: object) -> None:
    """Footer.bindings_changed as if Textual had renamed the flag that compose reads."""
    self._bindings_are_ready = True  # type: ignore[attr-defined]


def _rich_console(self: object, console: object, options: object) -> object:
    yield from ()


def _display(self: object, screen: object, renderable: object, now: bool = False) -> None: ...


def _size_updated(self: object, size: object, virtual_size: object) -> bool:
    return False


def _rstrip_end(self: object, size: int, cells: bool = True) -> None: ...


def _countdown(self: object, search_value: str, delay: float) -> None:
    self._list_visible = self._no_matches_timer = None  # type: ignore[attr-defined]


class _StyleWithoutMeta:
    @classmethod
    def from_meta(cls, meta: object) -> _StyleWithoutMeta:
        return cls()


def _dropping(cls: type, name: str) -> Callable[..., None]:
    """cls.__init__, then the instance attribute `name` taken away (as if Textual had renamed it)."""
    init = cls.__init__

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)
        self.__dict__.pop(name)

    return __init__


def _strip_init_with_an_eighth_cache(self: object, segments: object, cell_length: object = None) -> None:
    """Strip.__init__ as if Textual had added a cache."""
    self._segments = list(segments)  # type: ignore[attr-defined, call-overload]
    self._cell_length = cell_length  # type: ignore[attr-defined]
    self._divide_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._crop_cache = FIFOCache(16)  # type: ignore[attr-defined]
    self._style_cache = FIFOCache(16)  # type: ignore[attr-defined]
    self._filter_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._line_length_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._crop_extend_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._offsets_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._wrap_cache = FIFOCache(4)  # type: ignore[attr-defined]
    self._render_cache = None  # type: ignore[attr-defined]
    self._link_ids = None  # type: ignore[attr-defined]
    self._cell_count = None  # type: ignore[attr-defined]


_getsource = inspect.getsource
C = textual._compositor

BREAKS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], Callable[[], None], str]] = {
    "ChopsUpdate": (
        lambda m: m.delattr(C, "ChopsUpdate"),
        lambda: canaries.test_compositor_updates_terminal_diff_reads_are_where_it_imports_them("ChopsUpdate"),
        "Textual renamed textual._compositor.ChopsUpdate: tutor/patches/terminal_diff.py must follow",
    ),
    "ChopsUpdate fields": (
        lambda m: m.setattr(C.ChopsUpdate, "__init__", lambda self, chops, spans: None),
        canaries.test_chops_update_is_written_as_terminal_diff_copies_it,
        "Textual changed ChopsUpdate's fields",
    ),
    "ChopsUpdate's loop": (
        lambda m: m.setattr(C.ChopsUpdate, "__rich_console__", _rich_console),
        canaries.test_chops_update_is_written_as_terminal_diff_copies_it,
        "Textual changed how ChopsUpdate writes its chops",
    ),
    "App._display": (
        lambda m: m.setattr(textual.app.App, "_display", _display),
        canaries.test_app_display_is_what_tutor_app_overrides,
        "Textual changed App._display's signature",
    ),
    "App._batch_count": (
        lambda m: m.setattr(textual.app.App, "__init__", _dropping(textual.app.App, "_batch_count")),
        canaries.test_app_state_frame_for_reads_is_still_there,
        "Textual renamed App._batch_count",
    ),
    "linux_driver.WriterThread": (
        lambda m: m.delattr(textual.drivers.linux_driver, "WriterThread"),
        canaries.test_the_linux_driver_makes_the_output_thread_lost_terminal_replaces,
        "tutor/patches/lost_terminal.install replaces nothing",
    ),
    "WriterThread's queue": (
        lambda m: m.setattr(textual.drivers._writer_thread.WriterThread, "stop", _size_updated),
        canaries.test_the_linux_driver_makes_the_output_thread_lost_terminal_replaces,
        "Textual's WriterThread no longer reads its queue as before",
    ),
    "Screen._refresh_layout": (
        lambda m: m.setattr(textual.screen.Screen, "_refresh_layout", _size_updated),
        canaries.test_screen_refresh_layout_is_what_small_window_wraps,
        "Textual changed Screen._refresh_layout's signature",
    ),
    "Screen._on_screen_resume": (
        lambda m: m.setattr(textual.screen.Screen._on_screen_resume, "__wrapped__", _size_updated),  # Textual's own
        canaries.test_a_screen_s_resume_restyles_as_first_resume_expects,
        "Textual changed Screen._on_screen_resume",
    ),
    "Widget._post_register": (
        lambda m: m.setattr(textual.screen.Screen._post_register, "__wrapped__", _size_updated),
        canaries.test_a_screen_s_resume_restyles_as_first_resume_expects,
        "Textual changed Widget._post_register",
    ),
    "ScrollView._size_updated": (
        lambda m: m.setattr(textual.scroll_view.ScrollView, "_size_updated", _size_updated),
        canaries.test_scroll_view_size_updated_is_what_quiet_scroll_view_overrides,
        "Textual changed ScrollView._size_updated's signature: tutor/patches/quiet_scroll_view.py must follow",
    ),
    "rich._wrap.re_word": (
        lambda m: m.delattr(rich._wrap, "re_word"),
        canaries.test_rich_word_pattern_is_what_cjk_wrap_replaces,
        "Rich renamed rich._wrap.re_word: tutor/patches/cjk_wrap.py patches nothing",
    ),
    "Text.rstrip_end": (
        lambda m: m.setattr(rich.text.Text, "rstrip_end", _rstrip_end),
        canaries.test_rich_rstrip_end_keeps_the_signature_cjk_wrap_replaces,
        "Rich changed Text.rstrip_end",
    ),
    "DOMNode._bindings": (
        lambda m: m.setattr(textual.dom.DOMNode, "__init__", _dropping(textual.dom.DOMNode, "_bindings")),
        canaries.test_each_node_has_its_own_bindings_map_for_footer_labels,
        "Textual renamed DOMNode._bindings: tutor/patches/footer_labels.py must follow",
    ),
    "one BindingsMap for all nodes": (
        lambda m: m.setattr(textual.binding.BindingsMap, "copy", lambda self: self),
        canaries.test_each_node_has_its_own_bindings_map_for_footer_labels,
        "nodes share one BindingsMap now",
    ),
    "Screen._binding_chain": (
        lambda m: m.setattr(textual.screen.Screen, "_binding_chain", property(_rich_console)),
        canaries.test_the_footer_reads_the_bindings_footer_labels_rewrites,
        "no longer reads node._bindings",
    ),
    "App.COMMAND_PALETTE_BINDING": (
        lambda m: m.delattr(textual.app.App, "COMMAND_PALETTE_BINDING"),
        canaries.test_the_palette_key_palette_relabels,
        "Textual renamed App.COMMAND_PALETTE_BINDING",
    ),
    "CommandPalette._NO_MATCHES": (
        lambda m: m.delattr(textual.command.CommandPalette, "_NO_MATCHES"),
        canaries.test_command_palette_no_matches_names_tutor_palette_overrides,
        "CommandPalette._NO_MATCHES is gone: tutor/patches/palette.py must follow",
    ),
    "CommandPalette._start_no_matches_countdown": (
        lambda m: m.setattr(textual.command.CommandPalette, "_start_no_matches_countdown", _countdown),
        canaries.test_command_palette_no_matches_names_tutor_palette_overrides,
        "_start_no_matches_countdown's signature changed",
    ),
    "Style._meta": (
        lambda m: m.setattr(rich.style, "Style", _StyleWithoutMeta),
        canaries.test_rich_style_meta_lessons_markdown_reads,
        "Rich renamed Style._meta: tutor/lessons/markdown.py",
    ),
    "Footer.bindings_changed": (
        lambda m: m.setattr(textual.widgets.Footer, "bindings_changed", _bindings_changed_renamed_flag),
        canaries.test_the_footer_override_still_matches_textual_s_footer,
        "Footer.bindings_changed no longer sets _bindings_ready",
    ),
    "Compositor._render_chops": (
        lambda m: m.setattr(C.Compositor, "_render_chops", _size_updated),
        canaries.test_compositor_partial_update_is_what_dirty_spans_copies,
        "Textual changed how a partial frame is drawn",
    ),
    "textual._callback.count_parameters": (
        lambda m: m.setattr(textual._callback, "count_parameters", _size_updated),
        canaries.test_count_parameters_reads_the_inner_count_parameter_count_keeps,
        "Textual changed how it counts a callback's parameters",
    ),
    "App.available_themes": (
        lambda m: m.setattr(textual.app.App, "available_themes", property(_rich_console)),
        canaries.test_get_theme_reads_the_registered_themes_theme_lookup_reads,
        "Textual changed how a theme is looked up",
    ),
    "Widget._scroll_update": (
        lambda m: m.setattr(textual.widget.Widget, "_scroll_update", _size_updated),
        canaries.test_the_scroll_update_quiet_scroll_view_calls_without_a_layout_is_the_layouts,
        "Textual changed Widget._scroll_update",
    ),
    "WorkerManager._workers": (
        lambda m: m.setattr(
            textual.worker_manager.WorkerManager,
            "__init__",
            _dropping(textual.worker_manager.WorkerManager, "_workers"),
        ),
        canaries.test_worker_manager_workers_the_bench_reads,
        "Textual renamed WorkerManager._workers",
    ),
    "Strip.__init__'s caches": (
        lambda m: m.setattr(textual.strip.Strip, "__init__", _strip_init_with_an_eighth_cache),
        canaries.test_strip_init_makes_the_caches_strip_caches_makes_on_first_use,
        "Textual changed the caches Strip.__init__ makes",
    ),
}


@pytest.mark.parametrize("broken", list(BREAKS))
def test_the_canary_fails_with_its_reason(broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    break_it, canary, reason = BREAKS[broken]
    canary()  # sound before
    break_it(monkeypatch)
    with pytest.raises(AssertionError) as failed:
        canary()
    assert reason in str(failed.value)
