"""The tutor tile for JupyterLab (tutor/jupyter.py) without a hub: the entry point jupyter-server-proxy reads,
the command it runs, `tutor serve --socket` answering on a unix socket with a page whose every address holds under
the proxy's prefix, and its bad input. The real hub is tests/test_jupyterhub.py."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ElementTree
from importlib.metadata import entry_points
from pathlib import Path
from urllib.parse import urljoin

import pytest
from served import needs_web

from tutor.cli import main
from tutor.jupyter import ICON, NAME, server

ROOT = Path(__file__).resolve().parent.parent
# how jupyter-server-proxy fills in its command and its arguments (handlers.py, NamedLocalProxyHandler)
PROXY_ARGUMENTS = {"port": 0, "unix_socket": "/tmp/jupyter-server-proxy-x/socket", "base_url": "/user/zoë o'b/"}
# the prefix a browser sees for the hub user "zoë o'brien" (the hub escapes the name, as in tests/test_jupyterhub.py)
PREFIX = "http://hub.example.edu/user/zo%C3%AB%20o'brien/tutor/"


def test_the_entry_point_is_declared_under_the_jupyter_extra_and_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["jupyter_serverproxy_servers"] == {NAME: "tutor.jupyter:server"}
    extra = " ".join(project["optional-dependencies"]["jupyter"])
    assert "jupyter-server-proxy" in extra and "textual-serve" in extra
    [installed] = [point for point in entry_points(group="jupyter_serverproxy_servers") if point.name == NAME]
    assert installed.load() is server


def test_the_proxy_runs_this_python_s_tutor_serve_on_its_private_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/opt/{course}/bin/python")  # braces: the proxy formats the command
    options = server()
    command = [word.format(**PROXY_ARGUMENTS) for word in options["command"]]  # type: ignore[attr-defined]
    assert command == [
        "/opt/{course}/bin/python",
        "-P",
        "-m",
        "tutor",
        "serve",
        "--socket",
        PROXY_ARGUMENTS["unix_socket"],
    ]
    assert options["unix_socket"] is True  # the proxy makes the socket's folder, mode 700
    assert options["absolute_url"] is False  # the proxy strips /user/NAME/tutor/: the server answers at /
    assert options["launcher_entry"] == {"title": NAME, "icon_path": str(ICON)}


def test_the_tile_s_icon_is_an_svg_in_the_package() -> None:
    assert ICON.is_relative_to(Path(sys.modules["tutor"].__file__).parent)  # type: ignore[arg-type]
    assert ElementTree.parse(ICON).getroot().tag == "{http://www.w3.org/2000/svg}svg"


@pytest.fixture
def private(tmp_path: Path) -> Path:
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    return folder


@needs_web
async def test_behind_the_proxy_the_page_s_every_address_holds_under_any_prefix_and_needs_no_token(
    private: Path,
) -> None:
    import aiohttp

    from tutor.patches.web_server import ProxiedServer

    started = private.parent / "started"
    path = str(private / "socket")
    proxied = ProxiedServer(shlex.join([sys.executable, "-c", f"open({str(started)!r}, 'w')"]), path)
    runner = await proxied.start()
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        headers = {"Host": "hub.example.edu", "Cookie": "jupyterhub-user-zoe=x"}  # as the proxy passes them on
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=path), headers=headers) as session:
            async with session.get("http://localhost/") as response:
                assert response.status == 200 and "Set-Cookie" not in response.headers
                assert response.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
                page = await response.text()
            addresses = re.findall(r'(?:href|src)="([^"]*)"|url\("?([^")]*)"?\)', page)
            addresses = [href or url for href, url in addresses]
            assert len(addresses) >= 4 and not [a for a in addresses if a.startswith(("/", "http:", "https:"))]
            assert all(urljoin(PREFIX, address).startswith(f"{PREFIX}static/") for address in addresses), addresses
            assert 'data-session-websocket-url="ws"' in page  # the page's script makes it ws(s)://…/tutor/ws
            for address in addresses:
                async with session.get(f"http://localhost/{address}") as response:
                    assert response.status == 200, address
            async with session.ws_connect("http://localhost/ws?width=80&height=24") as websocket:
                for _ in range(100):  # the tab's "tutor" starts: no token, no Origin needed on the socket
                    if started.exists():
                        break
                    await asyncio.sleep(0.05)
                await websocket.close()
        assert started.exists()
    finally:
        await runner.cleanup()


def test_socket_folder_open_to_others_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def served(*_: object) -> int:
        raise AssertionError("it served on a folder others can open")

    async def served_async(*_: object) -> int:
        served()
        return 0

    monkeypatch.setattr("tutor.commands.serve.serve", served_async)  # a check that let it through: fail, not hang
    monkeypatch.setattr("tutor.jupyter.serve_notice", served)
    monkeypatch.setenv("TUTOR_DEBUG", "1")
    tmp_path.chmod(0o755)
    assert main(["--lang", "en", "serve", "--socket", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be yours alone" in err and "has mode 755" in err
    assert main(["--lang", "en", "serve", "--socket", "/no/such/folder/s"]) == 2
    assert "No such file or directory" in capsys.readouterr().err


def test_socket_with_a_port_or_on_a_file_is_one_line(private: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "en", "serve", "--socket", str(private / "s"), "--port", "9000"]) == 2
    assert (
        capsys.readouterr().err
        == "tutor: error: --socket takes the place of --host and --port: give one or the other\n"
    )
    pytest.importorskip("textual_serve", reason='needs the web extra (pip install -e ".[web]")')
    (private / "taken").write_text("a file of the learner's")
    assert main(["--lang", "en", "serve", "--socket", str(private / "taken")]) == 1
    err = capsys.readouterr().err
    assert err == f"tutor: error: cannot listen on {private / 'taken'}: a file that is not a socket is already there\n"
    assert (private / "taken").read_text() == "a file of the learner's"
    assert main(["--lang", "en", "serve", "--socket", str(private / ("x" * 120))]) == 1
    assert capsys.readouterr().err.endswith(": AF_UNIX path too long\n")


def test_without_textual_serve_the_tab_shows_the_one_line(private: Path) -> None:
    """Behind Jupyter the learner sees the tab, not stderr: the socket answers every request with the line."""
    path = private / "s"
    hide = "import sys; sys.modules['textual_serve'] = None; from tutor.cli import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-P", "-c", hide, "--lang", "en", "serve", "--socket", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not path.is_socket():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(path))
            client.sendall(b"GET /anything HTTP/1.0\r\nHost: hub\r\n\r\n")
            answer = b"".join(iter(lambda: client.recv(65536), b"")).decode()
        assert answer.startswith("HTTP/1.0 503")
        assert "the tutor tile needs textual-serve" in answer and "[jupyter]" in answer
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tutor: error: the tutor tile needs textual-serve")
    assert not path.exists()
