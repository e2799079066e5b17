"""The tutor tile on a real JupyterHub: the hub (DummyAuthenticator, a password), its Node proxy
(configurable-http-proxy), two learners' single-user JupyterLab servers (SimpleLocalProcessSpawner, each home under
a temporary folder), each learner in headless Chromium: log in, see the tile in the launcher, open the tutor
through the hub, type a prompt, step, close the tab, and find their own progress file in their own home. A request
without the hub's login, or with another learner's, gets no tutor. It prints what one tutor costs (memory, CPU a
key) as it measured it: the numbers in docs/serve.md.

Skipped, with the reason, where jupyterhub, jupyterlab, jupyter-server-proxy, configurable-http-proxy (npm; or
TUTOR_TEST_CHP naming it), Chromium or Playwright is missing: CI installs none of the hub. It took 70-140 s on
2 shared cores.
Screenshots of the launcher and the tutor's tab go to $TUTOR_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHP = os.environ.get("TUTOR_TEST_CHP") or shutil.which("configurable-http-proxy")
BIN = Path(sys.executable).parent
MISSING = [
    name for name in ("jupyterhub", "jupyterlab", "jupyter_server_proxy", "textual_serve") if not find_spec(name)
]
pytestmark = [
    pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)} (pip install jupyterhub jupyterlab "
                       '".[jupyter]")'),
    pytest.mark.skipif(CHP is None, reason="needs configurable-http-proxy (npm install configurable-http-proxy; "
                       "or TUTOR_TEST_CHP=/path/to/it)"),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian: apt-get install chromium)"),
    pytest.mark.skipif(find_spec("playwright") is None, reason='needs Playwright (pip install -e ".[web-test]")'),
]  # fmt: skip
PASSWORD = "class of 2026"
# the second learner's name puts a space, an apostrophe and a non-ASCII letter in the proxy's prefix:
# /user/zo%C3%AB%20o'brien/tutor/
LEARNERS = {"alice": "the cat sat", "zoë o'brien": "a dog ran"}
HUB_SECONDS = 60.0
SPAWN_SECONDS = 180.0
IDLE_SECONDS = 5.0
TYPED = "abcdefghijklmnopqrst"  # the keys whose CPU is measured, one at a time as a learner types


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def hub_config(folder: Path, port: int) -> str:
    environment = {name: os.environ[name] for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if name in os.environ}
    return f"""
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{CHP!r}]
c.JupyterHub.db_url = "sqlite:///{folder}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/cookie_secret"
c.JupyterHub.pid_file = "{folder}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/homes/{{username}}"
c.Spawner.cmd = [{str(BIN / "jupyterhub-singleuser")!r}]
c.Spawner.args = {["--allow-root"] if os.getuid() == 0 else []!r}
c.Spawner.default_url = "/lab"
def python_path(spawner):  # carol's Jupyter has tutor without its web extra: a textual_serve that fails to import
    return "{folder / "no-textual-serve"}" if spawner.user.name == "carol" else "{folder / "nothing"}"
c.Spawner.environment = {{**{environment!r}, "PYTHONPATH": python_path}}
c.Spawner.start_timeout = {SPAWN_SECONDS}
c.Spawner.http_timeout = {SPAWN_SECONDS}
"""


def descendants(pid: int) -> list[int]:
    found = []
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split() if Path(f"/proc/{pid}").exists() else []:
        found += [int(child), *descendants(int(child))]
    return found


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    except OSError:
        return []


def hub_get(url: str, cookies: str = "", headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """A request that follows no redirect: status, headers, body."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", parts.path, headers={**({"Cookie": cookies} if cookies else {}), **(headers or {})})
        response = connection.getresponse()
        return (
            response.status,
            {key.lower(): value for key, value in response.getheaders()},
            response.read().decode("utf-8", "replace"),
        )
    finally:
        connection.close()


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A running JupyterHub on 127.0.0.1: its URL and its folder (homes/NAME/ are the learners' homes)."""
    folder = tmp_path_factory.mktemp("hub")
    port = free_port()
    (folder / "jupyterhub_config.py").write_text(hub_config(folder, port), encoding="utf-8")
    (folder / "nothing").mkdir()
    (folder / "no-textual-serve" / "textual_serve").mkdir(parents=True)
    (folder / "no-textual-serve" / "textual_serve" / "__init__.py").write_text(
        'raise ImportError("No module named \'textual_serve\'", name="textual_serve")\n', encoding="utf-8"
    )
    env = {name: value for name, value in os.environ.items() if not name.startswith("TUTOR_")}  # no state override
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    log = (folder / "hub.log").open("w")
    process = subprocess.Popen(
        [str(BIN / "jupyterhub"), "-f", str(folder / "jupyterhub_config.py")],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HUB_SECONDS
    while True:
        try:
            if hub_get(f"{url}/hub/login")[0] == 200:
                break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the hub did not start:\n{(folder / 'hub.log').read_text()[-3000:]}")
        time.sleep(0.3)
    try:
        yield url, folder
    finally:
        everything = descendants(process.pid)
        process.send_signal(signal.SIGTERM)  # the hub stops the learners' servers and its proxy
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pid in everything:  # whatever outlived it
            if command_line(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright
    from test_serve_browser import FLAGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def log_in(chromium: Any, url: str, name: str, spawn: bool = True) -> Any:
    """A fresh browser (its own profile) logged in to the hub as `name`: on their JupyterLab, or with `spawn`
    false on the hub's home page, their server not started."""
    from test_serve_browser import KEEP_RECEIVED, SIZE

    context = chromium.new_context(viewport=SIZE)
    context.add_init_script(KEEP_RECEIVED)
    page = context.new_page()
    page.goto(f"{url}/hub/login" if spawn else f"{url}/hub/login?next=%2Fhub%2Fhome")
    page.fill("#username_input", name)
    page.fill("#password_input", PASSWORD)
    page.click("#login_submit")
    page.wait_for_url(re.compile(r"/lab" if spawn else r"/hub/home"), timeout=SPAWN_SECONDS * 1000)
    return context, page


def tutor_processes(hub_pid_folder: Path, name: str) -> tuple[int, int]:
    """The learner's `tutor serve --socket` and its one tab's tutor, found by their command lines."""
    serve = [
        pid
        for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        if command_line(pid)[2:6] == ["-m", "tutor", "serve", "--socket"]
        and Path(f"/proc/{pid}/environ").read_bytes().find(f"HOME={hub_pid_folder}/homes/{name}\0".encode()) >= 0
    ]
    assert len(serve) == 1, serve
    tabs = descendants(serve[0])
    tutors = [pid for pid in tabs if command_line(pid)[2:4] == ["-m", "tutor"] and "serve" not in command_line(pid)]
    assert len(tutors) == 1, [command_line(pid) for pid in tabs]
    return serve[0], tutors[0]


def memory(pid: int) -> dict[str, int]:
    """RSS and PSS in kB (PSS shares the pages a learner's processes share with others fairly)."""
    found = dict(re.findall(r"^(Rss|Pss):\s+(\d+) kB", Path(f"/proc/{pid}/smaps_rollup").read_text(), re.M))
    return {key.lower(): int(value) for key, value in found.items()}


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_two_learners_each_open_the_tutor_through_the_hub_and_keep_their_own_progress(
    hub: tuple[str, Path], chromium: Any
) -> None:
    from test_serve_browser import Terminal

    url, folder = hub
    shots = Path(os.environ["TUTOR_SCREENSHOTS"]) if os.environ.get("TUTOR_SCREENSHOTS") else None
    started = time.monotonic()
    for name, prompt in LEARNERS.items():
        context, lab = log_in(chromium, url, name)
        server = "/user/" + urllib.request.quote(name, safe="@~")  # the hub's escaping of the name in a URL
        tile = lab.locator(".jp-LauncherCard", has_text="tutor")
        tile.wait_for(timeout=120_000)
        icon = tile.locator("img")  # the package's SVG, served by jupyter-server-proxy, drawn
        assert (icon.get_attribute("src") or "").endswith("/server-proxy/icon/tutor")
        lab.wait_for_function("(icon) => icon.complete && icon.naturalWidth > 0", arg=icon.element_handle())
        if shots:
            lab.screenshot(path=shots / "jupyterhub-launcher.png")
        with context.expect_page(timeout=120_000) as opened:
            tile.click()
        page = opened.value
        requested: list[str] = []
        page.on("request", lambda request, requested=requested: requested.append(request.url))
        page.on("websocket", lambda socket, requested=requested: requested.append(socket.url))
        page.wait_for_load_state()
        assert page.url == f"{url}{server}/tutor/"
        terminal = Terminal(page)
        terminal.wait_for(lambda text: "Token + position embedding" in text, "the tutor's first panel", seconds=120)
        serve, tutor = tutor_processes(folder, name)
        socket_path = Path(command_line(serve)[6])  # made by jupyter-server-proxy: this learner's alone
        assert stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600

        # a prompt of the learner's own: clear the field, then type, a key at a time, as a learner types
        page.keyboard.press("End")
        for _ in range(12):
            page.keyboard.press("Backspace")
        terminal.wait_for(lambda text: "Type a prompt, e.g." in text, "the empty prompt's placeholder")
        page.keyboard.type(prompt, delay=30)
        terminal.wait_for(lambda text, prompt=prompt: prompt in text, f"the prompt {prompt!r}")
        jupyter = parent(serve)  # the learner's JupyterLab server: its proxy relays every key and frame
        cpu_before = {pid: cpu_seconds(pid) for pid in (tutor, serve, jupyter)}
        page.keyboard.type(" " + TYPED, delay=60)
        terminal.wait_for(lambda text: TYPED[-8:] in text, "the typed keys")
        time.sleep(1.0)  # the last key's panels drawn
        per_key = {pid: (cpu_seconds(pid) - cpu_before[pid]) / (len(TYPED) + 1) for pid in cpu_before}
        for _ in range(len(TYPED) + 1):
            page.keyboard.press("Backspace")
        terminal.wait_for(lambda text: TYPED[:4] not in text, "the prompt back as it was")
        page.keyboard.press("ArrowDown")  # a step through the forward pass
        terminal.wait_for(lambda text: "Step 2/27" in text, "the second step")
        terminal.wait_for(lambda text: "LayerNorm 1: normalising" in text, "the step's own panel, LayerNorm")
        page.keyboard.press("F6")  # the next panel
        terminal.wait_for(lambda text: "of the stream, a line per token" in text, "F6's next panel, Residual")
        if shots:
            page.screenshot(path=shots / "jupyterhub-tutor.png")
        print(
            f"\nmeasured for {name!r}: tab's tutor {memory(tutor)} kB, cpu {per_key[tutor] * 1000:.1f} ms a key; "
            f"tutor serve {memory(serve)} kB, cpu {per_key[serve] * 1000:.1f} ms a key; "
            f"jupyter server {memory(jupyter)} kB, cpu {per_key[jupyter] * 1000:.1f} ms a key"
        )
        prefix = f"{url}{server}/tutor/"
        assert requested and all(address.split("://", 1)[1].startswith(prefix.split("://", 1)[1])
                                 for address in requested), requested  # fmt: skip
        assert any(address == f"ws{prefix[4:]}ws?" or address.startswith(f"ws{prefix[4:]}ws?") for address in requested)

        time.sleep(2.0)  # the step's and the panel's frames drawn and sent
        idle_before = {pid: cpu_seconds(pid) for pid in cpu_before}
        time.sleep(IDLE_SECONDS)
        idle = {pid: (cpu_seconds(pid) - idle_before[pid]) / IDLE_SECONDS for pid in cpu_before}
        print(f"idle, a second: tab's tutor {idle[tutor] * 1000:.0f} ms, tutor serve {idle[serve] * 1000:.0f} ms, "
              f"jupyter server {idle[jupyter] * 1000:.0f} ms")  # fmt: skip
        page.close()  # the tab closes: its tutor quits and saves
        deadline = time.monotonic() + 60
        while tutor in descendants(serve) and time.monotonic() < deadline:
            time.sleep(0.1)
        saved = json.loads((folder / "homes" / name / ".local/state/tutor/progress.json").read_text("utf-8"))
        assert (saved["last"]["prompt"], saved["last"]["step"]) == (prompt, "blocks.0.ln1"), saved["last"]
        print(f"{name!r}'s progress: {saved['last']}")
        context.close()
    print(f"two learners logged in, each typed and stepped in the tutor: {time.monotonic() - started:.1f} s")


def test_without_the_hub_s_login_or_with_another_learner_s_there_is_no_tutor(
    hub: tuple[str, Path], chromium: Any
) -> None:
    url, _ = hub
    context, _ = log_in(chromium, url, "alice")  # alice's server runs: her URL reaches it
    try:
        status, headers, body = hub_get(f"{url}/user/alice/tutor/")
        assert status == 302 and "textual-terminal" not in body, (status, body[:300])
        assert "/hub/" in headers.get("location", ""), headers  # to the hub's login, through its OAuth
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": url}  # fmt: skip
        status, _, body = hub_get(f"{url}/user/alice/tutor/ws", headers=upgrade)
        assert status == 403, (status, body[:300])
        # bob, logged in, asks for alice's tutor: the hub will not let his browser into her server
        bob, page = log_in(chromium, url, "bob", spawn=False)
        response = page.goto(f"{url}/user/alice/tutor/")
        assert response is not None and response.status == 403
        assert page.locator(".textual-terminal").count() == 0
        bob.close()
    finally:
        context.close()


def test_installed_without_textual_serve_the_tab_says_what_to_install(hub: tuple[str, Path], chromium: Any) -> None:
    url, _ = hub
    context, lab = log_in(chromium, url, "carol")
    try:
        tile = lab.locator(".jp-LauncherCard", has_text="tutor")
        tile.wait_for(timeout=120_000)
        with context.expect_page(timeout=120_000) as opened:
            tile.click()
        page = opened.value
        page.wait_for_load_state()
        page.wait_for_function("document.body && document.body.innerText.includes('textual-serve')", timeout=60_000)
        if os.environ.get("TUTOR_SCREENSHOTS"):
            page.screenshot(path=Path(os.environ["TUTOR_SCREENSHOTS"]) / "jupyterhub-no-textual-serve.png")
        assert page.inner_text("body") == (
            "the tutor tile needs textual-serve, which this Jupyter's Python lacks: ask whoever runs this hub to "
            'install tutor with its jupyter extra (pip install "tutor-VERSION-py3-none-any.whl[jupyter]")'
        )
    finally:
        context.close()
