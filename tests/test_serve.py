"""`tutor serve`: the token guard in front of every route (aiohttp's test client), and the command as a learner
runs it (a real server on a free port): the URL line, the network warning, a port in use, Ctrl+C, no web extra.
The browser itself is in tests/test_serve_browser.py."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.cookiejar
import json
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
    # the checkout's extra first: on PyPI "tutor" is Open edX's Tutor, which `pip install "tutor[web]"` would bring
    assert 'pip install ".[web]"' in err and 'pip install "tutor[web]"' not in err


def test_each_tab_runs_this_python_s_tutor_isolated_in_its_folder_with_the_language_and_model_and_no_token() -> None:
    command = shlex.split(session_command(argparse.Namespace(lang="zh", model="my models/a.safetensors"), "/tmp/a b"))
    model = str(Path("my models/a.safetensors").absolute())  # the tab's folder is not this one
    assert command == [
        "cd",
        "/tmp/a b",
        "&&",
        "exec",
        sys.executable,
        "-P",
        "-m",
        "tutor",
        "--lang",
        "zh",
        "--model",
        model,
    ]
    assert session_command(argparse.Namespace(lang="en", model="tiny"), "/x").endswith("--lang en --model tiny")
    assert "--model" not in session_command(argparse.Namespace(lang="en", model=None), "/x")


def test_each_tab_runs_on_the_teachers_lessons_folder_made_absolute() -> None:
    args = argparse.Namespace(lang="en", model=None, lessons="my course")
    assert session_command(args, "/x").endswith(f"--lang en --lessons {shlex.quote(str(Path('my course').absolute()))}")
    assert "--lessons" not in session_command(argparse.Namespace(lang="en", model=None, lessons=None), "/x")


@pytest.mark.parametrize(
    ("host", "loopback"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
                           ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("lab-machine", False)],
)  # fmt: skip
def test_only_loopback_hosts_count_as_this_machine_only(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_url_names_a_wildcard_host_by_the_machine_s_name() -> None:
    assert url("127.0.0.1", 8000, "/p/", "abc") == "http://127.0.0.1:8000/p/?token=abc"
    assert url("::1", 8000, "/p/", "abc") == "http://[::1]:8000/p/?token=abc"
    assert url("0.0.0.0", 8000, "/p/", "abc") == f"http://{socket.gethostname()}:8000/p/?token=abc"


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
        test_client.prefix = server.prefix  # type: ignore[attr-defined]
        test_client.origin = f"http://{test_client.host}:{test_client.port}"  # type: ignore[attr-defined]
        yield test_client


@needs_web
@pytest.mark.parametrize("path", ["", "/static/js/textual.js", "/static/", "/ws", "/download/x", "/nowhere"])
@pytest.mark.parametrize("token", [None, "wrong", TOKEN[:-1], TOKEN + "x", TOKEN.lower(), "猫" * 32])
@pytest.mark.parametrize("inside", [True, False])
async def test_a_request_without_the_token_gets_403_and_nothing_else(
    client, path: str, token: str | None, inside: bool
) -> None:
    address = (client.prefix if inside else "") + (path or "/")
    response = await client.get(address, params={"token": token} if token else None, allow_redirects=False)
    assert response.status == 403
    assert await response.text() == "403: Forbidden"
    assert "Set-Cookie" not in response.headers


@needs_web
async def test_a_wrong_cookie_gets_403(client) -> None:
    from tutor.patches.web_server import COOKIE

    client.session.cookie_jar.update_cookies({COOKIE: TOKEN, "token": TOKEN})  # the token itself is not the secret
    response = await client.get(client.prefix + "/")
    assert (response.status, await response.text()) == (403, "403: Forbidden")


@needs_web
async def test_the_token_leaves_an_http_only_strict_cookie_and_leaves_the_address_bar(client) -> None:
    index = client.prefix + "/"
    response = await client.get(index, params={"token": TOKEN, "fontsize": "20"}, allow_redirects=False)
    assert response.status == 302
    assert response.headers["Location"] == f"{index}?fontsize=20"  # the token is gone from the address (and history)
    [cookie] = response.cookies.values()
    assert cookie["httponly"] is True and cookie["samesite"] == "Strict" and cookie["path"] == index
    page = await client.get(f"{index}?fontsize=20")  # the cookie, from here on
    assert page.status == 200
    html = await page.text()
    assert f'data-session-websocket-url="ws://{client.host}:{client.port}{client.prefix}/ws"' in html
    assert 'data-font-size="20"' in html
    assert (await client.get(f"{client.prefix}/static/js/textual.js")).status == 200
    assert (await client.get("/static/js/textual.js")).status == 403  # outside the prefix: no cookie, nothing


@needs_web
async def test_the_token_in_an_asset_s_query_serves_it_with_the_cookie(client) -> None:
    response = await client.get(f"{client.prefix}/static/css/xterm.css", params={"token": TOKEN})
    assert response.status == 200 and response.cookies


@needs_web
async def test_the_page_loads_nothing_from_another_host(client) -> None:
    await client.get(client.prefix + "/", params={"token": TOKEN})
    html = await (await client.get(client.prefix + "/")).text()
    loads = re.findall(r'(?:href|src)="([^"]*)"|url\("([^"]*)"\)', html)
    assert loads, "the page loads its assets: the pattern must see them"
    addresses = [href or url for href, url in loads]
    assert all(address.startswith(f"{client.prefix}/static/") for address in addresses), addresses
    for address in addresses:
        assert (await client.get(address)).status == 200, address  # the fonts among them: served here
    assert any("fonts/RobotoMono" in address for address in addresses)


@needs_web
async def test_the_websocket_is_refused_without_the_token_and_no_tutor_starts(client) -> None:
    import aiohttp

    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(f"{client.prefix}/ws", origin=client.origin)
    assert refused.value.status == 403
    assert not client.started.exists()
    await client.get(client.prefix + "/", params={"token": TOKEN})
    websocket = await client.ws_connect(f"{client.prefix}/ws?width=80&height=24", origin=client.origin)  # a session
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
        base = f"http://127.0.0.1:{found['port']}{found['path']}"
        browser = opener()
        assert status(browser, base) == 403
        token = found["token"]
        wrong = ("y" if token[0] == "x" else "x") + token[1:]  # one character off (a token may start with x itself)
        assert status(browser, f"{base}?token={wrong}") == 403
        assert status(browser, f"{base}?token={found['token']}") == 200  # redirected to the page, with the cookie
        assert status(browser, f"{base}static/js/textual.js") == 200
        assert status(opener(), f"{base}static/js/textual.js") == 403  # another browser: no cookie
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
        base = f"http://127.0.0.1:{runner.addresses[0][1]}{server.prefix}"
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
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
            origin = f"http://127.0.0.1:{found['port']}"
            async with browser.get(f"{origin}{found['path']}?token={found['token']}") as page:
                assert page.status == 200
            async with browser.ws_connect(f"{origin}{found['path']}ws?width=120&height=40", origin=origin) as websocket:
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


# -- a shared machine: other users' files, pages and names; floods ---------------------------------------------

RECORDER = """
import os, sys
size, log = sys.argv[1], sys.argv[2]
open(size, "w").write(os.environ["COLUMNS"] + "x" + os.environ["ROWS"])
with open(log, "wb") as out:
    while chunk := sys.stdin.buffer.read1(65536):
        out.write(chunk)
        out.flush()
        if b'"quit"' in chunk:
            break
"""


def recorded(log: Path) -> bytes:
    """All a tab's process was sent so far (nothing before it has started)."""
    return log.read_bytes() if log.exists() else b""


def packets(log: Path) -> list[tuple[bytes, bytes]]:
    """What a tab's process was sent: textual-serve's packets, type (D data, M meta) and payload."""
    data, found = recorded(log), []
    while len(data) >= 5:
        size = int.from_bytes(data[1:5], "big")
        found.append((data[:1], data[5 : 5 + size]))
        data = data[5 + size :]
    return found


async def until(condition: object, seconds: float = 30.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():  # type: ignore[operator]
            return True
        await asyncio.sleep(0.05)
    return bool(condition())  # type: ignore[operator]


@pytest.fixture
async def recorder(tmp_path: Path) -> AsyncIterator[object]:
    """A TutorServer of at most 2 sessions whose 'tutor' writes down its terminal size and all it is sent;
    the client holds the cookie."""
    pytest.importorskip("textual_serve", reason='needs the web extra (pip install -e ".[web]")')
    from aiohttp.test_utils import TestClient, TestServer

    from tutor.patches.web_server import TutorServer

    size, log = tmp_path / "size", tmp_path / "log"
    command = shlex.join([sys.executable, "-c", RECORDER, str(size), str(log)])
    server = TutorServer(command, "127.0.0.1", 0, TOKEN, max_sessions=2)
    async with TestClient(TestServer(await server._make_app())) as test_client:
        test_client.size, test_client.log = size, log  # type: ignore[attr-defined]
        test_client.prefix = server.prefix  # type: ignore[attr-defined]
        test_client.origin = f"http://{test_client.host}:{test_client.port}"  # type: ignore[attr-defined]
        assert (await test_client.get(server.prefix + "/", params={"token": TOKEN})).status == 200
        yield test_client


@needs_web
async def test_sessions_past_the_cap_start_no_tutor_and_the_page_says_why(recorder) -> None:
    import aiohttp

    first = await recorder.ws_connect(f"{recorder.prefix}/ws", origin=recorder.origin)
    second = await recorder.ws_connect(f"{recorder.prefix}/ws", origin=recorder.origin)
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await recorder.ws_connect(f"{recorder.prefix}/ws", origin=recorder.origin)
    assert refused.value.status == 503
    page = await recorder.get(recorder.prefix + "/")
    assert page.status == 503
    text = await page.text()
    assert "all 2 tabs" in text and "--max-sessions N" in text and text.count("\n") == 2  # en, zh
    await first.close()
    assert await until(lambda: True, 0.5)
    third = await recorder.ws_connect(f"{recorder.prefix}/ws", origin=recorder.origin)  # a tab closed: room again
    await third.close()
    await second.close()


@needs_web
async def test_terminal_sizes_are_clamped_and_messages_that_are_not_textual_serve_s_are_dropped(recorder) -> None:
    websocket = await recorder.ws_connect(f"{recorder.prefix}/ws?width=100000000&height=-5", origin=recorder.origin)
    assert await until(recorder.size.exists)
    assert recorder.size.read_text() == "500x1"  # 10^8 columns took a tutor to 4 GB
    for junk in ("not json", "[]", "{}", '["resize", "x"]', '["stdin", 5]', '["resize", {"width": null}]', "[1]"):
        await websocket.send_str(junk)
    await websocket.send_json(["resize", {"width": 100000, "height": 100000}])  # 3.4 GB before
    await websocket.send_json(["resize", {"width": 120.7, "height": "40"}])
    await websocket.send_json(["focus"])
    assert await until(lambda: b"focus" in recorded(recorder.log))
    metas = [json.loads(payload) for kind, payload in packets(recorder.log) if kind == b"M"]
    assert metas == [
        {"type": "resize", "width": 80, "height": 24},  # the null width: the default
        {"type": "resize", "width": 500, "height": 200},
        {"type": "resize", "width": 120, "height": 40},
        {"type": "focus"},
    ]
    await websocket.close()


@needs_web
async def test_a_paste_and_typed_input_are_cut_and_an_oversized_message_closes_the_tab(recorder) -> None:
    import aiohttp

    from tutor.patches.web_server import MESSAGE_BYTES, PASTE_CHARS, TYPED_CHARS

    websocket = await recorder.ws_connect(f"{recorder.prefix}/ws", origin=recorder.origin)
    paste = json.dumps(["stdin", "\x1b[200~" + "猫" * 300_000 + "\x1b[201~"], ensure_ascii=False)
    await websocket.send_str(paste)  # 900 KB, under MESSAGE_BYTES
    await websocket.send_json(["stdin", "k" * 100_000])  # keys: each one a key event for the tutor
    await websocket.send_json(["stdin", "ok\ud800"])  # a lone surrogate: not a traceback
    assert await until(lambda: b"ok" in recorded(recorder.log))
    data = [payload.decode() for kind, payload in packets(recorder.log) if kind == b"D"]
    assert data == ["\x1b[200~" + "猫" * PASTE_CHARS + "\x1b[201~", "k" * TYPED_CHARS, "ok?"]
    await websocket.send_str("x" * (MESSAGE_BYTES + 1))
    closing = await websocket.receive(timeout=30)
    assert closing.type in {aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING}
    assert websocket.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    assert await until(lambda: b'"quit"' in recorded(recorder.log))  # its tutor was told to quit


@needs_web
async def test_the_cookie_holds_a_session_secret_that_opens_this_server_only(tmp_path: Path) -> None:
    """Browsers send a cookie to every port of its host: what another local server may be handed must not
    be the token, nor open another tutor serve (here: one with the very same token)."""
    from aiohttp.test_utils import TestClient, TestServer

    from tutor.patches.web_server import COOKIE, TutorServer

    first, second = (TutorServer("true", "127.0.0.1", 0, TOKEN) for _ in range(2))
    assert first.prefix != second.prefix and re.fullmatch(r"/[0-9a-f]{16}", first.prefix)
    async with TestClient(TestServer(await first._make_app())) as client:
        response = await client.get(first.prefix + "/", params={"token": TOKEN}, allow_redirects=False)
        secret = response.cookies[COOKIE].value
    assert re.fullmatch(r"[0-9a-f]{64}", secret) and TOKEN not in secret
    async with TestClient(TestServer(await second._make_app())) as client:
        client.session.cookie_jar.update_cookies({COOKIE: secret})
        response = await client.get(second.prefix + "/")
        assert response.status == 403


@needs_web
async def test_a_page_from_another_origin_cannot_open_the_websocket_even_with_the_cookie(client) -> None:
    import aiohttp

    await client.get(client.prefix + "/", params={"token": TOKEN})
    for origin in (f"http://127.0.0.1:{client.port + 1}", "http://attacker.test", "null", None):
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(f"{client.prefix}/ws", origin=origin)  # None: no Origin header at all
        assert refused.value.status == 403, origin
        response = await client.get(client.prefix + "/", headers={"Origin": origin} if origin else None)
        assert response.status == (200 if origin is None else 403), origin  # a link followed sends none
    assert not client.started.exists()


@needs_web
async def test_a_host_name_that_is_not_this_machine_s_is_refused(client) -> None:
    """DNS rebinding: attacker.test resolved to 127.0.0.1, and its page would read ours."""
    await client.get(client.prefix + "/", params={"token": TOKEN})
    for host in ("attacker.test", f"attacker.test:{client.port}", "127.0.0.1.attacker.test", "evil@127.0.0.1", ""):
        response = await client.get(client.prefix + "/", headers={"Host": host})
        assert (response.status, await response.text()) == (403, "403: Forbidden"), host
    for host in (f"localhost:{client.port}", f"127.0.0.2:{client.port}", f"[::1]:{client.port}", "localhost:9000"):
        response = await client.get(client.prefix + "/", headers={"Host": host})  # loopback, any port (ssh -L)
        assert response.status == 200, host
        assert f'data-session-websocket-url="ws://{host}{client.prefix}/ws"' in await response.text()


@pytest.mark.parametrize(
    ("host", "allowed"),
    [("127.0.0.1:8000", True), ("localhost", True), ("LOCALHOST:1", True), ("[::1]:8000", True),
     ("lab-machine:8000", True), ("lab-machine:8001", False), ("lab-machine", False), ("10.0.0.5:8000", False),
     ("attacker.test", False), ("127.0.0.1:8000/x", False), ("a@127.0.0.1", False), ("[::1", False), ("", False)],
)  # fmt: skip
def test_hosts_allowed_are_loopback_names_and_the_printed_one(host: str, allowed: bool) -> None:
    pytest.importorskip("textual_serve", reason='needs the web extra (pip install -e ".[web]")')
    from tutor.patches.web_server import host_allowed

    assert host_allowed(host, {"lab-machine:8000"}) is allowed


@needs_web
def test_a_tutor_package_planted_where_the_server_started_does_not_run(tmp_path: Path) -> None:
    """Another user may write into the folder the learner starts `tutor serve` in (a shared project folder,
    /tmp): a `tutor/` there was what `python -m tutor` imported, and it ran as the learner."""
    planted, ran = tmp_path / "tutor", tmp_path / "planted-ran"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text(f"open({str(ran)!r}, 'w')\n")
    with serving(tmp_path) as (process, line):
        found = URL_LINE.search(line)
        assert found, line
        drawn, tutors = asyncio.run(draw_a_tab(found, process.pid, until_file=ran))
        assert not ran.exists(), "the planted tutor/__main__.py ran"
        assert drawn >= 10_000  # the real tutor drew its first screen
        [(_, folder)] = tutors
        assert Path(folder) != tmp_path and (os.stat(folder).st_mode & 0o777) == 0o700
    assert not Path(folder).exists()  # the tabs' folder goes with the server


async def draw_a_tab(found: re.Match[str], server: int, until_file: Path) -> tuple[int, list[tuple[int, str]]]:
    """Open a tab on the server the URL line names; the bytes it drew (until its first screen, or `until_file`
    appears), and its tutors with their working folders."""
    import aiohttp

    origin = f"http://127.0.0.1:{found['port']}"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
        async with browser.get(f"{origin}{found['path']}?token={found['token']}") as page:
            assert page.status == 200
        async with browser.ws_connect(f"{origin}{found['path']}ws?width=120&height=40", origin=origin) as websocket:
            drawn = 0
            while drawn < 10_000 and not until_file.exists():
                with contextlib.suppress(asyncio.TimeoutError):
                    message = await websocket.receive(timeout=0.5)
                    if message.type in {aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED}:
                        break
                    drawn += len(message.data) if message.type == aiohttp.WSMsgType.BINARY else 0
            tutors = [(tutor, os.readlink(f"/proc/{tutor}/cwd")) for tutor in tutors_under(server) if not ended(tutor)]
    return drawn, tutors


@needs_web
async def test_a_connection_that_never_finishes_its_request_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 half-sent request headers were held open (aiohttp's keep-alive timeout, 3630 s, is the only one)."""
    from tutor.patches import web_server

    monkeypatch.setattr(web_server, "HEADER_SECONDS", 1.0, raising=False)
    server = web_server.TutorServer(shlex.join([sys.executable, "-c", "pass"]), "127.0.0.1", 0, TOKEN)
    runner = await server.start()
    try:
        port = runner.addresses[0][1]
        connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(50)]
        for _, writer in connections:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            await writer.drain()
        ends = await asyncio.wait_for(asyncio.gather(*(reader.read() for reader, _ in connections)), timeout=10)
        assert ends == [b""] * 50  # each closed by the server, with nothing said
    finally:
        for _, writer in connections:
            writer.close()
        await runner.cleanup()


@needs_web
async def test_a_busy_tab_s_tutor_ends_promptly_on_sigterm_and_when_its_tab_closes(tmp_path: Path) -> None:
    """Thousands of keys queued in the prompt (each reruns the model) kept a tutor busy for minutes: it ignored
    SIGTERM (its exit waited in the queue behind them) and worked on after its tab had closed."""
    import aiohttp

    with serving(tmp_path) as (process, line):
        found = URL_LINE.search(line)
        assert found, line
        origin = f"http://127.0.0.1:{found['port']}"
        tutors: list[int] = []
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
                async with browser.get(f"{origin}{found['path']}?token={found['token']}") as page:
                    assert page.status == 200
                for ends_by in ("sigterm", "its tab closed"):
                    async with browser.ws_connect(
                        f"{origin}{found['path']}ws?width=120&height=40", origin=origin
                    ) as websocket:
                        drawn = 0
                        while drawn < 10_000:  # the tutor has drawn its first screen, the prompt has the keys
                            message = await websocket.receive(timeout=60)
                            drawn += len(message.data) if message.type == aiohttp.WSMsgType.BINARY else 0
                        [tutor] = [pid for pid in tutors_under(process.pid) if pid not in tutors]
                        tutors.append(tutor)
                        for _ in range(128):
                            await websocket.send_json(["stdin", "a" * 256])
                        await asyncio.sleep(1)  # busy now
                        if ends_by == "sigterm":
                            os.kill(tutor, signal.SIGTERM)
                    assert await until(lambda: ended(tutors[-1]), 10), f"a busy tutor was there 10 s after {ends_by}"
        finally:
            for tutor in tutors:
                if not ended(tutor):
                    os.kill(tutor, signal.SIGKILL)


@needs_web
async def test_a_closed_tab_s_tutor_gets_sigterm_even_when_its_output_ended_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """textual-serve's stop returns as soon as the tab's output task ends — at once when the tab's socket is gone —
    while the tutor may be busy for minutes more. The SIGTERM timer was cancelled with it: a closed busy tab's
    tutor worked on (1 run in 4 to 6 of the test above). The timer outlives stop; a tutor already gone gets none."""
    from tutor.patches import web_server

    monkeypatch.setattr(web_server, "QUIT_SECONDS", 0.05)

    class Process:
        def __init__(self, returncode: int | None) -> None:
            self.returncode = returncode
            self.signals = 0

        def terminate(self) -> None:
            self.signals += 1

    async def nothing(*_: object) -> None:
        return None

    busy, gone = Process(None), Process(0)
    for process in (busy, gone):
        tab = web_server.TabService(
            "true", write_bytes=nothing, write_str=nothing, close=nothing, download_manager=None
        )
        tab._process = process  # type: ignore[assignment]  # no output task: stop returns at once, as after a close
        await tab.stop()
    await asyncio.sleep(0.3)
    assert (busy.signals, gone.signals) == (1, 0)
