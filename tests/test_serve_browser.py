"""`tutor serve` in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright (the `web-test`
extra; it never downloads a browser here: it runs /usr/bin/chromium).

The page draws the terminal on a canvas, so what the tutor drew is read from the bytes the page's websocket
received (a wrapper around the page's WebSocket keeps them), played into a terminal emulator (pyte) of the size
the page asked for. The screenshot is of what the browser itself drew.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import struct
import time
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from served import URL_LINE, children, fork_servers_under, needs_web, serving, tutors_under

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    needs_web,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian: apt-get install chromium)"),
    pytest.mark.skipif(find_spec("playwright") is None, reason='needs Playwright (pip install -e ".[web-test]")'),
]
# what Debian's Chromium needs on a machine with no network, or it stalls at start reaching for it
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SIZE = {"width": 1280, "height": 800}
KEEP_RECEIVED = """
window.__received = [];
window.__size = null;
const PageWebSocket = window.WebSocket;
window.WebSocket = class extends PageWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => {
      if (typeof event.data !== "string") window.__received.push(new Uint8Array(event.data));
    });
  }
  send(data) {
    if (typeof data === "string" && data.startsWith('["resize"')) window.__size = JSON.parse(data)[1];
    super.send(data);
  }
};
"""
TAKE_RECEIVED = """() => {
  let bytes = "";
  for (const chunk of window.__received.splice(0)) for (const byte of chunk) bytes += String.fromCharCode(byte);
  return btoa(bytes);
}"""
WEBSOCKET_OPENS = """(address) => new Promise((settled) => {
  const socket = new WebSocket(address);
  socket.onopen = () => settled("open");
  socket.onclose = () => settled("refused");
})"""


class Terminal:
    """What the tutor drew in the page: its websocket's bytes played into a pyte screen."""

    def __init__(self, page: Any) -> None:
        import pyte

        self.page = page
        page.wait_for_function("window.__size !== null")
        size = page.evaluate("window.__size")
        self.screen = pyte.Screen(size["width"], size["height"])
        self.stream = pyte.ByteStream(self.screen)

    def text(self) -> str:
        self.stream.feed(base64.b64decode(self.page.evaluate(TAKE_RECEIVED)))
        return "\n".join(self.screen.display)

    def wait_for(self, shows: Callable[[str], bool], what: str, seconds: float = 60.0) -> str:
        """The screen once `shows(text)`; fails with the screen as it was after `seconds`."""
        deadline = time.monotonic() + seconds
        while not shows(text := self.text()):
            if time.monotonic() > deadline:
                pytest.fail(f"the page never showed {what}; it showed:\n{text}")
            time.sleep(0.1)
        return text


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the IHDR chunk, right after the signature
    return width, height


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A fresh headless Chromium (its own profile folder), 1280×800, every page's websocket bytes kept."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path / "profile", executable_path=CHROMIUM, args=FLAGS, headless=True, viewport=SIZE
        )
        context.add_init_script(KEEP_RECEIVED)
        try:
            yield context
        finally:
            context.close()


def test_without_the_token_the_browser_gets_403_and_no_tutor_starts(tmp_path: Path, browser) -> None:
    with serving(tmp_path) as (server, line):
        found = URL_LINE.search(line)
        assert found, line
        page = browser.new_page()
        response = page.goto(f"http://127.0.0.1:{found['port']}/")
        assert response is not None and response.status == 403
        assert page.inner_text("body") == "403: Forbidden"
        assert page.evaluate(WEBSOCKET_OPENS, f"ws://127.0.0.1:{found['port']}{found['path']}ws") == "refused"
        assert tutors_under(server.pid) == []


def test_the_tutor_in_a_browser_tab_draws_types_takes_f_keys_and_saves_when_the_tab_closes(
    tmp_path: Path, browser
) -> None:
    with serving(tmp_path) as (server, line):
        found = URL_LINE.search(line)
        assert found, line
        origin = f"http://127.0.0.1:{found['port']}"
        page = browser.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(line[line.index("http") :])
        assert page.url == f"{origin}{found['path']}"  # the token traded for the cookie, out of the address bar
        terminal = Terminal(page)
        first = terminal.wait_for(
            lambda text: "Token + position embedding" in text and "token embedding W_E[token]" in text,
            "the first step's panel",
        )
        assert "How to use the tutor" in first and "Vectors" in first and "猫追狗" in first  # lesson, tabs, prompt
        [fork_server] = fork_servers_under(server.pid)
        assert tutors_under(server.pid) == children(fork_server)  # one tutor, forked (tutor/fork_server.py)
        assert len(tutors_under(server.pid)) == 1
        before = tmp_path / "before.png"
        page.screenshot(path=before)

        # the prompt has the keyboard without a click, as in the terminal: just type. A key at a time, as a
        # learner types: Input deletes when backspace has bubbled up to the app, and a character typed a
        # millisecond later would be inserted first
        page.keyboard.press("End")
        page.keyboard.press("Backspace")
        terminal.wait_for(lambda text: re.search(r"猫追\s", text) is not None, "the prompt 猫追")
        page.keyboard.type("猫")
        typed = terminal.wait_for(lambda text: "猫追猫" in text and "2 猫" in text, "the prompt 猫追猫 in the panels")
        assert "2 狗" not in typed  # the tokens line and the vectors' rows follow the prompt
        shot = tmp_path / "tutor-serve-1280x800.png"
        page.screenshot(path=shot)
        assert png_size(shot) == (1280, 800)
        assert shot.read_bytes() != before.read_bytes()  # the browser drew the change

        page.keyboard.press("F2")
        terminal.wait_for(lambda text: "Lessons" in text and "2. Tokens and embeddings" in text, "F2's lesson list")
        page.keyboard.press("Escape")
        page.keyboard.press("F6")
        terminal.wait_for(lambda text: "LayerNorm 1: normalising" in text, "F6's next panel, LayerNorm")
        page.keyboard.press("F5")
        terminal.wait_for(lambda text: "中文" in text.splitlines()[0], "F5's Chinese")

        assert requested and all(address.startswith(f"{origin}/") for address in requested), requested

        page.close()  # the tab closes: its tutor quits and saves
        deadline = time.monotonic() + 60
        while tutors_under(server.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tutors_under(server.pid) == []
        saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
        assert (saved["last"]["prompt"], saved["last"]["lang"]) == ("猫追猫", "zh")

        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0 and (out, err) == ("", "")
    if folder := os.environ.get("TUTOR_SCREENSHOTS"):  # to look at it: TUTOR_SCREENSHOTS=folder pytest ...
        shutil.copy(shot, Path(folder) / shot.name)


def test_a_session_s_tutor_saves_on_sigterm(tmp_path: Path, browser) -> None:
    """A tutor ended from outside (a `kill`, the machine shutting down) saves as in the terminal."""
    with serving(tmp_path) as (server, line):
        page = browser.new_page()
        page.goto(line[line.index("http") :])
        terminal = Terminal(page)
        terminal.wait_for(lambda text: "猫追狗" in text, "the prompt")
        page.keyboard.press("End")
        page.keyboard.press("Backspace")
        terminal.wait_for(lambda text: re.search(r"猫追\s", text) is not None, "the shorter prompt")
        [tutor] = tutors_under(server.pid)
        os.kill(tutor, signal.SIGTERM)
        page.wait_for_function("document.body.classList.contains('-closed')")  # "Session ended."
        saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
        assert saved["last"]["prompt"] == "猫追"


class Neighbour:
    """Another user's page on another port of 127.0.0.1: it records the cookies the browser sends it."""

    def __init__(self) -> None:
        import http.server
        import threading

        cookies: list[str] = []
        self.cookies = cookies

        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                cookies.append(self.headers.get("Cookie", ""))
                body = b"<!doctype html><title>a neighbour's page</title><p>hello"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_neighbour_s_page_in_the_learner_s_browser_gets_no_cookie_and_no_websocket(tmp_path: Path, browser) -> None:
    """Issue 28, findings 2 and 3, in a real browser: the learner has opened their tutor (the browser holds its
    cookie); a page another user serves on another port of 127.0.0.1, opened in the same browser, is sent no
    cookie of the tutor's, cannot read it, and cannot open the tutor's websocket — though the browser would
    send the cookie with it (cookies ignore ports, and another port of the same host is the same site)."""
    with serving(tmp_path) as (server, line):
        found = URL_LINE.search(line)
        assert found, line
        learner = browser.new_page()
        learner.goto(line[line.index("http") :])
        Terminal(learner).wait_for(lambda text: "猫追狗" in text, "the learner's tutor")
        assert [cookie["name"] for cookie in browser.cookies()] == ["tutor-session"]
        neighbour = Neighbour()
        try:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{neighbour.port}/")
            # the page and perhaps its favicon: no cookie with either (its Path is the tutor's random prefix)
            assert neighbour.cookies and set(neighbour.cookies) == {""}, neighbour.cookies
            assert page.evaluate("document.cookie") == ""  # HttpOnly, and not this path's
            address = f"ws://127.0.0.1:{found['port']}{found['path']}ws"
            assert page.evaluate(WEBSOCKET_OPENS, address) == "refused"  # Origin is the neighbour's
            assert len(tutors_under(server.pid)) == 1  # the learner's only: the refused socket started none
        finally:
            neighbour.close()
