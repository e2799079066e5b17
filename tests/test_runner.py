"""The one runner for model passes: the latest request wins, stale results are dropped, errors are notices."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest
from helpers import make_app, screen_text, settle
from textual.app import App

import model
from tutor.runner import WORKER_NICENESS, PassRunner, Stop, yield_to_the_app


async def drain(app: App[None], pilot: object) -> None:
    """Until every worker has finished (a cancelled one too) and what it handed over has been run."""
    for _ in range(500):
        if all(worker.is_finished for worker in app.workers):
            break
        await asyncio.sleep(0.01)
    await pilot.pause()  # type: ignore[attr-defined]


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[object] = []
        self.errors: list[Exception] = []
        self.runner: PassRunner[object] = PassRunner(self, "test", self.results.append, self.errors.append)


async def test_inline_runs_in_the_keystroke_and_a_worker_delivers_later() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.runner.run(lambda stop: "now", inline=True)
        assert app.results == ["now"]  # before any await: the same frame as the key
        app.runner.run(lambda stop: "later")
        await drain(app, pilot)
        assert app.results == ["now", "later"]
        assert app.runner.seconds < 1 and app.runner.quick_for(1)


def test_the_guess_of_a_pass_time_scales_up_with_its_size_never_down() -> None:
    runner: PassRunner[object] = PassRunner(Host(), "test", lambda result: None, lambda error: None)
    assert not runner.quick_for(1)  # nothing measured yet: to a worker
    runner.run(lambda stop: "empty prompt", inline=True, work=0)
    assert not runner.quick_for(1)  # a pass of nothing says nothing of the next (GPT-2's empty prompt is instant)
    runner.seconds, runner.work = 0.015, 10  # as if measured: 15 ms for 10 tokens
    assert runner.quick_for(1) and runner.quick_for(10)
    assert not runner.quick_for(20)  # twice the tokens: about 30 ms, over the 20 ms a key may wait
    runner.seconds = 0.05  # a big model: one token costs what ten did
    assert not runner.quick_for(1)
    runner.forget_speed()
    assert not runner.quick_for(1)


async def test_a_newer_request_stops_the_older_and_drops_its_result() -> None:
    app = Host()
    started, release, done = threading.Event(), threading.Event(), threading.Event()
    stopped: list[bool] = []

    def slow(stop: Stop) -> str:
        started.set()
        release.wait(5)
        stopped.append(stop())
        done.set()
        return "stale"

    async with app.run_test() as pilot:
        app.runner.run(slow)
        await asyncio.to_thread(started.wait, 5)  # the worker starts once the loop has its turn
        app.runner.run(lambda stop: "fresh", inline=True)
        release.set()
        await asyncio.to_thread(done.wait, 5)  # a cancelled thread runs on to its end; its result must be dropped
        await drain(app, pilot)
        assert app.results == ["fresh"] and stopped == [True]


async def test_an_error_in_a_pass_is_handed_over_and_the_app_goes_on() -> None:
    app = Host()

    def broken(stop: Stop) -> str:
        raise ValueError("no such weights")

    async with app.run_test() as pilot:
        app.runner.run(broken)
        await drain(app, pilot)
        assert [str(e) for e in app.errors] == ["no such weights"] and app.is_running
        app.runner.run(broken, inline=True)
        assert len(app.errors) == 2
        app.runner.run(lambda stop: (_ for _ in ()).throw(model.Stopped()))  # a stopped pass: nothing to say
        await drain(app, pilot)
        assert len(app.errors) == 2 and app.results == []


async def test_cancel_drops_what_is_running() -> None:
    app = Host()
    release = threading.Event()

    async with app.run_test() as pilot:
        app.runner.run(lambda stop: release.wait(5) and "late")
        app.runner.cancel()
        release.set()
        await drain(app, pilot)
        assert app.results == []


async def test_a_failing_pass_in_each_experiment_is_a_notice_not_the_end_of_the_session(store, monkeypatch) -> None:
    """compare and positions once kept Textual's exit_on_error: one exception in a pass closed the session."""
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)

        def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a bug in a pass")

        for name in ("compare", "positions", "order"):
            monkeypatch.setattr(model.GPT, "run", broken)
            app.open_experiment(name)
            await settle(pilot)
            screen = app.screen
            if name == "positions":
                screen.rerun("猫追狗", 10.0)  # type: ignore[attr-defined]
            if name == "order":
                monkeypatch.setattr("tutor.screens.experiments.order.run_order", broken)
                screen.recompute()  # type: ignore[attr-defined]
            await settle(pilot)
            assert app.is_running, name
            notices = [n.message for n in app._notifications]
            assert any("a bug in a pass" in m for m in notices), (name, notices)
            app.clear_notifications()
            monkeypatch.undo()
            await pilot.press("escape")
            await settle(pilot)
        assert "tutor" in screen_text(app)


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own niceness is Linux's")
def test_a_worker_thread_gives_way_to_the_app_once_and_the_app_keeps_its_priority() -> None:
    seen: list[int] = []

    def worker() -> None:
        yield_to_the_app()
        yield_to_the_app()  # once per thread: the pool reuses its threads
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [min(19, before + WORKER_NICENESS)]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
