"""`tutor` in a real pseudo-terminal: it starts, takes keys, and saves progress when the line drops."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from helpers import drain, read_until, spawn


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_progress_survives_a_dropped_line(tmp_path: Path, signum: int) -> None:
    process, master = spawn(tmp_path)
    try:
        assert b"Lesson 1/" in read_until(master, b"Lesson 1/")
        # the first trace is drawn: the lesson has set its prompt (keys typed before can race with it on a busy machine)
        assert b"Step 1/" in read_until(master, b"Step 1/")
        drain(master, 0.5)
        os.write(master, b"\x15")  # ctrl+u (a burst "ctrl+u + text" can run the binding after the text)
        assert b"Type a prompt" in read_until(master, b"Type a prompt")  # so wait until the prompt is empty
        os.write(master, "狗追猫".encode())
        drain(master, 0.5)
        os.write(master, b"\x1b[B\x1b[B")  # ↓ ↓
        drain(master, 0.15)  # the keys are handled; the deferred save (0.5 s) has not run yet
        process.send_signal(signum)
        if signum == signal.SIGHUP:  # the line is gone: nobody reads the terminal any more
            os.close(master)
            master = -1
        deadline = time.monotonic() + 15
        while process.poll() is None and time.monotonic() < deadline:
            if master >= 0:
                drain(master, 0.1)
            else:
                time.sleep(0.1)
        assert process.poll() is not None, "tutor did not exit"
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
    saved = json.loads((tmp_path / "state" / "progress.json").read_text(encoding="utf-8"))
    assert saved["last"]["prompt"] == "狗追猫"
    assert saved["last"]["step"] == "blocks.0.attn"
