"""textual-serve's `Server`, made fit for a shared lab machine with no network (`tutor serve`).

Every other user of the machine can reach 127.0.0.1, on any port, and can serve pages there too. So:

- Everything is served under a random path prefix (`/3f9c0a…/`), and a token guards every route (the page,
  its assets, the websocket, downloads): a request with neither the token (`?token=`) nor the session cookie gets
  403 and nothing else, and starts no tutor. The first page load trades the token for an HttpOnly,
  SameSite=Strict cookie and drops it from the address bar (and the browser's history).
- The cookie is not the token: it holds a session secret, an HMAC of the token under a key this server drew at
  start, and its Path is the prefix. Browsers send a cookie to every port of a host, so another local server
  could be handed it; only for a path under this server's prefix (which it does not know), and then it opens
  this server alone, until it stops: never the token, never another server.
- Host must be a loopback name (any port: `ssh -L` may forward another) or the host:port the printed URL names,
  and an Origin, when the browser sends one, must be that same host; the websocket must send one (browsers
  always do). A page from another origin (another port of 127.0.0.1, a DNS name rebound to it) can neither read
  the page nor open a tab's socket, even in a browser that holds the cookie; nor can it frame the page.
- Limits: at most `max_sessions` tabs at once (past them a page that says so, and no tutor starts), terminal
  sizes clamped to MAX_WIDTH × MAX_HEIGHT, websocket messages up to MESSAGE_BYTES, a paste cut to PASTE_CHARS
  and other input to TYPED_CHARS a message (each typed character is a key event for the tutor: 16,000 of them
  kept it busy for minutes), and a connection that sends no complete request in HEADER_SECONDS is closed.
- A tab's tutor that ends (a kill, a crash) closes its tab's socket: the page says "Session ended".
- The page loads nothing from elsewhere: textual-serve's template asks Google Fonts for Roboto Mono, which its
  own static folder holds; the page served is that template with the link replaced by local @font-face rules
  (and a script that gives the terminal the keyboard: typing did nothing until a click).
- The page's websocket address is the host the browser asked for, not the one the server bound: through
  `ssh -L 9000:127.0.0.1:8000` the browser is at localhost:9000 and its cookie is for that host.
- No access log (aiohttp's prints every query string, the token with it) and no banner (textual-serve's names
  the URL without its token); `tutor.commands.serve` prints the one line a learner needs.

Overrides `Server._make_app`, `handle_index`, `handle_websocket` (a copy of textual-serve's with the limits),
`_process_messages`, `on_startup` and `on_shutdown`, subclasses `AppService.run`, reads `templates_path` and the
template's names; tests/test_patched_names.py fails when those move.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, hdrs, web
from aiohttp.typedefs import Handler
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from tutor.commands.serve import DEFAULT_MAX_SESSIONS, is_loopback

if TYPE_CHECKING:
    from asyncio.subprocess import Process

    from tutor.fork_client import ForkServer

TEMPLATE = "app_index.html"
FONTS_LINK = re.compile(r"<link\b[^>]*https://fonts\.googleapis\.com/[^>]*>")  # the one remote load in the page
LOCAL_HEAD = """<title>{{ application.name }}</title>
    <style>
      @font-face {
        font-family: "Roboto Mono";
        font-style: normal;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
      }
      @font-face {
        font-family: "Roboto Mono";
        font-style: italic;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
      }
    </style>
    <script>
      // The websocket's address as the page gives it, made whole from where the browser found the page: behind
      // Jupyter's proxy the page says "ws", which is /user/NAME/tutor/ws on the hub's own host and scheme.
      document.addEventListener("DOMContentLoaded", () => {
        for (const terminal of document.querySelectorAll(".textual-terminal")) {
          const address = new URL(terminal.dataset.sessionWebsocketUrl, window.location.href);
          address.protocol = { "https:": "wss:", "http:": "ws:" }[address.protocol] || address.protocol;
          terminal.dataset.sessionWebsocketUrl = address.href;
        }
      });
      // The terminal takes the keyboard once the tutor has drawn: textual-serve leaves the focus on the page, and
      // what the learner typed went nowhere until a click.
      document.addEventListener("DOMContentLoaded", () => {
        new MutationObserver((_, observer) => {
          const keyboard = document.querySelector(".xterm-helper-textarea");
          if (keyboard && document.body.classList.contains("-first-byte")) {
            observer.disconnect();
            keyboard.focus();
          }
        }).observe(document.body, { attributes: true, attributeFilter: ["class"] });
      });
    </script>"""
FORBIDDEN = "403: Forbidden"
FULL = (
    "503: all {limit} tabs this tutor serve allows are open. Close one, then reload this page "
    "(or restart it with --max-sessions N).\n"
    "503：此 tutor serve 允许的 {limit} 个标签页都已打开。关闭一个后重新加载本页（或用 --max-sessions N 重新启动）。\n"
)
COOKIE = "tutor-session"
SHUTDOWN_SECONDS = 10.0  # for the sessions' tutors to save and quit
MAX_WIDTH, MAX_HEIGHT = 500, 200  # cells: a 4K screen at a small font; 100000×100000 took a tutor to 3.4 GB
MESSAGE_BYTES = 1 << 20  # a websocket message over it closes the socket (aiohttp's 1009) before it is read whole
PASTE_CHARS = 4096  # the prompt is a sentence or two; one Paste event however long, but the tutor reruns on it
TYPED_CHARS = 256  # a message of keys: one key, an IME's composed words, a mouse report
QUIT_SECONDS = 3.0  # for a closed tab's tutor to quit before it is sent SIGTERM
HEADER_SECONDS = 10.0  # aiohttp's keep-alive timeout, which also closes a connection that never sends a request
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # bracketed paste: the tutor turns it on, xterm.js sends it so
HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?")
SECURITY_HEADERS = {
    "Content-Security-Policy": "frame-ancestors 'none'",  # no other page frames this one to steer the learner
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # the prefix stays out of any link the tutor opens
}

log = logging.getLogger("textual-serve")


class TemplateChanged(RuntimeError):
    """textual-serve's page no longer has the fonts link this module replaces."""


def local_page(upstream: str) -> str:
    """textual-serve's page template with Google Fonts replaced by the fonts it ships in its static folder,
    a title, and the keyboard on the terminal once it has drawn."""
    page, replaced = FONTS_LINK.subn(lambda _: LOCAL_HEAD, upstream)
    if replaced != 1:
        raise TemplateChanged(f"textual-serve's {TEMPLATE} changed: tutor/patches/web_server.local_page must follow")
    return page


def same(given: str, secret: str) -> bool:
    """Whether `given` is the secret, in time that does not depend on how much of it matches (bytes: a
    non-ASCII guess is just wrong, where compare_digest would raise on it as a str)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), secret.encode())


def session_secret(key: bytes, token: str) -> str:
    """What the cookie holds: useless without `key`, which never leaves this server, to learn the token."""
    return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()


def host_allowed(host: str, named: set[str]) -> bool:
    """Whether a Host header names this server: a loopback name or address (any port), or one of `named`
    (the host:port the printed URL shows). Any other name reached 127.0.0.1 through someone's DNS."""
    found = HOST.fullmatch(host)
    return found is not None and (is_loopback(found["name"].strip("[]").lower()) or host.lower() in named)


def same_origin(origin: str, host: str) -> bool:
    """Whether a page at `origin` is this server's own page, reached as `host`."""
    return origin.lower() in {f"http://{host.lower()}", f"https://{host.lower()}"}


def as_int(value: object, default: int) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return default


def terminal_size(width: object, height: object) -> tuple[int, int]:
    """A size a browser asked for, within what a screen shows: a tutor draws (and holds) every cell of it."""
    return min(max(as_int(width, 80), 1), MAX_WIDTH), min(max(as_int(height, 24), 1), MAX_HEIGHT)


def tab_environment() -> dict[str, str]:
    """The environment textual-serve gives a tab's process, bar its size: what the fork server must run with."""
    service = TabService("", write_bytes=_nothing, write_str=_nothing, close=_nothing, download_manager=None)  # type: ignore[arg-type]
    return service._build_environment()


async def _nothing(*_: object) -> None:
    return None


def bounded_input(data: str) -> str:
    """A stdin message cut to what a learner sends: a bracketed paste to PASTE_CHARS (its closing mark kept, or
    the tutor would take what follows for more paste), anything else to TYPED_CHARS."""
    if data.startswith(PASTE_START) and data.endswith(PASTE_END):
        if len(data) <= PASTE_CHARS + len(PASTE_START) + len(PASTE_END):
            return data
        return data[: len(PASTE_START) + PASTE_CHARS] + PASTE_END
    return data[:TYPED_CHARS]


class TabService(AppService):
    """textual-serve's AppService, with a tutor that ends when its tab does and a tab that ends with its tutor.

    - `stop` (the tab closed) asks the tutor to quit, as textual-serve's does; a tutor still there QUIT_SECONDS
      later (busy: its quit waits behind every key already queued; a 3.5 MB paste kept one at it for 110 s) gets
      SIGTERM, on which it saves and ends within tutor.app.WEB_EXIT_SECONDS.
    - `run` closes the tab when its tutor ends however it ended: a tutor killed says nothing, and the page stayed
      open on a dead terminal.
    """

    forks: ForkServer | None = None  # the tab's tutor is forked by it while it lives, else spawned

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        """The tab's tutor, forked by the fork server with the environment a spawned one gets (tutor/fork_server.py);
        spawned with `command` as textual-serve does when there is none, or it is gone or refused."""
        if self.forks is not None:
            process = await self.forks.start_tab(self._build_environment(width=width, height=height))
            if process is not None:
                self._process = process  # type: ignore[assignment]  # the same pipes, returncode and terminate
                self._stdin = process.stdin
                return process  # type: ignore[return-value]
        return await super()._open_app_process(width, height)

    async def stop(self) -> None:
        # The timer is not cancelled when super().stop() returns: that returns as soon as the tab's output ends,
        # which a closed tab's socket does at once, while the tutor may still be busy for minutes (1 run in 6 here).
        # `terminate` looks first: a tutor that has ended (its return code known) gets no signal.
        asyncio.get_running_loop().call_later(QUIT_SECONDS, self.terminate)
        await super().stop()

    def terminate(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()

    async def run(self) -> None:
        await super().run()
        await self.remote_close()


class TutorServer(Server):
    """textual-serve's server under a random prefix, behind `guard`, with the limits above and a page that loads
    nothing from elsewhere."""

    def __init__(
        self,
        command: str,
        host: str,
        port: int,
        token: str,
        title: str = "tutor",
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        forks: ForkServer | None = None,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.forks = forks  # tabs' tutors forked by it (command: when it cannot)
        self.token = token
        self.secret = session_secret(secrets.token_bytes(32), token)  # a new key each start: old cookies open nothing
        self.prefix = "/" + secrets.token_hex(8)  # the cookie's Path: what another local server would need to know
        self.max_sessions = max_sessions
        self.named_hosts: set[str] = set()  # host:port as the printed URL names it (the caller sets it once bound)
        self.sessions: set[asyncio.Task[Any]] = set()  # the websocket handlers: one tutor each

    @property
    def index_path(self) -> str:
        return self.prefix + "/"

    @web.middleware
    async def guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The request passes with an allowed Host, its own Origin (if any; the websocket needs one), and the
        token in its query or the session secret in its cookie; else 403 and nothing else."""
        host = request.headers.get(hdrs.HOST, "")
        origin = request.headers.get(hdrs.ORIGIN)
        websocket = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        if not host_allowed(host, self.named_hosts) or (origin is None and websocket):
            return self.forbidden()
        if origin is not None and not same_origin(origin, host):
            return self.forbidden()
        if same(request.cookies.get(COOKIE, ""), self.secret):
            response = await handler(request)
            response.headers.update(SECURITY_HEADERS)
            return response
        if not same(request.query.get("token", ""), self.token):
            return self.forbidden()
        if request.method == "GET" and request.path == self.index_path:  # the URL as printed: off the address bar
            response = web.Response(
                status=302, headers={"Location": str(request.rel_url.without_query_params("token"))}
            )
        else:
            response = await handler(request)
        response.set_cookie(COOKIE, self.secret, httponly=True, samesite="Strict", path=self.index_path)
        response.headers.update(SECURITY_HEADERS)
        return response

    @staticmethod
    def forbidden() -> web.Response:
        return web.Response(status=403, text=FORBIDDEN, headers=SECURITY_HEADERS)

    @web.middleware
    async def track_sessions(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """At most `max_sessions` websockets (tutors) at once; the page says so when they are all taken."""
        name = request.match_info.route.name
        if name not in {"index", "websocket"}:
            return await handler(request)
        if len(self.sessions) >= self.max_sessions:  # no await between this check and the add below
            return web.Response(status=503, text=FULL.format(limit=self.max_sessions), headers=SECURITY_HEADERS)
        if name == "index":
            return await handler(request)
        task = asyncio.current_task()
        assert task is not None
        self.sessions.add(task)
        try:
            return await handler(request)
        finally:
            self.sessions.discard(task)

    async def on_shutdown(self, app: web.Application) -> None:
        """End every session now, not after aiohttp's shutdown timeout: a cancelled session closes its websocket
        and tells its tutor to quit, which saves the learner's progress."""
        for task in self.sessions:
            task.cancel()

    async def tabs_app(self) -> web.Application:
        """textual-serve's routes (page, static, websocket, downloads) with our page and the sessions' limit."""
        tabs = await Server._make_app(self)
        upstream = (Path(self.templates_path) / TEMPLATE).read_text(encoding="utf-8")
        aiohttp_jinja2.setup(tabs, loader=jinja2.DictLoader({TEMPLATE: local_page(upstream)}))
        tabs.middlewares.append(self.track_sessions)
        return tabs

    async def _make_app(self) -> web.Application:
        tabs = await self.tabs_app()
        root = web.Application(middlewares=[self.guard])  # the guard sees every request, inside the prefix or not
        root.add_subapp(self.prefix, tabs)
        return root

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: textual-serve's banner shows the URL without its token."""

    @aiohttp_jinja2.template(TEMPLATE)
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page's context, as textual-serve's, with its addresses on the host the browser asked for."""
        scheme = "wss" if request.secure else "ws"
        return {
            "font_size": min(max(to_int(request.query.get("fontsize", "16"), 16), 4), 72),
            "app_websocket_url": f"{scheme}://{request.host}{request.app.router['websocket'].url_for()}",
            "config": {"static": {"url": str(request.app.router["static"].url_for(filename="/")).rstrip("/") + "/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's, with the terminal size clamped, messages bounded, and a tab that closes when its
        tutor ends."""
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MESSAGE_BYTES)
        width, height = terminal_size(request.query.get("width"), request.query.get("height"))
        app_service: AppService | None = None
        try:
            await websocket.prepare(request)
            app_service = TabService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            app_service.forks = self.forks
            await app_service.start(width, height)
            try:
                await self._process_messages(websocket, app_service)
            finally:
                await app_service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:
            log.exception(error)
        finally:
            if app_service is not None:
                await app_service.stop()
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """textual-serve's messages (stdin, resize, ping, blur, focus), each checked and bounded; a message that
        is not one of them is dropped (textual-serve's assert ended the session with a traceback)."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(bounded_input(data).encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await app_service.set_terminal_size(*terminal_size(data.get("width"), data.get("height")))
            elif kind == "ping" and isinstance(data, str):
                await websocket.send_json(["pong", data[:64]])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()

    async def start(self) -> web.AppRunner:
        """Listen (raises OSError when the port is taken); the runner to `cleanup()` when done."""
        runner = web.AppRunner(
            await self._make_app(),
            access_log=None,
            shutdown_timeout=SHUTDOWN_SECONDS,
            keepalive_timeout=HEADER_SECONDS,
        )
        await runner.setup()
        try:
            await self.site(runner).start()
        except BaseException:
            await runner.cleanup()
            raise
        return runner

    def site(self, runner: web.AppRunner) -> web.BaseSite:
        return web.TCPSite(runner, self.host, self.port)


class ProxiedServer(TutorServer):
    """The same tabs behind jupyter-server-proxy (`tutor serve --socket`, the JupyterLab launcher's tile).

    Jupyter has logged the learner in, and checked a websocket's Origin, before its proxy connects here; the
    proxy strips its prefix (/user/NAME/tutor/) and asks for `/`, `/static/…`, `/ws`. So: no token, no cookie, no
    random prefix, no Host check (the Host is the hub's name, whatever it is). What keeps other users of the
    machine out is the socket: a unix socket in a folder only this user can open (the caller checks the folder),
    itself 0600; a port on 127.0.0.1 would be open to every local user. The page's addresses are relative
    ("static/", "ws"), so they hold under any prefix, whatever characters a user name puts in it.
    """

    def __init__(
        self,
        command: str,
        socket_path: str,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        forks: ForkServer | None = None,
    ) -> None:
        super().__init__(command, "localhost", 0, token="", max_sessions=max_sessions, forks=forks)
        self.socket_path = socket_path
        self.prefix = ""

    @web.middleware
    async def guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every request passes (Jupyter checked it), and every response carries the security headers."""
        response = await handler(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def _make_app(self) -> web.Application:
        tabs = await self.tabs_app()
        tabs.middlewares.insert(0, self.guard)
        return tabs

    @aiohttp_jinja2.template(TEMPLATE)
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page's context with addresses relative to the page (LOCAL_HEAD's script makes "ws" a ws: URL)."""
        return {
            "font_size": min(max(to_int(request.query.get("fontsize", "16"), 16), 4), 72),
            "app_websocket_url": "ws",
            "config": {"static": {"url": "static/"}},
            "application": {"name": self.title},
        }

    def site(self, runner: web.AppRunner) -> web.BaseSite:
        return web.UnixSite(runner, self.socket_path)

    async def start(self) -> web.AppRunner:
        runner = await super().start()
        Path(self.socket_path).chmod(0o600)  # the umask left it 0755 or so; its folder already keeps others out
        return runner
