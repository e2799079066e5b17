"""A class of thirty runs thirty tutors on one machine (issue 34): what the first screen does not need stays
unloaded, and a drawn line carries no caches it has not used."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from helpers import read_until, spawn
from rich.segment import Segment
from textual.strip import Strip

from tutor.patches import strip_caches

# Loaded only by what needs them, never by the first screen: each would cost every tutor memory and start-up time
# it does not use (the Rust tokenizers ~0.9 MB, OpenSSL 0.3–1 MB; the practice screens, training, the web server).
NOT_AT_FIRST_SCREEN = (
    "ssl",
    "_ssl",  # OpenSSL itself, whatever names the module that loaded it
    "tokenizers",
    "safetensors",
    "textual_serve",
    "aiohttp",
    "tutor.screens.experiments",
    "tutor.exercises",
    "model.train",
    "model.hf_llama",
)

# Python runs sitecustomize at start-up: on SIGUSR1 the tutor writes the names of its loaded modules
TELL_MODULES = """
import signal, sys
def _tell(signum, frame):
    with open({path!r}, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
signal.signal(signal.SIGUSR1, _tell)
"""


def test_the_first_screen_leaves_the_heavy_modules_unloaded(tmp_path: Path) -> None:
    listing = tmp_path / "modules.txt"
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(TELL_MODULES.format(path=str(listing)))
    path = os.pathsep.join(p for p in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if p)
    process, master = spawn(tmp_path, "--lang", "en", env_changes={"PYTHONPATH": path})
    try:
        shown = read_until(master, "‖x‖".encode(), timeout=60)  # the first screen's step info: panels drawn
        assert "‖x‖".encode() in shown, shown[-300:]
        process.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while not listing.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        loaded = set(listing.read_text().split())
    finally:
        process.kill()
        process.wait()
        os.close(master)
    assert {"textual", "numpy", "tutor.app", "asyncio"} <= loaded  # the listing is the app's
    eager = sorted(m for m in loaded if m.split(".")[0] in NOT_AT_FIRST_SCREEN or m.startswith(NOT_AT_FIRST_SCREEN))
    assert not eager, f"the first screen loads {eager}: import them where they are used"


def test_asyncio_comes_without_ssl_and_ssl_still_loads_later() -> None:
    code = (
        "import sys; from tutor.process_tuning import import_asyncio_without_tls as go\n"
        "first = go(); loaded = 'ssl' in sys.modules; import asyncio.base_events as b\n"
        "import ssl; print(first, loaded, b.ssl is None, ssl.OPENSSL_VERSION.split()[0], go())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "True", "OpenSSL", "False"]


def _cache_slots_set(strip: Strip) -> list[str]:
    """The cache slots a strip has filled (read through the slots themselves: `getattr` would make them)."""
    made = []
    for name in strip_caches.CACHE_SIZES:
        try:
            Strip.__dict__[name].__get__(strip, Strip)
        except AttributeError:
            continue
        made.append(name)
    return made


def test_a_strip_makes_a_cache_when_first_used_and_keeps_it() -> None:
    strip_caches.install()
    strip = Strip([Segment("hello "), Segment("world")])
    assert _cache_slots_set(strip) == []
    cropped = strip.crop(0, 5)
    assert cropped.text == "hello"
    assert strip.crop(0, 5) is cropped  # the second crop came from the cache made by the first
    assert _cache_slots_set(strip) == ["_crop_cache"]
    assert strip._crop_cache._maxsize == 16  # sized as Textual sizes it
    assert strip.crop_extend(0, 8, None).text == "hello wo"
    assert sorted(_cache_slots_set(strip)) == ["_crop_cache", "_crop_extend_cache"]
    try:
        strip.no_such_attribute  # noqa: B018
    except AttributeError as error:
        assert "no_such_attribute" in str(error)
    else:
        raise AssertionError("a name that is no cache must still raise AttributeError")


def test_a_drawn_line_costs_a_third_of_what_it_did() -> None:
    """A thousand strips as Textual made them (seven caches each) against the same made lazily."""
    strip_caches.install()
    original = strip_caches._init.__wrapped__  # type: ignore[attr-defined]
    segments = [Segment("a line of a panel")]

    def cost(init: object) -> int:
        Strip.__init__ = init  # type: ignore[method-assign]
        try:
            tracemalloc.start()
            strips = [Strip(segments) for _ in range(1000)]
            used = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
        finally:
            Strip.__init__ = strip_caches._init  # type: ignore[method-assign]
        assert len(strips) == 1000
        return used

    before, after = cost(original), cost(Strip.__init__)
    assert after < before / 3, (before, after)
