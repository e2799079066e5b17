"""What the tests share: a small model to build, the app through the pilot, `tutor` in a process or a pty.

Fixtures are in conftest.py (`store`, `make_gpt`, `tiny`, and the autouse ones); everything a test imports
is here: `from helpers import make_app, screen_text, settle`.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

import model
from model import GPT, CharTokenizer, GPTConfig

if TYPE_CHECKING:  # the model's tests import this module too: Textual loads only with the app
    from tutor.app import TutorApp
    from tutor.progress import ProgressStore
    from tutor.widgets.heatmap import HeatmapGrid

# -- a small model ---------------------------------------------------------------------------------------------

CHARS = list("猫追狗的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可abcdefgh ,.")
TOKENIZER = CharTokenizer(CHARS)

VARIANTS = [
    dict(positional=pos, norm=norm, residual=residual, causal=causal)
    for pos, norm, residual, causal in itertools.product(
        ("sinusoidal", "learned", "rope", "none"), ("pre", "post", "none"), (True, False), (True, False)
    )
]

# RMSNorm in place of LayerNorm (`norm_kind` "rms"), in both placements, with and without the residual adds
RMS_VARIANTS = [
    dict(positional="sinusoidal", norm="pre", residual=True, causal=True, norm_kind="rms"),
    dict(positional="rope", norm="post", residual=True, causal=True, norm_kind="rms"),
    dict(positional="learned", norm="pre", residual=False, causal=False, norm_kind="rms"),
]
# the Llama family's wiring (Qwen2's q/k/v biases, an untied W_U), and its pieces on a LayerNorm GPT
LLAMA_VARIANTS = [
    dict(positional="rope", norm="pre", residual=True, causal=True, norm_kind="rms", n_kv_heads=1, mlp_kind="gated",
         rope_style="half", biases="qkv", tied=False),
    dict(positional="rope", norm="pre", residual=True, causal=True, n_kv_heads=1, mlp_kind="gated", biases="none"),
]  # fmt: skip


def variant_id(variant: dict) -> str:
    return "-".join(
        [
            variant["positional"],
            variant["norm"] + "norm",
            "res" if variant["residual"] else "nores",
            "causal" if variant["causal"] else "full",
            *(["rms"] if variant.get("norm_kind") == "rms" else []),
            *([f"kv{variant['n_kv_heads']}"] if variant.get("n_kv_heads") else []),
            *([variant[k] for k in ("mlp_kind", "rope_style", "biases") if k in variant]),
            *(["untied"] if variant.get("tied") is False else []),
        ]
    )


def small_config(**changes: object) -> GPTConfig:
    base = dict(vocab_size=TOKENIZER.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=2, d_mlp=32)
    return GPTConfig(**{**base, **changes})


def random_params(config: GPTConfig, seed: int = 0, scale: float = 0.3) -> dict[str, np.ndarray]:
    """Weights big enough that every sublayer changes the stream visibly (GPT-2's init barely does)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in model.parameter_shapes(config).items():
        value = rng.normal(0.0, scale, shape)
        if name.endswith(".g"):
            value = 1.0 + value
        params[name] = value.astype(np.float32)
    return params


# -- `tutor` as a learner runs it: a process, a pseudo-terminal ------------------------------------------------


def run_tutor(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tutor ARGS` as a learner runs it: a fresh process, in another folder, UTF-8 output."""
    return subprocess.run(
        [sys.executable, "-m", "tutor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
    )


def spawn(
    tmp_path: Path, *args: str, size: tuple[int, int] = (120, 40), env_changes: dict[str, str | None] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """`tutor ARGS` in a real pseudo-terminal; `env_changes` sets variables (None removes one)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {**os.environ, "TUTOR_STATE_DIR": str(tmp_path / "state"), "TERM": "xterm-256color", "LANG": "en_US.UTF-8"}
    for name, value in (env_changes or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    process = subprocess.Popen(
        [sys.executable, "-m", "tutor", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        cwd=tmp_path,
    )
    os.close(slave)
    return process, master


def spawn_like_sshd(
    tmp_path: Path, *args: str, size: tuple[int, int] = (120, 40)
) -> tuple[subprocess.Popen[bytes], int, int]:
    """`tutor ARGS` as sshd starts a learner's command: a shell leads a new session whose controlling terminal is
    the pseudo-terminal, and runs tutor in it (in the terminal's foreground). Closing the master then hangs up
    the terminal, and the kernel sends SIGHUP, as when sshd loses the connection. Returns the shell, the master
    and tutor's process id."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {**os.environ, "TUTOR_STATE_DIR": str(tmp_path / "state"), "TERM": "xterm-256color", "LANG": "en_US.UTF-8"}
    shell = subprocess.Popen(
        ["/bin/sh", "-c", '"$0" -m tutor "$@"; :', sys.executable, *args],  # `; :` keeps the shell: it leads
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # after setsid: the terminal becomes the session's
        cwd=tmp_path,
    )
    os.close(slave)
    deadline = time.monotonic() + 10
    children = Path(f"/proc/{shell.pid}/task/{shell.pid}/children")
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.01)
    return shell, master, int(children.read_text().split()[0])


def read_until(master: int, needle: bytes, timeout: float = 20.0) -> bytes:
    """What the pty shows until `needle` has come (or `timeout` seconds have passed)."""
    return _read(master, timeout, 0.1, lambda seen: needle in seen)


def read_until_all(master: int, *needles: bytes, timeout: float = 20.0) -> bytes:
    """What the pty shows until every one of `needles` has come: a frame holding several may come in one read."""
    return _read(master, timeout, 0.1, lambda seen: all(needle in seen for needle in needles))


def drain(master: int, seconds: float) -> bytes:
    """Everything the pty shows for `seconds`."""
    return _read(master, seconds, 0.05, lambda seen: False)


def _read(master: int, seconds: float, poll: float, done: Callable[[bytes], bool]) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while not done(seen) and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], poll)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    return seen


# -- a full disk ------------------------------------------------------------------------------------------------


class FullDisk:
    """os.fsync as on a disk that fills up and empties again: ENOSPC while `full` (a full disk reports it when a
    write is flushed), the real fsync otherwise. `FullDisk.install(monkeypatch)` puts it in place for a test."""

    def __init__(self) -> None:
        self.full = False
        self._real_fsync = os.fsync

    def fsync(self, fd: int) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._real_fsync(fd)

    @classmethod
    def install(cls, monkeypatch) -> FullDisk:
        disk = cls()
        monkeypatch.setattr(os, "fsync", disk.fsync)
        return disk


# -- the app through the pilot ---------------------------------------------------------------------------------

LESSON_EN = """+++
id = "demo"
order = 1
title = "Demo lesson"
prompt = "狗追猫"
steps = ["blocks.1.ln2"]
panels = ["layernorm"]
+++
## What you will understand

Something. [Try 追猫狗 at attention](tutor:show?prompt=追猫狗&step=blocks.0.attn&panel=attention)

## Formula and code

```tutor-code
model.norm.layer_norm
```
"""

LESSON_ZH = LESSON_EN.replace("Demo lesson", "示例课").replace("## Formula and code", "## 公式与代码")


def make_app(
    store: ProgressStore,
    content: Path | None = None,
    gpt: GPT | None = None,
    lang: str = "en",
    course: Path | None = None,
) -> TutorApp:
    """The app on the lessons in `content` (none by default), or on a teacher's folder `course` (`--lessons`)."""
    from tutor.app import TutorApp

    return TutorApp(
        gpt or model.load("tiny"), lang, store=store, content=content or Path("/nonexistent"), course=course
    )


def screen_text(app: TutorApp, selector: str | None = None) -> str:
    """What the terminal shows: the whole screen, or only the region of the widget `selector` names."""
    strips = app.screen._compositor.render_strips()
    if selector is None:
        return "\n".join("".join(segment.text for segment in strip) for strip in strips)
    region = app.screen.query_one(selector).region
    lines = strips[region.y : region.y + region.height]
    return "\n".join("".join(s.text for s in strip.crop(region.x, region.x + region.width)) for strip in lines)


def footer_misses(app: TutorApp) -> list[str]:
    """The keys the screen shows in its footer ("alt+m Model") that the footer's line does not hold whole: the
    footer leaves out those that do not fit beside the palette key."""
    footer = screen_text(app).splitlines()[-1]
    wanted = [
        f"{app.get_key_display(binding)} {binding.description}"
        for _, binding, enabled, _ in app.screen.active_bindings.values()
        if binding.show and enabled and binding.action != "command_palette"
    ]
    return [label for label in wanted if label not in footer]


async def settle(pilot) -> None:
    await pilot.pause(0.05)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.05)


# -- the experiment screens ------------------------------------------------------------------------------------


def screen_line(text: str, first: str) -> list[str]:
    """The fields of the first screen line that starts with the words `first`."""
    for line in text.split("\n"):
        if (line.strip() + " ").startswith(first + " "):
            return line.split()
    raise AssertionError(f"no line starting with {first!r} in\n{text}")


async def open_from_practice_menu(pilot, name: str) -> None:
    """F10, then down to the experiment's entry and Enter: the way a learner opens it."""
    app = pilot.app
    hrefs = [href for _, href in app.practice_items()]
    await pilot.press("f10")
    await settle(pilot)
    await pilot.press(*["down"] * hrefs.index(f"tutor:experiment?name={name}"), "enter")
    await settle(pilot)


async def open_experiment(pilot, name: str) -> None:
    await settle(pilot)
    pilot.app.open_experiment(name)
    await settle(pilot)


def grid_values(grid: HeatmapGrid) -> np.ndarray:
    return np.array([row.values for row in grid.rows])
