"""textual-serve's `Server`, made fit for a shared lab machine with no network (`tutor serve`).

- A token guards every route (the page, its assets, the websocket, downloads): every local user can reach
  127.0.0.1, so a request that carries neither the token (`?token=`) nor the cookie it leaves gets 403 and
  nothing else, and starts no tutor. The first page load trades the token for an HttpOnly, SameSite=Strict
  cookie and drops it from the address bar (and the browser's history).
- The page loads nothing from elsewhere: textual-serve's template asks Google Fonts for Roboto Mono, which its
  own static folder holds; the page served is that template with the link replaced by local @font-face rules
  (and a script that gives the terminal the keyboard: typing did nothing until a click).
- The page's websocket address is the host the browser asked for, not the one the server bound: through
  `ssh -L 9000:127.0.0.1:8000` the browser is at localhost:9000 and its cookie is for that host.
- No access log (aiohttp's prints every query string, the token with it) and no banner (textual-serve's names
  the URL without its token); `tutor.commands.serve` prints the one line a learner needs.

Overrides `Server._make_app`, `handle_index`, `on_startup` and `on_shutdown`, reads `templates_path` and the
template's names; tests/test_patched_names.py fails when those move.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from aiohttp.typedefs import Handler
from textual_serve.server import Server, to_int

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
SHUTDOWN_SECONDS = 10.0  # for the sessions' tutors to save and quit


class TemplateChanged(RuntimeError):
    """textual-serve's page no longer has the fonts link this module replaces."""


def local_page(upstream: str) -> str:
    """textual-serve's page template with Google Fonts replaced by the fonts it ships in its static folder,
    a title, and the keyboard on the terminal once it has drawn."""
    page, replaced = FONTS_LINK.subn(lambda _: LOCAL_HEAD, upstream)
    if replaced != 1:
        raise TemplateChanged(f"textual-serve's {TEMPLATE} changed: tutor/patches/web_server.local_page must follow")
    return page


def same(given: str, token: str) -> bool:
    """Whether `given` is the token, in time that does not depend on how much of it matches (bytes: a
    non-ASCII guess is just wrong, where compare_digest would raise on it as a str)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode())


def cookie_name(token: str) -> str:
    """One cookie per server: two learners' servers on one machine (cookies ignore ports) keep theirs apart.
    A few hex digits of the token's hash name it; they tell nothing about the token."""
    return "tutor-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def token_guard(token: str) -> Any:
    """aiohttp middleware: the request passes with the token in its query or its cookie, else 403."""
    cookie = cookie_name(token)

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if same(request.cookies.get(cookie, ""), token):
            return await handler(request)
        if not same(request.query.get("token", ""), token):
            return web.Response(status=403, text=FORBIDDEN)
        if request.method == "GET" and request.path == "/":  # the URL as printed: keep it out of the address bar
            response: web.StreamResponse = web.Response(
                status=302, headers={"Location": str(request.rel_url.without_query_params("token"))}
            )
        else:
            response = await handler(request)
        response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
        return response

    return guard


class TutorServer(Server):
    """textual-serve's server behind `token_guard`, with a page that loads nothing from elsewhere."""

    def __init__(self, command: str, host: str, port: int, token: str, title: str = "tutor") -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = token
        self.sessions: set[asyncio.Task[Any]] = set()  # the websocket handlers: one tutor each

    @web.middleware
    async def track_sessions(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.match_info.route.name != "websocket":
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

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        upstream = (Path(self.templates_path) / TEMPLATE).read_text(encoding="utf-8")
        aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({TEMPLATE: local_page(upstream)}))
        app.middlewares.extend([token_guard(self.token), self.track_sessions])
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: textual-serve's banner shows the URL without its token."""

    @aiohttp_jinja2.template(TEMPLATE)
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page's context, as textual-serve's, with its addresses on the host the browser asked for."""
        scheme = "wss" if request.secure else "ws"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{scheme}://{request.host}{request.app.router['websocket'].url_for()}",
            "config": {"static": {"url": str(request.app.router["static"].url_for(filename="/")).rstrip("/") + "/"}},
            "application": {"name": self.title},
        }

    async def start(self) -> web.AppRunner:
        """Listen (raises OSError when the port is taken); the runner to `cleanup()` when done."""
        runner = web.AppRunner(await self._make_app(), access_log=None, shutdown_timeout=SHUTDOWN_SECONDS)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except BaseException:
            await runner.cleanup()
            raise
        return runner
