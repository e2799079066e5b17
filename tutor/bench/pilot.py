"""Keystroke → every visible panel updated, through Textual's pilot (in-process, headless).

A keystroke is done when the first frame drawn after the panels' last update for it has been turned
into the bytes a terminal would get: the pilot's headless driver skips that last step, so we do it
(`render_segments`) and time it too. Typing runs the model in a worker; stepping does not.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App

PROMPT = "猫追狗的一是在不了有和人这中大为上个国我以要他时"  # 24 characters typed one by one


class FrameClock:
    """Timestamps of the app's frames and of its panel updates."""

    def __init__(self, app: App[Any], panels_owner: Any) -> None:
        self.frames: list[float] = []
        self.updates: list[float] = []
        display = app._display
        refresh_panels = panels_owner.refresh_panels

        def timed_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is not None and hasattr(renderable, "render_segments"):
                model = getattr(app, "screen_model", None)  # the tutor sends only changed cells: that costs too
                if model is not None:
                    renderable = model.update(renderable, app.console, (app.size.width, app.size.height))
                renderable.render_segments(app.console)  # what a terminal driver would write
                self.frames.append(time.perf_counter())

        def timed_refresh() -> bool | None:
            drew = refresh_panels()
            if drew is not False:  # a request for what is on screen already draws nothing: no frame to wait for
                self.updates.append(time.perf_counter())
            return drew

        self.prompts: list[tuple[float, str]] = []  # (time, prompt text) of every frame, for the echo
        prompt_of = getattr(panels_owner, "typed_prompt", None) if hasattr(panels_owner, "passes") else None

        def noted_display(screen: Any, renderable: Any) -> None:
            timed_display(screen, renderable)
            if prompt_of is not None and renderable is not None and self.frames:
                self.prompts.append((self.frames[-1], panels_owner.typed_prompt))

        app._display = noted_display if prompt_of is not None else timed_display  # type: ignore[method-assign]
        panels_owner.refresh_panels = timed_refresh

    async def latency(self, pilot: Any, key: str, since: float, timeout: float = 10.0) -> float:
        """Seconds from `since` to the first frame after the panels' last update for this key."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            await pilot.app.workers.wait_for_complete()
            updates = [t for t in self.updates if t >= since]
            if updates:
                drawn = [t for t in self.frames if t >= updates[-1]]
                if drawn and not pilot.app.workers._workers:
                    return drawn[0] - since
            await asyncio.sleep(0.005)
        raise TimeoutError(f"no frame after key {key!r} within {timeout} s")


async def _drive(app: App[Any], owner: Callable[[], Any], size: tuple[int, int], typing: str, steps: int) -> dict:
    kinds = ("type", "step", "back")
    latencies: dict[str, list[float]] = {kind + cpu: [] for kind in kinds for cpu in ("", "_cpu")}
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        clock = FrameClock(app, owner())
        await pilot.press("ctrl+u")
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        for char in typing:
            start, cpu = time.perf_counter(), time.process_time()
            await pilot.press(char)
            latencies["type"].append(await clock.latency(pilot, char, start))
            latencies["type_cpu"].append(time.process_time() - cpu)
        for kind in ("step", "back"):
            if kind == "back":  # the pass turned round (its gradients computed first, not timed): ↓ goes back
                await pilot.press("ctrl+r")
                await app.workers.wait_for_complete()
                await pilot.pause(0.1)
            for key in ["down"] * steps + ["up"] * steps:
                await pilot.pause(0.02)
                start, cpu = time.perf_counter(), time.process_time()
                await pilot.press(key)
                latencies[kind].append(await clock.latency(pilot, key, start))
                latencies[kind + "_cpu"].append(time.process_time() - cpu)
    return latencies


def tutor_latencies(size: tuple[int, int], typing: str = PROMPT, steps: int = 26) -> dict[str, list[float]]:
    """Per key kind ("type", "step", "back": stepping backwards), seconds from key to the frame with every
    visible panel updated; under "type_cpu", "step_cpu", "back_cpu" the process's CPU seconds per key (all
    threads, the pilot's polling included), which a busy machine stretches less than the wall clock."""
    import model
    from tutor.app import TutorApp
    from tutor.progress import Progress, ProgressStore

    with tempfile.TemporaryDirectory() as state:
        store = ProgressStore(Path(state) / "progress.json")
        store.save(Progress(last={"view": "panels"}))  # at 80×24 too: a learner at the panels, not the lesson
        app = TutorApp(model.load("tiny"), "en", store=store)
        return asyncio.run(_drive(app, lambda: app.main, size, typing, steps))


def minimal_latencies(size: tuple[int, int], typing: str = PROMPT, steps: int = 26) -> dict[str, list[float]]:
    """The same keys in the minimal Textual app (the reference)."""
    from tutor.bench.minimal_app import MinimalApp

    app = MinimalApp()
    return asyncio.run(_drive(app, lambda: app, size, typing, steps))


def send_key(app: Any, char: str) -> None:
    """A key as a terminal sends it: queued, without waiting (the pilot's `press` waits until the process is
    idle, and a pass in the worker keeps it busy: the next key would wait for the pass)."""
    from textual import events

    key = events.Key(char, char)
    key.set_sender(app)
    app._driver.send_message(key)


ECHO_GAP = 0.1  # seconds between keys: a learner typing ten characters a second


async def _drive_echo(app: Any, text: str, size: tuple[int, int], panel: str | None) -> dict[str, list[float]]:
    """Type `text` at ECHO_GAP a key without waiting for the panels; per key, the seconds from when it was
    due to the first frame showing it in the prompt; and, after the last, to the panels drawing its pass."""
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        owner = app.main
        await pilot.press("ctrl+u")
        await app.workers.wait_for_complete()
        if panel is not None:
            owner.query_one("#panels").active = panel
        await pilot.pause(0.3)
        clock = FrameClock(app, owner)
        start = time.perf_counter()
        due = []
        for n, char in enumerate(text):
            due.append(start + n * ECHO_GAP)
            await asyncio.sleep(max(0.0, due[-1] - time.perf_counter()))
            send_key(app, char)
        deadline = time.perf_counter() + 30

        def drawn_frames() -> list[float]:
            if owner.place.prompt != text or owner.drawn_trace is not owner.place.trace or not clock.updates:
                return []
            return [t for t in clock.frames if t >= clock.updates[-1]]

        while not drawn_frames():
            if time.perf_counter() > deadline:
                raise TimeoutError("the panels never drew the typed prompt")
            await asyncio.sleep(0.005)
        echo = []
        for n, when in enumerate(due):
            typed = text[: n + 1]
            shown = [t for t, prompt in clock.prompts if t >= when and prompt.startswith(typed)]
            echo.append(shown[0] - when)
        return {"echo": echo, "follow": [drawn_frames()[0] - due[-1]], "pass": [owner.passes.seconds]}


def echo_latencies(
    gpt: Any, text: str = PROMPT[:16], size: tuple[int, int] = (120, 40), panel: str | None = None
) -> dict[str, list[float]]:
    """A slow model loaded (GPT-2 small's size): "echo", per key, the seconds to the character drawn in the
    prompt while passes run in the worker; "follow", the seconds from the last key to its panels drawn;
    "pass", the seconds of that pass. `panel`: the tab shown while typing (None: the lesson's own)."""
    from tutor.app import TutorApp
    from tutor.progress import Progress, ProgressStore

    with tempfile.TemporaryDirectory() as state:
        store = ProgressStore(Path(state) / "progress.json")
        store.save(Progress(last={"view": "panels"}))
        app = TutorApp(gpt, "en", store=store, resume_model=False)
        return asyncio.run(_drive_echo(app, text, size, panel))


async def _drive_edits(
    app: Any, size: tuple[int, int], prompt: str, rounds: int, standing: bool, most_steps: int
) -> dict[str, list[float]]:
    """alt+x at every step that has a piece to take out, twice (taken out, put back), `rounds` times over;
    `standing`: beside an edit that stays (head 3 of block 0 silenced), so the edits bar stays in view."""
    from tutor.edits import Edit, step_edit

    latencies: dict[str, list[float]] = {"edit": [], "edit_cpu": []}
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        main = app.main
        if standing:
            main.place.toggle_edit(Edit("head", block=0, head=3))
        main.set_prompt(prompt)
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        clock = FrameClock(app, main)
        steps = [step.index for step in main.place.gpt.steps if step_edit(step, 0) is not None][:most_steps]
        for _ in range(rounds):
            for index in steps:
                main.goto_step_index(index)
                await pilot.pause(0.02)
                for _ in ("take out", "put back"):
                    start, cpu = time.perf_counter(), time.process_time()
                    await pilot.press("alt+x")
                    latencies["edit"].append(await clock.latency(pilot, "alt+x", start))
                    latencies["edit_cpu"].append(time.process_time() - cpu)
                    await pilot.pause(0.02)
    return latencies


def edit_latencies(
    size: tuple[int, int] = (120, 40),
    prompt: str = PROMPT[:8],
    rounds: int = 2,
    standing: bool = False,
    most_steps: int = 1000,
) -> dict[str, list[float]]:
    """Seconds from alt+x (an edit taken out or put back) to the frame with the edited run drawn, tiny at `size`:
    the edited pass (the clean one is on screen already) and every visible panel, the edits bar among them."""
    import model
    from tutor.app import TutorApp
    from tutor.progress import Progress, ProgressStore

    with tempfile.TemporaryDirectory() as state:
        store = ProgressStore(Path(state) / "progress.json")
        store.save(Progress(last={"view": "panels"}))
        app = TutorApp(model.load("tiny"), "en", store=store)
        return asyncio.run(_drive_edits(app, size, prompt, rounds, standing, most_steps))
