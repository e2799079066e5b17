"""Canaries: the private Textual and Rich names tutor/patches/ (and a few other places) replace, call or read,
each checked by name, with the file that must follow it in the failure.

Raising the Textual or Rich pin fails here, with the reason, before it fails somewhere on screen. Where a patch
overrides a method, the method's signature is checked; where a patch copies a loop of Textual's, the loop's
shape is. tutor/patches/README.md says what each patch is for.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import textwrap

import pytest
import rich._wrap
import rich.style
import rich.text
import textual.screen
import textual.widget
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingsMap
from textual.command import CommandPalette
from textual.driver import Driver
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.worker_manager import WorkerManager

from tutor.patches.footer_labels import localize_bindings


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def gone_from(function: object, fragments: tuple[str, ...]) -> list[str]:
    """The fragments no longer in `function`'s source (spaces and line breaks collapsed on both sides)."""
    source = " ".join(inspect.getsource(function).split())  # type: ignore[arg-type]
    return [fragment for fragment in fragments if " ".join(fragment.split()) not in source]


# -- terminal_diff.py: App._display and the compositor's updates -----------------------------------------------


@pytest.mark.parametrize("name", ["ChopsUpdate", "CompositorUpdate", "LayoutUpdate"])
def test_compositor_updates_terminal_diff_reads_are_where_it_imports_them(name: str) -> None:
    module = importlib.import_module("textual._compositor")
    assert hasattr(module, name), (
        f"Textual renamed textual._compositor.{name}: tutor/patches/terminal_diff.py must follow"
    )


def test_chops_update_is_written_as_terminal_diff_copies_it() -> None:
    from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate

    assert parameters(ChopsUpdate.__init__) == ["self", "chops", "spans", "chop_ends"], (
        "Textual changed ChopsUpdate's fields: tutor/patches/terminal_diff._chops_writes must follow"
    )
    gone = gone_from(
        ChopsUpdate.__rich_console__,
        (
            "for y, x1, x2 in self.spans:",
            "for end, (x, strip) in zip(ends, line.items()):",
            "if x > x2 or end <= x1:",
            "if x2 > x >= x1 and end <= x2:",
        ),
    )
    assert not gone, f"Textual changed how ChopsUpdate writes its chops ({gone} are gone): " + (
        "tutor/patches/terminal_diff._chops_writes copies that loop and must follow"
    )
    assert parameters(LayoutUpdate.__init__) == ["self", "strips", "region"], (
        "Textual changed LayoutUpdate's fields: tutor/patches/terminal_diff._layout_writes must follow"
    )
    assert parameters(CompositorUpdate.render_segments) == ["self", "console"], (
        "Textual changed CompositorUpdate.render_segments: tutor/patches/terminal_diff.DiffedUpdate overrides it"
    )


def test_app_display_is_what_tutor_app_overrides() -> None:
    assert parameters(App._display) == ["self", "screen", "renderable"], (
        "Textual changed App._display's signature: TutorApp._display (tutor/app.py) overrides it and "
        "tutor/patches/terminal_diff.ScreenModel.frame_for must follow"
    )
    gone = gone_from(App._display, ("isinstance(renderable, CompositorUpdate)", "renderable.render_segments(console)"))
    assert not gone, f"App._display no longer does {gone}: tutor/patches/terminal_diff.DiffedUpdate may never be sent"


def test_app_state_frame_for_reads_is_still_there() -> None:
    app = App()
    for name in ("_running", "_closed", "_batch_count", "_driver"):
        assert hasattr(app, name), (
            f"Textual renamed App.{name}: tutor/patches/terminal_diff.ScreenModel.frame_for must follow"
        )
    assert isinstance(inspect.getattr_static(Driver, "is_inline"), property), (
        "Textual renamed Driver.is_inline: tutor/patches/terminal_diff.ScreenModel.frame_for must follow"
    )


# -- lost_terminal.py: the Linux driver's output thread and its input -------------------------------------------


def test_the_linux_driver_makes_the_output_thread_lost_terminal_replaces() -> None:
    from textual.drivers import _writer_thread, linux_driver

    assert hasattr(linux_driver, "WriterThread"), (
        "Textual's Linux driver no longer imports WriterThread by name: tutor/patches/lost_terminal.install "
        "replaces nothing"
    )
    gone = gone_from(linux_driver.LinuxDriver.start_application_mode, ("WriterThread(self._file)",))
    assert not gone, (
        "Textual's Linux driver makes its output thread another way: tutor/patches/lost_terminal.install must follow"
    )
    gone = gone_from(_writer_thread.WriterThread.run, ("= get()", "if text is None:", "write(text)"))
    gone += gone_from(_writer_thread.WriterThread.stop, ("self._queue.put(None)",))
    gone += gone_from(_writer_thread.WriterThread.__init__, ("self._queue",))
    assert not gone, (
        f"Textual's WriterThread no longer reads its queue as before ({gone} are gone): "
        "tutor/patches/lost_terminal.LosableWriterThread drains self._queue and must follow"
    )
    gone = gone_from(linux_driver.LinuxDriver.__init__, ("self.fileno = sys.__stdin__.fileno()",))
    assert not gone, "Textual renamed LinuxDriver.fileno: TutorApp.on_mount watches it (tutor/patches/lost_terminal.py)"


# -- small_window.py: Screen._refresh_layout ----------------------------------------------------------------------


def test_screen_refresh_layout_is_what_small_window_wraps() -> None:
    assert parameters(textual.screen.Screen._refresh_layout) == ["self", "size", "scroll"], (
        "Textual changed Screen._refresh_layout's signature: tutor/patches/small_window.install wraps it"
    )
    gone = gone_from(textual.screen.Screen._screen_resized, ("self._refresh_layout(size)",))
    gone += gone_from(textual.screen.Screen._on_screen_resume, ("self._refresh_layout(size)",))
    assert not gone, (
        "a resize or a screen shown again no longer lays out through Screen._refresh_layout: "
        "tutor/patches/small_window.py must follow"
    )


# -- first_resume.py: Screen._on_screen_resume, Widget._post_register, Stylesheet.source ---------------------------


def test_a_screen_s_resume_restyles_as_first_resume_expects() -> None:
    import textual.css.stylesheet

    import tutor.app  # noqa: F401  # installs the patch: the canary reads Textual's own, which it wraps

    resume = inspect.unwrap(textual.screen.Screen._on_screen_resume)
    register = inspect.unwrap(textual.screen.Screen._post_register)
    assert resume is not textual.screen.Screen._on_screen_resume, "tutor/patches/first_resume.install no longer patches"
    assert parameters(resume) == ["self", "event"], (
        "Textual changed Screen._on_screen_resume: tutor/patches/first_resume.py"
    )
    assert parameters(register) == ["self", "app"], (
        "Textual changed Widget._post_register: tutor/patches/first_resume.py"
    )
    gone = gone_from(resume, ("if event.refresh_styles:", "self.update_node_styles(animate=False)"))
    gone += gone_from(register, ("self.app.stylesheet.add_source(", "scope=scope,"))
    gone += gone_from(App._register, ("apply_stylesheet(widget, cache=cache)",))
    gone += [] if "scope" in textual.css.stylesheet.CssSource._fields else ["CssSource.scope"]
    assert not gone, (
        f"Textual changed how a screen is styled when it is shown ({gone} are gone): tutor/patches/first_resume.py "
        "must follow"
    )


# -- quiet_scroll_view.py: ScrollView._size_updated -------------------------------------------------------------


def test_scroll_view_size_updated_is_what_quiet_scroll_view_overrides() -> None:
    assert parameters(ScrollView._size_updated) == ["self", "size", "virtual_size", "container_size", "layout"], (
        "Textual changed ScrollView._size_updated's signature: tutor/patches/quiet_scroll_view.py must follow"
    )
    assert "._size_updated(" in inspect.getsource(textual.screen.Screen), (
        "Textual's screen no longer calls _size_updated on layout: tutor/patches/quiet_scroll_view.py guards nothing"
    )


def test_scrollbars_are_what_quiet_scroll_view_paints_in_the_layouts_frame() -> None:
    widget = Widget()
    for name in ("_vertical_scrollbar", "_horizontal_scrollbar", "_scrollbar_corner", "_repaint_regions"):
        assert hasattr(widget, name), (
            f"Textual renamed Widget.{name}: QuietScrollView._paint_scrollbars_now "
            "(tutor/patches/quiet_scroll_view.py) must follow"
        )
    from textual._compositor import Compositor

    assert parameters(Compositor.update_widgets) == ["self", "widgets"], (
        "Textual changed Compositor.update_widgets: tutor/patches/quiet_scroll_view.py must follow"
    )
    gone = gone_from(Compositor.update_widgets, ("widget._exchange_repaint_regions()",))
    screen = " ".join(inspect.getsource(textual.screen.Screen).split())  # the class: small_window wraps the method
    laid_out = ("widget._size_updated(region.size, virtual_size, container_size)", "self._compositor_refresh()")
    gone += [fragment for fragment in laid_out if fragment not in screen]
    assert not gone, (
        f"Textual's layout no longer has {gone}: a scrollbar painted from _size_updated may miss the layout's frame "
        "(tutor/patches/quiet_scroll_view.py must follow)"
    )
    assert screen.index(laid_out[0]) < screen.rindex(laid_out[1]), "Textual draws the frame before _size_updated"


def test_the_scroll_update_quiet_scroll_view_calls_without_a_layout_is_the_layouts() -> None:
    assert parameters(Widget._scroll_update) == ["self", "virtual_size"], (
        "Textual changed Widget._scroll_update: QuietScrollView.set_virtual_size "
        "(tutor/patches/quiet_scroll_view.py) must follow"
    )
    gone = gone_from(ScrollView._size_updated, ("self._scroll_update(virtual_size)",))
    gone += gone_from(
        Widget._scroll_update, ("self._refresh_scrollbars()", "window_virtual_size = virtual_size.height")
    )
    gone += gone_from(Widget._refresh_scrollbars, ("self.show_vertical_scrollbar = show_vertical",))
    assert not gone, (
        f"Textual's layout sets a scroll view's scrollbars otherwise ({gone} are gone): "
        "QuietScrollView.set_virtual_size (tutor/patches/quiet_scroll_view.py) must follow"
    )
    layouts = [reactive._layout for reactive in (Widget.virtual_size, Widget.show_vertical_scrollbar)]
    assert layouts == [True, True], (
        "virtual_size or show_vertical_scrollbar no longer lays the screen out: QuietScrollView.set_virtual_size "
        "(tutor/patches/quiet_scroll_view.py) relies on the one and stands in for the other"
    )


# -- cjk_wrap.py: Rich's word pattern and Text.rstrip_end -------------------------------------------------------


def test_rich_word_pattern_is_what_cjk_wrap_replaces() -> None:
    # tutor/patches/cjk_wrap.py sets rich._wrap.re_word; Rich's divide_line must still read it from the module
    assert hasattr(rich._wrap, "re_word"), "Rich renamed rich._wrap.re_word: tutor/patches/cjk_wrap.py patches nothing"
    assert "re_word" in inspect.getsource(rich._wrap.words), (
        "rich._wrap.words no longer uses re_word: tutor/patches/cjk_wrap.py must follow"
    )


def test_rich_rstrip_end_keeps_the_signature_cjk_wrap_replaces() -> None:
    # tutor/patches/cjk_wrap.py replaces Text.rstrip_end(self, size) with a version that counts cells
    assert parameters(rich.text.Text.rstrip_end) == ["self", "size"], (
        "Rich changed Text.rstrip_end: tutor/patches/cjk_wrap._rstrip_end_in_cells must follow it"
    )
    assert "rstrip_end" in inspect.getsource(rich.text.Text.wrap), (
        "Text.wrap no longer calls rstrip_end: tutor/patches/cjk_wrap._rstrip_end_in_cells mends nothing"
    )


# -- footer_labels.py and palette.py's key: a node's own BindingsMap --------------------------------------------


def test_each_node_has_its_own_bindings_map_for_footer_labels() -> None:
    class Labelled(Widget):  # a class of its own each time: Textual keeps a class's merged bindings
        BINDINGS = [Binding("r", "check", "Check", tooltip="Check it")]

    first, second = Labelled(), Labelled()
    assert isinstance(getattr(first, "_bindings", None), BindingsMap), (
        "Textual renamed DOMNode._bindings: tutor/patches/footer_labels.py must follow"
    )
    assert isinstance(first._bindings.key_to_bindings, dict), (
        "Textual changed BindingsMap.key_to_bindings: tutor/patches/footer_labels.py must follow"
    )
    assert {"action", "description", "tooltip"} <= {field.name for field in dataclasses.fields(Binding)}, (
        "Textual changed Binding's fields: tutor/patches/footer_labels.py replaces description and tooltip"
    )
    localize_bindings(first, {"check": ("Check", "检查")}, "zh", {"check": ("Check it", "检查一下")})
    [labelled] = first._bindings.key_to_bindings["r"]
    assert (labelled.description, labelled.tooltip) == ("检查", "检查一下")
    [untouched] = second._bindings.key_to_bindings["r"]
    assert untouched.description == "Check", (
        "nodes share one BindingsMap now: tutor/patches/footer_labels.py would relabel every screen of a class"
    )


def test_the_footer_reads_the_bindings_footer_labels_rewrites() -> None:
    chain = inspect.getsource(textual.screen.Screen._binding_chain.fget)  # type: ignore[attr-defined]
    assert "._bindings" in chain, (
        "Screen._binding_chain (what the footer shows) no longer reads node._bindings: "
        "tutor/patches/footer_labels.py relabels nothing"
    )


def test_the_palette_key_palette_relabels() -> None:
    key = getattr(App, "COMMAND_PALETTE_BINDING", None)
    assert key is not None, (
        "Textual renamed App.COMMAND_PALETTE_BINDING: tutor/patches/palette.localize_key must follow"
    )
    app = App()
    actions = [binding.action for binding in app._bindings.key_to_bindings.get(key, [])]
    assert "command_palette" in actions, (
        "the app's ^p binding is no longer the action command_palette: tutor/patches/palette.localize_key must follow"
    )


# -- palette.py: CommandPalette's "No matches found" ------------------------------------------------------------


def test_command_palette_no_matches_names_tutor_palette_overrides() -> None:
    # tutor/patches/palette.TutorPalette overrides _start_no_matches_countdown and uses these private names
    for name in ("_start_no_matches_countdown", "_stop_no_matches_countdown", "_NO_MATCHES", "_NO_MATCHES_COUNTDOWN"):
        assert hasattr(CommandPalette, name), f"CommandPalette.{name} is gone: tutor/patches/palette.py must follow"
    source = inspect.getsource(CommandPalette._start_no_matches_countdown)
    assert "_list_visible" in source and "_no_matches_timer" in source, (
        "the no-matches countdown changed: tutor/patches/palette.TutorPalette copies it and must follow"
    )
    assert parameters(CommandPalette._start_no_matches_countdown) == ["self", "search_value"], (
        "CommandPalette._start_no_matches_countdown's signature changed: tutor/patches/palette.py must follow"
    )
    assert {"providers", "placeholder", "id"} <= set(parameters(CommandPalette.__init__)), (
        "CommandPalette.__init__ changed: tutor/patches/palette.TutorPalette passes placeholder, providers and id"
    )
    assert {"title", "help", "callback"} <= set(getattr(SystemCommand, "_fields", ())), (
        "SystemCommand is no longer a named tuple of title, help, callback: tutor/patches/palette.system_commands"
    )


# -- elsewhere in tutor/ ----------------------------------------------------------------------------------------


def test_rich_style_meta_lessons_markdown_reads() -> None:
    marked, plain = rich.style.Style.from_meta({"heading": "x"}), rich.style.Style()
    assert hasattr(plain, "_meta"), "Rich renamed Style._meta: tutor/lessons/markdown.py reads it to find headings"
    assert marked._meta and not plain._meta, "Style._meta no longer says whether a style has meta: lessons/markdown.py"


def test_worker_manager_workers_the_bench_reads() -> None:
    assert isinstance(getattr(WorkerManager(App()), "_workers", None), set), (
        "Textual renamed WorkerManager._workers: tutor/bench/pilot.FrameClock.latency must follow"
    )


# -- web_server.py: textual-serve's Server, its page and its sessions (the `web` extra) -------------------------


def test_textual_serve_server_is_what_web_server_overrides() -> None:
    server_module = pytest.importorskip("textual_serve.server", reason='needs the web extra (pip install ".[web]")')
    Server = server_module.Server
    assert {"command", "host", "port", "title"} <= set(parameters(Server.__init__)), (
        "textual-serve's Server.__init__ changed: tutor/patches/web_server.TutorServer passes command, host, port, "
        "title"
    )
    for name, expected in (
        ("_make_app", ["self"]),
        ("handle_index", ["self", "request"]),
        ("on_startup", ["self", "app"]),
        ("on_shutdown", ["self", "app"]),
    ):
        assert parameters(getattr(Server, name)) == expected, (
            f"textual-serve changed Server.{name}: tutor/patches/web_server.TutorServer overrides it"
        )
    gone = gone_from(
        Server._make_app,
        (
            "aiohttp_jinja2.setup(app",
            "self.handle_index",
            'name="websocket"',
            'name="static"',
            "app.on_startup.append(self.on_startup)",
            "app.on_shutdown.append(self.on_shutdown)",
            "return app",
        ),
    )
    assert not gone, (
        f"Server._make_app no longer does {gone}: tutor/patches/web_server.TutorServer._make_app "
        "(its page, its guard, its routes' names) must follow"
    )
    assert callable(getattr(server_module, "to_int", None)), "textual_serve.server.to_int is gone: web_server reads it"


def test_textual_serve_page_is_what_web_server_rewrites() -> None:
    server_module = pytest.importorskip("textual_serve.server", reason='needs the web extra (pip install ".[web]")')
    import jinja2
    import jinja2.meta

    from tutor.patches.web_server import TEMPLATE, local_page

    server = server_module.Server("true")
    upstream = (server.templates_path / TEMPLATE).read_text(encoding="utf-8")
    page = local_page(upstream)  # raises when the fonts link it replaces is gone
    assert not re.findall(r'(?:href|src)="https?:|url\("?https?:|@import', page), (
        f"textual-serve's {TEMPLATE} loads something else from another host: tutor/patches/web_server.local_page"
    )
    names = jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(upstream))
    assert names <= {"font_size", "app_websocket_url", "config", "application", "ping_url"}, (
        f"textual-serve's {TEMPLATE} reads {names}: tutor/patches/web_server.TutorServer.handle_index must give them"
    )
    script = (server.statics_path / "js" / "textual.js").read_text(encoding="utf-8")
    for fragment in ("dataset.sessionWebsocketUrl", '"-first-byte"', "xterm-helper-textarea"):
        assert fragment in script, (
            f"textual-serve's textual.js no longer has {fragment!r}: tutor/patches/web_server.LOCAL_HEAD's script "
            "(and tests/test_serve_browser.py) must follow"
        )


def test_textual_serve_sessions_end_as_web_server_and_the_app_command_expect() -> None:
    server_module = pytest.importorskip("textual_serve.server", reason='needs the web extra (pip install ".[web]")')
    from textual.drivers.web_driver import WebDriver
    from textual_serve.app_service import AppService

    handler = " ".join(inspect.getsource(server_module.Server.handle_websocket).split())
    assert "except asyncio.CancelledError:" in handler and "await app_service.stop()" in handler, (
        "a cancelled session no longer stops its app: tutor/patches/web_server.TutorServer.on_shutdown cancels them"
    )
    assert '"type": "quit"' in inspect.getsource(AppService.stop), (
        "AppService.stop no longer asks the app to quit: a closed tab may not save (tutor/patches/web_server.py)"
    )
    assert '"quit"' in inspect.getsource(WebDriver.on_meta), "Textual's web driver no longer quits on request"

    async def nothing(*_: object) -> None:
        return None

    service = AppService("true", write_bytes=nothing, write_str=nothing, close=nothing, download_manager=None)
    assert service._build_environment()["TEXTUAL_DRIVER"].startswith("textual.drivers.web_driver"), (
        "textual-serve runs its apps with another driver: tutor/commands/app.py lets that one run without a terminal"
    )


def test_textual_serve_tab_service_and_messages_are_what_web_server_copies() -> None:
    """TutorServer.handle_websocket and _process_messages are copies of textual-serve's with limits added;
    TabService extends AppService. Each name they override, call or read is checked here."""
    server_module = pytest.importorskip("textual_serve.server", reason='needs the web extra (pip install ".[web]")')
    from textual_serve.app_service import AppService

    Server = server_module.Server
    assert parameters(Server.handle_websocket) == ["self", "request"], (
        "textual-serve changed Server.handle_websocket: tutor/patches/web_server.TutorServer.handle_websocket copies it"
    )
    assert parameters(Server._process_messages) == ["self", "websocket", "app_service"], (
        "textual-serve changed Server._process_messages: tutor/patches/web_server.TutorServer._process_messages "
        "copies it"
    )
    upstream = inspect.getsource(Server._process_messages)
    kinds = set(re.findall(r'type_ == "(\w+)"', upstream))
    assert kinds == {"stdin", "resize", "ping", "blur", "focus"}, (
        f"textual-serve's browser now sends the messages {sorted(kinds)}: "
        "tutor/patches/web_server.TutorServer._process_messages drops the ones it does not know"
    )
    handler = inspect.getsource(Server.handle_websocket)
    for fragment in ("download_manager=self.download_manager", "debug=self.debug", "app_service.start(width, height)"):
        assert fragment in handler, (
            f"textual-serve's handle_websocket no longer does {fragment!r}: "
            "tutor/patches/web_server.TutorServer.handle_websocket must follow"
        )
    assert {"command", "write_bytes", "write_str", "close", "download_manager", "debug"} <= set(
        parameters(AppService.__init__)
    ), "textual-serve changed AppService.__init__: tutor/patches/web_server.TutorServer.handle_websocket builds one"
    for name, expected in (
        ("start", ["self", "width", "height"]),
        ("stop", ["self"]),
        ("run", ["self"]),
        ("send_bytes", ["self", "data"]),
        ("set_terminal_size", ["self", "width", "height"]),
        ("blur", ["self"]),
        ("focus", ["self"]),
        ("_open_app_process", ["self", "width", "height"]),
        ("_build_environment", ["self", "width", "height"]),
    ):
        assert parameters(getattr(AppService, name, None) or (lambda: None)) == expected, (
            f"textual-serve changed AppService.{name}: tutor/patches/web_server.TabService and TutorServer call it"
        )
    assert "self.remote_close = close" in inspect.getsource(AppService.__init__), (
        "AppService no longer keeps close as remote_close: tutor/patches/web_server.TabService.run calls it"
    )
    assert "self._process: Process | None = None" in inspect.getsource(AppService.__init__), (
        "AppService no longer keeps its process in _process: tutor/patches/web_server.TabService.terminate reads it"
    )
    opened = gone_from(AppService._open_app_process, ("self._process = process", "self._stdin = process.stdin"))
    run = gone_from(AppService.run, ("process.stdout", "process.stderr", "readexactly"))
    assert not opened and not run, (
        f"AppService no longer does {opened + run}: tutor/patches/web_server.TabService._open_app_process gives it a "
        "forked tutor (tutor/fork_client.ForkedProcess) in the same places"
    )
    server = Server("true")
    for attribute in ("command", "title", "debug", "download_manager", "templates_path", "statics_path"):
        assert hasattr(server, attribute), f"textual-serve's Server has no {attribute}: web_server reads it"


# -- tutor/lessons/markdown.py: Rich's Markdown tokens ------------------------------------------------------------


def test_rich_markdown_keeps_its_tokens_in_parsed_and_renders_soft_breaks_as_lessons_markdown_expects() -> None:
    """_LessonMarkdown rewrites each `softbreak` of `Markdown.parsed` into a `text` token before rendering."""
    from rich.markdown import Markdown

    markdown = Markdown("a\nb")
    assert isinstance(getattr(markdown, "parsed", None), list), (
        "Rich's Markdown no longer keeps its tokens in .parsed: tutor/lessons/markdown._LessonMarkdown edits them"
    )
    kinds = [child.type for token in markdown.parsed for child in (token.children or [])]
    assert "softbreak" in kinds, "Rich's parser no longer makes softbreak tokens: tutor/lessons/markdown.py"
    assert 'node_type == "softbreak"' in inspect.getsource(Markdown.__rich_console__), (
        "Rich renders soft breaks another way: tutor/lessons/markdown._join_soft_breaks must follow"
    )


# -- widgets/footer.py: TutorFooter overrides Footer.bindings_changed and reads what Footer.compose reads ----------


def test_the_footer_override_still_matches_textual_s_footer() -> None:
    """TutorFooter replaces `bindings_changed` (one recompose for many changes) and compares what `compose` reads
    (`_bindings_ready`, the screen's active bindings, the palette key) to skip a recompose that would mount the
    same keys again."""
    from textual.widgets import Footer

    from tutor.widgets.footer import TutorFooter

    assert parameters(Footer.bindings_changed) == parameters(TutorFooter.bindings_changed) == ["self", "screen"], (
        "Textual changed Footer.bindings_changed: tutor/widgets/footer.py overrides it"
    )
    assert not gone_from(
        Footer.bindings_changed, ("self._bindings_ready = True", "self.call_after_refresh(self.recompose)")
    ), "Footer.bindings_changed no longer sets _bindings_ready and recomposes: tutor/widgets/footer.py copies it"
    assert not gone_from(
        Footer.compose,
        (
            "if not self._bindings_ready:",
            "self.screen.active_bindings",
            "self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE",
        ),
    ), "Footer.compose reads something else now: tutor/widgets/footer.py's _shown() must read the same"
    assert not gone_from(Footer.on_mount, ("bindings_updated_signal.subscribe(self, self.bindings_changed)",)), (
        "Footer no longer subscribes bindings_changed: tutor/widgets/footer.py's override would never run"
    )


def test_a_footer_key_s_compact_sets_the_class_tutor_footer_gives_it() -> None:
    """TutorFooter.compose makes each key with "-compact" already, which FooterKey's bound `compact` sets once the
    key is mounted: a class already there restyles nothing."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    assert not gone_from(FooterKey._watch_compact, ('self.set_class(compact, "-compact")',)), (
        "FooterKey's compact no longer sets '-compact': tutor/widgets/footer.py's compose gives keys that class"
    )
    assert not gone_from(Footer.compose, (".data_bind(compact=Footer.compact)",)), (
        "Footer.compose no longer binds each key's compact to the footer's: tutor/widgets/footer.py copies it"
    )


# -- full_map.py: Compositor.reflow and the full map's stale mark ---------------------------------------------


def test_compositor_reflow_builds_the_full_map_full_map_trusts() -> None:
    from textual._compositor import Compositor

    import tutor.app  # noqa: F401  # installs the patch: the canary reads what it wraps

    assert parameters(Compositor.reflow) == ["self", "parent", "size"], (
        "Textual changed Compositor.reflow's signature: tutor/patches/full_map.install wraps it"
    )
    built = ("self._arrange_root(parent, size, visible_only=False)", "self._full_map = map")
    gone = gone_from(Compositor.reflow, built)
    gone += gone_from(Compositor.full_map.fget, ("if self._full_map_invalidated:",))
    gone += gone_from(Compositor.update_widgets, ("self._full_map_invalidated = True",))
    assert not gone, (
        f"Textual's compositor no longer has {gone}: the full map reflow builds may not be the full map "
        "(tutor/patches/full_map.py clears its stale mark after reflow): tutor/patches/full_map.py must follow"
    )


# -- strip_caches.py: the caches Strip.__init__ makes ------------------------------------------------------------


def _made_in_init(init: object) -> tuple[dict[str, int], set[str]]:
    """What `init` sets on self: {slot: size} for each `FIFOCache(size)`, and the names of the other slots."""
    caches: dict[str, int] = {}
    plain: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(init)))):  # type: ignore[arg-type]
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "FIFOCache":
                size = value.args[0]
                caches[target.attr] = size.value if isinstance(size, ast.Constant) else -1
            else:
                plain.add(target.attr)
    return caches, plain


def test_strip_init_makes_the_caches_strip_caches_makes_on_first_use() -> None:
    from textual.strip import Strip

    import tutor.app  # noqa: F401  # installs the patch: the canary reads what it replaces
    from tutor.patches import strip_caches

    original = inspect.unwrap(Strip.__init__)
    assert parameters(original) == ["self", "segments", "cell_length"], (
        "Textual changed Strip.__init__'s signature: tutor/patches/strip_caches.py must follow"
    )
    caches, plain = _made_in_init(original)
    assert (caches, plain) == (strip_caches.CACHE_SIZES, strip_caches.PLAIN), (
        f"Textual changed the caches Strip.__init__ makes ({caches}, {sorted(plain)}): "
        "tutor/patches/strip_caches.py must follow"
    )
    assert set(Strip.__slots__) == set(caches) | plain, (
        "Textual changed Strip's slots: tutor/patches/strip_caches.py must follow"
    )
    assert Strip.__dict__.get("__getattr__") in (None, strip_caches._cache_on_first_use), (
        "Textual's Strip has a __getattr__ of its own: tutor/patches/strip_caches.py would replace it"
    )


# -- dirty_spans.py: Compositor.render_partial_update and the pieces it draws ------------------------------------


def test_compositor_partial_update_is_what_dirty_spans_copies() -> None:
    from textual._compositor import ChopsUpdate, Compositor

    import tutor.app  # noqa: F401  # installs the patch: the canary reads Textual's own, which it keeps

    original = inspect.unwrap(Compositor.render_partial_update)
    assert original is not Compositor.render_partial_update, "tutor/patches/dirty_spans.install no longer patches"
    assert parameters(original) == ["self"], (
        "Textual changed Compositor.render_partial_update's signature: tutor/patches/dirty_spans.py replaces it"
    )
    gone = gone_from(
        original,
        (
            "update_regions = self._dirty_regions.copy()",
            "crop = Region.from_union(update_regions).intersection(screen_region)",
            "spans = list(self._regions_to_spans(update_regions))",
            "chops = self._render_chops(crop, is_rendered_line)",
            "chop_ends = [cut_set[1:] for cut_set in self.cuts]",
            "return ChopsUpdate(chops, spans, chop_ends)",
        ),
    )
    # the pieces it draws: front-most widget first, each line cut at the cuts within the widget, the first piece wins
    gone += gone_from(Compositor._get_renders, ("for widget, (region, clip) in visible_widgets.items()",))
    gone += gone_from(
        Compositor._render_chops,
        (
            "final_cuts = [cut for cut in cuts[y] if (last_cut >= cut >= first_cut)]",
            "cut_strips = strip.divide([cut - render_x for cut in final_cuts[1:]])",
            "if get_chops_line(cut) is None:",
        ),
    )
    # the pieces it leaves empty are those ChopsUpdate does not write
    gone += gone_from(ChopsUpdate.__rich_console__, ("if strip is None:", "if x > x2 or end <= x1:"))
    assert not gone, (
        f"Textual changed how a partial frame is drawn ({gone} are gone): tutor/patches/dirty_spans.py copies it "
        "and must follow"
    )


# -- parameter_count.py: textual._callback._count_parameters ----------------------------------------------------


def test_count_parameters_reads_the_inner_count_parameter_count_keeps() -> None:
    import textual._callback

    import tutor.app  # noqa: F401  # installs the patch: the canary reads Textual's own, which it wraps

    original = inspect.unwrap(textual._callback._count_parameters)
    assert original is not textual._callback._count_parameters, "tutor/patches/parameter_count no longer patches"
    assert parameters(original) == ["func"], "Textual changed _count_parameters: tutor/patches/parameter_count.py"
    gone = gone_from(original, ("return len(signature(func).parameters)",))
    gone += gone_from(
        textual._callback.count_parameters,
        ("_count_parameters(func.func) - (", "param_count = _count_parameters(func) - 1"),
    )
    gone += gone_from(textual._callback._invoke, ("parameter_count = count_parameters(callback)",))
    assert not gone, (
        f"Textual changed how it counts a callback's parameters ({gone} are gone): "
        "tutor/patches/parameter_count.py keeps the count of a function's own and must follow"
    )


# -- theme_lookup.py: App.get_theme --------------------------------------------------------------------------


def test_get_theme_reads_the_registered_themes_theme_lookup_reads() -> None:
    import tutor.app  # noqa: F401  # installs the patch: the canary reads Textual's own, which it replaces

    original = inspect.unwrap(App.get_theme)
    assert original is not App.get_theme, "tutor/patches/theme_lookup.install no longer patches"
    assert parameters(original) == ["self", "theme_name"], (
        "Textual changed App.get_theme: tutor/patches/theme_lookup.py"
    )
    gone = gone_from(
        original,
        (
            'theme_names = [token.strip() for token in theme_name.split(",")]',
            "if theme_name in self.available_themes:",
            "return self.available_themes[theme_name]",
        ),
    )
    gone += gone_from(App.available_themes.fget, ("return {**self._registered_themes}",))
    assert not gone, (
        f"Textual changed how a theme is looked up ({gone} are gone): tutor/patches/theme_lookup.py must follow"
    )
    app = App[None]()
    for name in ("textual-dark", "nord, textual-light", " no-such , gruvbox", "no-such", ""):
        assert app.get_theme(name) is original(app, name), name
