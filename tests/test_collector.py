"""The garbage collector's full pass waits for a quiet moment (tutor/process_tuning.py)."""

from __future__ import annotations

import gc

from helpers import make_app

from tutor.process_tuning import FULL_PASS_THRESHOLD, QUIET, IdleCollector


def test_a_full_pass_runs_only_after_the_keys_are_quiet(monkeypatch) -> None:
    now = [100.0]
    passes: list[int] = []
    before = gc.get_threshold()
    collector = IdleCollector(clock=lambda: now[0])
    monkeypatch.setattr(gc, "collect", lambda *a: passes.append(1) or 0)
    try:
        assert gc.get_threshold()[2] == FULL_PASS_THRESHOLD  # never by itself
        assert gc.get_threshold()[:2] == before[:2]  # the young generations as they were
        assert not collector.tick()  # nothing typed since the start: nothing to do
        collector.key()
        now[0] += QUIET / 2
        assert not collector.tick() and not passes  # keys still coming
        now[0] += QUIET
        assert collector.tick() and passes == [1]
        assert not collector.tick() and passes == [1]  # once per quiet spell
    finally:
        collector.restore()
    assert gc.get_threshold() == before


async def test_the_app_holds_the_full_pass_while_it_runs(store) -> None:
    before = gc.get_threshold()
    app = make_app(store)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("a")
        assert gc.get_threshold()[2] == FULL_PASS_THRESHOLD
        assert app.collector is not None and app.collector.pending  # the key was seen
    assert gc.get_threshold() == before  # given back when the app ends


def test_tutor_starts_with_the_collector_paused(monkeypatch) -> None:
    """The start's ~190 collector passes walked what lives for the whole session anyway (~45 ms of a start)."""
    import argparse

    import model
    from tutor.commands import app as command

    seen: list[bool] = []

    def load(name: str) -> None:
        seen.append(gc.isenabled())
        raise model.WeightsError("no such model")

    monkeypatch.setattr(model, "load", load)
    assert gc.isenabled()
    assert command.run(argparse.Namespace(model="none", lessons=None, lang="en")) != 0
    assert seen == [False]  # paused while the app starts
    assert gc.isenabled()  # on again after a start that failed


async def test_the_app_turns_the_collector_on_after_its_first_frame(store) -> None:
    gc.disable()  # as `tutor` starts it
    try:
        app = make_app(store)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
            assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.enable()
