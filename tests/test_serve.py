"""`tutor serve`: the token guard in front of every route (aiohttp's test client), and the command as a learner
runs it (a real server on a free port): the URL line, the network warning, a port in use, Ctrl+C, no web extra.
The browser itself is in tests/test_serve_browser.py."""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import os
import re
import shlex
import signal
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from served import URL_LINE, ended, needs_web, serving, tutors_under

from tutor.cli import main
from tutor.commands.serve import is_loopback, session_command, url

TOKEN = "k" * 31 + "Q"


def test_without_the_web_extra_one_line_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [name for name in sys.modules if name.split(".")[0] == "textual_serve"] + ["textual_serve"]:
        # import textual_serve → ImportError; its submodules too, which an earlier test may have loaded (an import
        # of textual_serve.server finds that first, and the server would start and serve for ever)
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "tutor.patches.web_server", raising=False)
    assert main(["--lang", "en", "serve"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert 'pip install "tutor[web]"' in err and 'pip install -e ".[web]"' in err


def test_each_tab_runs_this_python_s_tutor_with_the_learner_s_language_and_model_and_no_token() -> None:
    command = shlex.split(session_command(argparse.Namespace(lang="zh", model="my models/a.safetensors")))
    assert command == ["exec", sys.executable, "-m", "tutor", "--lang", "zh", "--model", "my models/a.safetensors"]
    assert "--model" not in session_command(argparse.Namespace(lang="en", model=None))


@pytest.mark.parametrize(
    ("host", "loopback"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
                           ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("lab-machine", False)],
)  # fmt: skip
def test_only_loopback_hosts_count_as_this_machine_only(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_url_names_a_wildcard_host_by_the_machine_s_name() -> None:
    assert url("127.0.0.1", 8000, "abc") == "http://127.0.0.1:8000/?token=abc"
    assert url("::1", 8000, "abc") == "http://[::1]:8000/?token=abc"
    assert url("0.0.0.0", 8000, "abc") == f"http://{socket.gethostname()}:8000/?token=abc"


# -- the guard, through aiohttp's test client ----------------------------------------------------------------------


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[object]:
    """A TutorServer whose 'tutor' only leaves a file saying it started."""
    pytest.importorskip("textual_serve", reason='needs the web extra (pip install -e ".[web]")')
    from aiohttp.test_utils import TestClient, TestServer

    from tutor.patches.web_server import TutorServer

    started = tmp_path / "started"
    command = shlex.join([sys.executable, "-c", f"open({str(started)!r}, 'w')"])
    server = TutorServer(command, "127.0.0.1", 0, TOKEN)
    async with TestClient(TestServer(await server._make_app())) as test_client:
        test_client.started = started  # type: ignore[attr-defined]
        yield test_client


@needs_web
@pytest.mark.parametrize("path", ["/", "/static/js/textual.js", "/static/", "/ws", "/download/x", "/nowhere"])
@pytest.mark.parametrize("token", [None, "wrong", TOKEN[:-1], TOKEN + "x", TOKEN.lower(), "猫" * 32])
async def test_a_request_without_the_token_gets_403_and_nothing_else(client, path: str, token: str | None) -> None:
    response = await client.get(path, params={"token": token} if token else None, allow_redirects=False)
    assert response.status == 403
    assert await response.text() == "403: Forbidden"
    assert "Set-Cookie" not in response.headers


@needs_web
async def test_a_wrong_cookie_gets_403(client) -> None:
    from tutor.patches.web_server import cookie_name

    client.session.cookie_jar.update_cookies({cookie_name(TOKEN): TOKEN[:-1] + "R", "token": TOKEN})
    response = await client.get("/")
    assert (response.status, await response.text()) == (403, "403: Forbidden")


@needs_web
async def test_the_token_leaves_an_http_only_strict_cookie_and_leaves_the_address_bar(client) -> None:
    response = await client.get("/", params={"token": TOKEN, "fontsize": "20"}, allow_redirects=False)
    assert response.status == 302
    assert response.headers["Location"] == "/?fontsize=20"  # the token is gone from the address (and history)
    [cookie] = response.cookies.values()
    assert cookie.value == TOKEN and cookie.key.startswith("tutor-") and TOKEN not in cookie.key
    assert cookie["httponly"] is True and cookie["samesite"] == "Strict" and cookie["path"] == "/"
    page = await client.get("/?fontsize=20")  # the cookie, from here on
    assert page.status == 200
    html = await page.text()
    assert f'data-session-websocket-url="ws://{client.host}:{client.port}/ws"' in html
    assert 'data-font-size="20"' in html
    assert (await client.get("/static/js/textual.js")).status == 200


@needs_web
async def test_the_token_in_an_asset_s_query_serves_it_with_the_cookie(client) -> None:
    response = await client.get("/static/css/xterm.css", params={"token": TOKEN})
    assert response.status == 200 and response.cookies


@needs_web
async def test_the_page_loads_nothing_from_another_host(client) -> None:
    await client.get("/", params={"token": TOKEN})
    html = await (await client.get("/")).text()
    loads = re.findall(r'(?:href|src)="([^"]*)"|url\("([^"]*)"\)', html)
    assert loads, "the page loads its assets: the pattern must see them"
    addresses = [href or url for href, url in loads]
    assert all(address.startswith("/static/") for address in addresses), addresses
    for address in addresses:
        assert (await client.get(address)).status == 200, address  # the fonts among them: served here
    assert any("fonts/RobotoMono" in address for address in addresses)


@needs_web
async def test_the_websocket_is_refused_without_the_token_and_no_tutor_starts(client) -> None:
    import aiohttp

    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect("/ws")
    assert refused.value.status == 403
    assert not client.started.exists()
    await client.get("/", params={"token": TOKEN})
    websocket = await client.ws_connect("/ws?width=80&height=24")  # the cookie: a session starts
    for _ in range(600):  # up to 30 s for the process to start
        if client.started.exists():
            break
        await asyncio.sleep(0.05)
    assert client.started.exists()
    await websocket.close()


# -- the command, as a learner runs it ----------------------------------------------------------------------------


def opener() -> urllib.request.OpenerDirector:
    """A browser's two halves that matter here: it follows redirects and keeps cookies."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def status(open_url: urllib.request.OpenerDirector, address: str) -> int:
    try:
        with open_url.open(address, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@needs_web
def test_serve_prints_the_url_with_a_token_refuses_others_and_ends_on_ctrl_c(tmp_path: Path) -> None:
    with serving(tmp_path) as (process, line):
        found = URL_LINE.search(line)
        assert found, line
        assert line.count("\n") == 0 and found["host"] == "127.0.0.1"
        base = f"http://127.0.0.1:{found['port']}"
        browser = opener()
        assert status(browser, f"{base}/") == 403
        assert status(browser, f"{base}/?token=x{found['token'][1:]}") == 403
        assert status(browser, f"{base}/?token={found['token']}") == 200  # redirected to /, with the cookie
        assert status(browser, f"{base}/static/js/textual.js") == 200
        assert status(opener(), f"{base}/static/js/textual.js") == 403  # another browser: no cookie
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0
    assert (out, err) == ("", "")  # no access log, no traceback: the token is printed once, in the URL line


@needs_web
def test_a_host_other_than_loopback_says_the_page_is_reachable_from_the_network(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0") as (process, line):
        assert line == "--host 0.0.0.0: the page is reachable from the network; only the token keeps others out"
        assert process.stdout is not None
        found = URL_LINE.search(process.stdout.readline().rstrip("\n"))
        assert found and found["host"] == socket.gethostname()


@needs_web
def test_a_port_in_use_is_one_line_and_a_failing_exit(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with serving(tmp_path, "--port", str(port)) as (process, line):
            out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert (line, out) == ("", "")
    assert err == f"tutor: error: port {port} is already in use (another tutor serve?): try --port {port + 1}\n"


@needs_web
async def test_the_token_is_in_no_log_record(caplog: pytest.LogCaptureFixture) -> None:
    """aiohttp's access log would write every request line, query string and all, wherever logging goes."""
    import aiohttp

    from tutor.patches.web_server import TutorServer

    caplog.set_level("DEBUG")
    server = TutorServer(shlex.join([sys.executable, "-c", "pass"]), "127.0.0.1", 0, TOKEN)
    runner = await server.start()
    try:
        base = f"http://127.0.0.1:{runner.addresses[0][1]}"
        async with aiohttp.ClientSession() as session:
            for address in (f"{base}/?token={TOKEN}", f"{base}/static/js/textual.js", f"{base}/?token=wrong"):
                async with session.get(address) as response:
                    await response.read()
    finally:
        await runner.cleanup()
    assert not [record for record in caplog.records if TOKEN in record.getMessage()]


@needs_web
def test_an_address_it_cannot_listen_on_is_one_line_and_a_failing_exit(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "no-such-host.invalid") as (process, line):
        out, err = process.communicate(timeout=60)
    assert (process.returncode, line, out) == (1, "", "")
    assert err.startswith("tutor: error: cannot listen on no-such-host.invalid:0: ") and err.count("\n") == 1


@needs_web
async def test_a_killed_server_leaves_no_tutor_behind(tmp_path: Path) -> None:
    """SIGKILL gives the server no chance to tell its tutors to quit: the kernel hangs them up instead."""
    import aiohttp

    with serving(tmp_path) as (process, line):
        found = URL_LINE.search(line)
        assert found, line
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:  # cookies for an IP
            base = f"http://127.0.0.1:{found['port']}"
            async with browser.get(f"{base}/?token={found['token']}") as page:
                assert page.status == 200
            async with browser.ws_connect(f"{base}/ws?width=120&height=40") as websocket:
                drawn = 0
                while drawn < 10_000:  # the tutor has started and drawn its first screen
                    message = await websocket.receive(timeout=60)
                    drawn += len(message.data) if message.type == aiohttp.WSMsgType.BINARY else 0
                [tutor] = tutors_under(process.pid)
                process.kill()
                process.wait()
                try:
                    for _ in range(600):  # up to 30 s
                        if ended(tutor):
                            break
                        await asyncio.sleep(0.05)
                    assert ended(tutor)
                finally:
                    if not ended(tutor):
                        os.kill(tutor, signal.SIGKILL)
